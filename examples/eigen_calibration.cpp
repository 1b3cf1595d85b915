// Calibrating a diffusion coefficient with Eigen: a linear PDE solve taped as
// ONE entry.
//
//   -(k(x) u')' = 1 on (0, 1), u(0) = u(1) = 0, n cells, coefficient k_i > 0
//   per cell; K(k) u = f is the finite-volume system (dense here, to keep the
//   example short). The misfit  J(k) = 1/2 |u(k) - u_obs|^2  measures how far
//   the solution is from observations made with a "true" coefficient field.
//
// K(k) is assembled from tapeflow::Real (a few statements per cell); the solve
// goes through tapeflow::partial_piv_lu(K).solve(f): one tape entry whose
// reverse rule is one more solve with the same LU factors, instead of the
// O(n^3) statements of Eigen's own K.partialPivLu().solve(f) on Real.
//
// The program prints the gradient's largest entries and the tape of both
// ways, and checks dJ/dk against central finite differences; it returns 1 on
// a mismatch.
#include <tapeflow/eigen.hpp>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

constexpr int n = 120;  // unknowns (interior nodes); n + 1 cells

template <class T>
using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

// K(k): -(k u')' with cell coefficients k_0..k_n and spacing h.
template <class T>
matrix<T> stiffness(const std::vector<T>& k) {
    const double h = 1.0 / (n + 1);
    matrix<T> K = matrix<T>::Zero(n, n);
    for (int i = 0; i < n; ++i) {
        K(i, i) = (k[i] + k[i + 1]) / (h * h);
        if (i > 0) K(i, i - 1) = -k[i] / (h * h);
        if (i + 1 < n) K(i, i + 1) = -k[i + 1] / (h * h);
    }
    return K;
}

std::vector<double> true_coefficient() {
    std::vector<double> k(n + 1);
    for (int i = 0; i <= n; ++i) k[i] = 1.0 + 0.5 * std::sin(3.0 * (i + 0.5) / (n + 1));
    return k;
}

const vector<double>& observations() {
    static const vector<double> u = stiffness(true_coefficient()).partialPivLu().solve(vector<double>::Ones(n));
    return u;
}

// The misfit J(k); `one_entry` picks tapeflow::partial_piv_lu or Eigen's own LU.
template <class T>
T misfit(const std::vector<T>& k, bool one_entry = true) {
    const matrix<T> K = stiffness(k);
    const vector<double> f = vector<double>::Ones(n);
    vector<T> u;
    if constexpr (std::is_same_v<T, double>) {
        u = K.partialPivLu().solve(f);
    } else if (one_entry) {
        u = tapeflow::partial_piv_lu(K).solve(f);
    } else {
        u = K.partialPivLu().solve(f.cast<T>());
    }
    T J = 0;
    for (int i = 0; i < n; ++i) {
        T d = u(i) - observations()(i);
        J += 0.5 * d * d;
    }
    return J;
}

}  // namespace

int main() {
    using tapeflow::Real;
    std::vector<double> k(n + 1, 1.0);  // first guess: constant coefficient

    auto& tape = tapeflow::tape::active();
    const std::vector<double> g = tapeflow::gradient([](const std::vector<Real>& x) { return misfit(x); }, k);
    const tapeflow::tape_statistics one = tape.statistics();
    const std::vector<double> g_scalar =
        tapeflow::gradient([](const std::vector<Real>& x) { return misfit(x, false); }, k);
    const tapeflow::tape_statistics scalar = tape.statistics();

    std::printf("misfit J = %.6e with k = 1 everywhere\n", misfit(k));
    std::printf("tape, one-entry solve:  %8llu statements, %10llu record bytes + %8zu bytes in %zu entry\n",
                (unsigned long long)one.statements, (unsigned long long)one.record_bytes, one.external_bytes,
                one.externals);
    std::printf("tape, Eigen's LU on Real: %6llu statements, %10llu record bytes\n",
                (unsigned long long)scalar.statements, (unsigned long long)scalar.record_bytes);

    // Check every component against central differences (and the two ways
    // against each other), relative to the largest component: the solve
    // amplifies rounding by the condition number of K (~n^2), which puts
    // noise of about 1e-8 on each difference quotient.
    const double g_max = std::abs(*std::max_element(g.begin(), g.end(), [](double a, double b) {
        return std::abs(a) < std::abs(b);
    }));
    int bad = 0;
    double worst = 0;
    for (int i = 0; i <= n; ++i) {
        const double step = 1e-4;
        std::vector<double> kp = k, km = k;
        kp[i] += step;
        km[i] -= step;
        const double fd = (misfit(kp) - misfit(km)) / (2 * step);
        const double err = std::abs(g[i] - fd) / g_max;
        worst = std::max(worst, err);
        if (err > 1e-5 || std::abs(g[i] - g_scalar[i]) > 1e-10 * g_max) {
            std::printf("dJ/dk[%d]: one entry %.10e, scalar-taped %.10e, finite difference %.10e\n", i, g[i],
                        g_scalar[i], fd);
            ++bad;
        }
    }
    std::printf("largest |dJ/dk| = %.6e; worst error vs finite differences %.1e of it\n", g_max, worst);
    if (bad) {
        std::printf("%d components differ\n", bad);
        return 1;
    }
    std::printf("gradient checked against finite differences and the scalar-taped solve: ok\n");
    return 0;
}
