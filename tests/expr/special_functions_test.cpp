// tapeflow::digamma (include/tapeflow/expr/special_functions.hpp) against known
// values, the recurrence, reflection and duplication formulas, the asymptotic
// expansion and the derivative of std::lgamma, in double and long double.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>
#include <cmath>
#include <limits>

#include "expr_test_support.hpp"

using tapeflow::digamma;

namespace {

const long double euler_gamma = 0.577215664901532860606512090082402431L;
const long double ln2 = 0.693147180559945309417232121458176568L;
const long double ln3 = 1.098612288668109691395245236922525704L;
const long double pi = 3.141592653589793238462643383279502884L;

/// digamma accuracy asserted here: within 16 eps relative plus 32 eps absolute
/// (the function sums 1/x terms and an asymptotic series, so its error is
/// absolute, about 10 ulp of 1; see psi near its root 1.4616...).
template <class S>
struct tol {
    static constexpr long double eps = std::numeric_limits<S>::epsilon();
    static constexpr long double rel = 16 * eps;
    static constexpr long double abs = 32 * eps;
};

}  // namespace

#define CHECK_PSI(S, x, expected) CHECK_CLOSE(digamma<S>(x), (expected), tol<S>::rel, tol<S>::abs)

TEMPLATE_TEST_CASE("digamma at known values", "[digamma]", double, long double) {
    using S = TestType;
    CHECK_PSI(S, S(1), -euler_gamma);
    if (std::is_same_v<S, double>) CHECK_CLOSE(digamma(1.0), -0.5772156649015329, 4e-16L, 2e-15L);
    CHECK_PSI(S, S(0.5), -euler_gamma - 2 * ln2);
    CHECK_PSI(S, S(2), 1 - euler_gamma);
    CHECK_PSI(S, S(0.25), -euler_gamma - pi / 2 - 3 * ln2);
    CHECK_PSI(S, S(0.75), -euler_gamma + pi / 2 - 3 * ln2);
    // 1/3 is stored with an error below 1e-16; psi' (1/3) ~ 10 keeps it inside the tolerance.
    CHECK_PSI(S, S(1) / S(3), -euler_gamma - pi / (2 * std::sqrt(3.0L)) - 1.5L * ln3);
    // Integers: H_{n-1} - gamma; half-integers: -gamma - 2 ln 2 + sum 2 / (2k - 1).
    long double harmonic = 0, odd = 0;
    for (int n = 1; n <= 40; ++n) {
        INFO("n = " << n);
        CHECK_PSI(S, S(n), harmonic - euler_gamma);
        CHECK_PSI(S, S(n) - S(0.5), odd - euler_gamma - 2 * ln2);
        harmonic += 1.0L / n;
        odd += 2.0L / (2 * n - 1);
    }
}

TEMPLATE_TEST_CASE("digamma satisfies its recurrence and duplication formulas", "[digamma]", double, long double) {
    using S = TestType;
    for (long double x : {1e-3L, 0.1L, 0.7L, 1.4616321449683623L, 2.3L, 9.75L, 15.5L, 123.456L, -0.3L, -4.7L}) {
        const S xs = static_cast<S>(x);
        INFO("x = " << expr_test::show(xs));
        // psi(x + 1) = psi(x) + 1/x (rounding x + 1 costs < psi'(x + 1) ulp(x + 1), inside the tolerance)
        CHECK_CLOSE(digamma<S>(xs + 1) - digamma<S>(xs), 1 / (long double)xs, 4 * tol<S>::rel,
                    4 * tol<S>::abs);
        // psi(2x) = (psi(x) + psi(x + 1/2)) / 2 + ln 2
        CHECK_CLOSE(digamma<S>(2 * xs), (digamma<S>(xs) + digamma<S>(xs + S(0.5))) / 2 + ln2, 4 * tol<S>::rel,
                    4 * tol<S>::abs);
    }
}

