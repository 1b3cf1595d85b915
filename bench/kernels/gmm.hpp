// bench/kernels/gmm.hpp - Gaussian mixture model log-likelihood with a
// Wishart prior (the ADBench GMM objective), d = 10, k = 25, n = 1000.
//
// Parameters (the inputs, concatenated in this order):
//   alpha (k)              mixture weights, through a softmax
//   mu    (k x d)          means
//   q     (k x d)          log of the diagonal of Q_j
//   l     (k x d(d-1)/2)   strictly lower part of Q_j, row by row:
//                          Q_j(r, c) = l_j[r (r - 1) / 2 + c] for c < r
// Data x_i (n x d) are fixed and passive. With the constants dropped,
//
//   f = sum_i lse_j(alpha_j + sum_r q_jr - 0.5 ||Q_j (x_i - mu_j)||^2)
//       - n lse(alpha)
//       + sum_j [0.5 gamma^2 (||exp(q_j)||^2 + ||l_j||^2) - m sum_r q_jr]
//
// where lse is a log-sum-exp shifted by its largest argument. About 76
// statements per (point, component) pair: ~1.9 M in all.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "../harness/kernel.hpp"

namespace bench {

struct gmm {
    static constexpr const char* name = "gmm";
    static constexpr bool adolc = true;
    static constexpr const char* adolc_note = "";
    static constexpr std::size_t d = 10;    // dimension
    static constexpr std::size_t k = 25;    // components
    static constexpr std::size_t n = 1000;  // data points
    static constexpr std::size_t tri = d * (d - 1) / 2;
    double gamma = 1.0;  // Wishart prior
    double m = 0.0;
    std::vector<double> points = uniform(n * d, 0.0, 1.0, 7);

    // offsets of the parameter blocks
    static constexpr std::size_t o_alpha = 0;
    static constexpr std::size_t o_mu = o_alpha + k;
    static constexpr std::size_t o_q = o_mu + k * d;
    static constexpr std::size_t o_l = o_q + k * d;
    static constexpr std::size_t size = o_l + k * tri;

    std::vector<double> inputs() const {
        std::vector<double> x(size);
        const auto alpha = uniform(k, -1.0, 1.0, 11);
        const auto mu = uniform(k * d, 0.0, 1.0, 12);
        const auto q = uniform(k * d, -0.5, 0.5, 13);
        const auto l = uniform(k * tri, -0.5, 0.5, 14);
        std::copy(alpha.begin(), alpha.end(), x.begin() + o_alpha);
        std::copy(mu.begin(), mu.end(), x.begin() + o_mu);
        std::copy(q.begin(), q.end(), x.begin() + o_q);
        std::copy(l.begin(), l.end(), x.begin() + o_l);
        return x;
    }

    template <class T>
    T operator()(const std::vector<T>& x) const {
        using std::exp;
        using std::log;
        // per component: diagonal of Q, alpha + sum(q)
        std::vector<T> qdiag(k * d, T(0.0)), base(k, T(0.0));
        for (std::size_t j = 0; j < k; ++j) {
            T sq = 0.0;
            for (std::size_t r = 0; r < d; ++r) {
                qdiag[j * d + r] = exp(x[o_q + j * d + r]);
                sq += x[o_q + j * d + r];
            }
            base[j] = x[o_alpha + j] + sq;
        }
        std::vector<T> e(k, T(0.0)), xc(d, T(0.0));
        T f = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            const double* p = &points[i * d];
            for (std::size_t j = 0; j < k; ++j) {
                for (std::size_t r = 0; r < d; ++r) xc[r] = p[r] - x[o_mu + j * d + r];
                T norm = 0.0;
                for (std::size_t r = 0; r < d; ++r) {  // row r of Q_j (x_i - mu_j)
                    const std::size_t lrow = o_l + j * tri + r * (r - 1) / 2;
                    T s = qdiag[j * d + r] * xc[r];
                    for (std::size_t c = 0; c < r; ++c) s += x[lrow + c] * xc[c];
                    norm += s * s;
                }
                e[j] = base[j] - 0.5 * norm;
            }
            f += logsumexp(e);
        }
        std::vector<T> alpha(x.begin() + o_alpha, x.begin() + o_alpha + k);
        f -= double(n) * logsumexp(alpha);
        // Wishart prior
        T prior = 0.0;
        for (std::size_t j = 0; j < k; ++j) {
            T frob = 0.0, sq = 0.0;
            for (std::size_t r = 0; r < d; ++r) {
                frob += qdiag[j * d + r] * qdiag[j * d + r];
                sq += x[o_q + j * d + r];
            }
            for (std::size_t t = 0; t < tri; ++t) frob += x[o_l + j * tri + t] * x[o_l + j * tri + t];
            prior += 0.5 * gamma * gamma * frob - m * sq;
        }
        f += prior;
        return f;
    }

