// gradient, value_and_gradient and jacobian against analytic derivatives
// (also with std::array inputs and outputs and several inputs, issue 18.6);
// an exception in f (also on a streaming tape that spills with the prefetch
// thread); nested calls (inside f, inside the user's own recording, inside a
// reverse rule during the sweep) are refused with a clear message.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include <array>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "stream/stream_support.hpp"
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

TEST_CASE("an exception in f (streaming tape, spilling, prefetch thread): reset, then right gradients") {
    tapeflow_test::watchdog dog(120, "exception in f on a streaming tape");
    const bool prefetch = GENERATE(true, false);
    CAPTURE(prefetch);
    // the chain y <- 0.999 y + 0.01 sin(x0 y) + x1: thousands of statements
    auto chain = [](const std::vector<Real>& v, bool fail) {
        Real y = v[0];
        for (int i = 0; i < 3000; ++i) {
            if (fail && i == 2000) throw std::runtime_error("f failed half way");
            y = 0.999 * y + 0.01 * sin(v[0] * y) + v[1];
        }
        return y;
    };
    const std::vector<double> x{0.3, 0.002};
    const auto expected = tapeflow::gradient([&](const std::vector<Real>& v) { return chain(v, false); }, x);
    tapeflow_test::temp_directory dir;
    const tapeflow_test::process_resources before;
    {
        tapeflow::tape_options o;
        o.tile_bytes = 1024;
        o.memory_budget_bytes = 4 * 1024;
        o.prefetch = prefetch;
        o.spill_directory = dir.path();
        tapeflow::tape t(o);
        t.activate();
        CHECK_THROWS_WITH(tapeflow::gradient([&](const std::vector<Real>& v) { return chain(v, true); }, x),
                          "f failed half way");
        CHECK_FALSE(t.is_recording());
        CHECK(t.statistics().statements == 0);     // the driver reset the tape
        CHECK(t.statistics().tiles_spilled > 50);  // after the failed recording spilled
        const auto g = tapeflow::gradient([&](const std::vector<Real>& v) { return chain(v, false); }, x);
        CHECK(g == expected);  // bit for bit those of the default tape
        CHECK(tapeflow::tape::active().serial() == t.serial());
    }
    CHECK(tapeflow_test::settled_thread_count(before.threads) == before.threads);
    CHECK(tapeflow_test::descriptor_count() == before.descriptors);
    CHECK(dir.entries().empty());
}

TEST_CASE("a driver called during the user's own recording is refused and leaves that recording intact") {
    tapeflow::tape& t = tapeflow::tape::active();
    t.reset();
    t.start_recording();
    Real x = 2.0;
    t.register_input(x);
    Real y = x * x;
    const auto statements = t.statistics().statements;
    CHECK_THROWS_WITH(tapeflow::gradient([](const std::vector<Real>& v) { return v[0] * v[0]; },
                                         std::vector<double>{1.0}),
                      Catch::StartsWith("tapeflow: value_and_gradient() called while the active tape is recording") &&
                          Catch::Contains("compute the inner derivative before or after the outer recording"));
    CHECK_THROWS_WITH(tapeflow::jacobian([](const std::vector<Real>& v) { return std::vector<Real>{v[0]}; },
                                         std::vector<double>{1.0}),
                      Catch::StartsWith("tapeflow: jacobian() called while the active tape is recording"));
    CHECK(t.is_recording());
    CHECK(t.statistics().statements == statements);
    y = y * x;
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    CHECK(t.adjoint(x) == 12.0);
}

TEST_CASE("jacobian nested in gradient is refused with a message that names jacobian") {
    auto outer = [](const std::vector<Real>& v) {
        const auto J = tapeflow::jacobian([](const std::vector<Real>& w) { return std::vector<Real>{w[0] * w[0]}; },
                                          std::vector<double>{v[0].value()});
        return v[0] * J[0][0];
    };
    CHECK_THROWS_WITH(tapeflow::gradient(outer, std::vector<double>{2.0}),
                      Catch::StartsWith("tapeflow: jacobian() called while the active tape is recording"));
    CHECK_FALSE(tapeflow::tape::active().is_recording());
    CHECK(tapeflow::gradient([](const std::vector<Real>& v) { return v[0] * v[0]; }, std::vector<double>{5.0})[0] ==
          10.0);
}

