// Second order (include/tapeflow/hessian_drivers.hpp, basic_real<basic_dual>).
//
// Hessians against analytic ones (a quadratic form exactly, Rosenbrock, a
// function of several operations); every operator and function of
// docs/expressions.md against Richardson-extrapolated central differences of
// the reverse gradient (an independent mode); the lane counts against each
// other; the diagonal and H v against the dense Hessian; a spilling tape
// against an in-memory one; a checkpointed loop against plain taping; the
// errors.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>
#include <tapeflow/checkpoint/checkpointed_loop.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "support/options.hpp"

using tapeflow::Dual;
using tapeflow::Real;
using Real2 = tapeflow::second_order_real<double>;

static_assert(std::is_same_v<Real2, tapeflow::basic_real<tapeflow::basic_dual<double, 1>>>);
static_assert(std::is_same_v<Real2::scalar_type, Dual>);
static_assert(std::numeric_limits<Real2>::is_specialized && std::numeric_limits<Real2>::digits == 53);
static_assert(!std::is_convertible_v<Real2, double> && !std::is_convertible_v<Real2, Dual>,
              "no implicit conversion out of an active type");

namespace {

bool close(double a, double e, double rel, double abs = 1e-300) {
    if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e);
    return std::fabs(a - e) <= rel * std::fmax(std::fabs(a), std::fabs(e)) + abs;
}

using matrix = std::vector<std::vector<double>>;

void check_matrix(const matrix& got, const matrix& want, double rel, double abs = 1e-300) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        REQUIRE(got[i].size() == want[i].size());
        for (std::size_t j = 0; j < got[i].size(); ++j) {
            INFO("entry (" << i << ", " << j << "): " << got[i][j] << " against " << want[i][j]);
            CHECK(close(got[i][j], want[i][j], rel, abs));
        }
    }
}

/// The Hessian by Richardson-extrapolated central differences of the reverse
/// gradient (tapeflow::gradient on Real): column j from steps along e_j.
template <class F>
matrix hessian_by_differences(F f, const std::vector<double>& x, double step = 1e-3) {
    const std::size_t n = x.size();
    const auto gradient = [&](std::vector<double> at) {
        return tapeflow::gradient([&](const std::vector<Real>& a) { return f(a); }, at);
    };
    matrix H(n, std::vector<double>(n));
    for (std::size_t j = 0; j < n; ++j) {
        const double h = step * std::fmax(1.0, std::fabs(x[j]));
        const auto difference = [&](double s) {
            std::vector<double> up = x, down = x;
            up[j] += s;
            down[j] -= s;
            const std::vector<double> gu = gradient(up), gd = gradient(down);
            std::vector<double> d(n);
            for (std::size_t i = 0; i < n; ++i) d[i] = (gu[i] - gd[i]) / (2 * s);
            return d;
        };
        const std::vector<double> d1 = difference(h), d2 = difference(h / 2);
        for (std::size_t i = 0; i < n; ++i) H[i][j] = (4 * d2[i] - d1[i]) / 3;
    }
    return H;
}

// f(x) = x0^2 x1 + exp(x1) + sin(x0 x2) x1 and its Hessian, by hand.
const auto mixed = [](const auto& x) { return x[0] * x[0] * x[1] + exp(x[1]) + sin(x[0] * x[2]) * x[1]; };
matrix mixed_hessian(const std::vector<double>& x) {
    const double s = std::sin(x[0] * x[2]), c = std::cos(x[0] * x[2]);
    return {{2 * x[1] - x[2] * x[2] * s * x[1], 2 * x[0] + x[2] * c, (c - x[0] * x[2] * s) * x[1]},
            {2 * x[0] + x[2] * c, std::exp(x[1]), x[0] * c},
            {(c - x[0] * x[2] * s) * x[1], x[0] * c, -x[0] * x[0] * s * x[1]}};
}

