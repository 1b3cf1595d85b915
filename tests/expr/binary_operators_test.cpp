// + - * / (include/tapeflow/expr/binary_operators.hpp), compound assignment and
// ++/-- (real.hpp): values, partials against analytic formulas and finite
// differences, and the "one record per assignment" rule.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>
#include <cmath>
#include <vector>

#include "expr_test_support.hpp"

using expr_test::differentiate;
using tapeflow::Real;

namespace {

struct pair_pt {
    double a, b;
};
const pair_pt pair_points[] = {{3.0, 5.0}, {-1.5, 0.25}, {1e10, -3e-5}, {0.0, 2.0}, {-7.0, -0.125}};

/// f(a, b) on two active Reals: value, one statement, partials (da, db)
/// analytic, and a finite-difference gradient of ref.
template <class F, class Ref, class DA, class DB>
void check_pair(const char* name, F f, Ref ref, DA da, DB db) {
    for (const pair_pt& p : pair_points) {
        INFO(name << " at a = " << p.a << ", b = " << p.b);
        const auto r = differentiate<double>(f, p.a, p.b);
        CHECK(r.value == ref(p.a, p.b));
        CHECK(r.statements == 1);
        CHECK(r.arguments == 2);
        CHECK_CLOSE(r.d[0], da(p.a, p.b), 1e-15L, 0.0L);
        CHECK_CLOSE(r.d[1], db(p.a, p.b), 1e-15L, 0.0L);
        const double step = 1e-7;
        const auto fd = expr_test::richardson_gradient(
            [&](const std::vector<double>& v) { return ref(v[0], v[1]); }, {p.a, p.b}, step);
        // Rounding noise of the quotient: eps (|f| + |x_i df/dx_i|) / h_i.
        auto noise = [&](double xi, double fdi) {
            const double h = step / 2 * std::fmax(1.0, std::fabs(xi));
            return 100 * 2.2e-16 * (std::fabs(r.value) + std::fabs(xi * fdi)) / h;
        };
        CHECK_CLOSE(r.d[0], fd[0], 1e-7L, noise(p.a, fd[0]));
        CHECK_CLOSE(r.d[1], fd[1], 1e-7L, noise(p.b, fd[1]));
    }
}

/// g(x) with ONE active operand (the other a number): value, one statement
/// with one argument, derivative d.
template <class G>
void check_one(const char* what, G g, double x, double value, long double d) {
    INFO(what << " at x = " << x);
    const auto r = differentiate<double>(g, x);
    CHECK(r.value == value);
    CHECK(r.statements == 1);
    CHECK(r.arguments == 1);
    CHECK_CLOSE(r.d[0], d, 1e-15L, 0.0L);
    const double fd = expr_test::richardson([&](double v) { return differentiate<double>(g, v).value; }, x);
    CHECK_CLOSE(r.d[0], fd, 1e-7L, 1e-9L);
}

}  // namespace

TEST_CASE("+ - * / between two Reals", "[operators]") {
    check_pair("a + b", [](const Real& a, const Real& b) { return a + b; },
               [](double a, double b) { return a + b; }, [](double, double) { return 1.0L; },
               [](double, double) { return 1.0L; });
    check_pair("a - b", [](const Real& a, const Real& b) { return a - b; },
               [](double a, double b) { return a - b; }, [](double, double) { return 1.0L; },
               [](double, double) { return -1.0L; });
    check_pair("a * b", [](const Real& a, const Real& b) { return a * b; },
               [](double a, double b) { return a * b; }, [](double, double b) { return (long double)b; },
               [](double a, double) { return (long double)a; });
    check_pair("a / b", [](const Real& a, const Real& b) { return a / b; },
               [](double a, double b) { return a / b; }, [](double, double b) { return 1.0L / b; },
               [](double a, double b) { return -(long double)a / ((long double)b * b); });
}

