// Unary operators and one-argument functions (include/tapeflow/expr/unary_functions.hpp):
// the value is the std function's, the derivative matches an analytic formula
// written here and a finite difference of the std function, for std::f(x) and
// unqualified f(x) alike; the documented values where no derivative exists.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <type_traits>

#include "expr_test_support.hpp"

using expr_test::differentiate;
using expr_test::same;
using tapeflow::Real;

namespace {

const long double pi_l = 3.141592653589793238462643383279502884L;
const double inf = std::numeric_limits<double>::infinity();

/// One evaluation point; step is the relative finite-difference step, 0 for
/// none (where the difference would straddle a kink or leave the domain).
struct pt {
    double x;
    double step = 1e-5;
};

/// Checks f at every point for scalar S: value, one record with one
/// argument, std:: and unqualified spellings identical, derivative against
/// dref (analytic, long double) and against a finite difference of ref.
/// atol(x): extra absolute tolerance of the analytic comparison (0 for most).
template <class S, class Fu, class Fs, class Ref, class DRef, class ATol>
void check_unary(const char* name, Fu f_unqualified, Fs f_std, Ref ref, DRef dref, ATol atol,
                 std::initializer_list<pt> points) {
    for (const pt& p : points) {
        const S x = static_cast<S>(p.x);
        INFO(name << "(" << expr_test::show(x) << ")");
        const auto u = differentiate<S>(f_unqualified, x);
        const auto s = differentiate<S>(f_std, x);
        CHECK(same(u.value, static_cast<S>(ref(x))));
        CHECK(u.statements == 1);
        CHECK(u.arguments == 1);
        CHECK(same(s.value, u.value));
        CHECK(same(s.d[0], u.d[0]));
        const long double xl = x;
        CHECK_CLOSE(u.d[0], dref(xl), expr_test::rel_tol<S>(), atol(xl));
        if (p.step <= 0) continue;
        // Rounding error of the difference quotient: eps |f| / h from the values
        // and eps |x f'| / h from x + h not being exact; truncation is O(h^4).
        if constexpr (std::is_same_v<S, double>) {
            const double fd = expr_test::richardson([&](double v) { return ref(v); }, x, p.step);
            const double h = p.step / 2 * std::fmax(1.0, std::fabs(x));
            const double noise = 100 * std::numeric_limits<double>::epsilon() *
                                 (std::fabs(ref(x)) + std::fabs(x * fd)) / h;
            CHECK_CLOSE(u.d[0], fd, 1e-7L, noise + 1e-12);
        } else {
            const long double fd = expr_test::fd_long([&](long double v) { return ref(v); }, xl, p.step);
            const long double h = p.step / 2 * std::fmax(1.0L, std::fabs(xl));
            const long double noise = 100 * std::numeric_limits<long double>::epsilon() *
                                      (std::fabs(ref(xl)) + std::fabs(xl * fd)) / h;
            const long double rel = std::is_same_v<S, float> ? 1e-5L : 1e-9L;
            CHECK_CLOSE(u.d[0], fd, rel, noise + 1e-15L);
        }
    }
}

/// Derivative of f at x (double) through the explicit tape API.
template <class F>
double d_at(F f, double x) {
    return differentiate<double>(f, x).d[0];
}

}  // namespace

// fn: the function name; DERIV: analytic derivative as an expression in long double x.
// ATOL: extra absolute tolerance, an expression in long double x.
#define UNARY_CASE_TOL(S, fn, DERIV, ATOL, ...)                                              \
    check_unary<S>(#fn, [](const auto& x) { return fn(x); },                                \
                   [](const auto& x) { return std::fn(x); },                                \
                   [](auto x) { return std::fn(x); },                                        \
                   [](long double x) -> long double { return DERIV; },                       \
                   [](long double x) -> long double { return (void)x, (ATOL); }, {__VA_ARGS__})
#define UNARY_CASE(S, fn, DERIV, ...) UNARY_CASE_TOL(S, fn, DERIV, 0.0L, __VA_ARGS__)

