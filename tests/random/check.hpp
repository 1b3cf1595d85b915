// tests/random/check.hpp - runs one random program every way and compares.
//
//   reference  double run (values, path signature), then per input one run
//              of dual numbers (the exact derivatives, forward mode) and one
//              of dual_magnitude (the size of the terms each derivative sums);
//   reverse    tapeflow under several tape configurations (names below):
//                0, 1, 2  value_and_gradient on the thread's default tape and
//                         on tapes of minimum (1024-byte) tiles, with and
//                         without the scratchpad, so records cross many tiles;
//                3, 4     1088-byte tiles, recorded by hand and swept back
//                         statement by statement with sweep(from, to), then
//                         swept again whole with adjoint -2 (must give -2 x
//                         the gradient: the tape is reusable);
//                5, 6     a memory budget of a few tiles, so most tiles go to
//                         the spill file and are staged back for the sweep:
//                         value_and_gradient with synchronous moves, and the
//                         piecewise sweep with the prefetch thread.
//              Configurations 2 and 6 move tiles on the prefetch thread. They
//              and 5 run for every slow_stride-th program only: each tiny tile
//              costs a thread round trip (about 0.1 ms on a busy machine) or
//              system calls, and these tapes have dozens of tiles.
//              vector programs: jacobian() under configurations 0, 1, 2 and 5
//              (one sweep per output);
//              reverse == dual within 1e-10 x |result| + 1e-12 x magnitude;
//   finite differences  Richardson-extrapolated central differences, where
//              all evaluations follow the path of the point itself and the
//              differences can resolve the derivative (else "unsteady", no
//              verdict: not smooth at the scale of h, dominated by rounding
//              noise, or carried by values that move by less than an ulp, as
//              a saturated erf whose tiny slope a loop then amplifies):
//              == dual and == reverse within 1e-5.
//   values     the double, dual and reverse runs compute bit-identical values.
#pragma once

#include <array>
#include <cmath>
#include <exception>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tapeflow/tapeflow.hpp>

#include "support/options.hpp"
#include "random/interpreter.hpp"
#include "random/print.hpp"
#include "support/dual.hpp"

namespace tapeflow_random {

struct tallies {
    std::uint64_t programs = 0, rejected = 0, inputs = 0, nonzero = 0;
    std::uint64_t cells = 0;    ///< derivatives of the reference (outputs x inputs)
    std::uint64_t entries = 0;  ///< comparisons of a reverse derivative with the reference
    std::uint64_t ad_mismatches = 0, value_mismatches = 0, errors = 0;
    std::uint64_t fd_checked = 0, fd_kinks = 0, fd_unsteady = 0, fd_mismatches = 0;
    std::uint64_t statements = 0, small_tiles = 0, spilled_tiles = 0;
    double worst_ad = 0, worst_fd = 0;  ///< largest error / tolerance seen (< 1 passes)
    std::array<std::uint64_t, std::size_t(op::count)> uses{};
    std::array<std::uint64_t, std::size_t(stmt::region) + 1> kinds{};
    std::vector<std::string> failures;  ///< the first few, for the report

    std::uint64_t mismatches() const { return ad_mismatches + value_mismatches + fd_mismatches + errors; }
};

class differential {
public:
    static constexpr std::size_t configurations = 7;
    static constexpr const char* names[configurations] = {
        "default tape",
        "1024-byte tiles",
        "1024-byte tiles + scratchpad",
        "1088-byte tiles, piecewise sweep",
        "1088-byte tiles + scratchpad (synchronous), piecewise sweep",
        "1024-byte tiles, 4 KiB memory budget (spill file, synchronous)",
        "1088-byte tiles, 2-tile memory budget (spill file, prefetch thread), piecewise sweep"};
    static constexpr double ad_relative = 1e-10, ad_absolute = 1e-12;
    static constexpr double fd_relative = 1e-5;
    /// Configurations 2, 5 and 6 (prefetch thread, spill file) run for every
    /// slow_stride-th program.
    static constexpr std::uint64_t slow_stride = 8;
    static constexpr bool slow[configurations] = {false, false, true, false, false, true, true};
    /// Runs whose values exceed this are rejected (finite differences would be noise).
    static constexpr double largest_value = 1e8;

