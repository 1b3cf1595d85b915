// Forward mode (docs/modes.md): a model with 3 parameters and 2000 residuals.
// Its Jacobian has few columns and many rows, the shape where forward mode
// wins: jacobian_forward runs the model once per 4 parameters (one run here),
// the reverse jacobian sweeps the tape once per residual (2000 sweeps).
// The example checks the two against each other and against the Jacobian
// written by hand, and prints a directional derivative.
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

// Residuals r_i = a exp(-b t_i) cos(c t_i) - y_i of a damped oscillation,
// written once for double, Real and Dual.
template <class T>
std::vector<T> residuals(const std::vector<T>& p, const std::vector<double>& t, const std::vector<double>& y) {
    std::vector<T> r;
    r.reserve(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) r.push_back(p[0] * exp(-p[1] * t[i]) * cos(p[2] * t[i]) - y[i]);
    return r;
}

int main() {
    const std::size_t m = 2000;
    std::vector<double> t(m), y(m);
    for (std::size_t i = 0; i < m; ++i) {
        t[i] = 0.005 * double(i);
        y[i] = 1.9 * std::exp(-0.4 * t[i]) * std::cos(3.1 * t[i]);
    }
    const std::vector<double> p{2.0, 0.5, 3.0};
    const auto model = [&](const auto& q) { return residuals(q, t, y); };

    const auto Jf = tapeflow::jacobian_forward(model, p);  // 4 lanes: 1 run for 3 parameters
    const auto Jr = tapeflow::jacobian(model, p);          // reverse: 2000 sweeps

    // The Jacobian by hand: d r / d (a, b, c).
    double worst_forward = 0, worst_reverse = 0;
    for (std::size_t i = 0; i < m; ++i) {
        const double e = std::exp(-p[1] * t[i]), c = std::cos(p[2] * t[i]), s = std::sin(p[2] * t[i]);
        const double J[3] = {e * c, -t[i] * p[0] * e * c, -t[i] * p[0] * e * s};
        for (int j = 0; j < 3; ++j) {
            worst_forward = std::fmax(worst_forward, std::fabs(Jf[i][std::size_t(j)] - J[j]));
            worst_reverse = std::fmax(worst_reverse, std::fabs(Jr[i][std::size_t(j)] - J[j]));
        }
    }
    std::printf("jacobian %zu x %zu: forward and reverse within %.1e and %.1e of the hand-written one\n",
                Jf.size(), Jf[0].size(), worst_forward, worst_reverse);

    // The sum of squares along a direction: one run of the model with Duals.
    const auto cost = [&](const auto& q) {
        using T = typename std::decay_t<decltype(q)>::value_type;
        T sum = 0.0;
        for (const T& r : residuals(q, t, y)) sum += r * r;
        return sum;
    };
    const std::vector<double> v{1.0, 0.0, 0.0};
    const auto [value, slope] = tapeflow::value_and_derivative(cost, p, v);
    const std::vector<double> g = tapeflow::gradient(cost, p);
    std::printf("cost %.6f, d cost / d a = %.6f (forward) = %.6f (reverse)\n", value, slope, g[0]);

    const bool ok = worst_forward < 1e-12 && worst_reverse < 1e-12 && std::fabs(slope - g[0]) <= 1e-9 * std::fabs(g[0]);
    std::printf("%s\n", ok ? "ok" : "MISMATCH");
    return ok ? 0 : 1;
}