TEST_CASE("a driver called from a reverse rule during the sweep is refused, and on a tape of its own it works") {
    // Before the check, gradient() reset the tape being swept, freeing the
    // entry whose rule was running (a use after free).
    const bool own_tape = GENERATE(false, true);
    CAPTURE(own_tape);
    tapeflow::tape& t = tapeflow::tape::active();
    auto cube = [](const std::vector<Real>& v) { return v[0] * v[0] * v[0]; };
    auto record = [&](double x0) {
        t.reset();
        t.start_recording();
        Real x = x0;
        t.register_input(x);
        Real y;
        tapeflow::custom_adjoint op;
        op.add_input(x);
        op.add_output(y, x0 * x0 * x0);
        op.record([own_tape, x0, cube](const double* yb, double* xb) {
            if (own_tape) {
                tapeflow::tape inner;
                inner.activate();
                xb[0] += yb[0] * tapeflow::gradient(cube, std::vector<double>{x0})[0];
            } else {
                xb[0] += yb[0] * tapeflow::gradient(cube, std::vector<double>{x0})[0];
            }
        });
        Real z = y * 2.0;
        t.register_output(z);
        t.stop_recording();
        t.set_adjoint(z, 1.0);
        return x;
    };
    Real x = record(1.5);
    if (own_tape) {
        t.sweep();
        CHECK(t.adjoint(x) == 2.0 * 3.0 * 1.5 * 1.5);
        CHECK(&tapeflow::tape::active() == &t);  // the inner tape is gone; t is the default again
    } else {
        CHECK_THROWS_WITH(t.sweep(), Catch::StartsWith("tapeflow: value_and_gradient() called while the active "
                                                       "tape is sweeping") &&
                                         Catch::Contains("on a tape of its own"));
        CHECK_FALSE(t.is_sweeping());
        CHECK(t.statistics().externals == 1);  // the entry was not freed
    }
    // the tape records and sweeps again after a reset (record() resets it)
    Real x2 = record(2.0);
    if (own_tape) {
        t.sweep();
        CHECK(t.adjoint(x2) == 2.0 * 3.0 * 2.0 * 2.0);
    }
}

// ---- inputs and outputs other than one std::vector (issue 18.6) -----------

TEST_CASE("gradient of a std::array input is a std::array") {
    const std::array<double, 3> x{0.7, -1.3, 0.4};
    auto f = [](const std::array<Real, 3>& v) { return v[0] * v[1] + exp(v[2]) * v[0]; };
    const auto g = tapeflow::gradient(f, x);
    static_assert(std::is_same_v<std::decay_t<decltype(g)>, std::array<double, 3>>);
    CHECK(g[0] == Approx(x[1] + std::exp(x[2])).epsilon(1e-15));
    CHECK(g[1] == Approx(x[0]).epsilon(1e-15));
    CHECK(g[2] == Approx(std::exp(x[2]) * x[0]).epsilon(1e-15));
    auto [y, g2] = tapeflow::value_and_gradient(f, x);
    CHECK(y == Approx(x[0] * x[1] + std::exp(x[2]) * x[0]));
    CHECK(g2 == g);
}

TEST_CASE("gradient with several inputs gives one gradient per input, in a std::tuple") {
    // f(w, b, z) = sum_i w_i b_i + sin(z_0) w_0 + z_1^2 b_1
    auto f = [](const std::vector<Real>& w, const std::array<Real, 2>& b, const std::vector<Real>& z) {
        Real s = sin(z[0]) * w[0] + z[1] * z[1] * b[1];
        for (std::size_t i = 0; i < 2; ++i) s += w[i] * b[i];
        return s;
    };
    const std::vector<double> w{0.5, -2.0};
    const std::array<double, 2> b{1.5, 3.0};
    const std::vector<double> z{0.3, -0.8};
    const auto [gw, gb, gz] = tapeflow::gradient(f, w, b, z);
    static_assert(std::is_same_v<std::decay_t<decltype(gb)>, std::array<double, 2>>);
    CHECK(gw[0] == Approx(b[0] + std::sin(z[0])).epsilon(1e-15));
    CHECK(gw[1] == Approx(b[1]).epsilon(1e-15));
    CHECK(gb[0] == Approx(w[0]).epsilon(1e-15));
    CHECK(gb[1] == Approx(w[1] + z[1] * z[1]).epsilon(1e-15));
    CHECK(gz[0] == Approx(std::cos(z[0]) * w[0]).epsilon(1e-15));
    CHECK(gz[1] == Approx(2 * z[1] * b[1]).epsilon(1e-15));
    const auto r = tapeflow::value_and_gradient(f, w, b, z);
    CHECK(r.value == Approx(std::sin(z[0]) * w[0] + z[1] * z[1] * b[1] + w[0] * b[0] + w[1] * b[1]));
    CHECK(std::get<2>(r.gradient) == gz);
}

