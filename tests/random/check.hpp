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
//                         piecewise sweep with the prefetch thread;
//                7, 8     the same two with the spilled tiles compressed by
//                         zstd (tape_options::codec; only when the test is
//                         built with libzstd, TAPEFLOW_RANDOM_ZSTD).
//              Configurations 2, 6 and 8 move tiles on the prefetch thread.
//              They and 5 and 7 run for every slow_stride-th program only:
//              each tiny tile costs a thread round trip (about 0.1 ms on a
//              busy machine) or system calls, and these tapes have dozens of
//              tiles.
//              vector programs: jacobian() under configurations 0, 1, 2, 5
//              and 7 (one sweep per output);
//              reverse == dual within 1e-10 x |result| + 1e-12 x magnitude;
//   finite differences  Richardson-extrapolated central differences, where
//              all evaluations follow the path of the point itself and the
//              differences can resolve the derivative (else "unsteady", no
//              verdict: not smooth at the scale of h, dominated by rounding
//              noise, or carried by values that move by less than an ulp, as
//              a saturated erf whose tiny slope a loop then amplifies, or
//              some value inside not linear over the stencil: linear_at):
//              == dual and == reverse within 1e-5.
//   forward    (forward_program, forward_vector_program) tapeflow::Dual, one
//              run per input, and basic_dual<double, 4> / <double, 2> through
//              jacobian_forward (ceil(n / N) runs): == dual numbers and ==
//              reverse (configuration 0) within the tolerance of reverse, and
//              == finite differences as above. Programs with an eigen
//              statement are skipped (interpreter_eigen.cpp is not compiled
//              for tapeflow's Duals): tally.forward_skipped.
//   values     the double, dual, forward and reverse runs compute bit-identical values.
#pragma once

#include <array>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <tapeflow/tapeflow.hpp>
#ifdef TAPEFLOW_RANDOM_ZSTD
#include <tapeflow/stream/zstd_codec.hpp>
#endif

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
    std::uint64_t fd_nonlinear = 0;  ///< of fd_unsteady: some value of the program is not linear at h
    std::uint64_t statements = 0, small_tiles = 0, spilled_tiles = 0;
    std::uint64_t externals = 0;  ///< custom-adjoint entries (custom and eigen statements) recorded
    std::uint64_t compressed_tiles = 0, compressed_bytes = 0;  ///< spilled with zstd, bytes on disk
    std::uint64_t plain_tile_bytes = 0;                         ///< ... and their size uncompressed
    std::uint64_t forward_programs = 0;  ///< run in forward mode (forward_program, forward_vector_program)
    std::uint64_t forward_skipped = 0;   ///< ... of which skipped: an eigen statement
    std::uint64_t second_order_entries = 0;  ///< Hessian entries and H v entries compared (second_order_program)
    double worst_ad = 0, worst_fd = 0;  ///< largest error / tolerance seen (< 1 passes)
    std::array<std::uint64_t, std::size_t(op::count)> uses{};
    std::array<std::uint64_t, std::size_t(stmt::count)> kinds{};
    std::array<std::uint64_t, std::size_t(custom_form_count)> custom_uses{};
    std::array<std::uint64_t, std::size_t(eigen_form_count)> eigen_uses{};
    std::vector<std::string> failures;  ///< the first few, for the report

    std::uint64_t mismatches() const { return ad_mismatches + value_mismatches + fd_mismatches + errors; }
};

/// Whether the test is built with the Eigen statements and with compression.
#ifdef TAPEFLOW_RANDOM_EIGEN
inline constexpr bool with_eigen = true;
#else
inline constexpr bool with_eigen = false;
#endif
#ifdef TAPEFLOW_RANDOM_ZSTD
inline constexpr bool with_zstd = true;
#else
inline constexpr bool with_zstd = false;
#endif

