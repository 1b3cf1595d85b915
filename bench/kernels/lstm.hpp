// bench/kernels/lstm.hpp - loss of a 2-layer LSTM predicting the next
// character of a fixed 40-character text (ADBench-style, with dense gates).
//
// The text "to be or not to be that is the question." has 14 distinct
// characters. Character c enters as a fixed, passive, "one-hot-ish"
// embedding e_c (1 at c, uniform in [0, 0.1) elsewhere), scaled by the
// input weights: x = s * e_c. Each layer (hidden size 32) has 4 gates with
// dense input weights W, recurrent weights U and biases b:
//
//   i = sigm(W_i x + U_i h + b_i)    f = sigm(W_f x + U_f h + b_f)
//   o = sigm(W_o x + U_o h + b_o)    g = tanh(W_g x + U_g h + b_g)
//   c' = f * c + i * g               h' = o * tanh(c')
//
// with sigm(z) = 1 / (1 + exp(-z)); layer 2 takes layer 1's h' as its x.
// The output y = V h_top + a (14 scores) gives the loss
//
//   f = (1 / 39) sum_t [ lse(y_t) - y_t[next character] ]
//
// (mean negative log-likelihood of the softmax). The initial states are 0.
// Parameters, concatenated: per layer W (4H x in), U (4H x H), b (4H);
// then s (14), V (14 x H), a (14): 14812 in all. About 15 000 statements
// per character (one per multiply-add): ~0.6 M.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "../harness/kernel.hpp"

namespace bench {

struct lstm {
    static constexpr const char* name = "lstm";
    static constexpr bool adolc = true;
    static constexpr const char* adolc_note = "";
    static constexpr std::size_t B = 14;  // alphabet = input size
    static constexpr std::size_t H = 32;  // hidden size
    static constexpr std::size_t L = 2;   // layers
    static constexpr std::size_t NI = B > H ? B : H;  // widest layer input
    std::string text = "to be or not to be that is the question.";
    std::string alphabet = " .abehinoqrstu";
    std::vector<double> embedding = make_embedding();

    static std::vector<double> make_embedding() {
        std::vector<double> e = uniform(B * B, 0.0, 0.1, 21);
        for (std::size_t c = 0; c < B; ++c) e[c * B + c] = 1.0;
        return e;
    }

    std::size_t steps() const { return text.size() - 1; }
    std::size_t symbol(std::size_t t) const { return alphabet.find(text[t]); }

    // parameter offsets
    static constexpr std::size_t layer_inputs(std::size_t l) { return l == 0 ? B : H; }
    static constexpr std::size_t layer_offset(std::size_t l) {
        return l == 0 ? 0 : 4 * H * (B + H + 1) + (l - 1) * 4 * H * (2 * H + 1);
    }
    static constexpr std::size_t o_scale = 4 * H * (B + H + 1) + (L - 1) * 4 * H * (2 * H + 1);
    static constexpr std::size_t o_out = o_scale + B;       // V
    static constexpr std::size_t o_outbias = o_out + B * H;  // a
    static constexpr std::size_t size = o_outbias + B;

    std::vector<double> inputs() const {
        std::vector<double> x = uniform(size, -0.25, 0.25, 22);
        const std::vector<double> s = uniform(B, 0.5, 1.5, 23);
        std::copy(s.begin(), s.end(), x.begin() + o_scale);
        return x;
    }

