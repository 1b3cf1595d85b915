// pow, atan2, hypot, fmin, fmax, min, max, fmod, copysign, remainder, fdim,
// fma, ldexp, scalbn
// (include/tapeflow/expr/binary_functions.hpp): values, partials against
// analytic formulas and finite differences, the documented conventions where
// no derivative exists, and numbers (double, int) on either side.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <vector>

#include "expr_test_support.hpp"

using expr_test::differentiate;
using expr_test::same;
using tapeflow::Real;

namespace {

const double inf = std::numeric_limits<double>::infinity();
const double qnan = std::numeric_limits<double>::quiet_NaN();

/// A point (a, b); step is the relative finite-difference step, 0 for none.
struct pt2 {
    double a, b;
    double step = 1e-7;
};

/// Whether an int holds v exactly (not -0.0, which an int turns into +0).
bool integral(double v) { return v == std::trunc(v) && std::fabs(v) < 1e9 && !(v == 0 && std::signbit(v)); }

/// f(a, b) for two active Reals, std::f spelled out, and every mix with a
/// number (Real/double, double/Real, Real/int, int/Real): same value and
/// partials; partials against da, db (analytic) and finite differences of ref.
template <class F, class Fs, class Ref, class DA, class DB>
void check_binary(const char* name, F f, Fs f_std, Ref ref, DA da, DB db, std::initializer_list<pt2> points) {
    for (const pt2& p : points) {
        const double a = p.a, b = p.b;
        INFO(name << "(" << a << ", " << b << ")");
        const auto r = differentiate<double>(f, a, b);
        CHECK(same(r.value, ref(a, b)));
        CHECK(r.statements == 1);
        CHECK(r.arguments == 2);
        CHECK_CLOSE(r.d[0], da((long double)a, (long double)b), expr_test::rel_tol<double>(), 0.0L);
        CHECK_CLOSE(r.d[1], db((long double)a, (long double)b), expr_test::rel_tol<double>(), 0.0L);
        const auto s = differentiate<double>(f_std, a, b);
        CHECK((same(s.value, r.value) && same(s.d[0], r.d[0]) && same(s.d[1], r.d[1])));

        const auto ra = differentiate<double>([&](const Real& x) { return f(x, b); }, a);
        CHECK((same(ra.value, r.value) && same(ra.d[0], r.d[0]) && ra.arguments == 1));
        const auto rb = differentiate<double>([&](const Real& y) { return f(a, y); }, b);
        CHECK((same(rb.value, r.value) && same(rb.d[0], r.d[1]) && rb.arguments == 1));
        if (integral(b)) {
            const auto ri = differentiate<double>([&](const Real& x) { return f(x, static_cast<int>(b)); }, a);
            CHECK((same(ri.value, r.value) && same(ri.d[0], r.d[0])));
        }
        if (integral(a)) {
            const auto ri = differentiate<double>([&](const Real& y) { return f(static_cast<int>(a), y); }, b);
            CHECK((same(ri.value, r.value) && same(ri.d[0], r.d[1])));
        }
        if (p.step <= 0) continue;
        const auto fd = expr_test::richardson_gradient(
            [&](const std::vector<double>& v) { return ref(v[0], v[1]); }, {a, b}, p.step);
        auto noise = [&](double xi, double fdi) {  // rounding of the quotient
            const double h = p.step / 2 * std::fmax(1.0, std::fabs(xi));
            return 100 * std::numeric_limits<double>::epsilon() * (std::fabs(r.value) + std::fabs(xi * fdi)) / h;
        };
        CHECK_CLOSE(r.d[0], fd[0], 1e-7L, noise(a, fd[0]) + 1e-12);
        CHECK_CLOSE(r.d[1], fd[1], 1e-7L, noise(b, fd[1]) + 1e-12);
    }
}

/// Partials of f(a, b) at (a, b), both active.
template <class F>
std::vector<double> partials(F f, double a, double b) {
    return differentiate<double>(f, a, b).d;
}

}  // namespace

// DA, DB: analytic partials as expressions in long double a, b.
#define BINARY_CASE(fn, DA, DB, ...)                                                                  \
    check_binary(#fn, [](const auto& a, const auto& b) { return fn(a, b); },                          \
                 [](const auto& a, const auto& b) { return std::fn(a, b); },                          \
                 [](double a, double b) -> double { return std::fn(a, b); },                          \
                 [](long double a, long double b) -> long double { return (void)a, (void)b, (DA); }, \
                 [](long double a, long double b) -> long double { return (void)a, (void)b, (DB); }, {__VA_ARGS__})