TEST_CASE("several inputs: the gradients are bit for bit those of the concatenated input") {
    // a generic f over (x, y): the same arithmetic as over x ++ y
    auto body = [](const auto& x, const auto& y) {
        using T = std::decay_t<decltype(x[0])>;
        T s = 0.0;
        for (std::size_t i = 0; i < x.size(); ++i) s += sin(x[i] * y[i % y.size()]) + y[0] / (1.0 + x[i] * x[i]);
        return s;
    };
    const std::vector<double> x{0.1, 0.9, -0.4, 1.7};
    const std::array<double, 3> y{0.6, -1.1, 2.2};
    const auto [gx, gy] = tapeflow::gradient([&](const auto& a, const auto& c) { return body(a, c); }, x, y);
    std::vector<double> xy(x.begin(), x.end());
    xy.insert(xy.end(), y.begin(), y.end());
    const auto g = tapeflow::gradient(
        [&](const std::vector<Real>& v) {
            const std::vector<Real> a(v.begin(), v.begin() + 4);
            const std::array<Real, 3> c{v[4], v[5], v[6]};
            return body(a, c);
        },
        xy);
    for (std::size_t i = 0; i < 4; ++i) CHECK(gx[i] == g[i]);
    for (std::size_t i = 0; i < 3; ++i) CHECK(gy[i] == g[4 + i]);
    // and against finite differences of the double function
    const auto fd = tapeflow_test::central_gradient(
        [&](const std::vector<double>& v) {
            const std::vector<double> a(v.begin(), v.begin() + 4);
            const std::array<double, 3> c{v[4], v[5], v[6]};
            return body(a, c);
        },
        xy);
    for (std::size_t i = 0; i < xy.size(); ++i) CHECK(tapeflow_test::close(g[i], fd[i], 1e-7, 1e-9));
}

TEST_CASE("jacobian of a function that returns a std::array, from a std::array input") {
    auto F = [](const std::array<Real, 2>& v) {
        return std::array<Real, 3>{v[0] * v[1], exp(v[0]) - v[1], v[1] / v[0]};
    };
    const std::array<double, 2> x{1.25, -0.5};
    const auto J = tapeflow::jacobian(F, x);
    const double expected[3][2] = {
        {x[1], x[0]}, {std::exp(x[0]), -1.0}, {-x[1] / (x[0] * x[0]), 1.0 / x[0]}};
    REQUIRE(J.size() == 3);
    for (int i = 0; i < 3; ++i) {
        REQUIRE(J[i].size() == 2);
        for (int j = 0; j < 2; ++j) CHECK(J[i][j] == Approx(expected[i][j]).epsilon(1e-15));
    }
}

TEST_CASE("jacobian of a std::array output equals that of the same std::vector output") {
    auto values = [](const std::vector<Real>& v) {
        return std::array<Real, 4>{sin(v[0]) * v[2], v[1] * v[1] - v[0], hypot(v[0], v[2]), v[2] / (1.0 + v[1] * v[1])};
    };
    const std::vector<double> x{0.3, -0.7, 1.9};
    const auto Ja = tapeflow::jacobian(values, x);
    const auto Jv = tapeflow::jacobian(
        [&](const std::vector<Real>& v) {
            auto a = values(v);
            return std::vector<Real>(a.begin(), a.end());
        },
        x);
    CHECK(Ja == Jv);
    // column 0 against finite differences
    const double h = 1e-6;
    for (std::size_t i = 0; i < 4; ++i) {
        auto at = [&](double d) {
            std::vector<Real> v{x[0] + d, x[1], x[2]};
            return values(v)[i].value();
        };
        CHECK(tapeflow_test::close(Ja[i][0], (at(h) - at(-h)) / (2 * h), 1e-6, 1e-8));
    }
}

TEST_CASE("float inputs in a std::array give a float gradient") {
    const auto g = tapeflow::gradient([](const std::array<tapeflow::RealF, 2>& v) { return v[0] * v[1] * v[1]; },
                                      std::array<float, 2>{2.0f, 3.0f});
    static_assert(std::is_same_v<std::decay_t<decltype(g)>, std::array<float, 2>>);
    CHECK(g[0] == 9.0f);
    CHECK(g[1] == 12.0f);
}

TEST_CASE("jacobian by lanes (default and jacobian<N>) equals one scalar sweep per output, bit for bit") {
    // 13 outputs: one full block of 8 lanes and a partial one
    auto F = [](const std::vector<Real>& v) {
        std::vector<Real> y;
        for (int k = 0; k < 13; ++k) y.push_back(sin(v[std::size_t(k) % 3] * (k + 1)) * v[(std::size_t(k) + 1) % 3] + k);
        return y;
    };
    const std::vector<double> x{0.4, -0.9, 1.3};
    const auto scalar = tapeflow::jacobian<1>(F, x);
    REQUIRE(scalar.size() == 13);
    for (int k = 0; k < 13; ++k) {
        const std::size_t i = std::size_t(k) % 3, j = (std::size_t(k) + 1) % 3;
        CHECK(scalar[std::size_t(k)][i] == Approx(std::cos(x[i] * (k + 1)) * (k + 1) * x[j]).epsilon(1e-14));
        CHECK(scalar[std::size_t(k)][j] == Approx(std::sin(x[i] * (k + 1))).epsilon(1e-14));
    }
    CHECK(tapeflow::jacobian(F, x) == scalar);
    CHECK(tapeflow::jacobian<8>(F, x) == scalar);
    CHECK(tapeflow::jacobian<5>(F, x) == scalar);
    CHECK(tapeflow::jacobian<16>(F, {0.4, -0.9, 1.3}) == scalar);
    // the tape's adjoints are left at 0 either way
    CHECK(tapeflow::tape::active().adjoint(tapeflow::identifier(1)) == 0.0);
}