// Rosenbrock in n dimensions: sum 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2.
const auto rosenbrock = [](const auto& x) {
    using T = typename std::decay_t<decltype(x)>::value_type;
    T sum = 0;
    for (std::size_t i = 0; i + 1 < x.size(); ++i) sum += 100 * pow(x[i + 1] - x[i] * x[i], 2) + pow(1 - x[i], 2);
    return sum;
};
matrix rosenbrock_hessian(const std::vector<double>& x) {
    const std::size_t n = x.size();
    matrix H(n, std::vector<double>(n, 0.0));
    for (std::size_t i = 0; i + 1 < n; ++i) {
        H[i][i] += 1200 * x[i] * x[i] - 400 * x[i + 1] + 2;
        H[i][i + 1] += -400 * x[i];
        H[i + 1][i] += -400 * x[i];
        H[i + 1][i + 1] += 200;
    }
    return H;
}

}  // namespace

TEST_CASE("hessian: a quadratic form gives its matrix exactly, every lane count", "[hessian]") {
    const matrix A = {{4, 1, -2, 0.5}, {1, 3, 0, -1}, {-2, 0, 5, 2}, {0.5, -1, 2, 6}};
    const std::vector<double> b = {1, -2, 0.5, 3};
    const auto q = [&](const auto& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        T sum = 0;
        for (std::size_t i = 0; i < 4; ++i) {
            sum += b[i] * x[i];
            for (std::size_t j = 0; j < 4; ++j) sum += 0.5 * A[i][j] * x[i] * x[j];
        }
        return sum;
    };
    const std::vector<double> x = {0.3, -1.2, 2.0, 0.7};
    // Products of small integers and halves: every operation is exact.
    check_matrix(tapeflow::hessian(q, x), A, 0);
    check_matrix(tapeflow::hessian<1>(q, x), A, 0);
    check_matrix(tapeflow::hessian<3>(q, x), A, 0);
    check_matrix(tapeflow::hessian<16>(q, x), A, 0);
    const auto r = tapeflow::value_gradient_and_hessian<2>(q, x);
    for (std::size_t i = 0; i < 4; ++i) {
        double g = b[i];
        for (std::size_t j = 0; j < 4; ++j) g += A[i][j] * x[j];
        CHECK(close(r.gradient[i], g, 1e-15));
    }
    CHECK(r.value == tapeflow::value_and_gradient([&](const std::vector<Real>& a) { return q(a); }, x).value);
}

TEST_CASE("hessian: analytic Hessians of a mixed function and of Rosenbrock", "[hessian]") {
    for (const std::vector<double>& x : {std::vector<double>{1.0, 2.0, 0.5}, std::vector<double>{-0.7, 0.3, 1.9}}) {
        check_matrix(tapeflow::hessian(mixed, x), mixed_hessian(x), 1e-14, 1e-15);
        check_matrix(tapeflow::hessian<1>(mixed, x), mixed_hessian(x), 1e-14, 1e-15);
    }
    const std::vector<double> x = {-1.2, 1.0, 0.8, -0.3, 1.7, 0.2, -2.0, 0.9, 1.1, -0.4};  // 10: two passes of 8
    check_matrix(tapeflow::hessian(rosenbrock, x), rosenbrock_hessian(x), 1e-14, 1e-12);
    check_matrix(tapeflow::hessian<4>(rosenbrock, x), rosenbrock_hessian(x), 1e-14, 1e-12);
    const std::vector<double> d = tapeflow::hessian_diagonal(rosenbrock, x);
    const matrix H = rosenbrock_hessian(x);
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(close(d[i], H[i][i], 1e-14, 1e-12));
}

TEST_CASE("hessian_vector_product: H v of the dense Hessian, with the gradient unchanged", "[hessian]") {
    const std::vector<double> x = {-1.2, 1.0, 0.8, -0.3, 1.7};
    const std::vector<double> v = {0.5, -1.0, 2.0, 0.25, -0.75};
    const matrix H = rosenbrock_hessian(x);
    const std::vector<double> hv = tapeflow::hessian_vector_product(rosenbrock, x, v);
    REQUIRE(hv.size() == x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        double want = 0;
        for (std::size_t j = 0; j < x.size(); ++j) want += H[i][j] * v[j];
        CHECK(close(hv[i], want, 1e-13, 1e-12));
    }
    // The symmetry of H seen through two products: u . (H v) == v . (H u).
    const std::vector<double> u = {1.0, 0.3, -0.2, 2.0, 0.1};
    const std::vector<double> hu = tapeflow::hessian_vector_product(rosenbrock, x, u);
    double uhv = 0, vhu = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        uhv += u[i] * hv[i];
        vhu += v[i] * hu[i];
    }
    CHECK(close(uhv, vhu, 1e-13));
    // The gradient of the same recording is the first-order one.
    const auto r = tapeflow::value_gradient_and_hessian(rosenbrock, x);
    const auto g = tapeflow::gradient([](const std::vector<Real>& a) { return rosenbrock(a); }, x);
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(close(r.gradient[i], g[i], 1e-15));
    // Braced lists.
    const std::vector<double> hv2 = tapeflow::hessian_vector_product(mixed, {1.0, 2.0, 0.5}, {0.0, 1.0, 0.0});
    const matrix M = mixed_hessian({1.0, 2.0, 0.5});
    for (std::size_t i = 0; i < 3; ++i) CHECK(close(hv2[i], M[i][1], 1e-14));
}