TEST_CASE("pow", "[binary][pow]") {
    BINARY_CASE(pow, b * std::pow(a, b - 1), std::pow(a, b) * std::log(a), {2.0, 3.0}, {0.5, -1.5}, {3.0, 0.5},
                {1.7, 0.0}, {2.5, -2.0}, {10.0, 20.0}, {1e-3, 2.5, 1e-9}, {1e3, -1.25}, {1.0, 7.0});
    SECTION("Real ^ int, including negative and zero exponents and negative bases") {
        for (double x : {1.5, -1.5, 0.25, -3.0}) {
            for (int n : {-3, -2, -1, 0, 1, 2, 5}) {
                INFO("pow(" << x << ", " << n << ")");
                const auto r = differentiate<double>([n](const Real& v) { return pow(v, n); }, x);
                CHECK(r.value == std::pow(x, n));
                const long double expected = n == 0 ? 0.0L : n * std::pow((long double)x, n - 1);
                CHECK_CLOSE(r.d[0], expected, 1e-15L, 0.0L);
                const double fd = expr_test::richardson([n](double v) { return std::pow(v, n); }, x, 1e-6);
                CHECK_CLOSE(r.d[0], fd, 1e-7L, 1e-9L);
                CHECK(differentiate<double>([n](const Real& v) { return std::pow(v, n); }, x).d[0] == r.d[0]);
            }
        }
    }
    SECTION("the conventions at a = 0 and a < 0") {
        // d/da: n a^(n-1) evaluated at 0, and 0 for a zero exponent.
        CHECK(differentiate<double>([](const Real& v) { return pow(v, 2); }, 0.0).d[0] == 0.0);
        CHECK(differentiate<double>([](const Real& v) { return pow(v, 1); }, 0.0).d[0] == 1.0);
        CHECK(differentiate<double>([](const Real& v) { return pow(v, 0.5); }, 0.0).d[0] == inf);
        const auto zero_zero = differentiate<double>([](const Real& v) { return pow(v, 0); }, 0.0);
        CHECK(zero_zero.value == 1.0);
        CHECK(zero_zero.d[0] == 0.0);
        // d/db = 0 where a <= 0 (log a undefined), whatever the value.
        const auto at_zero = partials([](const Real& x, const Real& y) { return pow(x, y); }, 0.0, 2.0);
        CHECK((at_zero[0] == 0.0 && at_zero[1] == 0.0));
        const auto zz = partials([](const Real& x, const Real& y) { return pow(x, y); }, 0.0, 0.0);
        CHECK((zz[0] == 0.0 && zz[1] == 0.0));
        const auto neg = differentiate<double>([](const Real& x, const Real& y) { return pow(x, y); }, -2.0, 3.0);
        CHECK(neg.value == -8.0);
        CHECK(neg.d[0] == 12.0);
        CHECK(neg.d[1] == 0.0);
        CHECK(differentiate<double>([](const Real& y) { return pow(0.0, y); }, 3.0).d[0] == 0.0);
        CHECK(differentiate<double>([](const Real& y) { return pow(-2, y); }, 2.0).d[0] == 0.0);
    }
}

