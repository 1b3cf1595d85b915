// Forward mode (include/tapeflow/dual.hpp, include/tapeflow/forward_drivers.hpp).
//
// Every operator and function of docs/expressions.md runs with
//   tapeflow::Dual          one tangent, seeded with each unit direction,
//   tapeflow::DualVec<4>    four lanes seeded with scaled unit directions,
//   tests/support/dual.hpp  the independent reference (calculus by hand),
//   tapeflow::Real          reverse mode (value_and_gradient),
// at ordinary points and where a derivative does not exist: the values are
// identical, the tangents match the reference and the reverse gradient, and
// each lane matches the one-tangent run of its direction exactly.
// Then: the semantics of the type, the drivers against reverse mode, errors.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "support/dual.hpp"

using tapeflow::Dual;
using tapeflow::DualVec;
using tapeflow::Real;

static_assert(sizeof(Dual) == 16, "value + one tangent");
static_assert(sizeof(DualVec<4>) == 40, "value + four tangents");
static_assert(std::is_nothrow_copy_constructible_v<Dual> && std::is_nothrow_move_constructible_v<DualVec<4>>,
              "vectors of Duals grow without copying twice or throwing");
static_assert(!std::is_convertible_v<Dual, double>, "no implicit conversion to double");
static_assert(std::is_convertible_v<double, Dual> && std::is_convertible_v<int, Dual>,
              "numbers convert implicitly to a constant Dual");
static_assert(!std::is_convertible_v<Dual, Real> && !std::is_convertible_v<Real, Dual>,
              "the modes do not convert into each other");
static_assert(std::numeric_limits<Dual>::is_specialized && std::numeric_limits<Dual>::digits == 53);

namespace {

/// Same value, NaN equal to NaN, -0 told from +0.
bool same(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}
/// |a - e| <= rel max(|a|, |e|) (+ a tiny absolute); equal infinities and NaNs pass.
bool close(double a, double e, double rel) {
    if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e);
    if (std::isinf(a) || std::isinf(e)) return a == e;
    return std::fabs(a - e) <= rel * std::fmax(std::fabs(a), std::fabs(e)) + 1e-300;
}

/// Lane k of the vector run carries scale[k] * e_(k mod n).
constexpr double scale[4] = {1.0, -2.0, 0.5, 3.0};

/// Runs f (generic, on a std::vector of the number type, returning one value)
/// at x every way and compares.
template <class F>
void check_all_ways(const std::string& name, F f, const std::vector<double>& x) {
    const std::size_t n = x.size();
    INFO(name << " at x[0] = " << x[0] << (n > 1 ? ", x[1] = " + std::to_string(x[1]) : std::string()));

    // Reverse mode.
    const auto reverse = tapeflow::value_and_gradient([&](const std::vector<Real>& v) { return Real(f(v)); }, x);

    for (std::size_t i = 0; i < n; ++i) {
        INFO("direction e_" << i);
        // The reference.
        std::vector<tapeflow_test::dual> xr(x.begin(), x.end());
        xr[i].d = 1;
        const tapeflow_test::dual yr = f(xr);
        // tapeflow::Dual.
        std::vector<Dual> xd(x.begin(), x.end());
        xd[i].set_tangent(1.0);
        const Dual yd = f(xd);

        CHECK(same(yd.value(), yr.v));
        CHECK(same(yd.value(), reverse.value));
        INFO("Dual " << yd.tangent() << ", reference " << yr.d << ", reverse " << reverse.gradient[i]);
        CHECK(close(yd.tangent(), yr.d, 1e-13));
        CHECK(close(yd.tangent(), reverse.gradient[i], 1e-13));
    }

    // Four lanes at once, lane k along scale[k] e_(k mod n): each lane equals
    // a one-tangent run seeded the same way, bit for bit.
    std::vector<DualVec<4>> xv(x.begin(), x.end());
    for (std::size_t k = 0; k < 4; ++k) xv[k % n].set_tangent(scale[k], k);
    const DualVec<4> yv = f(xv);
    CHECK(same(yv.value(), reverse.value));
    for (std::size_t k = 0; k < 4; ++k) {
        std::vector<Dual> xd(x.begin(), x.end());
        xd[k % n].set_tangent(scale[k]);
        const Dual yd = f(xd);
        INFO("lane " << k << ": " << yv.tangent(k) << ", one-tangent run " << yd.tangent());
        CHECK(same(yv.tangent(k), yd.tangent()));
    }
}