class differential {
public:
    static constexpr std::size_t configurations = with_zstd ? 9 : 7;
    static constexpr const char* names[9] = {
        "default tape",
        "1024-byte tiles",
        "1024-byte tiles + scratchpad",
        "1088-byte tiles, piecewise sweep",
        "1088-byte tiles + scratchpad (synchronous), piecewise sweep",
        "1024-byte tiles, 4 KiB memory budget (spill file, synchronous)",
        "1088-byte tiles, 2-tile memory budget (spill file, prefetch thread), piecewise sweep",
        "1024-byte tiles, 4 KiB memory budget + zstd buffer (compressed spill file, synchronous)",
        "1088-byte tiles, 2-tile budget + zstd buffer (compressed spill, prefetch thread), piecewise sweep"};
    static constexpr double ad_relative = 1e-10, ad_absolute = 1e-12;
    static constexpr double fd_relative = 1e-5;
    /// Configurations 2, 5, 6, 7 and 8 (prefetch thread, spill file) run for
    /// every slow_stride-th program.
    static constexpr std::uint64_t slow_stride = 8;
    static constexpr bool slow[9] = {false, false, true, false, false, true, true, true, true};
    static constexpr bool piecewise_sweep[9] = {false, false, false, true, true, false, true, false, true};
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
          odd_spill_(tapeflow_test::tape_options(1088, true, 2 * 1088, true)),
          zstd_spill_(compressed(1024, 4096, false)),
          odd_zstd_spill_(compressed(1088, 2 * 1088, true)) {}

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
        std::vector<double> g0;
        for (std::size_t c = 0; c < configurations; ++c) {
            if (slow[c] && seed % slow_stride != 0) continue;
            tapeflow::tape* const t = tape_of(c);
            try {
                double y = 0;
                const std::vector<double> g =
                    piecewise_sweep[c] ? piecewise(*t, c, p, r, y) : driver(*t, c, p, r, y);
                if (y != r.y[0])
                    value_failure(p, std::string(names[c]) + ": reverse value differs from the double run");
                for (std::size_t i = 0; i < g.size(); ++i)
                    compare(p, c, 0, i, g[i], exact[i], r.magnitude[0][i]);
                if (c == 0) g0 = g;
            } catch (const std::exception& e) {
                ++tally.errors;
                fail(p, std::string(names[c]) + ": exception: " + e.what());
                if (t->is_recording()) t->stop_recording();  // for the next program
            }
        }
        if (g0.size() == exact.size()) finite_differences(p, r, g0);
    }

    /// One program with several outputs: jacobian() against the dual numbers.
    void vector_program(std::uint64_t seed, const generator_options& o) {
        const program p = generator(seed, o).make();
        reference r;
        if (!forward(p, r)) return;
        const std::size_t config[] = {0, 1, 2, 5, 7};
        for (std::size_t c = 0; c < (with_zstd ? 5 : 4); ++c) {
            if (slow[config[c]] && seed % slow_stride != 0) continue;
            tapeflow::tape* const t = tape_of(config[c]);
            try {
                t->activate();
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
                if (t->is_recording()) t->stop_recording();
            }
        }
    }

    /// One program with one output in forward mode: tapeflow::Dual (one run
    /// per input) and jacobian_forward<4> against the dual numbers, the
    /// reverse gradient and finite differences.
    void forward_program(std::uint64_t seed, generator_options o) {
        o.outputs = 1;
        const program p = generator(seed, o).make();
        reference r;
        if (!forward(p, r)) return;
        ++tally.forward_programs;
        try {
            const std::vector<std::vector<double>> tangents = dual_columns(p, r);
            const std::vector<std::vector<double>> lanes = forward_lanes<4>(p, r);
            default_.activate();
            const auto f = [&](const std::vector<tapeflow::Real>& x) {
                return std::move(interpreter<tapeflow::Real>(p).run(x)[0]);
            };
            const std::vector<double> reverse = tapeflow::gradient(f, r.x);
            for (std::size_t i = 0; i < r.x.size(); ++i) {
                const double m = r.magnitude[0][i];
                compare_as(p, "tapeflow::Dual against the dual numbers", 0, i, tangents[0][i],
                           r.jacobian[0][i], m);
                compare_as(p, "jacobian_forward<4> against the dual numbers", 0, i, lanes[0][i],
                           r.jacobian[0][i], m);
                compare_as(p, "tapeflow::Dual against reverse", 0, i, tangents[0][i], reverse[i], m);
                compare_as(p, "jacobian_forward<4> against reverse", 0, i, lanes[0][i], reverse[i], m);
            }
            finite_differences(p, r, tangents[0], "forward");
        } catch (const unsupported_statement&) {
            ++tally.forward_skipped;
        } catch (const std::exception& e) {
            ++tally.errors;
            fail(p, std::string("forward mode: exception: ") + e.what());
        }
    }

    /// One program with several outputs: jacobian_forward with 1, 2 and 4
    /// lanes against the dual numbers and against jacobian() (reverse).
    void forward_vector_program(std::uint64_t seed, const generator_options& o) {
        const program p = generator(seed, o).make();
        reference r;
        if (!forward(p, r)) return;
        ++tally.forward_programs;
        try {
            const std::vector<std::vector<double>> J[3] = {forward_lanes<1>(p, r), forward_lanes<2>(p, r),
                                                           forward_lanes<4>(p, r)};
            const char* what[3] = {"jacobian_forward<1>", "jacobian_forward<2>", "jacobian_forward<4>"};
            default_.activate();
            const auto f = [&](const std::vector<tapeflow::Real>& x) {
                return interpreter<tapeflow::Real>(p).run(x);
            };
            const std::vector<std::vector<double>> reverse = tapeflow::jacobian(f, r.x);
            for (int l = 0; l < 3; ++l) {
                if (J[l].size() != r.jacobian.size())
                    throw std::runtime_error(std::string(what[l]) + " has the wrong number of rows");
                for (std::size_t k = 0; k < J[l].size(); ++k)
                    for (std::size_t i = 0; i < J[l][k].size(); ++i) {
                        compare_as(p, what[l], k, i, J[l][k][i], r.jacobian[k][i], r.magnitude[k][i]);
                        compare_as(p, what[l], k, i, J[l][k][i], reverse[k][i], r.magnitude[k][i]);
                    }
            }
        } catch (const unsupported_statement&) {
            ++tally.forward_skipped;
        } catch (const std::exception& e) {
            ++tally.errors;
            fail(p, std::string("forward mode, jacobian_forward: exception: ") + e.what());
        }
    }

    /// One program with one output in second order (forward over reverse,
    /// tapeflow/hessian_drivers.hpp): check_second_order.hpp.
    void second_order_program(std::uint64_t seed, generator_options o);

