// tests/parallel_support.hpp - the model and the samples of the parallel
// gradient tests (parallel_gradients_test, parallel_openmp_test), and
// their serial reference.
#pragma once

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

#include <tapeflow/tapeflow.hpp>

namespace parallel_test {

/// A small nonlinear model of its parameters (the per-sample loss of a
/// batch): a recurrence over the inputs with a few hundred statements.
struct model_type {
    template <class T>
    T operator()(const std::vector<T>& p) const {
        using std::exp;
        using std::sin;
        using std::tanh;
        T h = 0.1;
        T loss = 0.0;
        for (int step = 0; step < 20; ++step)
            for (std::size_t i = 0; i < p.size(); ++i) {
                h = tanh(0.5 * h + p[i] * 0.3 + 0.01 * step);
                loss += 0.5 * (h - sin(p[(i + 1) % p.size()])) * (h - 0.2) + 1e-3 * exp(-h * h);
            }
        return loss;
    }
};
inline constexpr model_type model{};

/// n parameter vectors of `size` numbers in [-1, 1), reproducible.
inline std::vector<std::vector<double>> samples(std::size_t n, std::size_t size) {
    std::mt19937_64 rng(20261126);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<std::vector<double>> xs(n, std::vector<double>(size));
    for (auto& x : xs)
        for (double& v : x) v = u(rng);
    return xs;
}

/// The reference: the gradient of the model at each sample, one after the
/// other on the calling thread.
inline std::vector<std::vector<double>> serial_gradients(const std::vector<std::vector<double>>& xs) {
    std::vector<std::vector<double>> g;
    for (const auto& x : xs) g.push_back(tapeflow::gradient(model, x));
    return g;
}

}  // namespace parallel_test
