// bench/harness/adept_tool.hpp - Adept 2 reverse mode: adept::aReal on an
// adept::Stack, its library compiled from the source tree given with
// -DTAPEFLOW_BENCH_ADEPT_DIR (bench/CMakeLists.txt), default settings.
//
// Adept's documented order: give the independent variables their values
// (not recorded), new_recording(), run the function, seed the output's
// gradient, compute_adjoint(), read the inputs' gradients. One Stack per
// tool object; only one Stack may be active per thread, so a tool object
// lives only while its benchmark (or check) runs.
//
// A kernel that Adept cannot run says `static constexpr bool adept = false`
// with an `adept_note` (why); the default is that it runs.
#pragma once

#include <adept.h>

#include <string>
#include <type_traits>
#include <vector>

#include "tools.hpp"

namespace bench {

template <class K, class = void>
struct runs_adept : std::true_type {};
template <class K>
struct runs_adept<K, std::void_t<decltype(K::adept)>> : std::bool_constant<K::adept> {};

inline std::string adept_version() { return ADEPT_VERSION_STR; }

struct adept_tool {
    static constexpr const char* name = "adept";
    adept::Stack stack;  // declared first: destroyed after x
    std::vector<adept::aReal> x;

    template <class K>
    double gradient(const K& kernel, const std::vector<double>& xd, std::vector<double>& g) {
        x.resize(xd.size());
        for (std::size_t i = 0; i < xd.size(); ++i) x[i].set_value(xd[i]);
        stack.new_recording();
        adept::aReal y = kernel(x);
        y.set_gradient(1.0);
        stack.compute_adjoint();
        g.resize(xd.size());
        for (std::size_t i = 0; i < xd.size(); ++i) g[i] = x[i].get_gradient();
        return y.value();
    }

    // A statement is (lhs gradient index, end of its operations), an
    // operation (multiplier, gradient index) in two arrays. Peak: Adept's
    // own memory(), which adds the gradient vector.
    tool_stats stats() const {
        const double statements = double(stack.n_statements());
        const double operations = double(stack.n_operations());
        return {statements, operations,
                statements * 2 * sizeof(adept::uIndex) + operations * (sizeof(adept::Real) + sizeof(adept::uIndex)),
                double(stack.memory())};
    }
};

}  // namespace bench