private:
    /// The tape of configuration c.
    tapeflow::tape* tape_of(std::size_t c) {
        tapeflow::tape* const tapes[9] = {&default_, &small_,     &small_scratch_,   &odd_,
                                          &odd_scratch_, &spill_, &odd_spill_, zstd_spill_.get(),
                                          odd_zstd_spill_.get()};
        return tapes[c];
    }

    /// Options of a compressed spilling tape: `tiles` bytes of budget plus
    /// the codec's buffer (which counts toward the budget). Without zstd: none.
    static std::unique_ptr<tapeflow::tape> compressed([[maybe_unused]] std::size_t tile,
                                                      [[maybe_unused]] std::size_t tiles,
                                                      [[maybe_unused]] bool prefetch) {
#ifdef TAPEFLOW_RANDOM_ZSTD
        tapeflow::tape_options o = tapeflow_test::tape_options(tile, true, tiles, prefetch);
        o.codec = std::make_shared<tapeflow::zstd_codec>(1);
        o.memory_budget_bytes = tiles + o.codec->bound(tile);
        return std::make_unique<tapeflow::tape>(o);
#else
        return nullptr;
#endif
    }

    struct reference {
        std::vector<double> x, y;
        std::uint64_t signature = 0;
        double largest = 0;
        std::vector<std::vector<double>> jacobian;   ///< [output][input], from the dual numbers
        std::vector<std::vector<double>> magnitude;  ///< sum of |terms| of each entry (dual_magnitude)
    };

    /// [output][input] from tapeflow::Dual, one run per input seeded with
    /// tangent 1; checks the path and the values against the double run.
    std::vector<std::vector<double>> dual_columns(const program& p, const reference& r) {
        std::vector<std::vector<double>> J(r.y.size(), std::vector<double>(r.x.size()));
        for (std::size_t i = 0; i < r.x.size(); ++i) {
            std::vector<tapeflow::Dual> x(r.x.begin(), r.x.end());
            x[i].set_tangent(1.0);
            interpreter<tapeflow::Dual> run(p);
            const std::vector<tapeflow::Dual> y = run.run(x);
            if (run.signature != r.signature)
                value_failure(p, "a tapeflow::Dual run took another path than the double run");
            for (std::size_t k = 0; k < y.size(); ++k) {
                if (y[k].value() != r.y[k]) value_failure(p, "a tapeflow::Dual value differs from the double run");
                J[k][i] = y[k].tangent();
            }
        }
        return J;
    }

    /// The Jacobian by tapeflow::jacobian_forward<N>.
    template <std::size_t N>
    std::vector<std::vector<double>> forward_lanes(const program& p, const reference& r) {
        const auto f = [&](const auto& x) {
            using D = typename std::decay_t<decltype(x)>::value_type;
            return interpreter<D>(p).run(x);
        };
        return tapeflow::jacobian_forward<N>(f, r.x);
    }

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
        for (std::size_t k = 0; k < tally.custom_uses.size(); ++k) tally.custom_uses[k] += run.custom_uses[k];
        for (std::size_t k = 0; k < tally.eigen_uses.size(); ++k) tally.eigen_uses[k] += run.eigen_uses[k];
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

    /// Counts the spilled tiles of configurations 5 to 8 since `before`.
    void count_spills(std::size_t c, const tapeflow::tape_statistics& before, const tapeflow::tape& t) {
        const tapeflow::tape_statistics after = t.statistics();
        if (c < 5) return;
        tally.spilled_tiles += after.tiles_spilled - before.tiles_spilled;
        if (c < 7) return;
        tally.compressed_tiles += after.tiles_spilled - before.tiles_spilled;
        tally.compressed_bytes += after.bytes_spilled - before.bytes_spilled;
        tally.plain_tile_bytes += (after.tiles_spilled - before.tiles_spilled) * after.tile_bytes;
    }

    std::vector<double> driver(tapeflow::tape& t, std::size_t c, const program& p, const reference& r,
                               double& y) {
        t.activate();
        std::size_t regions = 0;
        const auto f = [&](const std::vector<tapeflow::Real>& x) {
            interpreter<tapeflow::Real> run(p);
            std::vector<tapeflow::Real> out = run.run(x);
            regions = run.regions;
            return std::move(out[0]);
        };
        const tapeflow::tape_statistics before = t.statistics();
        const auto result = tapeflow::value_and_gradient(f, r.x);
        y = result.value;
        if (t.regions().size() != regions)
            value_failure(p, "tape.regions() does not count the Region scopes");
        if (c == 1) tally.small_tiles += t.statistics().tiles;
        count_spills(c, before, t);
        return result.gradient;
    }

    std::vector<double> piecewise(tapeflow::tape& t, std::size_t c, const program& p, const reference& r,
                                  double& y) {
        t.reset();
        const tapeflow::tape_statistics before = t.statistics();
        t.start_recording();
        std::vector<tapeflow::Real> x(r.x.begin(), r.x.end());
        for (tapeflow::Real& xi : x) t.register_input(xi);
        std::vector<tapeflow::position> marks;
        interpreter<tapeflow::Real> run(p);
        run.after_statement = [&] { marks.push_back(t.get_position()); };
        tapeflow::Real out = std::move(run.run(x)[0]);
        t.register_output(out);
        t.stop_recording();
        if (c == 3) {
            tally.statements += t.statistics().statements;
            tally.externals += t.statistics().externals;
        }
        y = out.value();

        t.set_adjoint(out, 1.0);
        tapeflow::position from = t.get_position();
        for (auto m = marks.rbegin(); m != marks.rend(); ++m) {
            t.sweep(from, *m);
            from = *m;
        }
        t.sweep(from, tapeflow::position{});
        // after the sweep: until then the prefetch thread may still be
        // writing tiles that tiles_spilled counts and bytes_spilled not yet
        count_spills(c, before, t);
        std::vector<double> g(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) g[i] = t.adjoint(x[i]);

        t.clear_adjoints();  // the same tape again, whole, with another seed
        t.set_adjoint(out, -2.0);
        t.sweep();
        // Scaling by -2 is exact except where partial sums are subnormal (below 2.2e-308).
        for (std::size_t i = 0; i < x.size(); ++i)
            if (!(std::fabs(t.adjoint(x[i]) + 2 * g[i]) <= 1e-15 * std::fabs(g[i]) + 1e-300)) {
                ++tally.ad_mismatches;
                fail(p, std::string(names[c]) + ": second sweep with adjoint -2 is not -2 x the first");
            }
        return g;
    }

    /// reverse == exact up to rounding: relative to the result, and relative to
    /// the magnitude of the terms it sums (cancellation). Below 1e-100 both are
    /// zero: products of partials underflow differently in the two orders.
    void compare(const program& p, std::size_t config, std::size_t output, std::size_t input, double reverse,
                 double exact, double magnitude) {
        compare_as(p, names[config], output, input, reverse, exact, magnitude);
    }
    void compare_as(const program& p, const char* what, std::size_t output, std::size_t input, double reverse,
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
        s << what << ", output " << output << ", input " << input << ": reverse " << reverse
          << ", dual " << exact << " (terms of magnitude " << magnitude << ")";
        fail(p, s.str());
    }

    /// `derivative` (of the mode named `mode`) and the dual numbers against finite differences.
    void finite_differences(const program& p, const reference& r, const std::vector<double>& derivative,
                            const char* mode = "reverse");

    /// Whether every value the program computes moves linearly over the
    /// stencil: its central differences at steps h, 2h and 4h (values[s][0]
    /// at x + 2^s h e_i, values[s][1] at x - 2^s h e_i) agree to a tenth.
    /// The output's differences can look steady while a value inside is far
    /// from linear (the tangents of a chaotic loop reach 1e12, then a
    /// saturated tanh brings the output's back to 1e2; a bump narrower than
    /// h): then they do not measure the derivative, and there is no verdict.
    /// Only double runs: a wrong dual formula cannot hide behind this.
    static bool linear_at(double h, const std::vector<double> (&values)[3][2]);

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
    std::unique_ptr<tapeflow::tape> zstd_spill_, odd_zstd_spill_;  ///< null without zstd
};

}  // namespace tapeflow_random

#include "random/check_finite_differences.hpp"
#include "random/check_second_order.hpp"