TEST_CASE("unary minus and plus", "[unary]") {
    check_unary<double>(
        "-", [](const auto& x) { return -x; }, [](const auto& x) { return -(-(-x)); },
        [](auto x) { return -x; }, [](long double) -> long double { return -1; },
        [](long double) { return 0.0L; },
        {{0.0}, {1.5}, {-2.25}, {1e300, 1e-8}, {-4.9e-324, 0}});
    check_unary<double>(
        "+", [](const auto& x) { return +x; }, [](const auto& x) { return +(+x); },
        [](auto x) { return x; }, [](long double) -> long double { return 1; },
        [](long double) { return 0.0L; },
        {{0.0}, {1.5}, {-2.25}, {-1e300, 1e-8}});
    // Inside a larger expression, the sign flips the partial of that operand only.
    const auto r = differentiate<double>([](const Real& a, const Real& b) { return -a * b + (+b); }, 3.0, 5.0);
    CHECK(r.value == -10.0);
    CHECK(r.d[0] == -5.0);
    CHECK(r.d[1] == -3.0 + 1.0);
}

TEST_CASE("roots, exponentials and logarithms", "[unary]") {
    UNARY_CASE(double, sqrt, 1 / (2 * std::sqrt(x)), {1e-10, 1e-13}, {0.25}, {2.0}, {1e6}, {1e300, 1e-8});
    UNARY_CASE(double, cbrt, 1 / (3 * std::cbrt(x) * std::cbrt(x)), {-8.0}, {-1e-9, 1e-12}, {1e-9, 1e-12},
               {0.5}, {27.0}, {1e12}, {-1e300, 1e-8});
    UNARY_CASE(double, exp, std::exp(x), {-700.0}, {-20.0}, {0.0}, {1.0}, {20.0}, {700.0});
    UNARY_CASE(double, exp2, std::exp2(x) * std::log(2.0L), {-30.0}, {0.0}, {0.5}, {10.0}, {1000.0});
    UNARY_CASE(double, expm1, std::exp(x), {-1e-10}, {0.0}, {1e-8}, {1.0}, {-5.0}, {50.0});
    UNARY_CASE(double, log, 1 / x, {1e-8, 1e-11}, {0.3}, {1.0}, {1e8}, {1e300, 1e-8});
    UNARY_CASE(double, log2, 1 / (x * std::log(2.0L)), {1e-8, 1e-11}, {0.3}, {1.0}, {1e8}, {1e300, 1e-8});
    UNARY_CASE(double, log10, 1 / (x * std::log(10.0L)), {1e-8, 1e-11}, {0.3}, {1.0}, {1e8}, {1e300, 1e-8});
    UNARY_CASE(double, log1p, 1 / (1 + x), {-1 + 1e-6, 1e-9}, {-0.5}, {0.0}, {1e-10}, {3.0}, {1e10});
}

TEST_CASE("trigonometric functions and their inverses", "[unary]") {
    UNARY_CASE(double, sin, std::cos(x), {0.0}, {0.5}, {-1.3}, {1.5707963267948966}, {3.0}, {-1e4, 1e-7},
               {1e6, 1e-8});
    UNARY_CASE(double, cos, -std::sin(x), {0.0}, {0.5}, {-1.3}, {1.5707963267948966}, {3.0}, {-1e4, 1e-7},
               {1e6, 1e-8});
    UNARY_CASE(double, tan, 1 / (std::cos(x) * std::cos(x)), {0.0}, {0.5}, {-1.2}, {1.5, 1e-7}, {1.57, 1e-8},
               {1e4, 1e-7});
    UNARY_CASE(double, asin, 1 / std::sqrt((1 - x) * (1 + x)), {0.0}, {0.5}, {-0.9}, {1 - 1e-6, 1e-9}, {-1 + 1e-6, 1e-9});
    UNARY_CASE(double, acos, -1 / std::sqrt((1 - x) * (1 + x)), {0.0}, {0.5}, {-0.9}, {1 - 1e-6, 1e-9}, {-1 + 1e-6, 1e-9});
    UNARY_CASE(double, atan, 1 / (1 + x * x), {0.0}, {1.0}, {-3.0}, {1e8}, {-1e150, 1e-8});
}

