// tapeflow/eigen/drivers.hpp: Eigen vectors as inputs and outputs of
// gradient, value_and_gradient and jacobian, against analytic derivatives
// and the same functions on std::vector.
#include <catch2/catch.hpp>
#include <tapeflow/eigen.hpp>

#include <array>
#include <cmath>
#include <type_traits>
#include <vector>

using tapeflow::Real;
using VectorR = Eigen::Matrix<Real, Eigen::Dynamic, 1>;

TEST_CASE("gradient of an Eigen::VectorXd input is an Eigen::VectorXd") {
    Eigen::VectorXd x(3);
    x << 0.5, -1.5, 2.0;
    auto f = [](const VectorR& v) { return Real(v.squaredNorm() + v(0) * sin(v(2))); };
    const auto g = tapeflow::gradient(f, x);
    static_assert(std::is_same_v<std::decay_t<decltype(g)>, Eigen::VectorXd>);
    REQUIRE(g.size() == 3);
    CHECK(g(0) == Approx(2 * x(0) + std::sin(x(2))).epsilon(1e-15));
    CHECK(g(1) == Approx(2 * x(1)).epsilon(1e-15));
    CHECK(g(2) == Approx(2 * x(2) + x(0) * std::cos(x(2))).epsilon(1e-15));
}

TEST_CASE("fixed-size Eigen vectors, a row vector, and an Eigen vector among several inputs") {
    const Eigen::Vector2d a(0.25, 3.0);  // (a constructor that a two-size resize must not confuse)
    Eigen::RowVector3d b;
    b << 1.0, -2.0, 0.5;
    const std::vector<double> c{4.0};
    auto f = [](const Eigen::Matrix<Real, 2, 1>& u, const Eigen::Matrix<Real, 1, 3>& w, const std::vector<Real>& s) {
        return u(0) * w(0) + u(1) * w(1) * w(2) + s[0] * u(0) * u(0);
    };
    const auto [ga, gb, gc] = tapeflow::gradient(f, a, b, c);
    static_assert(std::is_same_v<std::decay_t<decltype(ga)>, Eigen::Vector2d>);
    static_assert(std::is_same_v<std::decay_t<decltype(gb)>, Eigen::RowVector3d>);
    CHECK(ga(0) == Approx(b(0) + 2 * c[0] * a(0)).epsilon(1e-15));
    CHECK(ga(1) == Approx(b(1) * b(2)).epsilon(1e-15));
    CHECK(gb(0) == Approx(a(0)).epsilon(1e-15));
    CHECK(gb(1) == Approx(a(1) * b(2)).epsilon(1e-15));
    CHECK(gb(2) == Approx(a(1) * b(1)).epsilon(1e-15));
    CHECK(gc[0] == Approx(a(0) * a(0)).epsilon(1e-15));
}

TEST_CASE("jacobian of a function returning an Eigen vector equals the std::vector one") {
    Eigen::Matrix3d A;
    A << 1, 2, 0, -1, 0.5, 3, 0, 1, -2;
    auto F = [&](const VectorR& v) {
        VectorR y = A.cast<Real>() * v;
        y(1) = y(1) * v(0);
        return y;
    };
    Eigen::VectorXd x(3);
    x << 0.3, -0.2, 1.1;
    const auto J = tapeflow::jacobian(F, x);
    REQUIRE(J.size() == 3);
    // analytic: rows 0 and 2 of A; row 1 is d(x0 (A x)_1) = (A x)_1 e0 + x0 A_1
    const double ax1 = A.row(1).dot(x);
    for (int j = 0; j < 3; ++j) {
        CHECK(J[0][std::size_t(j)] == Approx(A(0, j)).epsilon(1e-15));
        CHECK(J[2][std::size_t(j)] == Approx(A(2, j)).epsilon(1e-15));
        CHECK(J[1][std::size_t(j)] == Approx(x(0) * A(1, j) + (j == 0 ? ax1 : 0.0)).epsilon(1e-15));
    }
    const auto Jv = tapeflow::jacobian(
        [&](const std::vector<Real>& v) {
            VectorR u(3);
            for (int i = 0; i < 3; ++i) u(i) = v[std::size_t(i)];
            const VectorR y = F(u);
            return std::vector<Real>(y.data(), y.data() + y.size());
        },
        std::vector<double>{x(0), x(1), x(2)});
    CHECK(J == Jv);
}
