// bench/harness/xad_tool.hpp - XAD reverse mode: xad::AReal<double> on an
// xad::Tape<double>, the library built from the source tree given with
// -DTAPEFLOW_BENCH_XAD_DIR (bench/CMakeLists.txt), default options.
//
// A gradient: clearAll() (statements, operations and derivatives), fresh
// inputs registered, newRecording(), run the function, register the output,
// seed it, computeAdjoints(), read the inputs' derivatives. The inputs are
// created anew each time: XAD hands out variable slots as a stack, and
// clearAll() restarts the count, so inputs kept from an earlier recording
// would share slots with new variables. One Tape per tool object (only one
// may be active per thread).
//
// A kernel that XAD cannot run says `static constexpr bool xad = false`
// with an `xad_note` (why); the default is that it runs.
#pragma once

#include <XAD/XAD.hpp>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tools.hpp"

namespace bench {

template <class K, class = void>
struct runs_xad : std::true_type {};
template <class K>
struct runs_xad<K, std::void_t<decltype(K::xad)>> : std::bool_constant<K::xad> {};

inline std::string xad_version() { return XAD_VERSION_STRING; }

struct xad_tool {
    static constexpr const char* name = "xad";
    using tape_type = xad::Tape<double>;
    using ad = xad::AReal<double>;
    tape_type tape;  // activates itself

    template <class K>
    double gradient(const K& kernel, const std::vector<double>& xd, std::vector<double>& g) {
        tape.clearAll();
        std::vector<ad> x(xd.begin(), xd.end());
        tape.registerInputs(x);
        tape.newRecording();
        ad y = kernel(x);
        tape.registerOutput(y);
        xad::derivative(y) = 1.0;
        tape.computeAdjoints();
        g.resize(xd.size());
        for (std::size_t i = 0; i < xd.size(); ++i) g[i] = xad::derivative(x[i]);
        return xad::value(y);
    }

    // A statement is (end of its operations, lhs slot); an operation
    // (multiplier, slot): std::pair<double, slot> with padding by default,
    // two arrays with XAD_REDUCED_MEMORY. Peak: XAD's own getMemory(),
    // which adds the derivative vector.
    tool_stats stats() const {
        using slot = tape_type::slot_type;
        const double statements = double(tape.getNumStatements());
        const double operations = double(tape.getNumOperations());
#ifdef XAD_REDUCED_MEMORY
        const double operation_bytes = sizeof(double) + sizeof(slot);
#else
        const double operation_bytes = sizeof(std::pair<double, slot>);
#endif
        return {statements, operations,
                statements * sizeof(std::pair<tape_type::size_type, slot>) + operations * operation_bytes,
                double(tape.getMemory())};
    }
};

}  // namespace bench