TEST_CASE("atan2", "[binary][atan2]") {
    // atan2(y, x): d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2), in every quadrant.
    BINARY_CASE(atan2, b / (a * a + b * b), -a / (a * a + b * b), {1.0, 1.0}, {1.0, -1.0}, {-1.0, -1.0},
                {-1.0, 1.0}, {0.5, -2.0}, {-0.5, -2.0}, {1e-3, -1.0, 1e-9}, {0.0, 1.0}, {2.0, 0.0},
                {0.0, -1.0, 0}, {3e5, -4e5}, {-7.0, 1e-6, 1e-9});
    SECTION("at the origin both partials are 0") {
        for (double y : {0.0, -0.0}) {
            for (double x : {0.0, -0.0}) {
                const auto r = differentiate<double>([](const Real& a, const Real& b) { return atan2(a, b); }, y, x);
                CHECK(same(r.value, std::atan2(y, x)));
                CHECK((r.d[0] == 0.0 && r.d[1] == 0.0));
            }
        }
    }
    SECTION("very large and very small magnitudes") {
        for (double s : {1e200, 1e-200, 1e300, 1e-300, 1e-307, 3e-308}) {  // down to the smallest normals
            INFO("scale " << s);
            const long double y = 3 * (long double)s, x = -4 * (long double)s, n = x * x + y * y;
            const auto r = differentiate<double>([](const Real& a, const Real& b) { return atan2(a, b); },
                                                 double(y), double(x));
            CHECK(r.value == std::atan2(double(y), double(x)));
            CHECK_CLOSE(r.d[0], x / n, 1e-15L, 0.0L);
            CHECK_CLOSE(r.d[1], -y / n, 1e-15L, 0.0L);
        }
    }
    SECTION("arguments of different scales near and below the smallest normal (issue 17.15)") {
        // (finite differences fail here: no step is both above the spacing of
        // the doubles and below the scale of the arguments; long double holds
        // the squares exactly enough)
        const double m = std::numeric_limits<double>::min();
        for (const auto& p : {pt2{m, 1.0}, pt2{1.0, m}, pt2{m, 0.5e-300}, pt2{1e-294, 1e-300}, pt2{1e-300, 1e-294},
                              pt2{m / 8, m / 4}, pt2{5e-324, 1e-300}, pt2{-3 * m, 5 * m}}) {
            INFO("y " << p.a << " x " << p.b);
            const long double y = p.a, x = p.b, n = x * x + y * y;
            const auto r = differentiate<double>([](const Real& a, const Real& b) { return atan2(a, b); }, p.a, p.b);
            CHECK(r.value == std::atan2(p.a, p.b));
            CHECK_CLOSE(r.d[0], x / n, 1e-14L, 0.0L);
            CHECK_CLOSE(r.d[1], -y / n, 1e-14L, 0.0L);
        }
    }
}

TEST_CASE("hypot with two and three arguments", "[binary][hypot]") {
    BINARY_CASE(hypot, a / std::hypot(a, b), b / std::hypot(a, b), {3.0, 4.0}, {-3.0, 4.0}, {0.5, -0.25},
                {0.0, 2.0}, {-2.0, 0.0}, {1e200, 1e200, 1e-9}, {1e-200, -1e-200, 0}, {1e8, 1.0});
    SECTION("zero gives zero partials") {
        for (double z : {0.0, -0.0}) {
            const auto r = partials([](const Real& a, const Real& b) { return hypot(a, b); }, z, 0.0);
            CHECK((r[0] == 0.0 && r[1] == 0.0));
            const auto r3 = differentiate<double>(
                [](const Real& a, const Real& b, const Real& c) { return hypot(a, b, c); }, z, 0.0, -0.0);
            CHECK(r3.value == 0.0);
            CHECK((r3.d[0] == 0.0 && r3.d[1] == 0.0 && r3.d[2] == 0.0));
        }
    }
    SECTION("three arguments") {
        for (const auto& x : std::vector<std::vector<double>>{{1, 2, 2}, {-1, 2, -2}, {0.5, 0, 3}, {1e200, -1e200, 1e199}}) {
            const long double r = std::hypot((long double)x[0], (long double)x[1], (long double)x[2]);
            auto f = [](const auto& a, const auto& b, const auto& c) { return hypot(a, b, c); };
            const auto res = differentiate<double>(f, x[0], x[1], x[2]);
            CHECK(res.value == std::hypot(x[0], x[1], x[2]));
            CHECK(res.statements == 1);
            for (int i = 0; i < 3; ++i) CHECK_CLOSE(res.d[i], x[i] / r, 1e-15L, 0.0L);
            if (std::fabs(x[0]) < 1e100) {
                const auto fd = expr_test::richardson_gradient(
                    [](const std::vector<double>& v) { return std::hypot(v[0], v[1], v[2]); }, x);
                for (int i = 0; i < 3; ++i) CHECK_CLOSE(res.d[i], fd[i], 1e-7L, 1e-9L);
            }
            // Numbers in any position; std:: spelling.
            const auto m1 = differentiate<double>([&](const Real& a, const Real& c) { return hypot(a, x[1], c); }, x[0], x[2]);
            CHECK((m1.d[0] == res.d[0] && m1.d[1] == res.d[2]));
            if (integral(x[2])) {
                const auto m2 = differentiate<double>(
                    [&](const Real& b) { return std::hypot(x[0], b, int(x[2])); }, x[1]);
                CHECK(m2.d[0] == res.d[1]);
            }
        }
    }
}

