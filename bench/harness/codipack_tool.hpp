// bench/harness/codipack_tool.hpp - CoDiPack (header-only, a source tree
// given with -DTAPEFLOW_BENCH_CODIPACK_DIR) reverse mode, three tapes:
//
//   codipack         codi::RealReverse              Jacobian tape, linear indices
//   codipack_index   codi::RealReverseIndex         Jacobian tape, reused indices
//   codipack_primal  codi::RealReversePrimalIndex   primal value tape, reused indices
//
// A gradient on the type's global tape (Real::getTape()): reset (which also
// clears the adjoints), activate, register the inputs (kept from one
// gradient to the next, their new values assigned), record, register
// the output, seed it, evaluate, read the inputs' gradients.
//
// A kernel that CoDiPack cannot run says `static constexpr bool codipack =
// false` with a `codipack_note` (why); the default is that it runs.
#pragma once

#include <codi.hpp>

#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "tools.hpp"

namespace bench {

template <class K, class = void>
struct runs_codipack : std::true_type {};
template <class K>
struct runs_codipack<K, std::void_t<decltype(K::codipack)>> : std::bool_constant<K::codipack> {};

inline std::string codipack_version() {
    return std::to_string(CODI_MAJOR_VERSION) + "." + std::to_string(CODI_MINOR_VERSION) + "." +
           std::to_string(CODI_BUILD_VERSION);
}

/// The integer entries of a CoDiPack tape's statistics (getTapeValues),
/// keyed "<section>-<entry>" as its table header names them ("Statement
/// entries-Total number"). TapeValues has no getter by name, only these
/// formatters; memory entries are printed rounded with a unit and skipped.
template <class Tape>
std::map<std::string, double> codipack_counts(const Tape& tape) {
    codi::TapeValues values = tape.getTapeValues();
    std::ostringstream header, row;
    values.formatHeader(header);
    values.formatRow(row);
    const auto split = [](std::string s) {
        std::vector<std::string> fields;
        if (!s.empty() && s.back() == '\n') s.pop_back();
        std::size_t start = 0;
        for (;;) {
            const std::size_t end = s.find("; ", start);
            std::string f = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
            const std::size_t first = f.find_first_not_of(' ');
            fields.push_back(first == std::string::npos ? std::string() : f.substr(first));
            if (end == std::string::npos) break;
            start = end + 2;
        }
        return fields;
    };
    const std::vector<std::string> names = split(header.str()), cells = split(row.str());
    std::map<std::string, double> counts;
    for (std::size_t i = 0; i < names.size() && i < cells.size(); ++i) {
        char* end = nullptr;
        const double v = std::strtod(cells[i].c_str(), &end);
        if (end != cells[i].c_str() && *end == '\0') counts[names[i]] = v;  // a bare number
    }
    return counts;
}

template <class Tape, class = void>
struct is_jacobian_tape : std::false_type {};
template <class Tape>
struct is_jacobian_tape<Tape, std::void_t<typename Tape::JacobianData>> : std::true_type {};

// CoDiPack keeps one tape per active type as a static member, and with
// reused indices the index manager too (its pool of free indices, sorted on
// every reset, grows to the most indices the type ever had). Sharing them
// between kernels would make one kernel's cost depend on which kernels ran
// before it, so each kernel gets its own active type: the library's type
// with its index manager renamed per kernel (kernel_indices), otherwise the
// same (the static_asserts below check the spelled-out types against codi's).
template <class Manager, class K>
struct kernel_indices : Manager {
    using Manager::Manager;
};

template <class Indices>
using codi_jacobian_linear = codi::ActiveType<
    codi::JacobianLinearTape<codi::JacobianTapeTypes<double, double, Indices, codi::DefaultChunkedData>>>;
template <class Indices>
using codi_jacobian_reuse = codi::RealReverseIndexGen<double, double, Indices>;
template <class Indices>
using codi_primal_reuse = codi::RealReversePrimalIndexGen<double, double, Indices>;
static_assert(std::is_same_v<codi_jacobian_linear<codi::LinearIndexManager<int>>, codi::RealReverse>);
static_assert(std::is_same_v<codi_jacobian_reuse<codi::MultiUseIndexManager<int>>, codi::RealReverseIndex>);
static_assert(std::is_same_v<codi_primal_reuse<codi::MultiUseIndexManager<int>>, codi::RealReversePrimalIndex>);

/// Statements and their bytes from a tape's own statistics. A Jacobian tape
/// stores per statement its argument count (and, with reused indices, its
/// lhs identifier) and per argument a (partial, identifier) entry; a primal
/// value tape stores per statement its argument count, an evaluation handle
/// and a size, and its identifiers, primal and constant values as statement
/// bytes (arguments: unknown there). Peak: CoDiPack's allocated memory
/// (chunks, adjoint and primal vectors, index manager).
template <class Real>
tool_stats codipack_stats() {
    using Tape = typename Real::Tape;
    const Tape& tape = Real::getTape();
    std::map<std::string, double> c = codipack_counts(tape);
    tool_stats s;
    s.statements = c["Statement entries-Total number"];
    s.tape_bytes = s.statements * double(Tape::StatementData::Chunk::EntrySize);
    if constexpr (is_jacobian_tape<Tape>::value) {
        s.arguments = c["Jacobian entries-Total number"];
        s.tape_bytes += s.arguments * double(Tape::JacobianData::Chunk::EntrySize);
    } else {
        s.tape_bytes += c["Statement byte entries-Total number"];
    }
    s.peak_bytes = tape.getTapeValues().getAllocatedMemorySize();
    return s;
}

/// Frees a tape's memory (as destroying a tapeflow::tape does): swapped with
/// an empty one, which takes the data with it.
template <class Real>
void codipack_release() {
    typename Real::Tape empty;
    Real::getTape().swap(empty);
}

template <template <class> class Type, class Indices>
struct codipack_basic {
    template <class K>
    using real = Type<kernel_indices<Indices, K>>;
    tool_stats (*stats_of)() = nullptr;  // of the last kernel's type
    void (*release)() = nullptr;

