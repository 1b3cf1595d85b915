// bench/kernels/wide_jacobian.hpp - a Jacobian of the wide shape: 8
// parameters, 4000 residuals (a fit of a sum of a damped oscillation, a
// smooth step and a quadratic trend to samples; the shape of issue 18's hand
// tracking model: few inputs, thousands of outputs).
//
//   r_i = p0 exp(-p1 t_i) cos(p2 t_i + p3) + p4 tanh(p5 t_i - p6) + p7 t_i^2 - y_i
//
// Forward mode computes the 4000 x 8 Jacobian in one run with 8 lanes;
// reverse mode sweeps once per residual. jacobian() is written by hand.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "../harness/kernel.hpp"

namespace bench {

struct wide_jacobian {
    static constexpr const char* name = "wide_jacobian";
    static constexpr std::size_t parameters = 8;
    std::size_t residuals = 4000;
    std::vector<double> t, y;

    wide_jacobian() : t(residuals), y(uniform(residuals, -0.05, 0.05, 7)) {
        for (std::size_t i = 0; i < residuals; ++i) {
            t[i] = 4.0 * double(i) / double(residuals);
            y[i] += 1.5 * std::exp(-0.3 * t[i]) * std::cos(2.5 * t[i] + 0.1) + 0.4 * std::tanh(1.2 * t[i] - 2.0) +
                    0.02 * t[i] * t[i];
        }
    }

    std::vector<double> inputs() const { return {1.4, 0.35, 2.4, 0.0, 0.5, 1.0, 2.2, 0.03}; }

    template <class T>
    std::vector<T> operator()(const std::vector<T>& p) const {
        using std::cos;
        using std::exp;
        using std::tanh;
        std::vector<T> r;
        r.reserve(residuals);
        for (std::size_t i = 0; i < residuals; ++i) {
            const double ti = t[i];
            r.push_back(p[0] * exp(-p[1] * ti) * cos(p[2] * ti + p[3]) + p[4] * tanh(p[5] * ti - p[6]) +
                        p[7] * (ti * ti) - y[i]);
        }
        return r;
    }

    /// The Jacobian by hand: row i is d r_i / d p.
    std::vector<std::vector<double>> jacobian(const std::vector<double>& p) const {
        std::vector<std::vector<double>> J(residuals, std::vector<double>(parameters));
        for (std::size_t i = 0; i < residuals; ++i) {
            const double ti = t[i];
            const double e = std::exp(-p[1] * ti), c = std::cos(p[2] * ti + p[3]), s = std::sin(p[2] * ti + p[3]);
            const double h = std::tanh(p[5] * ti - p[6]), dh = 1 - h * h;
            J[i] = {e * c, -ti * p[0] * e * c, -ti * p[0] * e * s, -p[0] * e * s,
                    h,     p[4] * dh * ti,     -p[4] * dh,         ti * ti};
        }
        return J;
    }
};

}  // namespace bench