TEST_CASE("fmin, fmax, min and max", "[binary][minmax]") {
    BINARY_CASE(fmin, a <= b ? 1 : 0, a <= b ? 0 : 1, {1.0, 2.0}, {2.0, 1.0}, {-3.0, 5.0}, {1e300, -1e300});
    BINARY_CASE(fmax, a >= b ? 1 : 0, a >= b ? 0 : 1, {1.0, 2.0}, {2.0, 1.0}, {-3.0, 5.0}, {1e300, -1e300});
    BINARY_CASE(min, b < a ? 0 : 1, b < a ? 1 : 0, {1.0, 2.0}, {2.0, 1.0}, {-3.0, 5.0}, {1e300, -1e300});
    BINARY_CASE(max, a < b ? 0 : 1, a < b ? 1 : 0, {1.0, 2.0}, {2.0, 1.0}, {-3.0, 5.0}, {1e300, -1e300});
    SECTION("ties: the first argument gets the derivative") {
        for (double v : {1.5, 0.0, -2.0}) {
            INFO("tie at " << v);
            auto first = [](const std::vector<double>& d) { return d[0] == 1.0 && d[1] == 0.0; };
            CHECK(first(partials([](const Real& a, const Real& b) { return fmin(a, b); }, v, v)));
            CHECK(first(partials([](const Real& a, const Real& b) { return fmax(a, b); }, v, v)));
            CHECK(first(partials([](const Real& a, const Real& b) { return min(a, b); }, v, v)));
            CHECK(first(partials([](const Real& a, const Real& b) { return std::max(a, b); }, v, v)));
            // The same variable twice: its two contributions merge into 1.
            CHECK(differentiate<double>([](const Real& a) { return fmin(a, a); }, v).d[0] == 1.0);
            CHECK(differentiate<double>([](const Real& a) { return max(a, a); }, v).d[0] == 1.0);
        }
    }
    SECTION("fmin and fmax ignore a NaN argument") {
        for (auto f : {+[](const Real& a, const Real& b) { return Real(fmin(a, b)); },
                       +[](const Real& a, const Real& b) { return Real(fmax(a, b)); }}) {
            auto r = differentiate<double>(f, qnan, 2.0);
            CHECK(r.value == 2.0);
            CHECK((r.d[0] == 0.0 && r.d[1] == 1.0));
            r = differentiate<double>(f, 2.0, qnan);
            CHECK(r.value == 2.0);
            CHECK((r.d[0] == 1.0 && r.d[1] == 0.0));
            r = differentiate<double>(f, qnan, qnan);
            CHECK(std::isnan(r.value));
        }
        CHECK(differentiate<double>([](const Real& a) { return fmin(a, qnan); }, 3.0).d[0] == 1.0);
        CHECK(differentiate<double>([](const Real& b) { return std::fmax(qnan, b); }, 3.0).d[0] == 1.0);
        CHECK(std::fmin(qnan, 2.0) == 2.0);  // the behaviour followed
    }
    SECTION("min and max follow std::min and std::max with NaN") {
        // std::min(a, b) is (b < a ? b : a): a NaN first argument is returned, a NaN second is not.
        auto r = differentiate<double>([](const Real& a, const Real& b) { return min(a, b); }, qnan, 2.0);
        CHECK(same(r.value, std::min(qnan, 2.0)));
        CHECK((r.d[0] == 1.0 && r.d[1] == 0.0));
        r = differentiate<double>([](const Real& a, const Real& b) { return min(a, b); }, 2.0, qnan);
        CHECK(same(r.value, std::min(2.0, qnan)));
        CHECK((r.d[0] == 1.0 && r.d[1] == 0.0));
        r = differentiate<double>([](const Real& a, const Real& b) { return max(a, b); }, qnan, 2.0);
        CHECK(same(r.value, std::max(qnan, 2.0)));
        CHECK((r.d[0] == 1.0 && r.d[1] == 0.0));
        r = differentiate<double>([](const Real& a, const Real& b) { return max(a, b); }, 2.0, qnan);
        CHECK(same(r.value, std::max(2.0, qnan)));
        CHECK((r.d[0] == 1.0 && r.d[1] == 0.0));
    }
}

