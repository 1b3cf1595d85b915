// tests/random/check_second_order.hpp - the second-order check of check.hpp:
// one random program with one output, recorded with basic_real<basic_dual>
// (forward over reverse, tapeflow/hessian_drivers.hpp):
//
//   value, gradient    the value of value_gradient_and_hessian<4> == the
//                      double run (to the last bits, see there), its
//                      gradient == the dual numbers (tolerance of the
//                      reverse checks);
//   symmetry           H[i][j] == H[j][i];
//   lanes              hessian_vector_product (1 lane) along a random v ==
//                      the dense Hessian (4 lanes) times v;
//   finite differences H v == Richardson-extrapolated central differences
//                      of tapeflow::gradient (reverse, first order) along v,
//                      where the program follows the path of x at every
//                      point of the stencil and the differences are steady
//                      (else no verdict: tally.fd_kinks, fd_unsteady), to
//                      1e-5 plus the extrapolation's own error estimate.
//
// The second derivatives have no independent reference of the dual-number
// kind here (tests/support/dual.hpp is first order), so the tolerances are
// set from the sizes involved: for an entry that sums second-order terms of
// size up to M (the largest |H| in its row and column, and |(H v)_i| with
// the |v| weights), rounding gives a few eps x M per operation of the
// program; 1e-9 x M + 1e-12 leaves room for a few thousand operations.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <vector>

#include "random/check.hpp"

namespace tapeflow_random {

inline void differential::second_order_program(std::uint64_t seed, generator_options o) {
    o.outputs = 1;
    o.eigen = false;  // interpreter_eigen.cpp is not compiled for basic_real<Dual>
    const program p = generator(seed, o).make();
    reference r;
    if (!forward(p, r)) return;
    ++tally.forward_programs;
    const std::size_t n = r.x.size();
    std::mt19937_64 rng(p.seed ^ 0x5851f42d4c957f2dull);
    std::vector<double> v(n);
    for (double& vi : v) vi = -1 + 2 * double(rng() >> 11) * 0x1.0p-53;
    const auto f = [&](const auto& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        return std::move(interpreter<T>(p).run(x)[0]);
    };
    const auto mismatch = [&](const std::string& what, double got, double want, double scale) {
        const double tolerance = 1e-9 * scale + 1e-12;
        const double error = std::fabs(got - want);
        tally.worst_ad = std::max(tally.worst_ad, error / tolerance);
        ++tally.second_order_entries;
        if (error <= tolerance) return;
        ++tally.ad_mismatches;
        std::ostringstream s;
        s.precision(17);
        s << what << ": " << got << " against " << want << " (scale " << scale << ")";
        fail(p, s.str());
    };
    try {
        const auto h = tapeflow::value_gradient_and_hessian<4>(f, r.x);
        const std::vector<double> hv = tapeflow::hessian_vector_product(f, r.x, v);
        // Equal up to the last bits, not bit for bit: where inlining makes an
        // exponent a constant, the compiler turns the double run's pow(x, 2)
        // into x * x; the Dual's pow, inlined less deeply (N = 4), calls
        // libm's pow, which can differ in the last bit (seen: 1 ulp).
        if (!(std::fabs(h.value - r.y[0]) <= 1e-14 * std::fabs(r.y[0]) + 1e-300))
            value_failure(p, "the value of basic_real<Dual> differs from the double run");
        for (std::size_t i = 0; i < n; ++i)
            compare_as(p, "the gradient of basic_real<Dual> against the dual numbers", 0, i, h.gradient[i],
                       r.jacobian[0][i], r.magnitude[0][i]);
        // The size of the second-order terms around entry (i, j) and of (H v)_i.
        std::vector<double> largest(n, 0.0);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                largest[i] = std::max(largest[i], std::fabs(h.hessian[i][j]));
                largest[j] = std::max(largest[j], std::fabs(h.hessian[i][j]));
            }
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < i; ++j)
                mismatch("symmetry: H[" + std::to_string(i) + "][" + std::to_string(j) + "] against H[" +
                             std::to_string(j) + "][" + std::to_string(i) + "]",
                         h.hessian[i][j], h.hessian[j][i], std::max(largest[i], largest[j]));
            double dense = 0, weights = 0;
            for (std::size_t j = 0; j < n; ++j) {
                dense += h.hessian[i][j] * v[j];
                weights += std::fabs(h.hessian[i][j] * v[j]);
            }
            mismatch("hessian_vector_product against hessian<4> times v, entry " + std::to_string(i), hv[i],
                     dense, weights);
        }

        // Finite differences of the reverse gradient along v, at steps s = h, 2h, 4h.
        const double step = 5e-5;
        std::vector<double> d[3];
        bool same_path = true;
        for (int k = 0; k < 3 && same_path; ++k) {
            const double s = step * double(1 << k);
            std::vector<double> g[2];
            for (int side = 0; side < 2 && same_path; ++side) {
                std::vector<double> x = r.x;
                for (std::size_t j = 0; j < n; ++j) x[j] += (side == 0 ? s : -s) * v[j];
                interpreter<double> run(p);
                run.run(x);
                same_path = run.signature == r.signature && run.finite;
                default_.activate();
                g[side] = tapeflow::gradient(
                    [&](const std::vector<tapeflow::Real>& a) {
                        return std::move(interpreter<tapeflow::Real>(p).run(a)[0]);
                    },
                    x);
            }
            if (!same_path) break;
            d[k].resize(n);
            for (std::size_t i = 0; i < n; ++i) d[k][i] = (g[0][i] - g[1][i]) / (2 * s);
        }
        if (!same_path) {  // a branch, a kink or a jump lies within 4h
            tally.fd_kinks += n;
            return;
        }
        for (std::size_t i = 0; i < n; ++i) {
            // Richardson R(s) = (4 D(s) - D(2s)) / 3 has error O(s^4): R(h) - R(2h)
            // estimates 15 times the error of R(h).
            const double r1 = (4 * d[0][i] - d[1][i]) / 3, r2 = (4 * d[1][i] - d[2][i]) / 3;
            // Rounding of the gradients (eps x their terms, over 2s; a few
            // times that after extrapolation) is noise: no verdict below it.
            const double noise = 1e-14 * (1 + r.magnitude[0][i]) / step;
            // Steady: the two extrapolations agree (judged on them alone, not
            // on hv[i], which is what is being checked).
            if (std::fabs(r1 - r2) > 1e-3 * std::max(std::fabs(r1), std::fabs(r2)) + noise) {  // no verdict
                ++tally.fd_unsteady;
                continue;
            }
            ++tally.fd_checked;
            // R(h) - R(2h) is about 15 times the error left in R(h): allow twice that.
            const double truncation = 2 * std::fabs(r1 - r2) / 15;
            const double scale = std::max(std::fabs(hv[i]), std::fabs(r1));
            const double error = std::fabs(hv[i] - r1), tolerance = 1e-5 * scale + truncation + noise;
            tally.worst_fd = std::max(tally.worst_fd, error / tolerance);
            if (error > tolerance) {
                ++tally.fd_mismatches;
                std::ostringstream s;
                s.precision(17);
                s << "H v, entry " << i << ": forward over reverse " << hv[i]
                  << ", finite differences of the reverse gradient " << r1 << " (at 2h: " << r2 << ")";
                fail(p, s.str());
            }
        }
    } catch (const unsupported_statement&) {
        ++tally.forward_skipped;
    } catch (const std::exception& e) {
        ++tally.errors;
        fail(p, std::string("second order: exception: ") + e.what());
    }
}

}  // namespace tapeflow_random