    codipack_basic() = default;
    codipack_basic(const codipack_basic&) = delete;
    codipack_basic& operator=(const codipack_basic&) = delete;
    ~codipack_basic() {
        kept_.reset();  // the variables first, then the tape's memory
        if (release) release();
    }

    /// The two phases of a gradient of kernel K (bench/record_phases.cpp
    /// times them apart): its inputs and output live here in between.
    template <class K>
    struct phases {
        using Real = real<K>;
        std::vector<Real> x;
        Real y;

        // Reset (which also clears the adjoints), register the inputs with
        // their new values, record.
        void record(const K& kernel, const std::vector<double>& xd) {
            typename Real::Tape& tape = Real::getTape();
            tape.reset();
            tape.setActive();
            x.resize(xd.size());
            for (std::size_t i = 0; i < xd.size(); ++i) {
                x[i] = xd[i];
                tape.registerInput(x[i]);
            }
            y = kernel(x);
            tape.registerOutput(y);
            tape.setPassive();
        }
        // Seed, evaluate, read every input's gradient into g.
        void sweep(std::vector<double>& g) {
            y.setGradient(1.0);
            Real::getTape().evaluate();
            g.resize(x.size());
            for (std::size_t i = 0; i < x.size(); ++i) g[i] = x[i].getGradient();
        }
    };

    // The inputs and output of the last kernel, kept from one gradient to
    // the next (as the tapeflow and Adept tools keep theirs: no vector of
    // inputs allocated per gradient).
    template <class K>
    phases<K>& kept_phases() {
        if (kept_kernel_ != &typeid(K)) {
            kept_ = std::make_shared<phases<K>>();
            kept_kernel_ = &typeid(K);
        }
        return *static_cast<phases<K>*>(kept_.get());
    }

    template <class K>
    double gradient(const K& kernel, const std::vector<double>& xd, std::vector<double>& g) {
        phases<K>& run = kept_phases<K>();
        stats_of = &codipack_stats<real<K>>;
        release = &codipack_release<real<K>>;
        run.record(kernel, xd);
        run.sweep(g);
        return run.y.getValue();
    }

    tool_stats stats() const { return stats_of ? stats_of() : tool_stats{}; }

private:
    std::shared_ptr<void> kept_;
    const std::type_info* kept_kernel_ = nullptr;
};

struct codipack_tool : codipack_basic<codi_jacobian_linear, codi::LinearIndexManager<int>> {
    static constexpr const char* name = "codipack";
};
struct codipack_index_tool : codipack_basic<codi_jacobian_reuse, codi::MultiUseIndexManager<int>> {
    static constexpr const char* name = "codipack_index";
};
struct codipack_primal_tool : codipack_basic<codi_primal_reuse, codi::MultiUseIndexManager<int>> {
    static constexpr const char* name = "codipack_primal";
};

}  // namespace bench