TEST_CASE("hyperbolic functions and their inverses", "[unary]") {
    UNARY_CASE(double, sinh, std::cosh(x), {0.0}, {1.0}, {-2.5}, {30.0}, {-700.0});
    UNARY_CASE(double, cosh, std::sinh(x), {0.0}, {1.0}, {-2.5}, {30.0}, {-700.0});
    UNARY_CASE(double, tanh, 1 / (std::cosh(x) * std::cosh(x)), {0.0}, {0.5}, {-1.0}, {2.0}, {-3.0});
    UNARY_CASE(double, asinh, 1 / std::sqrt(x * x + 1), {0.0}, {1.0}, {-3.0}, {1e8}, {-1e200, 1e-8});
    UNARY_CASE(double, acosh, 1 / std::sqrt((x - 1) * (x + 1)), {1 + 1e-6, 1e-9}, {1.5}, {10.0}, {1e200, 1e-8});
    UNARY_CASE(double, atanh, 1 / ((1 - x) * (1 + x)), {0.0}, {0.5}, {-0.9}, {1 - 1e-6, 1e-10}, {-1 + 1e-6, 1e-10});
}

TEST_CASE("tanh' for large |x| is accurate in absolute terms", "[unary]") {
    // tanh' = 1 - tanh^2 loses relative accuracy once tanh(x) rounds near 1
    // (see the report); the absolute error stays within a few ulp of 1.
    for (double x : {8.0, -10.0, 19.0, 25.0, -400.0}) {
        INFO("x = " << x);
        const long double c = std::cosh(static_cast<long double>(x));
        CHECK_CLOSE(d_at([](const Real& v) { return tanh(v); }, x), 1 / (c * c), 0.0L, 4e-16L);
    }
}

TEST_CASE("absolute value and error functions", "[unary]") {
    UNARY_CASE(double, abs, x > 0 ? 1 : -1, {-2.0}, {-1e-300, 0}, {1e-300, 0}, {3.5}, {-1e300, 1e-8});
    UNARY_CASE(double, fabs, x > 0 ? 1 : -1, {-2.0}, {-1e-300, 0}, {1e-300, 0}, {3.5}, {-1e300, 1e-8});
    UNARY_CASE(double, erf, 2 / std::sqrt(pi_l) * std::exp(-x * x), {0.0}, {0.3}, {-1.0}, {2.5}, {-5.5}, {6.0});
    UNARY_CASE(double, erfc, -2 / std::sqrt(pi_l) * std::exp(-x * x), {0.0}, {0.3}, {-1.0}, {2.5}, {10.0});
}

TEST_CASE("gamma functions", "[unary]") {
    // psi at integers and half-integers from closed forms (expr_test_support.hpp).
    // tapeflow::digamma is accurate to ~1e-15 in ABSOLUTE terms (special_functions_test),
    // hence the absolute part of the tolerance near psi's root 1.4616...
    UNARY_CASE_TOL(double, tgamma, std::tgamma(x) * expr_test::psi_closed_form(x),
                   2e-15L * std::fabs(std::tgamma(x)), {0.5}, {1.0}, {1.5}, {2.0}, {5.0}, {-0.5},
                   {-1.5}, {-5.5}, {20.5}, {100.0});
    UNARY_CASE_TOL(double, lgamma, expr_test::psi_closed_form(x), 2e-15L, {0.5}, {1.0}, {2.0}, {3.5},
                   {-0.5}, {-2.5}, {-20.5}, {100.0}, {1e4, 1e-7});
}