    tallies tally;
    /// Program seeds are TAPEFLOW_RANDOM_SEED + i + seed_offset (for the failure reports).
    std::uint64_t seed_offset = 0;

    differential()
        : default_(tapeflow::tape::active()),
          small_(tapeflow_test::tape_options(1024, false)),
          small_scratch_(tapeflow_test::tape_options(1024, true)),
          odd_(tapeflow_test::tape_options(1088, false)),
          odd_scratch_(tapeflow_test::tape_options(1088, true, std::size_t(-1), false)),
          spill_(tapeflow_test::tape_options(1024, true, 4096, false)),
          odd_spill_(tapeflow_test::tape_options(1088, true, 2 * 1088, true)) {}

    /// One program with one output: gradient under every configuration + finite differences.
    void scalar_program(std::uint64_t seed, generator_options o) {
        o.outputs = 1;
        scalar_program(generator(seed, o).make());
    }
    /// The same for a given program (p.outputs.size() must be 1); the fuzzer
    /// decodes its input into `p`. Slow configurations run when p.seed is a
    /// multiple of slow_stride.
    void scalar_program(const program& p) {
        const std::uint64_t seed = p.seed;
        reference r;
        if (!forward(p, r)) return;
        const std::vector<double>& exact = r.jacobian[0];
        tapeflow::tape* const tapes[configurations] = {&default_,     &small_, &small_scratch_, &odd_,
                                                       &odd_scratch_, &spill_, &odd_spill_};
        const bool piecewise_sweep[configurations] = {false, false, false, true, true, false, true};
        std::vector<double> g0;
        for (std::size_t c = 0; c < configurations; ++c) {
            if (slow[c] && seed % slow_stride != 0) continue;
            try {
                double y = 0;
                const std::vector<double> g =
                    piecewise_sweep[c] ? piecewise(*tapes[c], p, r, y) : driver(*tapes[c], p, r, y);
                if (y != r.y[0])
                    value_failure(p, std::string(names[c]) + ": reverse value differs from the double run");
                for (std::size_t i = 0; i < g.size(); ++i)
                    compare(p, c, 0, i, g[i], exact[i], r.magnitude[0][i]);
                if (c == 0) g0 = g;
            } catch (const std::exception& e) {
                ++tally.errors;
                fail(p, std::string(names[c]) + ": exception: " + e.what());
                if (tapes[c]->is_recording()) tapes[c]->stop_recording();  // for the next program
            }
        }
        if (g0.size() == exact.size()) finite_differences(p, r, g0);
    }

    /// One program with several outputs: jacobian() against the dual numbers.
    void vector_program(std::uint64_t seed, const generator_options& o) {
        const program p = generator(seed, o).make();
        reference r;
        if (!forward(p, r)) return;
        tapeflow::tape* const tapes[] = {&default_, &small_, &small_scratch_, &spill_};
        const std::size_t config[] = {0, 1, 2, 5};
        for (std::size_t c = 0; c < 4; ++c) {
            if (slow[config[c]] && seed % slow_stride != 0) continue;
            try {
                tapes[c]->activate();
                const auto f = [&](const std::vector<tapeflow::Real>& x) {
                    return interpreter<tapeflow::Real>(p).run(x);
                };
                const std::vector<std::vector<double>> J = tapeflow::jacobian(f, r.x);
                if (J.size() != r.jacobian.size())
                    throw std::runtime_error("jacobian has the wrong number of rows");
                for (std::size_t k = 0; k < J.size(); ++k)
                    for (std::size_t i = 0; i < J[k].size(); ++i)
                        compare(p, config[c], k, i, J[k][i], r.jacobian[k][i], r.magnitude[k][i]);
            } catch (const std::exception& e) {
                ++tally.errors;
                fail(p, std::string(names[config[c]]) + ", jacobian: exception: " + e.what());
                if (tapes[c]->is_recording()) tapes[c]->stop_recording();
            }
        }
    }

private:
    struct reference {
        std::vector<double> x, y;
        std::uint64_t signature = 0;
        double largest = 0;
        std::vector<std::vector<double>> jacobian;   ///< [output][input], from the dual numbers
        std::vector<std::vector<double>> magnitude;  ///< sum of |terms| of each entry (dual_magnitude)
    };

