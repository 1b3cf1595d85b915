// tests/support/finite_difference.hpp - reference derivatives for the tests.
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <vector>

namespace tapeflow_test {

/// Central difference of f at x with a step relative to |x|:
/// (f(x + h) - f(x - h)) / 2h, h = step * max(1, |x|).
inline double central_difference(const std::function<double(double)>& f, double x,
                                 double step = 1e-6) {
    const double h = step * std::fmax(1.0, std::fabs(x));
    return (f(x + h) - f(x - h)) / (2 * h);
}

/// Central-difference gradient of f at x, one component at a time.
inline std::vector<double> central_gradient(const std::function<double(const std::vector<double>&)>& f,
                                            std::vector<double> x, double step = 1e-6) {
    std::vector<double> g(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double xi = x[i];
        const double h = step * std::fmax(1.0, std::fabs(xi));
        x[i] = xi + h;
        const double up = f(x);
        x[i] = xi - h;
        const double down = f(x);
        x[i] = xi;
        g[i] = (up - down) / (2 * h);
    }
    return g;
}

/// |a - b| <= rel * max(|a|, |b|) + abs.
inline bool close(double a, double b, double rel, double abs = 0.0) {
    return std::fabs(a - b) <= rel * std::fmax(std::fabs(a), std::fabs(b)) + abs;
}

}  // namespace tapeflow_test