    // Reverse mode by hand. The data term is a sum over points, so each
    // point's contribution is swept backwards right after its forward pass
    // (its log-sum-exp adjoint is the softmax of its e_j); the per-point
    // intermediates (x - mu and the rows of Q (x - mu)) live only that long.
    double adjoint(const std::vector<double>& x, std::vector<double>& g) const {
        g.assign(size, 0.0);
        double* abar = &g[o_alpha];
        double* mubar = &g[o_mu];
        double* qbar = &g[o_q];
        double* lbar = &g[o_l];
        std::vector<double> qdiag(k * d), base(k), qdbar(k * d, 0.0), basebar(k, 0.0);
        for (std::size_t j = 0; j < k; ++j) {
            double sq = 0.0;
            for (std::size_t r = 0; r < d; ++r) {
                qdiag[j * d + r] = std::exp(x[o_q + j * d + r]);
                sq += x[o_q + j * d + r];
            }
            base[j] = x[o_alpha + j] + sq;
        }
        std::vector<double> e(k), xc(k * d), rows(k * d), xcbar(d);
        double f = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            const double* p = &points[i * d];
            // forward for point i
            for (std::size_t j = 0; j < k; ++j) {
                double* c_ = &xc[j * d];
                double* s_ = &rows[j * d];
                for (std::size_t r = 0; r < d; ++r) c_[r] = p[r] - x[o_mu + j * d + r];
                double norm = 0.0;
                for (std::size_t r = 0; r < d; ++r) {
                    const double* lrow = &x[o_l + j * tri + r * (r - 1) / 2];
                    double s = qdiag[j * d + r] * c_[r];
                    for (std::size_t c = 0; c < r; ++c) s += lrow[c] * c_[c];
                    s_[r] = s;
                    norm += s * s;
                }
                e[j] = base[j] - 0.5 * norm;
            }
            std::size_t top = 0;
            for (std::size_t j = 1; j < k; ++j)
                if (e[j] > e[top]) top = j;
            double sum = 0.0;
            for (std::size_t j = 0; j < k; ++j) sum += std::exp(e[j] - e[top]);
            f += e[top] + std::log(sum);
            // backward for point i: ebar_j = softmax(e)_j
            for (std::size_t j = 0; j < k; ++j) {
                const double w = std::exp(e[j] - e[top]) / sum;
                basebar[j] += w;
                const double* c_ = &xc[j * d];
                const double* s_ = &rows[j * d];
                for (std::size_t r = 0; r < d; ++r) xcbar[r] = 0.0;
                for (std::size_t r = 0; r < d; ++r) {
                    const double sbar = -w * s_[r];  // d(-0.5 s^2) = -s
                    const std::size_t lo = o_l + j * tri + r * (r - 1) / 2;
                    qdbar[j * d + r] += sbar * c_[r];
                    xcbar[r] += sbar * qdiag[j * d + r];
                    for (std::size_t c = 0; c < r; ++c) {
                        lbar[lo - o_l + c] += sbar * c_[c];
                        xcbar[c] += sbar * x[lo + c];
                    }
                }
                for (std::size_t r = 0; r < d; ++r) mubar[j * d + r] -= xcbar[r];
            }
        }
        // - n lse(alpha)
        {
            std::size_t top = 0;
            for (std::size_t j = 1; j < k; ++j)
                if (x[o_alpha + j] > x[o_alpha + top]) top = j;
            double sum = 0.0;
            for (std::size_t j = 0; j < k; ++j) sum += std::exp(x[o_alpha + j] - x[o_alpha + top]);
            f -= double(n) * (x[o_alpha + top] + std::log(sum));
            for (std::size_t j = 0; j < k; ++j)
                abar[j] -= double(n) * std::exp(x[o_alpha + j] - x[o_alpha + top]) / sum;
        }
        // Wishart prior
        double prior = 0.0;
        const double g2 = gamma * gamma;
        for (std::size_t j = 0; j < k; ++j) {
            double frob = 0.0, sq = 0.0;
            for (std::size_t r = 0; r < d; ++r) {
                frob += qdiag[j * d + r] * qdiag[j * d + r];
                sq += x[o_q + j * d + r];
            }
            for (std::size_t t = 0; t < tri; ++t) frob += x[o_l + j * tri + t] * x[o_l + j * tri + t];
            prior += 0.5 * gamma * gamma * frob - m * sq;
            for (std::size_t r = 0; r < d; ++r) {
                qdbar[j * d + r] += g2 * qdiag[j * d + r];
                qbar[j * d + r] -= m;
            }
            for (std::size_t t = 0; t < tri; ++t) lbar[j * tri + t] += g2 * x[o_l + j * tri + t];
        }
        f += prior;
        // base_j = alpha_j + sum_r q_jr; qdiag = exp(q)
        for (std::size_t j = 0; j < k; ++j) {
            abar[j] += basebar[j];
            for (std::size_t r = 0; r < d; ++r)
                qbar[j * d + r] += basebar[j] + qdbar[j * d + r] * qdiag[j * d + r];
        }
        return f;
    }
};

}  // namespace bench