    template <class T>
    T operator()(const std::vector<T>& x) const {
        using std::exp;
        using std::tanh;
        std::vector<T> h(L * H, T(0.0)), c(L * H, T(0.0)), z(4 * H, T(0.0));
        std::vector<T> in(B, T(0.0)), y(B, T(0.0));
        T loss = 0.0;
        for (std::size_t t = 0; t < steps(); ++t) {
            const double* e = &embedding[symbol(t) * B];
            for (std::size_t a = 0; a < B; ++a) in[a] = x[o_scale + a] * e[a];
            for (std::size_t l = 0; l < L; ++l) {
                const std::size_t n_in = layer_inputs(l);
                const std::size_t ow = layer_offset(l), ou = ow + 4 * H * n_in, ob = ou + 4 * H * H;
                const T* inp = l == 0 ? in.data() : &h[(l - 1) * H];
                T* hl = &h[l * H];
                T* cl = &c[l * H];
                for (std::size_t r = 0; r < 4 * H; ++r) {
                    T s = x[ob + r];
                    for (std::size_t a = 0; a < n_in; ++a) s += x[ow + r * n_in + a] * inp[a];
                    for (std::size_t a = 0; a < H; ++a) s += x[ou + r * H + a] * hl[a];
                    z[r] = s;
                }
                for (std::size_t u = 0; u < H; ++u) {
                    T ig = 1.0 / (1.0 + exp(-z[u]));
                    T fg = 1.0 / (1.0 + exp(-z[H + u]));
                    T og = 1.0 / (1.0 + exp(-z[2 * H + u]));
                    T gg = tanh(z[3 * H + u]);
                    cl[u] = fg * cl[u] + ig * gg;
                    hl[u] = og * tanh(cl[u]);
                }
            }
            const T* top = &h[(L - 1) * H];
            for (std::size_t r = 0; r < B; ++r) {
                T s = x[o_outbias + r];
                for (std::size_t a = 0; a < H; ++a) s += x[o_out + r * H + a] * top[a];
                y[r] = s;
            }
            loss += logsumexp(y) - y[symbol(t + 1)];
        }
        T f = loss / double(steps());
        return f;
    }

