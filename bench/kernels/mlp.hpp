// bench/kernels/mlp.hpp - loss of a two-layer tanh network over a batch.
//
//   h_b   = tanh(W1 x_b + b1)          64 inputs -> 128 hidden units
//   out_b = W2 h_b + b2                128 hidden -> 1 regression output
//   f     = (1/B) sum_b (out_b - y_b)^2 over a batch of B = 256 samples
//
// Differentiated with respect to every weight and bias (W1 128x64 row-major,
// b1, W2, b2: 8449 inputs); the batch x_b and targets y_b are fixed passive
// numbers. The inner products are plain loops accumulating into a T, as users
// write them: one statement per multiply-add, about 2.2 M in all.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "../harness/kernel.hpp"

namespace bench {

struct mlp {
    static constexpr const char* name = "mlp";
    static constexpr bool adolc = true;
    static constexpr const char* adolc_note = "";
    std::size_t n_in = 64;
    std::size_t n_hidden = 128;
    std::size_t batch = 256;
    std::vector<double> data = uniform(batch * n_in, -1.0, 1.0, 7);  // x_b, row b
    std::vector<double> targets = uniform(batch, -1.0, 1.0, 8);     // y_b

    // Offsets of the parameter blocks in x.
    std::size_t w1_at() const { return 0; }
    std::size_t b1_at() const { return n_hidden * n_in; }
    std::size_t w2_at() const { return b1_at() + n_hidden; }
    std::size_t b2_at() const { return w2_at() + n_hidden; }
    std::size_t size() const { return b2_at() + 1; }

    std::vector<double> inputs() const {
        // Weights of the scale 1/sqrt(fan-in), so tanh stays in its curved range.
        std::vector<double> x(size());
        const std::vector<double> w1 = uniform(n_hidden * n_in, -0.2, 0.2, 1);
        const std::vector<double> b1 = uniform(n_hidden, -0.1, 0.1, 2);
        const std::vector<double> w2 = uniform(n_hidden, -0.15, 0.15, 3);
        for (std::size_t i = 0; i < w1.size(); ++i) x[w1_at() + i] = w1[i];
        for (std::size_t j = 0; j < n_hidden; ++j) {
            x[b1_at() + j] = b1[j];
            x[w2_at() + j] = w2[j];
        }
        x[b2_at()] = 0.05;
        return x;
    }

    template <class T>
    T operator()(const std::vector<T>& x) const {
        using std::tanh;
        const T* w1 = &x[w1_at()];
        const T* b1 = &x[b1_at()];
        const T* w2 = &x[w2_at()];
        const T& b2 = x[b2_at()];
        std::vector<T> h(n_hidden);
        T loss = 0.0;
        for (std::size_t b = 0; b < batch; ++b) {
            const double* xb = &data[b * n_in];
            for (std::size_t j = 0; j < n_hidden; ++j) {
                T s = b1[j];
                for (std::size_t k = 0; k < n_in; ++k) s += w1[j * n_in + k] * xb[k];
                h[j] = tanh(s);
            }
            T out = b2;
            for (std::size_t j = 0; j < n_hidden; ++j) out += w2[j] * h[j];
            T d = out - targets[b];
            loss += d * d;
        }
        return loss / double(batch);
    }

    // Reverse mode by hand: keep every sample's hidden activations, then
    // backpropagate sample by sample (the parameters are shared, so their
    // adjoints accumulate over the batch).
    double adjoint(const std::vector<double>& x, std::vector<double>& g) const {
        const double* w1 = &x[w1_at()];
        const double* b1 = &x[b1_at()];
        const double* w2 = &x[w2_at()];
        const double b2 = x[b2_at()];
        std::vector<double> hs(batch * n_hidden), dout(batch);
        double loss = 0.0;
        for (std::size_t b = 0; b < batch; ++b) {
            const double* xb = &data[b * n_in];
            double* h = &hs[b * n_hidden];
            for (std::size_t j = 0; j < n_hidden; ++j) {
                double s = b1[j];
                for (std::size_t k = 0; k < n_in; ++k) s += w1[j * n_in + k] * xb[k];
                h[j] = std::tanh(s);
            }
            double out = b2;
            for (std::size_t j = 0; j < n_hidden; ++j) out += w2[j] * h[j];
            const double d = out - targets[b];
            loss += d * d;
            dout[b] = d;  // the residual; scaled below
        }
        const double f = loss / double(batch);

        g.assign(size(), 0.0);
        double* gw1 = &g[w1_at()];
        double* gb1 = &g[b1_at()];
        double* gw2 = &g[w2_at()];
        double& gb2 = g[b2_at()];
        const double lbar = 1.0 / double(batch);  // f = loss / B
        for (std::size_t b = batch; b-- > 0;) {
            const double* xb = &data[b * n_in];
            const double* h = &hs[b * n_hidden];
            const double obar = lbar * 2.0 * dout[b];  // loss += d*d, d = out - y
            gb2 += obar;
            for (std::size_t j = 0; j < n_hidden; ++j) {
                gw2[j] += obar * h[j];
                const double sbar = obar * w2[j] * (1.0 - h[j] * h[j]);  // tanh' = 1 - h^2
                gb1[j] += sbar;
                double* row = &gw1[j * n_in];
                for (std::size_t k = 0; k < n_in; ++k) row[k] += sbar * xb[k];
            }
        }
        return f;
    }
};

}  // namespace bench