TEST_CASE("fmod", "[binary][fmod]") {
    // fmod(a, b) = a - q b with q = trunc(a / b): d/da = 1, d/db = -q.
    BINARY_CASE(fmod, 1, -std::trunc(a / b), {7.5, 2.0}, {-7.5, 2.0}, {7.5, -2.0}, {-7.5, -2.0}, {0.3, 5.0},
                {5.3, 0.7}, {1e6 + 0.25, 3.0}, {-1e6 - 0.25, 3.0}, {1e15 + 0.5, 3.0, 0}, {2.0, 1.5});
    SECTION("at the jumps (a / b an integer) d/db is still minus the quotient") {
        for (const auto& p : std::vector<std::vector<double>>{{6, 2, -3}, {-6, 2, 3}, {6, -2, 3}, {0, 5, 0}, {7.5, 2.5, -3}}) {
            INFO("fmod(" << p[0] << ", " << p[1] << ")");
            const auto r = differentiate<double>([](const Real& a, const Real& b) { return fmod(a, b); }, p[0], p[1]);
            CHECK(same(r.value, std::fmod(p[0], p[1])));
            CHECK(r.d[0] == 1.0);
            CHECK(r.d[1] == p[2]);
        }
    }
}

TEST_CASE("copysign", "[binary][copysign]") {
    // copysign(a, b) = |a| sign(b): d/da = sign(a) sign(b), d/db = 0.
    BINARY_CASE(copysign, std::signbit(a) == std::signbit(b) ? 1 : -1, 0, {1.5, 2.0}, {1.5, -2.0},
                {-1.5, 2.0}, {-1.5, -2.0}, {2.0, -0.0, 0}, {-2.0, 0.0, 0}, {1e300, -1e-300, 0});
}

TEST_CASE("remainder", "[binary][remainder]") {
    // remainder(a, b) = a - n b with n = a / b rounded to nearest (ties to
    // even): d/da = 1, d/db = -n.
    BINARY_CASE(remainder, 1, -std::rint(a / b), {7.5, 2.0}, {-7.5, 2.0}, {7.5, -2.0}, {0.3, 5.0}, {5.3, 0.7},
                {1e6 + 0.25, 3.0}, {2.0, 1.5}, {-2.9, 0.4});
    SECTION("at the jumps and at ties d/db is still minus the quotient it used") {
        // {a, b, expected d/db}: 5 / 2 = 2.5 rounds to 2, 7 / 2 = 3.5 to 4
        for (const auto& p : std::vector<std::vector<double>>{{5, 2, -2}, {7, 2, -4}, {-5, 2, 2}, {6, 2, -3}, {0, 5, 0}}) {
            INFO("remainder(" << p[0] << ", " << p[1] << ")");
            const auto r =
                differentiate<double>([](const Real& a, const Real& b) { return remainder(a, b); }, p[0], p[1]);
            CHECK(same(r.value, std::remainder(p[0], p[1])));
            CHECK(r.d[0] == 1.0);
            CHECK(r.d[1] == p[2]);
        }
    }
}

TEST_CASE("fdim", "[binary][fdim]") {
    // fdim(a, b) = a - b where a > b, else +0.
    BINARY_CASE(fdim, a > b ? 1 : 0, a > b ? -1 : 0, {2.0, 1.0}, {1.0, 2.0}, {-3.0, 5.0}, {5.0, -3.0},
                {0.25, -1e-3}, {1e300, -1e300, 0});
    SECTION("at a tie and with a NaN: both partials 0") {
        const auto tie = differentiate<double>([](const Real& a, const Real& b) { return fdim(a, b); }, 1.5, 1.5);
        CHECK(same(tie.value, 0.0));
        CHECK((tie.d[0] == 0.0 && tie.d[1] == 0.0));
        const auto nan = differentiate<double>([](const Real& a, const Real& b) { return fdim(a, b); }, qnan, 1.0);
        CHECK(std::isnan(nan.value));
        CHECK((nan.d[0] == 0.0 && nan.d[1] == 0.0));
    }
}