TEST_CASE("+ - * / with a number on either side", "[operators]") {
    for (double x : {2.0, -0.75, 1e8}) {
        check_one("x + 2.5", [](const Real& v) { return v + 2.5; }, x, x + 2.5, 1);
        check_one("2.5 + x", [](const Real& v) { return 2.5 + v; }, x, 2.5 + x, 1);
        check_one("x + 3", [](const Real& v) { return v + 3; }, x, x + 3, 1);
        check_one("3 + x", [](const Real& v) { return 3 + v; }, x, 3 + x, 1);
        check_one("x - 2.5", [](const Real& v) { return v - 2.5; }, x, x - 2.5, 1);
        check_one("2.5 - x", [](const Real& v) { return 2.5 - v; }, x, 2.5 - x, -1);
        check_one("x - 3", [](const Real& v) { return v - 3; }, x, x - 3, 1);
        check_one("3 - x", [](const Real& v) { return 3 - v; }, x, 3 - x, -1);
        check_one("x * 2.5", [](const Real& v) { return v * 2.5; }, x, x * 2.5, 2.5);
        check_one("2.5 * x", [](const Real& v) { return 2.5 * v; }, x, 2.5 * x, 2.5);
        check_one("x * -3", [](const Real& v) { return v * -3; }, x, x * -3, -3);
        check_one("-3 * x", [](const Real& v) { return -3 * v; }, x, -3 * x, -3);
        check_one("x / 2.5", [](const Real& v) { return v / 2.5; }, x, x / 2.5, 1 / 2.5L);
        check_one("2.5 / x", [](const Real& v) { return 2.5 / v; }, x, 2.5 / x, -2.5L / ((long double)x * x));
        check_one("x / 4", [](const Real& v) { return v / 4; }, x, x / 4, 0.25L);
        check_one("4 / x", [](const Real& v) { return 4 / v; }, x, 4 / x, -4.0L / ((long double)x * x));
        // Other arithmetic types are numbers too.
        check_one("x * 2.5f", [](const Real& v) { return v * 2.5f; }, x, x * 2.5, 2.5);
        check_one("7L - x", [](const Real& v) { return 7L - v; }, x, 7 - x, -1);
        check_one("x / 2u", [](const Real& v) { return v / 2u; }, x, x / 2, 0.5L);
    }
}

TEST_CASE("expressions on both sides and nested expressions", "[operators]") {
    // f = (a + b)(a - c) / (b c + 1)
    auto f = [](const auto& a, const auto& b, const auto& c) { return (a + b) * (a - c) / (b * c + 1); };
    for (const auto& x : std::vector<std::vector<double>>{{1.0, 2.0, 3.0}, {-0.5, 4.0, 0.125}, {10.0, -0.3, 2.0}}) {
        const long double a = x[0], b = x[1], c = x[2];
        const long double u = (a + b) * (a - c), v = b * c + 1;
        const long double da = (2 * a + b - c) / v;
        const long double db = (a - c) / v - u * c / (v * v);
        const long double dc = -(a + b) / v - u * b / (v * v);
        const auto r = differentiate<double>(f, x[0], x[1], x[2]);
        CHECK(r.value == f(x[0], x[1], x[2]));
        CHECK(r.statements == 1);
        CHECK(r.arguments == 3);
        CHECK_CLOSE(r.d[0], da, 1e-14L, 0.0L);
        CHECK_CLOSE(r.d[1], db, 1e-14L, 0.0L);
        CHECK_CLOSE(r.d[2], dc, 1e-14L, 0.0L);
        const auto fd = expr_test::richardson_gradient(
            [&](const std::vector<double>& y) { return f(y[0], y[1], y[2]); }, x);
        for (int i = 0; i < 3; ++i) CHECK_CLOSE(r.d[i], fd[i], 1e-7L, 1e-9L);
        // The same through tapeflow::gradient.
        const auto g = tapeflow::gradient([&](const std::vector<Real>& y) { return Real(f(y[0], y[1], y[2])); }, x);
        CHECK_CLOSE(g[0], da, 1e-14L, 0.0L);
        CHECK_CLOSE(g[1], db, 1e-14L, 0.0L);
        CHECK_CLOSE(g[2], dc, 1e-14L, 0.0L);
    }
    SECTION("a deep tree with repeated operands is merged: a^3 b^2") {
        const auto r = differentiate<double>(
            [](const Real& a, const Real& b) { return (((a * b) * a) * b) * a; }, 1.5, -2.0);
        CHECK(r.value == 1.5 * -2.0 * 1.5 * -2.0 * 1.5);
        CHECK(r.statements == 1);
        CHECK(r.arguments == 2);
        CHECK_CLOSE(r.d[0], 3 * 1.5L * 1.5L * 4.0L, 1e-15L, 0.0L);
        CHECK_CLOSE(r.d[1], 2 * 1.5L * 1.5L * 1.5L * -2.0L, 1e-15L, 0.0L);
    }
}