template <class F>
void at_points(const std::string& name, F f, std::initializer_list<double> points) {
    for (double p : points) check_all_ways(name, f, {p});
}
template <class F>
void at_pairs(const std::string& name, F f, std::initializer_list<std::array<double, 2>> points) {
    for (const auto& p : points) check_all_ways(name, f, {p[0], p[1]});
}

}  // namespace

// One-argument functions; x[0] is the argument.
#define UNARY(fn, ...) at_points(#fn, [](const auto& x) { return fn(x[0]); }, {__VA_ARGS__})

TEST_CASE("unary operators and functions: Dual == reference == reverse, lanes == one tangent") {
    at_points("-x", [](const auto& x) { return -x[0]; }, {-1.5, 0.0, 2.0});
    at_points("+x", [](const auto& x) { return +x[0]; }, {-1.5, 0.0, 2.0});
    UNARY(sqrt, 0.25, 2.0, 0.0);
    UNARY(cbrt, -2.0, 0.5, 27.0);
    UNARY(exp, -1.0, 0.3, 2.0);
    UNARY(exp2, -1.0, 0.3, 2.0);
    UNARY(expm1, -1.0, 1e-9, 2.0);
    UNARY(log, 0.5, 3.0, 0.0);
    UNARY(log2, 0.5, 3.0);
    UNARY(log10, 0.5, 3.0);
    UNARY(log1p, -0.5, 1e-9, 2.0);
    UNARY(sin, -1.0, 0.4, 2.0);
    UNARY(cos, -1.0, 0.4, 2.0);
    UNARY(tan, -1.0, 0.4, 1.5);
    UNARY(asin, -0.5, 0.3, 0.9);
    UNARY(acos, -0.5, 0.3, 0.9);
    UNARY(atan, -2.0, 0.1, 3.0);
    UNARY(sinh, -2.0, 0.1, 3.0);
    UNARY(cosh, -2.0, 0.1, 3.0);
    UNARY(tanh, -2.0, 0.1, 3.0, 25.0);
    UNARY(asinh, -2.0, 0.1, 3.0);
    UNARY(acosh, 1.5, 4.0);
    UNARY(atanh, -0.5, 0.3, 0.9);
    UNARY(erf, -1.0, 0.5, 2.0);
    UNARY(erfc, -1.0, 0.5, 2.0);
    UNARY(tgamma, -1.5, 0.5, 3.7);
    UNARY(lgamma, -1.5, 0.5, 3.7);
}

TEST_CASE("unary functions where no derivative exists: the documented values") {
    // abs'(0) = 0; floor, ceil, round, trunc have derivative 0 everywhere.
    UNARY(abs, -2.0, 0.0, 3.0);
    UNARY(fabs, -2.0, 0.0, 3.0);
    UNARY(floor, -1.5, 0.3, 2.0);
    UNARY(ceil, -1.5, 0.3, 2.0);
    UNARY(round, -1.5, 0.3, 2.5);
    UNARY(trunc, -1.5, 0.3, 2.7);
    UNARY(rint, -1.5, 0.3, 2.5);
    UNARY(nearbyint, -1.5, 0.3, 2.5);
    std::vector<Dual> x{Dual(0.0, 1.0)};
    CHECK(Dual(abs(x[0])).tangent() == 0.0);
    CHECK(Dual(floor(x[0] + 0.5)).tangent() == 0.0);
}