TEST_CASE("derivatives at points where none exists take the documented values", "[unary][edge]") {
    auto d = [](auto f, double x) { return d_at(f, x); };
    SECTION("abs and fabs at zero give 0") {
        for (double z : {0.0, -0.0}) {
            CHECK(d([](const Real& x) { return abs(x); }, z) == 0.0);
            CHECK(d([](const Real& x) { return std::fabs(x); }, z) == 0.0);
            CHECK(d([](const Real& x) { return 3.0 * abs(x) + x; }, z) == 1.0);
        }
    }
    SECTION("roots and logarithms at the boundary give the IEEE value of the formula") {
        CHECK(d([](const Real& x) { return sqrt(x); }, 0.0) == inf);
        CHECK(d([](const Real& x) { return sqrt(x); }, -0.0) == -inf);  // 0.5 / -0
        CHECK(d([](const Real& x) { return cbrt(x); }, 0.0) == inf);
        CHECK(d([](const Real& x) { return cbrt(x); }, -0.0) == inf);  // 1 / (3 (-0)^2): the slope of cbrt at 0 from both sides
        CHECK(d([](const Real& x) { return log(x); }, 0.0) == inf);
        CHECK(d([](const Real& x) { return log(x); }, -0.0) == -inf);
        // The chain rule multiplies at record time: 0 * inf = NaN (documented).
        CHECK(std::isnan(d([](const Real& x) { return 0.0 * sqrt(x); }, 0.0)));
        CHECK(differentiate<double>([](const Real& x) { return log(x); }, 0.0).value == -inf);
        CHECK(d([](const Real& x) { return log2(x); }, 0.0) == inf);
        CHECK(d([](const Real& x) { return log10(x); }, 0.0) == inf);
        CHECK(d([](const Real& x) { return log1p(x); }, -1.0) == inf);
        CHECK(d([](const Real& x) { return asin(x); }, 1.0) == inf);
        CHECK(d([](const Real& x) { return asin(x); }, -1.0) == inf);
        CHECK(d([](const Real& x) { return acos(x); }, 1.0) == -inf);
        CHECK(d([](const Real& x) { return acos(x); }, -1.0) == -inf);
        CHECK(d([](const Real& x) { return acosh(x); }, 1.0) == inf);
        CHECK(d([](const Real& x) { return atanh(x); }, 1.0) == inf);
        CHECK(d([](const Real& x) { return atanh(x); }, -1.0) == inf);
    }
    SECTION("tgamma and lgamma at the poles give NaN") {
        for (double pole : {0.0, -0.0, -1.0, -2.0, -10.0}) {
            INFO("pole " << pole);
            CHECK(std::isnan(d([](const Real& x) { return tgamma(x); }, pole)));
            CHECK(std::isnan(d([](const Real& x) { return lgamma(x); }, pole)));
        }
    }
}

TEST_CASE("floor, ceil, round, trunc, rint and nearbyint are passive with derivative 0", "[unary][edge]") {
    auto check = [](const char* name, auto f, auto f_std, auto ref) {
        for (double x : {2.5, -2.5, 0.49999999999999994, -0.5, 3.0, -0.0, 1e300, -7.25}) {
            INFO(name << "(" << x << ")");
            const auto r = differentiate<double>(f, x);
            CHECK(same(r.value, ref(x)));
            CHECK(r.d[0] == 0.0);
            CHECK(r.statements == 0);
            CHECK(differentiate<double>(f_std, x).statements == 0);
            // Beside an active operand, it contributes nothing.
            const auto mixed = differentiate<double>([&](const Real& v) { return 3.0 * v + f(v); }, x);
            CHECK(mixed.d[0] == 3.0);
            CHECK(mixed.arguments == 1);
        }
        auto& t = tapeflow::tape::active();
        t.reset();
        t.start_recording();
        Real x = 1.75;
        t.register_input(x);
        Real y = f(x);
        CHECK_FALSE(y.is_active());
        t.stop_recording();
    };
    check("floor", [](const Real& x) { return floor(x); }, [](const Real& x) { return std::floor(x); },
          [](double x) { return std::floor(x); });
    check("ceil", [](const Real& x) { return ceil(x); }, [](const Real& x) { return std::ceil(x); },
          [](double x) { return std::ceil(x); });
    check("round", [](const Real& x) { return round(x); }, [](const Real& x) { return std::round(x); },
          [](double x) { return std::round(x); });
    check("trunc", [](const Real& x) { return trunc(x); }, [](const Real& x) { return std::trunc(x); },
          [](double x) { return std::trunc(x); });
    check("rint", [](const Real& x) { return rint(x); }, [](const Real& x) { return std::rint(x); },
          [](double x) { return std::rint(x); });
    check("nearbyint", [](const Real& x) { return nearbyint(x); }, [](const Real& x) { return std::nearbyint(x); },
          [](double x) { return std::nearbyint(x); });
}