TEST_CASE("compound assignment makes one record each (none for a number added to an active variable)",
          "[operators][compound]") {
    const double a0 = 1.25, b0 = -0.5;
    auto run = [&](auto body) { return differentiate<double>(body, a0, b0); };
    // Each body copies a into y (one record) and applies one compound
    // assignment. y += e and y -= e of an active y record an update of e's
    // operands only (y's own partial is 1), so a number records nothing.
    SECTION("+=") {
        auto r = run([](const Real& a, const Real& b) { Real y = a; y += b; return y; });
        CHECK(r.value == a0 + b0);
        CHECK(r.statements == 2);
        CHECK((r.d[0] == 1 && r.d[1] == 1));
        r = run([](const Real& a, const Real&) { Real y = a; y += 2.5; y += 3; return y; });
        CHECK(r.value == a0 + 5.5);
        CHECK(r.statements == 1);
        CHECK((r.d[0] == 1 && r.d[1] == 0));
        r = run([](const Real& a, const Real& b) { Real y = a; y += a * b; return y; });
        CHECK(r.value == a0 + a0 * b0);
        CHECK(r.statements == 2);
        CHECK(r.arguments == 1 + 2);  // the copy's a; the update's a and b, not y
        CHECK((r.d[0] == 1 + b0 && r.d[1] == a0));
    }
    SECTION("-=") {
        auto r = run([](const Real& a, const Real& b) { Real y = a; y -= b; return y; });
        CHECK(r.value == a0 - b0);
        CHECK((r.d[0] == 1 && r.d[1] == -1));
        r = run([](const Real& a, const Real&) { Real y = a; y -= 2.5; y -= 3; return y; });
        CHECK(r.value == a0 - 5.5);
        CHECK(r.statements == 1);
        CHECK(r.d[0] == 1);
        r = run([](const Real& a, const Real& b) { Real y = a; y -= a * b; return y; });
        CHECK(r.statements == 2);
        CHECK((r.d[0] == 1 - b0 && r.d[1] == -a0));
    }
    SECTION("*=") {
        auto r = run([](const Real& a, const Real& b) { Real y = a; y *= b; return y; });
        CHECK(r.value == a0 * b0);
        CHECK(r.statements == 2);
        CHECK((r.d[0] == b0 && r.d[1] == a0));
        r = run([](const Real& a, const Real&) { Real y = a; y *= 2.5; y *= -3; return y; });
        CHECK(r.value == a0 * -7.5);
        CHECK(r.d[0] == -7.5);
        r = run([](const Real& a, const Real& b) { Real y = a; y *= a - b; return y; });
        CHECK(r.value == a0 * (a0 - b0));
        CHECK((r.d[0] == 2 * a0 - b0 && r.d[1] == -a0));
    }
    SECTION("/=") {
        auto r = run([](const Real& a, const Real& b) { Real y = a; y /= b; return y; });
        CHECK(r.value == a0 / b0);
        CHECK(r.statements == 2);
        CHECK_CLOSE(r.d[0], 1 / (long double)b0, 1e-15L, 0.0L);
        CHECK_CLOSE(r.d[1], -a0 / ((long double)b0 * b0), 1e-15L, 0.0L);
        r = run([](const Real& a, const Real&) { Real y = a; y /= 2.5; y /= 4; return y; });
        CHECK(r.value == a0 / 2.5 / 4);
        CHECK_CLOSE(r.d[0], 0.1L, 1e-15L, 0.0L);
        r = run([](const Real& a, const Real& b) { Real y = a; y /= b + 1; return y; });
        CHECK(r.value == a0 / (b0 + 1));
        CHECK_CLOSE(r.d[0], 1 / (b0 + 1.0L), 1e-15L, 0.0L);
        CHECK_CLOSE(r.d[1], -a0 / ((b0 + 1.0L) * (b0 + 1.0L)), 1e-15L, 0.0L);
    }
    SECTION("the variable itself on the right") {
        auto r = run([](const Real& a, const Real&) { Real y = a; y *= y; return y; });
        CHECK(r.value == a0 * a0);
        CHECK(r.d[0] == 2 * a0);
        r = run([](const Real& a, const Real&) { Real y = a; y += y; y += y; return y; });
        CHECK(r.value == 4 * a0);
        CHECK(r.d[0] == 4);
        r = run([](const Real& a, const Real&) { Real y = a * a; y /= y; return y; });
        CHECK(r.value == 1);
        CHECK(r.d[0] == 0);
    }
}