TEST_CASE("fma: std::fma's value, the partials of a * b + c", "[binary][fma]") {
    const auto f = [](const auto& a, const auto& b, const auto& c) { return fma(a, b, c); };
    for (const auto& x : std::vector<std::vector<double>>{{1.5, 2.0, -0.5}, {-0.3, 4.0, 7.0}, {0.0, -2.5, 1.0},
                                                           {1e150, 1e150, -1e300}}) {
        INFO("fma(" << x[0] << ", " << x[1] << ", " << x[2] << ")");
        const auto r = differentiate<double>(f, x[0], x[1], x[2]);
        CHECK(same(r.value, std::fma(x[0], x[1], x[2])));
        CHECK(r.statements == 1);
        CHECK(r.arguments == 3);
        CHECK((r.d[0] == x[1] && r.d[1] == x[0] && r.d[2] == 1.0));
        if (std::fabs(x[0]) < 1e100) {
            const auto fd = expr_test::richardson_gradient(
                [](const std::vector<double>& v) { return std::fma(v[0], v[1], v[2]); }, x);
            for (int i = 0; i < 3; ++i) CHECK_CLOSE(r.d[i], fd[i], 1e-7L, 1e-9L);
        }
        // numbers in any position, the std:: spelling
        const auto m = differentiate<double>([&](const Real& a, const Real& c) { return fma(a, x[1], c); }, x[0], x[2]);
        CHECK((same(m.value, r.value) && m.d[0] == r.d[0] && m.d[1] == r.d[2]));
        const auto b_only = differentiate<double>([&](const Real& b) { return std::fma(x[0], b, x[2]); }, x[1]);
        CHECK((same(b_only.value, r.value) && b_only.d[0] == r.d[1]));
        const auto with_int = differentiate<double>([&](const Real& a) { return fma(a, 3, 1); }, x[0]);
        CHECK((same(with_int.value, std::fma(x[0], 3.0, 1.0)) && with_int.d[0] == 3.0));
    }
    SECTION("the value is rounded once, as std::fma's") {
        // (1 + 2^-30)(1 - 2^-30) - 1 = -2^-60 exactly; a * b + c rounds the product to 1 and gives 0
        const double a = 1 + std::ldexp(1.0, -30), b = 1 - std::ldexp(1.0, -30);
        const auto r = differentiate<double>(f, a, b, -1.0);
        CHECK(r.value == -std::ldexp(1.0, -60));
        CHECK(r.value == std::fma(a, b, -1.0));
    }
    SECTION("a repeated operand: fma(x, x, x) has derivative 2x + 1") {
        const auto r = differentiate<double>([](const Real& x) { return fma(x, x, x); }, 1.75);
        CHECK(r.value == std::fma(1.75, 1.75, 1.75));
        CHECK(r.d[0] == 2 * 1.75 + 1);
        CHECK(r.arguments == 1);
    }
}

TEST_CASE("ldexp and scalbn: x 2^e, derivative 2^e", "[binary][ldexp]") {
    for (double x : {1.5, -0.3, 0.0, 1e-300, 7.25}) {
        for (int e : {-1074, -1022, -3, 0, 5, 1023}) {
            INFO("ldexp(" << x << ", " << e << ")");
            const auto r = differentiate<double>([e](const Real& v) { return ldexp(v, e); }, x);
            CHECK(same(r.value, std::ldexp(x, e)));
            CHECK(r.d[0] == std::ldexp(1.0, e));
            CHECK(r.statements == 1);
            const auto s = differentiate<double>([e](const Real& v) { return std::scalbn(v, e); }, x);
            CHECK((same(s.value, std::scalbn(x, e)) && s.d[0] == r.d[0]));
            CHECK(differentiate<double>([e](const Real& v) { return std::ldexp(v, e); }, x).d[0] == r.d[0]);
        }
    }
    SECTION("of an expression: one record, the chain rule") {
        const auto r = differentiate<double>([](const Real& x, const Real& y) { return ldexp(x * y, 2); }, 1.5, -0.5);
        CHECK(r.value == -3.0);
        CHECK(r.statements == 1);
        CHECK((r.d[0] == 4 * -0.5 && r.d[1] == 4 * 1.5));
        const double fd = expr_test::richardson([](double v) { return std::ldexp(v * -0.5, 2); }, 1.5, 1e-6);
        CHECK_CLOSE(r.d[0], fd, 1e-7L, 1e-9L);
    }
    SECTION("exponents past any floating type's range: the results of std::ldexp") {
        // The exponent is clamped before it becomes an operand (INT_MAX does
        // not survive a round trip through float).
        for (int e : {std::numeric_limits<int>::max(), 70000, std::numeric_limits<int>::min(), -70000}) {
            INFO("e = " << e);
            const auto r = differentiate<double>([e](const Real& v) { return ldexp(v, e); }, 1.5);
            CHECK(same(r.value, std::ldexp(1.5, e)));
            CHECK(same(r.d[0], std::ldexp(1.0, e)));
            using RF = tapeflow::basic_real<float>;
            const auto f = differentiate<float>([e](const RF& v) { return scalbn(v, e); }, -1.5f);
            CHECK(same(double(f.value), double(std::scalbn(-1.5f, e))));
            CHECK(same(double(f.d[0]), double(std::scalbn(1.0f, e))));
        }
    }
    SECTION("2^e beyond the largest double: the derivative is inf, the value finite") {
        for (const auto& [x, e] : std::vector<std::pair<double, int>>{{1e-300, 1100}, {0.5, 1024}}) {
            INFO("ldexp(" << x << ", " << e << ")");
            const auto r = differentiate<double>([e = e](const Real& v) { return ldexp(v, e); }, x);
            CHECK(r.value == std::ldexp(x, e));
            CHECK(std::isfinite(r.value));
            CHECK(r.d[0] == inf);
        }
    }
    SECTION("2^e below the smallest subnormal: the derivative is 0, the value not") {
        const auto r = differentiate<double>([](const Real& v) { return ldexp(v, -1080); }, std::ldexp(1.0, 1000));
        CHECK(r.value == std::ldexp(1.0, -80));
        CHECK(same(r.d[0], 0.0));
    }
    SECTION("scalbln takes a long exponent") {
        const auto r = differentiate<double>([](const Real& v) { return std::scalbln(v, 7L); }, 1.25);
        CHECK((r.value == 160.0 && r.d[0] == 128.0));
        const auto big = differentiate<double>([](const Real& v) { return scalbln(v, 1L << 40); }, 1.25);
        CHECK((big.value == inf && big.d[0] == inf));
    }
}

