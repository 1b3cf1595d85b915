// bench/kernels/least_squares.hpp - residual sum of squares of a linear
// regression model with m = 8 coefficients:
//
//   f(p) = sum_i (y_i - sum_j a_ij p_j)^2
//
// over n = 64 000 data points. The inputs are the coefficients p; the design
// matrix (an intercept column and 7 features uniform in [-1, 1)) and the
// observations y (a true model plus noise) are passive doubles. Per point,
// one statement for the residual (an 8-term dot product written out as one
// expression) and one for the accumulation: 128 000 statements, all feeding
// 8 inputs.
#pragma once

#include <cstddef>
#include <vector>

#include "../harness/kernel.hpp"

namespace bench {

struct least_squares {
    static constexpr const char* name = "least_squares";
    static constexpr bool adolc = true;
    static constexpr const char* adolc_note = "";
    static constexpr std::size_t m = 8;   // coefficients (features per point)
    std::size_t n = 64000;                // data points
    std::vector<double> design = make_design(n);                      // n x m, row by row
    std::vector<double> truth = uniform(m, -2.0, 2.0, 62);           // the model y came from
    std::vector<double> observed = make_observations(design, truth);  // y

    static std::vector<double> make_design(std::size_t points) {
        std::vector<double> a = uniform(points * m, -1.0, 1.0, 61);
        for (std::size_t i = 0; i < points; ++i) a[i * m] = 1.0;  // intercept
        return a;
    }

    static std::vector<double> make_observations(const std::vector<double>& a,
                                                 const std::vector<double>& p) {
        const std::size_t points = a.size() / m;
        std::vector<double> y = uniform(points, -0.1, 0.1, 63);  // noise
        for (std::size_t i = 0; i < points; ++i)
            for (std::size_t j = 0; j < m; ++j) y[i] += a[i * m + j] * p[j];
        return y;
    }

    // A fit in progress: the true coefficients, off by up to 0.5.
    std::vector<double> inputs() const {
        std::vector<double> p = uniform(m, -0.5, 0.5, 64);
        for (std::size_t j = 0; j < m; ++j) p[j] += truth[j];
        return p;
    }

    template <class T>
    T operator()(const std::vector<T>& p) const {
        T f = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            const double* a = &design[i * m];
            T r = observed[i] - (a[0] * p[0] + a[1] * p[1] + a[2] * p[2] + a[3] * p[3] +
                                 a[4] * p[4] + a[5] * p[5] + a[6] * p[6] + a[7] * p[7]);
            f += r * r;
        }
        return f;
    }

    // Reverse mode by hand: rbar_i = 2 r_i, pbar_j -= rbar_i a_ij.
    double adjoint(const std::vector<double>& p, std::vector<double>& g) const {
        g.assign(m, 0.0);
        double f = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            const double* a = &design[i * m];
            const double r = observed[i] - (a[0] * p[0] + a[1] * p[1] + a[2] * p[2] + a[3] * p[3] +
                                            a[4] * p[4] + a[5] * p[5] + a[6] * p[6] + a[7] * p[7]);
            f += r * r;
            const double rbar = 2.0 * r;
            for (std::size_t j = 0; j < m; ++j) g[j] -= rbar * a[j];
        }
        return f;
    }
};

}  // namespace bench