    /// Inputs, the double run and the dual runs; false when the run is rejected.
    bool forward(const program& p, reference& r) {
        ++tally.programs;
        std::mt19937_64 rng(p.seed ^ 0x9e3779b97f4a7c15ull);
        for (int i = 0; i < p.inputs; ++i) r.x.push_back(-2 + 4 * double(rng() >> 11) * 0x1.0p-53);
        interpreter<double> run(p);
        r.y = run.run(r.x);
        r.signature = run.signature;
        r.largest = run.largest;
        for (std::size_t o = 0; o < tally.uses.size(); ++o) tally.uses[o] += run.uses[o];
        for (std::size_t k = 0; k < tally.kinds.size(); ++k) tally.kinds[k] += run.kinds[k];
        if (!run.finite || run.largest > largest_value) return reject();
        r.jacobian.assign(r.y.size(), std::vector<double>(r.x.size()));
        r.magnitude = r.jacobian;
        for (std::size_t i = 0; i < r.x.size(); ++i) {
            if (!tangents<tapeflow_test::dual>(p, r, i, r.jacobian)) return reject();
            if (!tangents<tapeflow_test::dual_magnitude>(p, r, i, r.magnitude)) return reject();
            for (std::size_t k = 0; k < r.y.size(); ++k) tally.nonzero += r.jacobian[k][i] != 0;
        }
        tally.inputs += r.x.size();
        tally.cells += r.x.size() * r.y.size();
        return true;
    }
    /// Column i of `out` from a run of dual numbers of type D seeded on input i;
    /// false when a derivative overflowed.
    template <class D>
    bool tangents(const program& p, const reference& r, std::size_t i,
                  std::vector<std::vector<double>>& out) {
        std::vector<D> x(r.x.begin(), r.x.end());
        x[i].d = 1;
        interpreter<D> run(p);
        const std::vector<D> y = run.run(x);
        if (run.signature != r.signature)
            value_failure(p, "a dual run took another path than the double run");
        for (std::size_t k = 0; k < y.size(); ++k) {
            if (y[k].v != r.y[k]) value_failure(p, "a dual value differs from the double run");
            if (!std::isfinite(y[k].d)) return false;
            out[k][i] = y[k].d;
        }
        return true;
    }
    bool reject() {
        ++tally.rejected;
        return false;
    }

    std::vector<double> driver(tapeflow::tape& t, const program& p, const reference& r, double& y) {
        t.activate();
        std::size_t regions = 0;
        const auto f = [&](const std::vector<tapeflow::Real>& x) {
            interpreter<tapeflow::Real> run(p);
            std::vector<tapeflow::Real> out = run.run(x);
            regions = run.regions;
            return std::move(out[0]);
        };
        const std::uint64_t spilled = t.statistics().tiles_spilled;
        const auto result = tapeflow::value_and_gradient(f, r.x);
        y = result.value;
        if (t.regions().size() != regions)
            value_failure(p, "tape.regions() does not count the Region scopes");
        if (&t == &small_) tally.small_tiles += t.statistics().tiles;
        if (&t == &spill_) tally.spilled_tiles += t.statistics().tiles_spilled - spilled;
        return result.gradient;
    }