TEST_CASE("increment and decrement", "[operators][compound]") {
    const double a0 = 2.5;
    auto r = differentiate<double>([](const Real& a) { Real y = a * 2; ++y; return y; }, a0);
    CHECK(r.value == 6.0);
    CHECK(r.d[0] == 2);
    r = differentiate<double>([](const Real& a) { Real y = a * 2; --y; return y * y; }, a0);
    CHECK(r.value == 16.0);
    CHECK(r.d[0] == 2 * 4.0 * 2);
    SECTION("postfix forms return the old value, with its derivative") {
        r = differentiate<double>([](const Real& a) { Real y = a * 3; Real old = y++; return old; }, a0);
        CHECK(r.value == 7.5);
        CHECK(r.d[0] == 3);
        r = differentiate<double>([](const Real& a) { Real y = a * 3; Real old = y--; return y * old; }, a0);
        CHECK(r.value == 6.5 * 7.5);
        CHECK(r.d[0] == 3 * 7.5 + 6.5 * 3);
    }
    SECTION("prefix and postfix mixed") {
        r = differentiate<double>([](const Real& a) { Real y = a; ++y; y++; --y; ++y; return y * a; }, a0);
        CHECK(r.value == (a0 + 2) * a0);
        CHECK(r.d[0] == 2 * a0 + 2);
    }
}

TEST_CASE("only the final assignment records", "[operators][records]") {
    // e += sin(x0) x1 + 0.5 (x1 - x0)^2 is one record with the operands x0,
    // x1: an update of e, whose own partial 1 is not stored.
    const double x0 = 0.4, x1 = 1.5;
    const auto r = differentiate<double>(
        [](const Real& a, const Real& b) {
            Real e = a * 3;
            e += sin(a) * b + 0.5 * pow(b - a, 2);
            return e;
        },
        x0, x1);
    CHECK(r.statements == 2);
    CHECK(r.arguments == 1 + 2);
    CHECK_CLOSE(r.d[0], 3 + std::cos(0.4L) * 1.5L - (1.5L - 0.4L), 1e-15L, 0.0L);
    CHECK_CLOSE(r.d[1], std::sin(0.4L) + (1.5L - 0.4L), 1e-15L, 0.0L);
}