TEMPLATE_TEST_CASE("binary functions in float and long double", "[binary][precision]", float, long double) {
    using S = TestType;
    using R = tapeflow::basic_real<S>;
    const long double tol = expr_test::rel_tol<S>();
    const S a0 = S(1.25), b0 = S(-0.75);
    const long double a = a0, b = b0;
    auto r = differentiate<S>([](const R& x, const R& y) { return pow(x, y); }, a0, b0);
    CHECK(r.value == std::pow(a0, b0));
    CHECK_CLOSE(r.d[0], b * std::pow(a, b - 1), tol, 0.0L);
    CHECK_CLOSE(r.d[1], std::pow(a, b) * std::log(a), tol, 0.0L);
    r = differentiate<S>([](const R& x) { return pow(x, -2) + pow(2, x); }, a0);
    CHECK_CLOSE(r.d[0], -2 / (a * a * a) + std::pow(2.0L, a) * std::log(2.0L), tol, 0.0L);
    r = differentiate<S>([](const R& y, const R& x) { return std::atan2(y, x); }, a0, b0);
    CHECK_CLOSE(r.d[0], b / (a * a + b * b), tol, 0.0L);
    CHECK_CLOSE(r.d[1], -a / (a * a + b * b), tol, 0.0L);
    r = differentiate<S>([](const R& x, const R& y) { return hypot(x, y, 2); }, a0, b0);
    CHECK_CLOSE(r.d[0], a / std::sqrt(a * a + b * b + 4), tol, 0.0L);
    CHECK_CLOSE(r.d[1], b / std::sqrt(a * a + b * b + 4), tol, 0.0L);
    r = differentiate<S>([](const R& x, const R& y) { return fmod(x * 7, y) + fmax(x, y) + min(y, 0.5); }, a0, b0);
    CHECK_CLOSE(r.d[0], 7 + 1, tol, 0.0L);
    CHECK_CLOSE(r.d[1], -std::trunc(7 * a / b) + 1, tol, 0.0L);
    // a / b = -5/3 rounds to -2 in remainder; a > b for fdim
    r = differentiate<S>([](const R& x, const R& y) { return fma(x, y, x) + ldexp(y, 3) + remainder(x, y) + fdim(x, y); },
                         a0, b0);
    CHECK(r.value == std::fma(a0, b0, a0) + std::ldexp(b0, 3) + std::remainder(a0, b0) + std::fdim(a0, b0));
    CHECK_CLOSE(r.d[0], b + 1 + 1 + 1, tol, 0.0L);
    CHECK_CLOSE(r.d[1], a + 8 + 2 - 1, tol, 0.0L);
}
