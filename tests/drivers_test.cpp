// gradient, value_and_gradient and jacobian against analytic derivatives.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "support/finite_difference.hpp"

using tapeflow::Real;

namespace {

// Rosenbrock: templated as user code is.
template <class T>
T rosenbrock(const std::vector<T>& x) {
    T s = 0.0;
    for (std::size_t i = 0; i + 1 < x.size(); ++i) {
        T a = x[i + 1] - x[i] * x[i];
        T b = 1.0 - x[i];
        s += 100.0 * a * a + b * b;
    }
    return s;
}

std::vector<double> rosenbrock_gradient(const std::vector<double>& x) {
    std::vector<double> g(x.size(), 0.0);
    for (std::size_t i = 0; i + 1 < x.size(); ++i) {
        const double a = x[i + 1] - x[i] * x[i];
        g[i] += -400.0 * a * x[i] - 2.0 * (1.0 - x[i]);
        g[i + 1] += 200.0 * a;
    }
    return g;
}

}  // namespace

TEST_CASE("gradient of Rosenbrock matches the analytic gradient") {
    std::vector<double> x{-1.2, 1.0, 0.3, 2.0, -0.5};
    const auto g = tapeflow::gradient([](const std::vector<Real>& v) { return rosenbrock(v); }, x);
    const auto expected = rosenbrock_gradient(x);
    REQUIRE(g.size() == x.size());
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(g[i] == Approx(expected[i]).epsilon(1e-14));
}

TEST_CASE("value_and_gradient returns f(x) too") {
    std::vector<double> x{0.5, 0.25};
    auto [y, g] = tapeflow::value_and_gradient(
        [](const std::vector<Real>& v) { return exp(v[0]) * cos(v[1]); }, x);
    CHECK(y == Approx(std::exp(0.5) * std::cos(0.25)));
    CHECK(g[0] == Approx(std::exp(0.5) * std::cos(0.25)));
    CHECK(g[1] == Approx(-std::exp(0.5) * std::sin(0.25)));
}

TEST_CASE("jacobian: rows are outputs, columns inputs") {
    // F(x, y, z) = (x y z, x + sin y, z^2 / x)
    auto F = [](const std::vector<Real>& v) {
        return std::vector<Real>{v[0] * v[1] * v[2], v[0] + sin(v[1]), v[2] * v[2] / v[0]};
    };
    const double x = 1.3, y = -0.4, z = 2.2;
    const auto J = tapeflow::jacobian(F, std::vector<double>{x, y, z});
    const double expected[3][3] = {{y * z, x * z, x * y},
                                   {1.0, std::cos(y), 0.0},
                                   {-z * z / (x * x), 0.0, 2 * z / x}};
    REQUIRE(J.size() == 3);
    for (int i = 0; i < 3; ++i) {
        REQUIRE(J[i].size() == 3);
        for (int j = 0; j < 3; ++j) CHECK(J[i][j] == Approx(expected[i][j]).epsilon(1e-14));
    }
}

TEST_CASE("jacobian with an output that is an input and one that is constant") {
    auto F = [](const std::vector<Real>& v) { return std::vector<Real>{v[1], Real(4.0), v[0] * 3.0}; };
    const auto J = tapeflow::jacobian(F, std::vector<double>{2.0, 5.0});
    CHECK(J[0] == std::vector<double>{0.0, 1.0});
    CHECK(J[1] == std::vector<double>{0.0, 0.0});
    CHECK(J[2] == std::vector<double>{3.0, 0.0});
}

TEST_CASE("gradient of a function that ignores an input or returns a constant") {
    const auto g = tapeflow::gradient([](const std::vector<Real>& v) { return v[0] * 2.0; },
                                      std::vector<double>{1.0, 7.0});
    CHECK(g == std::vector<double>{2.0, 0.0});
    const auto c = tapeflow::gradient([](const std::vector<Real>&) { return Real(3.0); },
                                      std::vector<double>{1.0});
    CHECK(c == std::vector<double>{0.0});
}

TEST_CASE("gradient agrees with finite differences on a branchy function") {
    auto f = [](const auto& v) {
        using T = std::decay_t<decltype(v[0])>;
        T s = 0.0;
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (v[i] > 0.0)
                s += sqrt(v[i]) * log1p(v[i]);
            else
                s -= tanh(v[i]) * v[i];
        }
        return T(s * s);
    };
    std::vector<double> x{0.7, -0.3, 2.5, -1.1};
    const auto g = tapeflow::gradient([&](const std::vector<Real>& v) { return f(v); }, x);
    const auto fd = tapeflow_test::central_gradient([&](const std::vector<double>& v) { return f(v); }, x);
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(tapeflow_test::close(g[i], fd[i], 1e-7, 1e-9));
}

TEST_CASE("an exception in f leaves the tape usable") {
    auto throwing = [](const std::vector<Real>& v) -> Real {
        Real y = v[0] * v[0];
        if (y > 0.0) throw std::runtime_error("user error");
        return y;
    };
    CHECK_THROWS_AS(tapeflow::gradient(throwing, std::vector<double>{1.0}), std::runtime_error);
    CHECK_FALSE(tapeflow::tape::active().is_recording());
    const auto g = tapeflow::gradient([](const std::vector<Real>& v) { return v[0] * v[0]; },
                                      std::vector<double>{3.0});
    CHECK(g[0] == 6.0);
}

TEST_CASE("nested gradient calls on one tape are refused with a clear message") {
    auto outer = [](const std::vector<Real>& v) {
        const auto inner = tapeflow::gradient([](const std::vector<Real>& w) { return w[0] * w[0]; },
                                              std::vector<double>{v[0].value()});
        return v[0] * inner[0];
    };
    CHECK_THROWS_WITH(tapeflow::gradient(outer, std::vector<double>{2.0}),
                      Catch::Contains("nested"));
    CHECK_FALSE(tapeflow::tape::active().is_recording());
}

TEST_CASE("drivers work for float") {
    const auto g = tapeflow::gradient(
        [](const std::vector<tapeflow::RealF>& v) { return v[0] * v[1] * v[1]; },
        std::vector<float>{2.0f, 3.0f});
    CHECK(g[0] == 9.0f);
    CHECK(g[1] == 12.0f);
}