TEMPLATE_TEST_CASE("digamma for negative arguments: reflection", "[digamma]", double, long double) {
    using S = TestType;
    // psi(-1/2) = psi(3/2) (cot(-pi/2) = 0) = 2 - gamma - 2 ln 2; psi(-3/2) = psi(-1/2) + 2/3.
    CHECK_PSI(S, S(-0.5), 2 - euler_gamma - 2 * ln2);
    CHECK_PSI(S, S(-1.5), 2 + 2.0L / 3 - euler_gamma - 2 * ln2);
    CHECK_PSI(S, S(-0.25), digamma<S>(S(1.25)) + pi);  // pi cot(-pi/4) = -pi
    for (long double x : {-0.3L, -1.7L, -10.25L, -0.5L + 1e-3L, -99.9L}) {
        const S xs = static_cast<S>(x);
        INFO("x = " << expr_test::show(xs));
        // psi(1 - x) - psi(x) = pi cot(pi x); cot has period pi, so use the exact x - round(x).
        const long double r = (long double)xs - std::round((long double)xs);
        CHECK_CLOSE(digamma<S>(1 - xs) - digamma<S>(xs), pi / std::tan(pi * r), 4 * tol<S>::rel,
                    4 * tol<S>::abs);
    }
}

TEMPLATE_TEST_CASE("digamma next to the poles", "[digamma][edge]", double, long double) {
    using S = TestType;
    // Right of 0: psi(x) = -1/x - gamma + (pi^2/6) x + O(x^2).
    for (long double d : {1e-10L, 1e-7L}) {
        const S x = static_cast<S>(d);
        CHECK_CLOSE(digamma<S>(x), -1 / (long double)x - euler_gamma + pi * pi / 6 * x, tol<S>::rel,
                    tol<S>::abs + (long double)x);
    }
    // Next to the negative poles: psi(x) = psi(1 - x) - pi cot(pi r), r = x - round(x) exactly.
    for (long double x : {-2 + 1e-3L, -2 + 1e-6L, -2 + 1e-10L, -3 - 1e-8L, -1 + 1e-12L, -7.5L + 1e-9L}) {
        const S xs = static_cast<S>(x);
        INFO("x = " << expr_test::show(xs));
        const long double r = (long double)xs - std::round((long double)xs);
        const long double expected = digamma<S>(1 - xs) - pi / std::tan(pi * r);
        CHECK_CLOSE(digamma<S>(xs), expected, tol<S>::rel, tol<S>::abs);
    }
}

TEMPLATE_TEST_CASE("digamma for large arguments: asymptotic expansion", "[digamma]", double, long double) {
    using S = TestType;
    for (long double x : {1e3L, 1e6L, 1e15L, 1e300L}) {
        const long double r = 1 / x;
        const long double expected = std::log(x) - r / 2 - r * r / 12 + r * r * r * r / 120;
        CHECK_PSI(S, static_cast<S>(x), expected);
    }
    CHECK(digamma<S>(std::numeric_limits<S>::infinity()) == std::numeric_limits<S>::infinity());
}

TEMPLATE_TEST_CASE("digamma is NaN at the poles and for NaN", "[digamma][edge]", double, long double) {
    using S = TestType;
    for (S pole : {S(0), -S(0), S(-1), S(-2), S(-100), S(-1e20), -std::numeric_limits<S>::infinity()}) {
        INFO("x = " << expr_test::show(pole));
        CHECK(std::isnan(digamma<S>(pole)));
    }
    CHECK(std::isnan(digamma<S>(std::numeric_limits<S>::quiet_NaN())));
}

TEST_CASE("digamma is the derivative of lgamma", "[digamma]") {
    for (double x : {0.05, 0.3, 1.0, 1.4616321449683623, 2.5, 7.3, 40.0, -0.4, -2.7, -11.1}) {
        INFO("x = " << x);
        // Steps small against the distance to the nearest pole (0.1 at -11.1).
        const double fd = expr_test::richardson([](double v) { return std::lgamma(v); }, x, 1e-5);
        CHECK_CLOSE(digamma(x), fd, 1e-8L, 1e-10L);
        const long double fdl = expr_test::fd_long([](long double v) { return std::lgamma(v); }, x, 1e-6L);
        CHECK_CLOSE(digamma<long double>(x), fdl, 1e-11L, 1e-14L);
    }
}