    std::vector<double> piecewise(tapeflow::tape& t, const program& p, const reference& r, double& y) {
        t.reset();
        const std::uint64_t spilled = t.statistics().tiles_spilled;
        t.start_recording();
        std::vector<tapeflow::Real> x(r.x.begin(), r.x.end());
        for (tapeflow::Real& xi : x) t.register_input(xi);
        std::vector<tapeflow::position> marks;
        interpreter<tapeflow::Real> run(p);
        run.after_statement = [&] { marks.push_back(t.get_position()); };
        tapeflow::Real out = std::move(run.run(x)[0]);
        t.register_output(out);
        t.stop_recording();
        if (&t == &odd_) tally.statements += t.statistics().statements;
        if (&t == &odd_spill_) tally.spilled_tiles += t.statistics().tiles_spilled - spilled;
        y = out.value();

        t.set_adjoint(out, 1.0);
        tapeflow::position from = t.get_position();
        for (auto m = marks.rbegin(); m != marks.rend(); ++m) {
            t.sweep(from, *m);
            from = *m;
        }
        t.sweep(from, tapeflow::position{});
        std::vector<double> g(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) g[i] = t.adjoint(x[i]);

        t.clear_adjoints();  // the same tape again, whole, with another seed
        t.set_adjoint(out, -2.0);
        t.sweep();
        // Scaling by -2 is exact except where partial sums are subnormal (below 2.2e-308).
        for (std::size_t i = 0; i < x.size(); ++i)
            if (!(std::fabs(t.adjoint(x[i]) + 2 * g[i]) <= 1e-15 * std::fabs(g[i]) + 1e-300)) {
                ++tally.ad_mismatches;
                fail(p, std::string(names[&t == &odd_           ? 3
                                          : &t == &odd_scratch_ ? 4
                                                                : 6]) +
                            ": second sweep with adjoint -2 is not -2 x the first");
            }
        return g;
    }

    /// reverse == exact up to rounding: relative to the result, and relative to
    /// the magnitude of the terms it sums (cancellation). Below 1e-100 both are
    /// zero: products of partials underflow differently in the two orders.
    void compare(const program& p, std::size_t config, std::size_t output, std::size_t input, double reverse,
                 double exact, double magnitude) {
        ++tally.entries;
        const double tolerance =
            ad_relative * std::fmax(std::fabs(reverse), std::fabs(exact)) + ad_absolute * magnitude + 1e-100;
        const double error = std::fabs(reverse - exact);
        if (error <= tolerance) {
            tally.worst_ad = std::fmax(tally.worst_ad, error / tolerance);
            return;
        }
        ++tally.ad_mismatches;
        std::ostringstream s;
        s.precision(17);
        s << names[config] << ", output " << output << ", input " << input << ": reverse " << reverse
          << ", dual " << exact << " (terms of magnitude " << magnitude << ")";
        fail(p, s.str());
    }

    void finite_differences(const program& p, const reference& r, const std::vector<double>& reverse);

    /// d output / d input i, leaving out values that change by less than a
    /// quarter ulp when input i moves by h.
    double resolvable_derivative(const program& p, const reference& r, std::size_t i, double h) {
        std::vector<tapeflow_test::dual> x(r.x.begin(), r.x.end());
        x[i].d = 1;
        interpreter<tapeflow_test::dual> run(p);
        run.after_value = [h](tapeflow_test::dual& v) {
            if (std::fabs(v.d * h) < 0.25 * std::numeric_limits<double>::epsilon() * std::fabs(v.v)) v.d = 0;
        };
        return run.run(x)[0].d;
    }

    void value_failure(const program& p, const std::string& what) {
        ++tally.value_mismatches;
        fail(p, what);
    }
    void fail(const program& p, const std::string& what) {
        if (tally.failures.size() >= 8) return;
        std::ostringstream s;
        s << "seed " << p.seed << " (TAPEFLOW_RANDOM_SEED=" << p.seed - seed_offset
          << " TAPEFLOW_RANDOM_PROGRAMS=1): " << what;
        if (tally.failures.empty()) s << "\nthe program:\n" << to_string(p);
        tally.failures.push_back(s.str());
    }

    tapeflow::tape& default_;
    tapeflow::tape small_, small_scratch_, odd_, odd_scratch_, spill_, odd_spill_;
};

}  // namespace tapeflow_random

#include "random/check_finite_differences.hpp"
