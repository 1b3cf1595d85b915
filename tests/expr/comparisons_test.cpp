// Comparisons, classification and printing (include/tapeflow/expr/comparisons.hpp):
// they look at values only, for every mix of Real, expression and number, and
// record nothing.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>

#include "expr_test_support.hpp"

using tapeflow::Real;

namespace {

const double inf = std::numeric_limits<double>::infinity();
const double qnan = std::numeric_limits<double>::quiet_NaN();

/// The six results of comparing u and v (any operand types).
template <class U, class V>
std::string compare_all(const U& u, const V& v) {
    std::string s;
    s += (u == v) ? '1' : '0';
    s += (u != v) ? '1' : '0';
    s += (u < v) ? '1' : '0';
    s += (u <= v) ? '1' : '0';
    s += (u > v) ? '1' : '0';
    s += (u >= v) ? '1' : '0';
    return s;
}

template <class T>
std::string printed(const T& x, void (*format)(std::ostream&)) {
    std::ostringstream out;
    format(out);
    out << x;
    return out.str();
}

}  // namespace

TEST_CASE("comparisons between every kind of operand", "[comparisons]") {
    const double pairs[][2] = {{1.0, 2.0}, {2.0, 2.0}, {2.0, 1.0}, {-0.0, 0.0},   {-3.0, -3.5},
                               {qnan, 1.0}, {1.0, qnan}, {qnan, qnan}, {inf, 1e308}, {-inf, -inf}};
    auto& t = tapeflow::tape::active();
    t.reset();
    t.start_recording();
    for (const auto& p : pairs) {
        const double a = p[0], b = p[1];
        INFO("a = " << a << ", b = " << b);
        Real x = a, y = b;
        t.register_input(x);
        t.register_input(y);
        const auto before = t.statistics();
        const std::string expected = compare_all(a, b);
        CHECK(compare_all(x, y) == expected);                  // Real, Real
        CHECK(compare_all(x, b) == expected);                  // Real, double
        CHECK(compare_all(a, y) == expected);                  // double, Real
        CHECK(compare_all(x * 1.0, y) == expected);            // expression, Real
        CHECK(compare_all(x, y + 0.0) == expected);            // Real, expression
        CHECK(compare_all(x * 1.0, y * 1.0) == expected);      // expression, expression
        CHECK(compare_all(-(-x), b) == expected);              // expression, double
        CHECK(compare_all(a, +y) == expected);                 // double, expression
        if (!(std::isfinite(a) && std::fabs(a) > 1e30) && !(std::isfinite(b) && std::fabs(b) > 1e30)) {
            const float fa = static_cast<float>(a), fb = static_cast<float>(b);
            CHECK(compare_all(fa, Real(fb)) == compare_all(fa, fb));  // float, Real
        }
        if (a == std::trunc(a) && b == std::trunc(b) && std::fabs(a) < 1e9 && std::fabs(b) < 1e9) {
            const int i = static_cast<int>(a), j = static_cast<int>(b);
            CHECK(compare_all(x, j) == compare_all(a, j));  // Real, int
            CHECK(compare_all(i, y) == compare_all(i, b));  // int, Real
            CHECK(compare_all(i, y * 1) == compare_all(i, b));
        }
        // Comparing records nothing.
        CHECK(t.statistics().statements == before.statements);
    }
    t.stop_recording();
}

TEST_CASE("a branch on a comparison records the path taken", "[comparisons]") {
    auto f = [](const Real& x) { return x > 1.0 ? Real(x * x) : Real(3 * x); };
    CHECK(expr_test::differentiate<double>(f, 2.0).d[0] == 4.0);
    CHECK(expr_test::differentiate<double>(f, 0.5).d[0] == 3.0);
    auto g = [](const Real& x, const Real& y) { return x <= y ? Real(y - x) : Real(x - y); };
    const auto r = expr_test::differentiate<double>(g, 3.0, 1.0);
    CHECK((r.value == 2.0 && r.d[0] == 1.0 && r.d[1] == -1.0));
}

