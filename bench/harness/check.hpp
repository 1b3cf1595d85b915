// bench/harness/check.hpp - gradients are checked before anything is timed.
//
// Every tool's gradient must match the hand-written adjoint to `tolerance`
// (relative to the gradient's largest component), and the hand-written
// adjoint must match central finite differences along a few random
// directions (a full finite-difference gradient would cost 2n primals).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernel.hpp"

namespace bench {

inline double max_abs(const std::vector<double>& v) {
    double m = 0.0;
    for (double x : v) m = std::max(m, std::fabs(x));
    return m;
}

/// Largest |a_i - b_i| relative to max |b|.
inline double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return INFINITY;
    double d = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
    const double scale = max_abs(b);
    return scale > 0 ? d / scale : d;
}

/// Directional derivative g.v against (f(x + hv) - f(x - hv)) / 2h for 3 random v.
template <class K>
bool check_against_finite_differences(const K& kernel, const std::vector<double>& g,
                                      std::string& report) {
    const std::vector<double> x = kernel.inputs();
    bool ok = true;
    for (std::uint64_t d = 0; d < 3; ++d) {
        const std::vector<double> v = uniform(x.size(), -1.0, 1.0, 1000 + d);
        double gv = 0.0, scale = 0.0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            gv += g[i] * v[i];
            scale += std::fabs(g[i] * v[i]);
        }
        const double h = 1e-6 * std::max(1.0, max_abs(x));
        std::vector<double> up(x), down(x);
        for (std::size_t i = 0; i < x.size(); ++i) {
            up[i] += h * v[i];
            down[i] -= h * v[i];
        }
        const double fd = (kernel(up) - kernel(down)) / (2 * h);
        const double err = std::fabs(fd - gv) / std::max(scale, 1e-300);
        char line[200];
        std::snprintf(line, sizeof line, "  %s: direction %d: g.v = %.10g, finite difference %.10g (rel %.1e)\n",
                      K::name, int(d), gv, fd, err);
        report += line;
        if (!(err < 1e-5)) ok = false;
    }
    return ok;
}

}  // namespace bench