    // Reverse mode by hand (backpropagation through time): the forward pass
    // stores every layer's input, states, gates and tanh(c') and each step's
    // softmax; the backward pass carries dh, dc per layer from step to step.
    double adjoint(const std::vector<double>& x, std::vector<double>& g) const {
        const std::size_t T_ = steps();
        std::vector<double> inps(T_ * L * NI), gates(T_ * L * 4 * H), tcs(T_ * L * H);
        std::vector<double> hs((T_ + 1) * L * H, 0.0), cs((T_ + 1) * L * H, 0.0);
        std::vector<double> probs(T_ * B), y(B);
        double loss = 0.0;
        for (std::size_t t = 0; t < T_; ++t) {
            const double* e = &embedding[symbol(t) * B];
            for (std::size_t a = 0; a < B; ++a) inps[(t * L) * NI + a] = x[o_scale + a] * e[a];
            for (std::size_t l = 0; l < L; ++l) {
                const std::size_t n_in = layer_inputs(l);
                const std::size_t ow = layer_offset(l), ou = ow + 4 * H * n_in, ob = ou + 4 * H * H;
                double* inp = &inps[(t * L + l) * NI];
                if (l > 0) std::copy_n(&hs[((t + 1) * L + l - 1) * H], H, inp);
                const double* hp = &hs[(t * L + l) * H];
                const double* cp = &cs[(t * L + l) * H];
                double* hn = &hs[((t + 1) * L + l) * H];
                double* cn = &cs[((t + 1) * L + l) * H];
                double* z = &gates[(t * L + l) * 4 * H];
                double* tc = &tcs[(t * L + l) * H];
                for (std::size_t r = 0; r < 4 * H; ++r) {
                    double s = x[ob + r];
                    for (std::size_t a = 0; a < n_in; ++a) s += x[ow + r * n_in + a] * inp[a];
                    for (std::size_t a = 0; a < H; ++a) s += x[ou + r * H + a] * hp[a];
                    z[r] = s;
                }
                for (std::size_t u = 0; u < H; ++u) {  // gates overwrite their pre-activations
                    z[u] = 1.0 / (1.0 + std::exp(-z[u]));
                    z[H + u] = 1.0 / (1.0 + std::exp(-z[H + u]));
                    z[2 * H + u] = 1.0 / (1.0 + std::exp(-z[2 * H + u]));
                    z[3 * H + u] = std::tanh(z[3 * H + u]);
                    cn[u] = z[H + u] * cp[u] + z[u] * z[3 * H + u];
                    tc[u] = std::tanh(cn[u]);
                    hn[u] = z[2 * H + u] * tc[u];
                }
            }
            const double* top = &hs[((t + 1) * L + L - 1) * H];
            for (std::size_t r = 0; r < B; ++r) {
                double s = x[o_outbias + r];
                for (std::size_t a = 0; a < H; ++a) s += x[o_out + r * H + a] * top[a];
                y[r] = s;
            }
            std::size_t m = 0;
            for (std::size_t r = 1; r < B; ++r)
                if (y[r] > y[m]) m = r;
            double sum = 0.0;
            for (std::size_t r = 0; r < B; ++r) sum += std::exp(y[r] - y[m]);
            loss += y[m] + std::log(sum) - y[symbol(t + 1)];
            for (std::size_t r = 0; r < B; ++r) probs[t * B + r] = std::exp(y[r] - y[m]) / sum;
        }
        const double f = loss / double(T_);

        g.assign(size, 0.0);
        std::vector<double> hbar(L * H, 0.0), cbar(L * H, 0.0), zbar(4 * H), inbar(NI);
        const double lossbar = 1.0 / double(T_);
        for (std::size_t t = T_; t-- > 0;) {
            // y = V h_top + a;  d(lse(y) - y[next]) / dy = softmax(y) - onehot(next)
            const double* top = &hs[((t + 1) * L + L - 1) * H];
            double* topbar = &hbar[(L - 1) * H];
            const std::size_t next = symbol(t + 1);
            for (std::size_t r = 0; r < B; ++r) {
                const double yb = lossbar * (probs[t * B + r] - (r == next ? 1.0 : 0.0));
                g[o_outbias + r] += yb;
                for (std::size_t a = 0; a < H; ++a) {
                    g[o_out + r * H + a] += yb * top[a];
                    topbar[a] += yb * x[o_out + r * H + a];
                }
            }
            for (std::size_t l = L; l-- > 0;) {
                const std::size_t n_in = layer_inputs(l);
                const std::size_t ow = layer_offset(l), ou = ow + 4 * H * n_in, ob = ou + 4 * H * H;
                const double* inp = &inps[(t * L + l) * NI];
                const double* hp = &hs[(t * L + l) * H];
                const double* cp = &cs[(t * L + l) * H];
                const double* z = &gates[(t * L + l) * 4 * H];
                const double* tc = &tcs[(t * L + l) * H];
                double* hb = &hbar[l * H];
                double* cb = &cbar[l * H];
                for (std::size_t u = 0; u < H; ++u) {
                    const double ig = z[u], fg = z[H + u], og = z[2 * H + u], gg = z[3 * H + u];
                    const double ob_ = hb[u] * tc[u];
                    const double cnb = cb[u] + hb[u] * og * (1.0 - tc[u] * tc[u]);
                    zbar[u] = cnb * gg * ig * (1.0 - ig);
                    zbar[H + u] = cnb * cp[u] * fg * (1.0 - fg);
                    zbar[2 * H + u] = ob_ * og * (1.0 - og);
                    zbar[3 * H + u] = cnb * ig * (1.0 - gg * gg);
                    cb[u] = cnb * fg;  // adjoint of the previous step's c
                    hb[u] = 0.0;       // refilled below through U
                }
                std::fill(inbar.begin(), inbar.end(), 0.0);
                for (std::size_t r = 0; r < 4 * H; ++r) {
                    const double zb = zbar[r];
                    g[ob + r] += zb;
                    for (std::size_t a = 0; a < n_in; ++a) {
                        g[ow + r * n_in + a] += zb * inp[a];
                        inbar[a] += zb * x[ow + r * n_in + a];
                    }
                    for (std::size_t a = 0; a < H; ++a) {
                        g[ou + r * H + a] += zb * hp[a];
                        hb[a] += zb * x[ou + r * H + a];
                    }
                }
                if (l > 0) {
                    for (std::size_t a = 0; a < H; ++a) hbar[(l - 1) * H + a] += inbar[a];
                } else {
                    const double* e = &embedding[symbol(t) * B];
                    for (std::size_t a = 0; a < B; ++a) g[o_scale + a] += inbar[a] * e[a];
                }
            }
        }
        return f;
    }
};

}  // namespace bench
