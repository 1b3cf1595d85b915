// bench/harness/tools.hpp - one way to compute a gradient = one tool.
//
// A tool is a struct with
//   static constexpr const char* name;
//   template <class K> double gradient(const K&, const std::vector<double>& x,
//                                      std::vector<double>& g);   // returns f(x)
//   tool_stats stats() const;    // what the last gradient recorded (0 = unknown)
//
// A gradient is the whole job a user pays for: new input values, reset,
// record, seed, sweep, read all adjoints.
#pragma once

#include <cstdint>
#include <vector>

#include <tapeflow/tapeflow.hpp>

namespace bench {

struct tool_stats {
    double statements = 0;   // records (tapeflow) or elementary operations (ADOL-C)
    double arguments = 0;    // (identifier, partial) pairs
    double tape_bytes = 0;   // bytes of tape written by one gradient (tapeflow: records + external entries)
    double peak_bytes = 0;   // peak resident tape memory (tape + adjoints)
};

/// tapeflow through the explicit tape API. Each benchmark gets its own tape
/// (so its memory statistics are its own) and reuses it across iterations.
struct tapeflow_tool {
    static constexpr const char* name = "tapeflow";
    tapeflow::tape tape;               // declared first: destroyed after x and y
    std::vector<tapeflow::Real> x;

    tapeflow::Real y;

    tapeflow_tool() = default;
    /// A tape with these options (a memory budget, a tile size, ...).
    explicit tapeflow_tool(const tapeflow::tape_options& options) : tape(options) {}

    template <class K>
    double gradient(const K& kernel, const std::vector<double>& xd, std::vector<double>& g) {
        record(kernel, xd);
        sweep(g);
        return y.value();
    }

    // The two phases of a gradient (bench/record_phases.cpp times them apart).
    // Reset, the inputs' new values, record y = kernel(x).
    template <class K>
    void record(const K& kernel, const std::vector<double>& xd) {
        tape.reset();
        tape.start_recording();  // also makes it the thread's active tape
        x.resize(xd.size());
        // the values and the registration in one pass; the inputs keep their
        // identifiers from one gradient to the next (as Adept's set_value)
        tape.register_inputs(x.begin(), x.end(), xd.begin());
        y = kernel(x);
        tape.register_output(y);
        tape.stop_recording();
    }
    // Seed y, sweep, read every input's adjoint into g.
    void sweep(std::vector<double>& g) {
        tape.set_adjoint(y, 1.0);
        tape.sweep();
        g.resize(x.size());
        tape.adjoints(x.begin(), x.end(), g.begin());
    }

    tool_stats stats() const {
        const auto s = tape.statistics();
        // external entries (Eigen products and solves, custom adjoints) hold
        // their identifiers and captured values outside the record stream
        return {double(s.statements), double(s.arguments), double(s.record_bytes + s.external_bytes),
                double(s.allocated_bytes + s.adjoint_bytes + s.external_bytes)};
    }
};

/// The kernel's hand-written adjoint: the speed of light for a tape-free gradient.
struct hand_tool {
    static constexpr const char* name = "hand";
    template <class K>
    double gradient(const K& kernel, const std::vector<double>& x, std::vector<double>& g) {
        return kernel.adjoint(x, g);
    }
    tool_stats stats() const { return {}; }
};

}  // namespace bench