TEST_CASE("nested unary functions make one record (chain rule)", "[unary]") {
    const double x0 = 0.7;
    const auto r = differentiate<double>([](const Real& x) { return exp(sin(sqrt(x))) + log(cosh(x)); }, x0);
    CHECK(r.statements == 1);
    CHECK(r.arguments == 1);
    const long double xl = x0, s = std::sqrt(xl);
    const long double expected = std::exp(std::sin(s)) * std::cos(s) / (2 * s) + std::tanh(xl);
    CHECK_CLOSE(r.d[0], expected, 1e-14L, 0.0L);
    // The same function through tapeflow::gradient.
    const auto g = tapeflow::gradient(
        [](const std::vector<Real>& v) { return Real(std::exp(std::sin(std::sqrt(v[0]))) + std::log(std::cosh(v[0]))); },
        std::vector<double>{x0});
    CHECK_CLOSE(g[0], expected, 1e-14L, 0.0L);
}

TEMPLATE_TEST_CASE("unary functions in float and long double", "[unary][precision]", float, long double) {
    using S = TestType;
    UNARY_CASE(S, sqrt, 1 / (2 * std::sqrt(x)), {1e-6, 1e-9}, {0.25}, {7.0});
    UNARY_CASE(S, cbrt, 1 / (3 * std::cbrt(x) * std::cbrt(x)), {-8.0}, {0.5}, {27.0});
    UNARY_CASE(S, exp, std::exp(x), {-20.0}, {0.0}, {1.5}, {20.0});
    UNARY_CASE(S, expm1, std::exp(x), {-1e-4}, {0.5}, {-3.0});
    UNARY_CASE(S, log, 1 / x, {1e-3, 1e-6}, {0.3}, {1e6});
    UNARY_CASE(S, log1p, 1 / (1 + x), {-0.999, 1e-7}, {0.0}, {3.0});
    UNARY_CASE(S, sin, std::cos(x), {0.0}, {0.5}, {-1.3}, {100.0, 1e-7});
    UNARY_CASE(S, cos, -std::sin(x), {0.25}, {-1.3}, {3.0});
    UNARY_CASE(S, tan, 1 / (std::cos(x) * std::cos(x)), {0.0}, {0.5}, {-1.2});
    UNARY_CASE(S, asin, 1 / std::sqrt((1 - x) * (1 + x)), {0.0}, {0.5}, {-0.9});
    UNARY_CASE(S, acos, -1 / std::sqrt((1 - x) * (1 + x)), {0.25}, {-0.75});
    UNARY_CASE(S, atan, 1 / (1 + x * x), {0.0}, {1.0}, {-30.0});
    UNARY_CASE(S, tanh, 1 / (std::cosh(x) * std::cosh(x)), {0.0}, {0.5}, {-1.0});
    UNARY_CASE(S, asinh, 1 / std::sqrt(x * x + 1), {0.0}, {-3.0}, {1e3});
    UNARY_CASE(S, acosh, 1 / std::sqrt((x - 1) * (x + 1)), {1.5}, {10.0});
    UNARY_CASE(S, atanh, 1 / ((1 - x) * (1 + x)), {0.0}, {0.5}, {-0.9});
    UNARY_CASE(S, abs, x > 0 ? 1 : -1, {-2.0}, {3.5});
    UNARY_CASE(S, erf, 2 / std::sqrt(pi_l) * std::exp(-x * x), {0.0}, {0.3}, {-1.5});
    UNARY_CASE(S, erfc, -2 / std::sqrt(pi_l) * std::exp(-x * x), {0.0}, {0.3}, {2.5});
    UNARY_CASE_TOL(S, tgamma, std::tgamma(x) * expr_test::psi_closed_form(x),
                   32 * std::numeric_limits<S>::epsilon() * std::fabs(std::tgamma(x)), {0.5}, {3.0}, {-1.5});
    UNARY_CASE_TOL(S, lgamma, expr_test::psi_closed_form(x), 32 * std::numeric_limits<S>::epsilon(), {0.5},
                   {4.0}, {-2.5});
}