TEST_CASE("one record per assignment", "[operators][records]") {
    auto& t = tapeflow::tape::active();
    t.reset();
    t.start_recording();
    Real a = 0.5, b = 3.0, c = -2.0;
    t.register_input(a);
    t.register_input(b);
    t.register_input(c);
    const Real p = 2.0, q = 3.0;  // passive: never registered
    auto stats = [&] { return t.statistics(); };

    const auto s0 = stats();
    Real z = a * b + sin(a) / c - 2.0;
    const auto s1 = stats();
    CHECK(s1.statements - s0.statements == 1);
    CHECK(s1.arguments - s0.arguments == 3);  // a (merged), b, c
    CHECK(z.is_active());

    Real w = p * q + sin(p) / q - 2.0;  // all passive
    const auto s2 = stats();
    CHECK(s2.statements == s1.statements);
    CHECK(s2.arguments == s1.arguments);
    CHECK_FALSE(w.is_active());
    CHECK(w.value() == 2.0 * 3.0 + std::sin(2.0) / 3.0 - 2.0);

    Real u = a * 2.0 + 3 - p * a / q;  // numbers and passive Reals are not arguments
    const auto s3 = stats();
    CHECK(s3.statements - s2.statements == 1);
    CHECK(s3.arguments - s2.arguments == 1);

    Real sq = a * a;  // repeated operands merge
    Real cube = b * b * b + b;
    Real zero = c - c;
    const auto s4 = stats();
    CHECK(s4.statements - s3.statements == 3);
    CHECK(s4.arguments - s3.arguments == 3);

    Real out = z + w + u + sq + cube + zero;
    t.register_output(out);
    t.stop_recording();
    t.set_adjoint(out, 1.0);
    t.sweep();
    // d/da: (b + cos a / c) + (2 - p / q) + 2a;  d/db: a + 3 b^2 + 1;  d/dc: -sin(a) / c^2 + (1 - 1)
    CHECK_CLOSE(t.adjoint(a), 3.0L + std::cos(0.5L) / -2.0L + (2 - 2.0L / 3) + 1.0L, 1e-15L, 0.0L);
    CHECK_CLOSE(t.adjoint(b), 0.5L + 27 + 1, 1e-15L, 0.0L);
    CHECK_CLOSE(t.adjoint(c), -std::sin(0.5L) / 4, 1e-15L, 0.0L);

    SECTION("nothing is recorded when the tape is not recording") {
        const auto before = stats();
        Real v = a * b + c;
        CHECK_FALSE(v.is_active());
        CHECK(v.value() == 0.5 * 3.0 - 2.0);
        CHECK(stats().statements == before.statements);
    }
}

TEMPLATE_TEST_CASE("operators in float and long double", "[operators][precision]", float, long double) {
    using S = TestType;
    using R = tapeflow::basic_real<S>;
    const S a0 = S(1.75), b0 = S(-0.625);
    const long double a = a0, b = b0, tol = expr_test::rel_tol<S>();
    auto r = differentiate<S>([](const R& x, const R& y) { return (x * y - 2 * x) / (y + 3.5) + x / 4; }, a0, b0);
    CHECK(r.value == (a0 * b0 - 2 * a0) / (b0 + S(3.5)) + a0 / 4);
    CHECK(r.statements == 1);
    CHECK_CLOSE(r.d[0], (b - 2) / (b + 3.5L) + 0.25L, tol, 0.0L);
    CHECK_CLOSE(r.d[1], a / (b + 3.5L) - (a * b - 2 * a) / ((b + 3.5L) * (b + 3.5L)), tol, 0.0L);
    r = differentiate<S>([](const R& x, const R& y) { R z = x; z *= y; z -= 1; z /= x + y; ++z; return z; }, a0, b0);
    const long double s = a + b;
    CHECK_CLOSE(r.value, (a * b - 1) / s + 1, tol, 0.0L);
    CHECK_CLOSE(r.d[0], b / s - (a * b - 1) / (s * s), tol, 0.0L);
    CHECK_CLOSE(r.d[1], a / s - (a * b - 1) / (s * s), tol, 0.0L);
}
