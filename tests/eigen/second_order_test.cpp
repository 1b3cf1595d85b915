// Eigen code of tapeflow on tapes of Duals (second order, basic_real<Dual>:
// tapeflow::hessian): Hessians against central differences of the reverse
// gradient, an independent mode. A file of its own, at the unit tests'
// optimization: the second-order instantiations of Eigen's algorithms cost
// about 100 s of CPU at -O3 in linear_algebra_test.
#include <tapeflow/eigen/linear_algebra.hpp>
#include <tapeflow/hessian_drivers.hpp>

#include "eigen/eigen_support.hpp"

#include <cmath>
#include <cstddef>
#include <type_traits>
#include <vector>

using eigen_test::Index;
using eigen_test::MatrixX;
using eigen_test::VectorX;

TEST_CASE("partial_piv_lu on a tape of Duals: the Hessian against central differences of the gradient") {
    // tapeflow::partial_piv_lu did not compile for basic_real<Dual> (its
    // singular-matrix message converted rcond() to double; a red-team run,
    // 2026-11-29). f(A, b) = (sum x) x0 with A x = b: the Hessian by
    // forward-over-reverse against central differences of the reverse
    // gradient, an independent mode.
    const Index n = 3;
    const auto f = [n](const auto& p) {
        using T = typename std::decay_t<decltype(p)>::value_type;
        MatrixX<T> a(n, n);
        for (Index j = 0; j < n; ++j)
            for (Index i = 0; i < n; ++i) a(i, j) = p[std::size_t(i + n * j)];
        VectorX<T> b(n);
        for (Index i = 0; i < n; ++i) b(i) = p[std::size_t(n * n + i)];
        const VectorX<T> x = tapeflow::partial_piv_lu(a).solve(b);
        return T(x.sum() * x(0));
    };
    std::vector<double> p;
    eigen_test::append(p, eigen_test::random_matrix(n, n, 361) + 3.0 * MatrixX<double>::Identity(n, n));
    eigen_test::append(p, eigen_test::random_matrix(n, 1, 362));
    const auto h = tapeflow::hessian(f, p);
    for (std::size_t j = 0; j < p.size(); ++j) {
        const double step = 1e-5 * (1.0 + std::abs(p[j]));
        std::vector<double> up = p, down = p;
        up[j] += step;
        down[j] -= step;
        const std::vector<double> gu = tapeflow::gradient(f, up), gd = tapeflow::gradient(f, down);
        for (std::size_t i = 0; i < p.size(); ++i) {
            INFO("H[" << i << "][" << j << "] = " << h[i][j] << ", differences " << (gu[i] - gd[i]) / (2 * step));
            CHECK(std::abs(h[i][j] - (gu[i] - gd[i]) / (2 * step)) <= 1e-6 * (1.0 + std::abs(h[i][j])));
            CHECK(std::abs(h[i][j] - h[j][i]) <= 1e-12 * (1.0 + std::abs(h[i][j])));
        }
    }
}
