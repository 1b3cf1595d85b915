// bench/kernels/quick_start.hpp - the README's quick-start function.
//
//   e = sum_{i < 3} sin(x_i) x_{i+1} + (x_{i+1} - x_i)^2 / 2
//
// at x = (0.5, 1.0, 1.5, 2.0), exactly as in examples/quick_start.cpp: three
// statements. Far too small to time the tools' throughput; it is here so the
// harness records the gradient/primal ratio of the code the README shows.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "../harness/kernel.hpp"

namespace bench {

struct quick_start {
    static constexpr const char* name = "quick_start";
    static constexpr bool adolc = true;
    static constexpr const char* adolc_note = "";

    std::vector<double> inputs() const { return {0.5, 1.0, 1.5, 2.0}; }

    template <class T>
    T operator()(const std::vector<T>& x) const {
        using std::pow;
        using std::sin;
        T e = 0.0;
        for (std::size_t i = 0; i + 1 < x.size(); ++i)
            e += sin(x[i]) * x[i + 1] + 0.5 * pow(x[i + 1] - x[i], 2);
        return e;
    }

    // Reverse mode by hand: each term's partials, d/dx_i and d/dx_{i+1}.
    double adjoint(const std::vector<double>& x, std::vector<double>& g) const {
        const std::size_t n = x.size();
        g.assign(n, 0.0);
        double e = 0.0;
        for (std::size_t i = 0; i + 1 < n; ++i) {
            const double diff = x[i + 1] - x[i];
            e += std::sin(x[i]) * x[i + 1] + 0.5 * std::pow(diff, 2);
            g[i] += std::cos(x[i]) * x[i + 1] - diff;
            g[i + 1] += std::sin(x[i]) + diff;
        }
        return e;
    }
};

}  // namespace bench
