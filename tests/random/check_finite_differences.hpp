// tests/random/check_finite_differences.hpp - the finite-difference check of
// check.hpp: is the derivative resolvable at step h, and does it match?
#pragma once

#include <cmath>
#include <sstream>
#include <vector>

#include "random/check.hpp"

namespace tapeflow_random {

inline void differential::finite_differences(const program& p, const reference& r,
                                             const std::vector<double>& reverse, const char* mode) {
    const std::vector<double>& exact = r.jacobian[0];
    for (std::size_t i = 0; i < r.x.size(); ++i) {
        // Central differences D(s) at s = h, 2h, 4h; Richardson R(s) = (4 D(s) - D(2s)) / 3
        // has error O(s^4), so R(h) - R(2h) estimates 15 times the error of R(h).
        const double h = 5e-5 * std::fmax(1.0, std::fabs(r.x[i]));
        double d[3], curvature[3];  // D(s) and second differences (f(x+s) - 2 f(x) + f(x-s)) / s^2
        std::vector<double> values[3][2];  // every value the program computes, at x + s and x - s
        bool same_path = true;
        for (int s = 0; s < 3 && same_path; ++s) {
            const double step = h * double(1 << s);
            double f[2];
            for (int side = 0; side < 2; ++side) {
                std::vector<double> x = r.x;
                x[i] += side == 0 ? step : -step;
                interpreter<double> run(p);
                std::vector<double>& trace = values[s][side];
                run.after_value = [&trace](double& v) { trace.push_back(v); };
                f[side] = run.run(x)[0];
                same_path = same_path && run.signature == r.signature && run.finite;
            }
            d[s] = (f[0] - f[1]) / (2 * step);
            curvature[s] = (f[0] - 2 * r.y[0] + f[1]) / (step * step);
        }
        if (!same_path) {  // a branch, a kink or a jump lies within 4h
            ++tally.fd_kinks;
            continue;
        }
        if (!linear_at(h, values)) {
            ++tally.fd_unsteady;
            ++tally.fd_nonlinear;
            continue;
        }
        // What differences of step h can see: the derivative with the tangent
        // of every value that changes by less than a quarter ulp over h dropped
        // (a saturated erf or tanh; harmless unless a loop amplifies it).
        const double visible = resolvable_derivative(p, r, i, h);
        if (!(std::fabs(visible - exact[i]) <= 1e-2 * fd_relative * std::fabs(exact[i]))) {
            ++tally.fd_unsteady;
            continue;
        }
        const double r1 = (4 * d[0] - d[1]) / 3, r2 = (4 * d[1] - d[2]) / 3;
        // Rounding noise of the differences: some hundred ulps of the largest
        // value, amplified as the terms of the derivative amplify (magnitude), over h.
        const double noise = 1e-13 * (1 + r.largest) * std::fmax(1.0, r.magnitude[0][i]) / h;
        // No change at all though the derivative is not 0: the changes are below
        // the rounding of the output (saturated paths, then amplified).
        const bool flat = d[0] == 0 && d[1] == 0 && d[2] == 0 && (exact[i] != 0 || reverse[i] != 0);
        // Ill-conditioned: the noise is not small against the derivative (terms
        // amplified by orders of magnitude, e.g. through loops).
        const bool noisy = noise > 1e-3 * std::fmax(std::fabs(exact[i]), std::fabs(r1));
        // A derivative that no function bounded by the values seen can keep over
        // the 8h of the stencil: structure below the resolution of double (the
        // derivative of a chaotic map iterated in a loop), which differences cannot see.
        const bool unresolved = std::fabs(exact[i]) * 8 * h > 2 * (1 + r.largest);
        // Steady: R(h) and R(2h) agree, and the plain difference D(h) is already
        // close (else the derivative varies on the scale of h and the error
        // terms are not yet the asymptotic ones the extrapolation assumes);
        // the second differences at h and 2h agree too (central differences
        // skip f(x) itself: they would miss a bump narrower than h around x).
        const double size = std::fmax(std::fabs(r1), std::fabs(r2));
        const double bend = std::fmax(std::fabs(curvature[0]), std::fabs(curvature[1]));
        const bool steady = std::fabs(r1 - r2) <= 0.5 * fd_relative * size + noise &&
                            std::fabs(d[0] - r1) <= fd_relative * size + noise &&
                            std::fabs(curvature[0] - curvature[1]) <= 0.25 * bend + 4 * noise / h;
        if (flat || unresolved || (noisy && exact[i] != 0) || !steady) {
            ++tally.fd_unsteady;  // not smooth, or not resolved at the scale of h: no verdict
            continue;
        }
        ++tally.fd_checked;
        const double g[2] = {exact[i], reverse[i]};
        for (int k = 0; k < 2; ++k) {
            const double tolerance = fd_relative * std::fmax(std::fabs(g[k]), std::fabs(r1)) + noise;
            const double error = std::fabs(g[k] - r1);
            tally.worst_fd = std::fmax(tally.worst_fd, error / tolerance);
            if (error > tolerance) {
                ++tally.fd_mismatches;
                std::ostringstream s;
                s.precision(17);
                s << "input " << i << ": " << (k == 0 ? "dual" : mode) << " " << g[k]
                  << ", finite differences " << r1 << " (h " << h << ", noise " << noise << ")";
                fail(p, s.str());
            }
        }
    }
}

inline bool differential::linear_at(double h, const std::vector<double> (&values)[3][2]) {
    const std::size_t n = values[0][0].size();
    for (const auto& step : values)
        if (step[0].size() != n || step[1].size() != n) return false;
    for (std::size_t k = 0; k < n; ++k) {
        double difference[3], size = 0, scale = 0;
        for (int s = 0; s < 3; ++s) {
            difference[s] = (values[s][0][k] - values[s][1][k]) / (2 * h * double(1 << s));
            size = std::fmax(size, std::fabs(difference[s]));
            scale = std::fmax(scale, std::fmax(std::fabs(values[s][0][k]), std::fabs(values[s][1][k])));
        }
        // A smooth value's differences at h and 4h differ by 5 h^2 f''' / 2; a
        // tenth of the derivative is far beyond that. Rounding noise: some
        // ulps of the value over h.
        const double noise = 1e-11 * (1 + scale) / h;
        for (int s = 1; s < 3; ++s)
            if (!(std::fabs(difference[s] - difference[0]) <= 0.1 * size + noise)) return false;
    }
    return true;
}

}  // namespace tapeflow_random