// Two arguments, every combination of active and passive operands.
#define BINARY(fn, ...)                                                                   \
    do {                                                                                  \
        at_pairs(#fn "(a, b)", [](const auto& x) { return fn(x[0], x[1]); }, {__VA_ARGS__}); \
        at_pairs(#fn "(a, 1.25)", [](const auto& x) { return fn(x[0], 1.25); }, {__VA_ARGS__}); \
        at_pairs(#fn "(1.25, b)", [](const auto& x) { return fn(1.25, x[1]); }, {__VA_ARGS__}); \
    } while (0)
#define OPERATOR(op, ...)                                                                      \
    do {                                                                                       \
        at_pairs("a " #op " b", [](const auto& x) { return x[0] op x[1]; }, {__VA_ARGS__});    \
        at_pairs("a " #op " 1.25", [](const auto& x) { return x[0] op 1.25; }, {__VA_ARGS__}); \
        at_pairs("1.25 " #op " b", [](const auto& x) { return 1.25 op x[1]; }, {__VA_ARGS__}); \
    } while (0)

TEST_CASE("binary operators and functions: Dual == reference == reverse, lanes == one tangent") {
    OPERATOR(+, {1.5, -0.7}, {0.3, 2.1});
    OPERATOR(-, {1.5, -0.7}, {0.3, 2.1});
    OPERATOR(*, {1.5, -0.7}, {0.3, 2.1});
    OPERATOR(/, {1.5, -0.7}, {0.3, 2.1});
    BINARY(pow, {2.0, 0.5}, {0.5, 3.0}, {1.7, -1.3});
    BINARY(atan2, {1.5, -0.7}, {-0.3, 2.1}, {0.2, -3.0});
    BINARY(hypot, {1.5, -0.7}, {0.3, 2.1});
    BINARY(fmod, {5.3, 1.5}, {-3.2, 0.7});
    BINARY(copysign, {1.5, -2.0}, {-1.0, 3.0});
    BINARY(remainder, {5.3, 1.5}, {-3.2, 0.7}, {5.3, 0.7});
    BINARY(fdim, {1.5, -0.7}, {0.3, 2.1});
    BINARY(fmin, {1.5, -0.7}, {0.3, 2.1});
    BINARY(fmax, {1.5, -0.7}, {0.3, 2.1});
    BINARY(min, {1.5, -0.7}, {0.3, 2.1});
    BINARY(max, {1.5, -0.7}, {0.3, 2.1});
    at_points("pow(a, 3)", [](const auto& x) { return pow(x[0], 3); }, {-1.5, 0.0, 2.0});
    at_points("pow(a, -2)", [](const auto& x) { return pow(x[0], -2); }, {-1.5, 2.0});
    at_points("pow(a, 0)", [](const auto& x) { return pow(x[0], 0); }, {-1.5, 0.0, 2.0});
    at_pairs("hypot(a, b, c)", [](const auto& x) { return hypot(x[0], x[1], x[0] * x[1]); },
             {{1.0, 2.0}, {-0.5, 3.0}});
    at_pairs("fma(a, b, c)", [](const auto& x) { return fma(x[0], x[1], x[0] * x[1]); },
             {{1.0, 2.0}, {-0.5, 3.0}});
    at_pairs("fma(a, 1.25, b)", [](const auto& x) { return fma(x[0], 1.25, x[1]); }, {{1.0, 2.0}});
    at_pairs("fma(1.25, b, 0.5)", [](const auto& x) { return fma(1.25, x[1], 0.5); }, {{1.0, 2.0}});
    at_points("ldexp(a, 3)", [](const auto& x) { return ldexp(x[0], 3); }, {-1.5, 0.0, 2.0});
    at_points("scalbn(a, -2)", [](const auto& x) { return scalbn(x[0] * x[0], -2); }, {-1.5, 2.0});
}

TEST_CASE("binary functions where no derivative exists: the documented values") {
    // Ties go to the first argument (fmin, fmax) or follow std::min/max.
    BINARY(fmin, {1.0, 1.0});
    BINARY(fmax, {1.0, 1.0});
    BINARY(min, {1.0, 1.0});
    BINARY(max, {1.0, 1.0});
    // atan2 and hypot: zero partials at the origin; pow: d/db = 0 where a <= 0.
    at_pairs("atan2(a, b)", [](const auto& x) { return atan2(x[0], x[1]); }, {{0.0, 0.0}});
    at_pairs("hypot(a, b)", [](const auto& x) { return hypot(x[0], x[1]); }, {{0.0, 0.0}});
    at_pairs("hypot(a, b, c)", [](const auto& x) { return hypot(x[0], x[1], 0.0); }, {{0.0, 0.0}});
    at_pairs("pow(a, b)", [](const auto& x) { return pow(x[0], x[1]); }, {{0.0, 2.0}, {-2.0, 3.0}});
    std::vector<Dual> x{Dual(1.0, 1.0), Dual(1.0, 10.0)};
    CHECK(Dual(fmin(x[0], x[1])).tangent() == 1.0);
    CHECK(Dual(fmax(x[0], x[1])).tangent() == 1.0);
    CHECK(Dual(atan2(Dual(0.0, 1.0), Dual(0.0, 1.0))).tangent() == 0.0);
}

TEST_CASE("composite statements: Dual == reference == reverse, lanes == one tangent") {
    const auto f = [](const auto& x) {
        return x[0] * sin(x[1]) + exp(-x[0] * x[1]) / (1.0 + x[1] * x[1]) - pow(x[0], 2.5) * tanh(x[1]);
    };
    at_pairs("composite", f, {{0.7, -1.3}, {2.0, 0.4}});
    // The same variable several times, and a deep tree.
    const auto g = [](const auto& x) {
        auto s = x[0];  // a variable, not an expression
        for (int k = 0; k < 20; ++k) s = s * x[0] + sin(s) * x[1];
        return s;
    };
    at_pairs("loop of statements", g, {{0.3, 0.2}});
}

TEST_CASE("a Dual is a value with tangents: assignment, aliasing, compound operators") {
    Dual x(2.0, 1.0), y(3.0, 0.0);
    x = x * x;  // reads the old x: tangent 2 * 2 * 1
    CHECK(x.value() == 4.0);
    CHECK(x.tangent() == 4.0);
    x += y;
    CHECK(x.value() == 7.0);
    CHECK(x.tangent() == 4.0);
    x *= 2;
    CHECK(x.tangent() == 8.0);
    x /= x;  // tangent (x' x - x x') / x^2 = 0
    CHECK(x.value() == 1.0);
    CHECK(x.tangent() == 0.0);
    Dual z(5.0, 3.0);
    ++z;
    z++;
    CHECK(z.value() == 7.0);
    CHECK(z.tangent() == 3.0);  // adding a constant keeps the tangent
    --z;
    CHECK(z.value() == 6.0);
    z = 2.5;  // a number: a constant
    CHECK(z.tangent() == 0.0);
    const Dual c = 4;
    CHECK(c.value() == 4.0);
    CHECK(c.tangent() == 0.0);

    DualVec<3> v(1.0, {1.0, 2.0, 3.0});
    DualVec<3> w = 2.0 * v * v;
    CHECK(w.tangents() == std::array<double, 3>{4.0, 8.0, 12.0});
    w.set_tangents({0.0, 0.0, 1.0});
    CHECK(w.tangent(2) == 1.0);
}

TEST_CASE("comparisons, classification, printing and std:: spellings work on Duals") {
    const Dual a(1.0, 5.0), b(2.0, -1.0);
    CHECK(a < b);
    CHECK(a != b);
    CHECK(a == 1.0);
    CHECK(b >= a * 2.0);
    CHECK_FALSE(isnan(a));
    CHECK(isfinite(a + b));
    std::ostringstream s;
    s << a * b;
    CHECK(s.str() == "2");
    const Dual e = std::exp(std::sin(a));
    CHECK(e.tangent() == Dual(exp(sin(a))).tangent());
    CHECK(std::numeric_limits<Dual>::epsilon().value() == std::numeric_limits<double>::epsilon());
    CHECK(std::numeric_limits<Dual>::infinity().tangent() == 0.0);
    CHECK(std::numeric_limits<DualVec<8>>::max().value() == std::numeric_limits<double>::max());
}

TEST_CASE("float and long double Duals") {
    tapeflow::basic_dual<float> f(2.0f, 1.0f);
    tapeflow::basic_dual<float> g = sqrt(f) * 3;
    CHECK(g.tangent() == Approx(3 * 0.5 / std::sqrt(2.0)).epsilon(1e-6));
    tapeflow::basic_dual<long double, 2> l(2.0L, {1.0L, 0.0L});
    tapeflow::basic_dual<long double, 2> m = log(l);
    CHECK(m.tangent(0) == 0.5L);
    CHECK(m.tangent(1) == 0.0L);
}

TEST_CASE("a tangent lane that does not exist is a usage_error") {
    DualVec<2> x = 1.0;
    CHECK_THROWS_AS(x.tangent(2), tapeflow::usage_error);
    CHECK_THROWS_WITH(x.set_tangent(1.0, 5), Catch::Contains("lane 5 does not exist"));
}

namespace {
/// Three outputs of four inputs, written once for every number type.
const auto model = [](const auto& x) {
    using T = typename std::decay_t<decltype(x)>::value_type;
    std::vector<T> y;
    y.push_back(x[0] * x[1] + sin(x[2]));
    y.push_back(exp(x[3] * 0.5) / (1.0 + x[0] * x[0]));
    y.push_back(x[1] * x[2] * x[3] - hypot(x[0], x[3]));
    return y;
};
}  // namespace

TEST_CASE("jacobian_forward == jacobian (reverse) for every lane count") {
    const std::vector<double> x{0.3, -1.2, 2.0, 0.7};
    const auto J = tapeflow::jacobian(model, x);
    REQUIRE(J.size() == 3);
    const auto check = [&](const std::vector<std::vector<double>>& Jf) {
        REQUIRE(Jf.size() == J.size());
        for (std::size_t i = 0; i < J.size(); ++i) {
            REQUIRE(Jf[i].size() == x.size());
            for (std::size_t j = 0; j < x.size(); ++j) {
                INFO("row " << i << ", column " << j);
                CHECK(close(Jf[i][j], J[i][j], 4 * std::numeric_limits<double>::epsilon()));
            }
        }
    };
    check(tapeflow::jacobian_forward<1>(model, x));
    check(tapeflow::jacobian_forward<3>(model, x));  // a partial last pass
    check(tapeflow::jacobian_forward(model, x));     // the default, 4
    check(tapeflow::jacobian_forward<8>(model, x));  // more lanes than inputs
    check(tapeflow::jacobian_forward<2>(model, {0.3, -1.2, 2.0, 0.7}));
}

TEST_CASE("an infinite partial times a tangent of 0 adds nothing, as in reverse mode (no NaN)") {
    // x0 + f(x1, ...) where f's partial is inf at the point (sqrt at 0, asin
    // at 1, ...): along x0 the derivative is 1. The reverse sweep skips a
    // partial whose adjoint is 0; forward mode had multiplied inf by the
    // tangent 0 (NaN), and jacobian_by_shape picks it. (atan2 and hypot at
    // (0, 0) have partials 0 by definition: checked beside them.) ldexp's
    // partial 2^1100 is inf in a double while its value is finite.
    const auto F = [](const auto& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        return std::vector<T>{x[0] + sqrt(x[1]), x[0] + cbrt(x[1]), x[0] * 2.0 + asin(x[2]), x[0] - acos(x[2]),
                              x[0] + acosh(x[2]), x[0] + pow(x[1], 0.5), 3.0 * x[0] + atan2(x[1], x[3]),
                              x[0] + hypot(x[1], x[3]), x[0] + hypot(x[1], x[3], x[1]),
                              x[0] * sqrt(x[1]) + pow(x[1], x[2] * 0.5),
                              x[0] + ldexp(x[1] + 1e-300, 1100)};
    };
    const std::vector<double> x{2.0, 0.0, 1.0, 0.0};
    const auto J = tapeflow::jacobian(F, x);
    const std::vector<double> along_x0{1, 1, 2, 1, 1, 1, 3, 1, 1, 0, 1};  // dF_i/dx0, exactly
    const auto same = [&](const std::vector<std::vector<double>>& Jf, const char* how) {
        INFO(how);
        REQUIRE(Jf.size() == J.size());
        for (std::size_t i = 0; i < J.size(); ++i) {
            INFO("output " << i);
            CHECK(J[i][0] == along_x0[i]);
            CHECK(Jf[i][0] == along_x0[i]);
            for (std::size_t j = 1; j < x.size(); ++j)  // the same inf, NaN or number
                CHECK(((std::isnan(Jf[i][j]) && std::isnan(J[i][j])) || Jf[i][j] == J[i][j]));
        }
    };
    same(tapeflow::jacobian_forward<1>(F, x), "one lane");
    same(tapeflow::jacobian_forward<4>(F, x), "four lanes");
    same(tapeflow::jacobian_by_shape(F, x).rows, "by shape");
    const auto d = tapeflow::derivative(F, x, {1.0, 0.0, 0.0, 0.0});
    for (std::size_t i = 0; i < d.size(); ++i) CHECK(d[i] == along_x0[i]);
}

TEST_CASE("derivative is J v: against the reverse Jacobian and the one-output form") {
    const std::vector<double> x{0.3, -1.2, 2.0, 0.7}, v{1.0, -0.5, 0.25, 2.0};
    const auto J = tapeflow::jacobian(model, x);
    const auto Jv = tapeflow::derivative(model, x, v);
    static_assert(std::is_same_v<std::decay_t<decltype(Jv)>, std::vector<double>>);
    REQUIRE(Jv.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        double e = 0, m = 0;
        for (std::size_t j = 0; j < 4; ++j) {
            e += J[i][j] * v[j];
            m += std::fabs(J[i][j] * v[j]);
        }
        CHECK(std::fabs(Jv[i] - e) <= 1e-14 * m);
    }
    const auto f = [](const auto& x) { return x[0] * x[1] + sin(x[0]); };  // returns an expression
    const auto r = tapeflow::value_and_derivative(f, {1.0, 2.0}, {1.0, 3.0});
    CHECK(r.value == 2.0 + std::sin(1.0));
    CHECK(r.derivative == Approx(2.0 + std::cos(1.0) + 3.0).epsilon(1e-15));
    const auto g = tapeflow::gradient([&](const std::vector<Real>& y) { return Real(f(y)); }, {1.0, 2.0});
    CHECK(tapeflow::derivative(f, {1.0, 2.0}, {0.0, 1.0}) == g[1]);
}

TEST_CASE("forward drivers: misuse is a usage_error that says what to do") {
    const auto f = [](const auto& x) { return x[0] * x[0]; };
    CHECK_THROWS_WITH(tapeflow::derivative(f, {1.0, 2.0}, {1.0}),
                      Catch::Contains("the direction v has 1 entries but x has 2"));
    int runs = 0;
    const auto unsteady = [&runs](const auto& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        return std::vector<T>(std::size_t(1 + runs++), x[0]);
    };
    CHECK_THROWS_WITH(tapeflow::jacobian_forward<1>(unsteady, {1.0, 2.0}),
                      Catch::Contains("must return the same number of outputs"));
    // No inputs: one run, rows of no columns.
    const auto constant = [](const auto& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        return std::vector<T>{T(1.0), T(2.0)};
    };
    const auto J = tapeflow::jacobian_forward(constant, std::vector<double>{});
    CHECK(J.size() == 2);
    CHECK(J[0].empty());
}

TEST_CASE("forward mode leaves the tape alone") {
    auto& t = tapeflow::tape::active();
    t.reset();
    t.start_recording();
    Real r = 1.0;
    t.register_input(r);
    const auto before = t.statistics().statements;
    Dual d(2.0, 1.0);
    Dual e = d * d + sin(d);
    CHECK(t.statistics().statements == before);
    CHECK(e.tangent() == Approx(4.0 + std::cos(2.0)).epsilon(1e-15));
    t.stop_recording();
    t.reset();
}

TEST_CASE("jacobian_by_shape: forward when there are no more inputs than outputs, reverse otherwise, same rows") {
    // Analytic Jacobians of a tall f (2 inputs, 5 outputs) and a wide g (6 inputs, 2 outputs).
    auto tall = [](const auto& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        return std::vector<T>{x[0] * x[1], sin(x[0]), x[1] * x[1], exp(x[0] - x[1]), x[0] / x[1]};
    };
    auto wide = [](const auto& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        T s = 0.0, p = 1.0;
        for (std::size_t j = 0; j < x.size(); ++j) {
            s += double(j + 1) * x[j] * x[j];
            p *= x[j];
        }
        return std::vector<T>{s, p};
    };
    const std::vector<double> a{0.7, 1.3};
    const double e = std::exp(a[0] - a[1]);
    const std::vector<std::vector<double>> tall_J{{a[1], a[0]}, {std::cos(a[0]), 0.0}, {0.0, 2 * a[1]},
                                                  {e, -e}, {1 / a[1], -a[0] / (a[1] * a[1])}};
    const std::vector<double> b{0.5, -1.2, 0.9, 1.1, -0.4, 2.0};
    std::vector<std::vector<double>> wide_J(2, std::vector<double>(b.size()));
    for (std::size_t j = 0; j < b.size(); ++j) {
        wide_J[0][j] = 2.0 * double(j + 1) * b[j];
        double others = 1.0;
        for (std::size_t k = 0; k < b.size(); ++k)
            if (k != j) others *= b[k];
        wide_J[1][j] = others;
    }
    const auto close = [](const std::vector<std::vector<double>>& J, const std::vector<std::vector<double>>& ref) {
        REQUIRE(J.size() == ref.size());
        for (std::size_t i = 0; i < J.size(); ++i) {
            REQUIRE(J[i].size() == ref[i].size());
            for (std::size_t j = 0; j < J[i].size(); ++j) CHECK(J[i][j] == Approx(ref[i][j]).epsilon(1e-13).margin(1e-15));
        }
    };
    const auto t = tapeflow::jacobian_by_shape(tall, a);
    CHECK(t.mode == tapeflow::jacobian_mode::forward);
    close(t.rows, tall_J);
    const auto w = tapeflow::jacobian_by_shape(wide, b);
    CHECK(w.mode == tapeflow::jacobian_mode::reverse);
    close(w.rows, wide_J);
    // told: the mode asked for, the same rows
    const auto t_rev = tapeflow::jacobian_by_shape(tall, a, tapeflow::jacobian_mode::reverse);
    CHECK(t_rev.mode == tapeflow::jacobian_mode::reverse);
    close(t_rev.rows, tall_J);
    const auto w_fwd = tapeflow::jacobian_by_shape(wide, b, tapeflow::jacobian_mode::forward);
    CHECK(w_fwd.mode == tapeflow::jacobian_mode::forward);
    close(w_fwd.rows, wide_J);
    // square: forward (n <= m)
    auto square = [](const auto& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        return std::vector<T>{x[0] * x[1], x[0] + x[1]};
    };
    const auto q = tapeflow::jacobian_by_shape(square, a);
    CHECK(q.mode == tapeflow::jacobian_mode::forward);
    close(q.rows, {{a[1], a[0]}, {1.0, 1.0}});
}