TEST_CASE("classification of values", "[comparisons][classification]") {
    const double values[] = {1.0, -1.0, 0.0, -0.0, inf, -inf, qnan, -qnan,
                             std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::min(),
                             std::numeric_limits<double>::max(), -2.5e-310};
    for (double v : values) {
        INFO("v = " << v);
        const Real x = v;
        CHECK(isnan(x) == std::isnan(v));
        CHECK(isinf(x) == std::isinf(v));
        CHECK(isfinite(x) == std::isfinite(v));
        CHECK(isnormal(x) == std::isnormal(v));
        CHECK(signbit(x) == std::signbit(v));
        CHECK(std::isnan(x) == std::isnan(v));
        CHECK(std::isinf(x) == std::isinf(v));
        CHECK(std::isfinite(x) == std::isfinite(v));
        CHECK(std::isnormal(x) == std::isnormal(v));
        CHECK(std::signbit(x) == std::signbit(v));
        // On expressions: the value of the tree (x * 4 overflows DBL_MAX, -x flips the sign).
        const double w = v * 4;
        CHECK(isnan(x * 4) == std::isnan(w));
        CHECK(isinf(x * 4) == std::isinf(w));
        CHECK(std::isfinite(x * 4) == std::isfinite(w));
        CHECK(isnormal(x * 4) == std::isnormal(w));
        CHECK(signbit(-x) == std::signbit(-v));
    }
    CHECK(isinf(Real(std::numeric_limits<double>::max()) * 2));
    CHECK(signbit(Real(-0.0)));
    CHECK_FALSE(isnormal(Real(std::numeric_limits<double>::denorm_min())));
}

TEST_CASE("operator<< prints the value as the scalar type would", "[comparisons][print]") {
    void (*formats[])(std::ostream&) = {
        [](std::ostream&) {},
        [](std::ostream& o) { o << std::setprecision(17); },
        [](std::ostream& o) { o << std::scientific << std::setprecision(3); },
        [](std::ostream& o) { o << std::fixed << std::setprecision(2); },
        [](std::ostream& o) { o << std::hexfloat; },
        [](std::ostream& o) { o << std::showpos << std::setw(14) << std::left; },
        [](std::ostream& o) { o << std::setw(10) << std::setfill('*'); },
    };
    for (double v : {0.1, -2.5, 1e300, -0.0, 123456789.125, inf, qnan, 3.0}) {
        const Real x = v;
        for (auto format : formats) {
            CHECK(printed(x, format) == printed(v, format));
            CHECK(printed(x * 2 + 1, format) == printed(v * 2 + 1, format));
        }
    }
    const tapeflow::RealF f = 0.1f;
    CHECK(printed(f, [](std::ostream& o) { o << std::setprecision(12); }) ==
          printed(0.1f, [](std::ostream& o) { o << std::setprecision(12); }));
    const tapeflow::RealL l = 0.1L;
    CHECK(printed(l, [](std::ostream& o) { o << std::setprecision(21); }) ==
          printed(0.1L, [](std::ostream& o) { o << std::setprecision(21); }));
    // The printed value of a long double differs from the double's at that precision.
    CHECK(printed(l, [](std::ostream& o) { o << std::setprecision(21); }) !=
          printed(0.1, [](std::ostream& o) { o << std::setprecision(21); }));
}

TEMPLATE_TEST_CASE("comparisons in float and long double", "[comparisons][precision]", float, long double) {
    using S = TestType;
    using R = tapeflow::basic_real<S>;
    const R x = S(0.1), y = S(0.2);
    CHECK(x < y);
    CHECK(x * 2 == y);
    CHECK(2 * x >= y);
    CHECK(x != S(0.10000001));
    CHECK(x + x <= y);
    CHECK_FALSE(x > 0.5);
    CHECK(isnan(x / S(0) * 0));
    CHECK(isinf(x / 0));
}