TEST_CASE("hessian: every operator and function against differences of the reverse gradient", "[hessian]") {
    using F = std::function<Real2(const Real2&, const Real2&)>;
    struct unary_case {
        const char* name;
        std::function<Real2(const Real2&)> f2;
        std::function<Real(const Real&)> f1;
        double at;
    };
#define TAPEFLOW_UNARY(fn, x) \
    unary_case { #fn, [](const Real2& a) { return Real2(fn(a)); }, [](const Real& a) { return Real(fn(a)); }, x }
    const unary_case unary[] = {
        TAPEFLOW_UNARY(sqrt, 1.7),  TAPEFLOW_UNARY(cbrt, -2.3), TAPEFLOW_UNARY(exp, 0.8),   TAPEFLOW_UNARY(exp2, -0.6),
        TAPEFLOW_UNARY(expm1, 0.3), TAPEFLOW_UNARY(log, 2.5),   TAPEFLOW_UNARY(log2, 0.4),  TAPEFLOW_UNARY(log10, 3.3),
        TAPEFLOW_UNARY(log1p, 0.9), TAPEFLOW_UNARY(sin, 1.1),   TAPEFLOW_UNARY(cos, -0.4),  TAPEFLOW_UNARY(tan, 0.6),
        TAPEFLOW_UNARY(asin, 0.35), TAPEFLOW_UNARY(acos, -0.5), TAPEFLOW_UNARY(atan, 1.4),  TAPEFLOW_UNARY(sinh, 0.7),
        TAPEFLOW_UNARY(cosh, -1.2), TAPEFLOW_UNARY(tanh, 0.45), TAPEFLOW_UNARY(tanh, -2.6), TAPEFLOW_UNARY(asinh, 1.9),
        TAPEFLOW_UNARY(acosh, 2.2), TAPEFLOW_UNARY(atanh, 0.3), TAPEFLOW_UNARY(abs, -1.3),  TAPEFLOW_UNARY(fabs, 0.8),
        TAPEFLOW_UNARY(erf, 0.6),   TAPEFLOW_UNARY(erfc, -0.2), TAPEFLOW_UNARY(tgamma, 2.7), TAPEFLOW_UNARY(tgamma, -1.5),
        TAPEFLOW_UNARY(lgamma, 0.4), TAPEFLOW_UNARY(lgamma, 3.9), TAPEFLOW_UNARY(-, 1.5),    TAPEFLOW_UNARY(+, 1.5),
    };
#undef TAPEFLOW_UNARY
    for (const unary_case& c : unary) {
        INFO(c.name << " at " << c.at);
        // x * f(x): the second derivative 2 f' + x f'' involves f'' and f'.
        const auto g2 = [&](const auto& x) { return Real2(x[0] * c.f2(x[0])); };
        const auto g1 = [&](const auto& x) { return Real(x[0] * c.f1(x[0])); };
        const matrix H = tapeflow::hessian<1>(g2, std::vector<double>{c.at});  // f2 takes Real2: one lane
        check_matrix(H, hessian_by_differences(g1, {c.at}), 1e-7, 1e-9);
    }
    struct binary_case {
        const char* name;
        F f2;
        std::function<Real(const Real&, const Real&)> f1;
        double a, b;
    };
#define TAPEFLOW_BINARY(name, expr, a, b)                                                      \
    binary_case {                                                                              \
        name, [](const Real2& x, const Real2& y) { return Real2(expr); },                      \
            [](const Real& x, const Real& y) { return Real(expr); }, a, b                      \
    }
    const binary_case binary[] = {
        TAPEFLOW_BINARY("x + y", x + y, 1.3, -0.4),     TAPEFLOW_BINARY("x - y", x - y, 1.3, -0.4),
        TAPEFLOW_BINARY("x * y", x * y, 1.3, -0.4),     TAPEFLOW_BINARY("x / y", x / y, 1.3, -0.4),
        TAPEFLOW_BINARY("pow", pow(x, y), 1.3, -0.4),   TAPEFLOW_BINARY("pow int", pow(x, 3) * y, 1.3, -0.4),
        TAPEFLOW_BINARY("atan2", atan2(x, y), 1.3, -0.4), TAPEFLOW_BINARY("hypot", hypot(x, y), 1.3, -0.4),
        TAPEFLOW_BINARY("hypot3", hypot(x, y, x * y), 1.3, -0.4),
        TAPEFLOW_BINARY("fmin", fmin(x, y) * x, 1.3, -0.4), TAPEFLOW_BINARY("fmax", fmax(x, y) * y, 1.3, -0.4),
        TAPEFLOW_BINARY("min", min(x, y) * x, 1.3, -0.4),   TAPEFLOW_BINARY("max", max(x, y) * y, 1.3, -0.4),
        TAPEFLOW_BINARY("fmod", fmod(x * y, y), 2.3, 0.7), TAPEFLOW_BINARY("copysign", copysign(x * y, y), 1.3, -0.4),
        TAPEFLOW_BINARY("number and x", 2.5 / (x + 3.0) - 1.5 * y * y + (4.0 - x) * y, 1.3, -0.4),
        TAPEFLOW_BINARY("compound", [&] { auto t = x; t *= y; t += x; t /= (y - 3.0); t -= x * x; return t; }(),
                        1.3, -0.4),
        TAPEFLOW_BINARY("floor", floor(x) * y + ceil(y) * x + round(x * y) + trunc(x) * x, 1.3, -0.4),
        TAPEFLOW_BINARY("remainder", remainder(x * y, y), 2.3, 0.7),
        TAPEFLOW_BINARY("fdim", fdim(x * x, y), 1.3, -0.4),
        TAPEFLOW_BINARY("fma", fma(x, x * y, y * y), 1.3, -0.4),
        TAPEFLOW_BINARY("ldexp", ldexp(x * y, 3) + scalbn(y * y, -1), 1.3, -0.4),
        TAPEFLOW_BINARY("rint", rint(x) * y + nearbyint(y * 4) * x * x, 1.3, -0.4),
    };
#undef TAPEFLOW_BINARY
    for (const binary_case& c : binary) {
        INFO(c.name << " at " << c.a << ", " << c.b);
        const auto g2 = [&](const auto& x) { return Real2(c.f2(x[0], x[1])); };
        const auto g1 = [&](const auto& x) { return Real(c.f1(x[0], x[1])); };
        check_matrix(tapeflow::hessian<1>(g2, std::vector<double>{c.a, c.b}),
                     hessian_by_differences(g1, {c.a, c.b}), 1e-7, 1e-9);
    }
}

TEST_CASE("hessian: where a derivative does not exist, and where 1/cosh^2 would overflow", "[hessian]") {
    // abs at 0: derivative 0 by convention, so the second derivative is 0 too.
    const auto f = [](const auto& x) { return abs(x[0]) * x[0]; };
    CHECK(tapeflow::hessian(f, {0.0})[0][0] == 0.0);
    // tanh'' = -2 tanh sech^2: tiny and finite far out (not NaN: issue 18, second order).
    const auto t = [](const auto& x) { return tanh(x[0]); };
    for (double x : {2.0, -3.5, 30.0, 400.0, -800.0}) {
        INFO("tanh at " << x);
        const double th = std::tanh(x), ch = std::cosh(x);
        const double want = std::isinf(ch) ? -0.0 : -2 * th / (ch * ch);
        const double got = tapeflow::hessian(t, {x})[0][0];
        CHECK(std::isfinite(got));
        CHECK(close(got, want, 1e-13, 1e-300));
    }
}

TEST_CASE("hessian: pow(x, y) where the exponent is 0 keeps the mixed derivative", "[hessian]") {
    // d/dx x^y = y x^(y-1) is 0 at y = 0, but its derivative in y is
    // x^(y-1) (1 + y ln x) = 1 / x there: a constant 0 for d/dx lost it, and
    // the Hessian came out asymmetric (H[0][1] = 0, H[1][0] = 1 / x).
    const auto f = [](const auto& v) { return pow(v[0], v[1]); };
    for (double x : {2.0, 0.5, 3.0}) {
        INFO("x = " << x);
        const double lx = std::log(x);
        const std::vector<std::vector<double>> h = tapeflow::hessian(f, {x, 0.0});
        CHECK(h[0][0] == 0.0);  // y (y - 1) x^(y-2)
        CHECK(close(h[0][1], 1 / x, 1e-15, 0));
        CHECK(close(h[1][0], 1 / x, 1e-15, 0));
        CHECK(close(h[1][1], lx * lx, 1e-15, 0));  // x^y ln^2 x
        const std::vector<double> hv = tapeflow::hessian_vector_product(f, std::vector<double>{x, 0.0}, std::vector<double>{0.0, 1.0});
        CHECK(close(hv[0], 1 / x, 1e-15, 0));
        CHECK(close(hv[1], lx * lx, 1e-15, 0));
    }
    // at x = 0 the mixed derivative 1 / x does not exist: 0, as documented
    CHECK(tapeflow::hessian(f, {0.0, 0.0})[0][1] == 0.0);
    // first order at a subnormal x: d/dx = 0 (y / x, not y * x^(-1) = 0 * inf = NaN)
    const double tiny = 1e-310;
    const std::vector<double> g = tapeflow::gradient([&](const std::vector<Real>& v) { return Real(f(v)); },
                                                     std::vector<double>{tiny, 0.0});
    CHECK(g[0] == 0.0);
    CHECK(close(g[1], std::log(tiny), 1e-15, 0));  // x^y ln x
}

TEST_CASE("hessian: an infinite partial (sqrt at 0) leaves the other rows finite", "[hessian]") {
    // g = x0^2 + x1 sqrt(x2) at x2 = 0: dg/dx1 = sqrt(x2) depends on x2 alone,
    // so H[1][0] = H[1][1] = 0; H[1][2] = 1 / (2 sqrt(x2)) = inf. The Duals
    // of the recording multiplied sqrt's inf partial by a tangent of 0 (a
    // NaN in row 1, and H[1][0] != H[0][1]). Row 2 is the derivative of
    // dg/dx2 = inf, not checked (NaN where the tangent meets that inf).
    const auto g = [](const auto& x) { return x[0] * x[0] + x[1] * sqrt(x[2]); };
    for (const auto& h : {tapeflow::hessian<1>(g, {1.0, 1.0, 0.0}), tapeflow::hessian<4>(g, {1.0, 1.0, 0.0})}) {
        CHECK(h[0] == std::vector<double>{2.0, 0.0, 0.0});
        CHECK(h[1][0] == 0.0);
        CHECK(h[1][1] == 0.0);
        CHECK(h[1][2] == std::numeric_limits<double>::infinity());
    }
    const std::vector<double> hv = tapeflow::hessian_vector_product(g, std::vector<double>{1.0, 1.0, 0.0},
                                                                    std::vector<double>{1.0, 1.0, 0.0});
    CHECK(hv[0] == 2.0);
    CHECK(hv[1] == 0.0);
}

TEST_CASE("hessian: a spilling tape gives the Hessian of the in-memory one, bit for bit", "[hessian]") {
    using D = tapeflow::basic_dual<double, 4>;
    using R = tapeflow::basic_real<D>;
    const std::vector<double> x = {-1.2, 1.0, 0.8, -0.3, 1.7, 0.2, -2.0, 0.9};
    const auto run = [&](tapeflow::basic_tape<D>& tape, std::size_t first) {
        tape.activate();
        tape.reset();
        tape.start_recording();
        std::vector<R> a;
        for (std::size_t j = 0; j < x.size(); ++j) {
            D d(x[j]);
            if (j >= first && j < first + 4) d.set_tangent(1.0, j - first);
            a.push_back(R(d));
        }
        tape.register_inputs(a.data(), a.data() + a.size());
        R y = 0;
        for (int k = 0; k < 200; ++k) y += rosenbrock(a) * (1.0 + 0.001 * k);  // many tiles
        tape.register_output(y);
        tape.stop_recording();
        tape.set_adjoint(y, D(1.0));
        tape.sweep();
        std::vector<D> adj(a.size());
        tape.adjoints(a.data(), a.data() + a.size(), adj.data());
        return adj;
    };
    tapeflow::basic_tape<D> memory;
    tapeflow::basic_tape<D> spilling(tapeflow_test::tape_options(1024, true, 4096, true));
    for (std::size_t first : {std::size_t(0), std::size_t(4)}) {
        const std::vector<D> a = run(memory, first), b = run(spilling, first);
        for (std::size_t i = 0; i < x.size(); ++i) {
            CHECK(a[i].value() == b[i].value());
            for (std::size_t l = 0; l < 4; ++l) CHECK(a[i].tangent(l) == b[i].tangent(l));
        }
    }
    CHECK(spilling.statistics().tiles_spilled > 0);
    const matrix H = rosenbrock_hessian(x);
    const std::vector<D> a = run(memory, 0);
    double weight = 0;
    for (int k = 0; k < 200; ++k) weight += 1.0 + 0.001 * k;
    for (std::size_t i = 0; i < x.size(); ++i)
        for (std::size_t l = 0; l < 4; ++l) CHECK(close(a[i].tangent(l), weight * H[i][l], 1e-12, 1e-9));
    tapeflow::basic_tape<D>::thread_default().activate();
}

TEST_CASE("hessian drivers: sizes, empty inputs and misuse", "[hessian]") {
    CHECK_THROWS_AS(tapeflow::hessian_vector_product(mixed, {1.0, 2.0, 0.5}, {1.0}), tapeflow::usage_error);
    CHECK_THROWS_WITH(tapeflow::hessian_vector_product(mixed, {1.0, 2.0, 0.5}, {1.0}),
                      Catch::Contains("one direction entry per input"));
    // No inputs: the value, no derivatives.
    const auto constant = [](const auto& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        return T(2.5) * T(x.size() + 1);
    };
    const auto r = tapeflow::value_gradient_and_hessian(constant, std::vector<double>{});
    CHECK(r.value == 2.5);
    CHECK(r.gradient.empty());
    CHECK(r.hessian.empty());
    CHECK(tapeflow::hessian_diagonal(constant, std::vector<double>{}).empty());
    // Called from inside a recording on the same tape: refused, the outer recording intact.
    auto& tape = tapeflow::basic_tape<Dual>::active();
    tape.reset();
    tape.start_recording();
    CHECK_THROWS_WITH(tapeflow::hessian_vector_product(mixed, {1.0, 2.0, 0.5}, {1.0, 0.0, 0.0}),
                      Catch::Contains("nested calls are not supported"));
    CHECK(tape.is_recording());
    tape.stop_recording();
    tape.reset();
    // An exception from f leaves the tape usable.
    const auto throws = [](const auto& x) -> std::decay_t<decltype(x[0])> {
        if (x[0] > 0) throw std::runtime_error("f failed");
        return x[0] * x[0];
    };
    CHECK_THROWS_WITH(tapeflow::hessian(throws, {1.0}), "f failed");
    CHECK(tapeflow::hessian(throws, {-1.0})[0][0] == 2.0);
}

TEST_CASE("hessian: an adjoint of value 0 with a tangent still passes its tangent on", "[hessian]") {
    // f = s^2 with s = sin(x) its own record, at x = 0: adjoint(s) = 2 s = 0,
    // its tangent 2 cos(x) v = 2 v. A sweep that skipped a zero-valued adjoint
    // would drop the whole Hessian: f'' = 2 cos(2x) = 2.
    const auto f = [](const auto& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        T s = sin(x[0]);
        return s * s;
    };
    CHECK(tapeflow::hessian(f, {0.0})[0][0] == 2.0);
    CHECK(tapeflow::hessian_vector_product(f, {0.0}, {0.5})[0] == 1.0);
}

TEST_CASE("basic_real<Dual>: a Dual assigned makes the variable passive, its tangents kept", "[hessian]") {
    auto& tape = tapeflow::basic_tape<Dual>::active();
    tape.reset();
    tape.start_recording();
    Real2 x = Dual(2.0, 1.0);
    tape.register_input(x);
    REQUIRE(x.is_active());
    x = Dual(3.0, 0.5);
    CHECK(!x.is_active());
    CHECK(x.value().value() == 3.0);
    CHECK(x.value().tangent() == 0.5);
    tape.stop_recording();
    tape.reset();
}

TEST_CASE("register_inputs(first, last, values) on a tape of Duals: tangents kept, H v exact, identifiers kept", "[hessian]") {
    // Rosenbrock, the inputs set from Duals (value x, tangent v) and from
    // doubles (tangent 0): the adjoints' tangents are H v, and 0.
    const std::vector<double> x = {-1.2, 1.0, 0.8, -0.3, 1.7};
    const std::vector<double> v = {0.5, -1.0, 0.25, 2.0, -0.75};
    const matrix H = rosenbrock_hessian(x);
    auto& tape = tapeflow::basic_tape<Dual>::active();
    std::vector<Real2> a(x.size());
    std::vector<tapeflow::identifier> ids;
    for (int round = 0; round < 3; ++round) {
        tape.reset();
        tape.start_recording();
        if (round < 2) {
            std::vector<Dual> d;
            for (std::size_t i = 0; i < x.size(); ++i) d.push_back(Dual(x[i], v[i]));
            tape.register_inputs(a.begin(), a.end(), d.begin());
        } else {
            for (std::size_t i = 0; i < x.size(); ++i) tape.register_input(a[i], x[i]);  // a double: tangent 0
        }
        Real2 y = rosenbrock(a);
        tape.register_output(y);
        tape.stop_recording();
        tape.set_adjoint(y, Dual(1.0));
        tape.sweep();
        for (std::size_t i = 0; i < x.size(); ++i) {
            const Dual g = tape.adjoint(a[i]);
            double hv = 0;
            for (std::size_t j = 0; j < x.size(); ++j) hv += H[i][j] * v[j];
            CHECK(a[i].value().value() == x[i]);
            CHECK(close(g.tangent(), round < 2 ? hv : 0.0, 1e-14, 1e-12));
        }
        if (round == 0)
            for (const Real2& ai : a) ids.push_back(ai.id());
        else
            for (std::size_t i = 0; i < x.size(); ++i) CHECK(a[i].id() == ids[i]);
    }
    tape.reset();
}

TEST_CASE("hessian of a checkpointed_loop: the Hessian of plain taping, also with debug checks", "[hessian]") {
    // The debug checks' fingerprint (checkpoint/checkpointed_loop.hpp)
    // converted the state's values to double, which a Dual is not:
    // tapeflow::hessian of a checkpointed loop did not compile without
    // NDEBUG. The AddressSanitizer build compiles this file without NDEBUG
    // (debug checks on), the Release build with it. Here rather than in
    // checkpointed_loop_test: second-order tapes cost that file 23 s of
    // CPU in the AddressSanitizer build, this one already has them.
    const auto step = [](auto& w) {
        for (std::size_t i = 1; i < w.size(); ++i) w[i] = w[i] + 0.3 * sin(w[i - 1]) * w[i];
        w[0] = w[0] * w[w.size() - 1];
    };
    const auto plain = [&](const auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        std::vector<T> s(v);
        for (int k = 0; k < 7; ++k) step(s);
        return T(s[0] * s[1] + s[2] * s[3]);
    };
    const auto checkpointed = [&](const auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        std::vector<T> s(v);
        tapeflow::checkpointed_loop(7, s, [&](auto& w) { step(w); }, 2);
        return T(s[0] * s[1] + s[2] * s[3]);
    };
    const std::vector<double> x{0.3, -0.5, 0.8, 0.4};
    const auto want = tapeflow::hessian(plain, x), got = tapeflow::hessian(checkpointed, x);
    for (std::size_t i = 0; i < x.size(); ++i)
        for (std::size_t j = 0; j < x.size(); ++j) {
            INFO("H[" << i << "][" << j << "]");
            CHECK(std::fabs(got[i][j] - want[i][j]) <= 1e-13 * (1 + std::fabs(want[i][j])));
        }
}
