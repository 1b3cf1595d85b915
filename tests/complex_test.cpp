// std::complex<Real> (tapeflow/complex.hpp): the standard library's complex
// arithmetic and functions on Real, and the mixed operations the header adds
// (numbers, expressions and std::complex<double> beside a complex<Real>).
// References: for holomorphic functions, the Cauchy-Riemann form of the
// analytic derivative f'(z) computed on std::complex<double>; for every case,
// central differences of the same code on double; values against the code
// on double.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <complex>
#include <functional>
#include <string>
#include <vector>

#include "support/finite_difference.hpp"

using tapeflow::Real;
using cd = std::complex<double>;

namespace {

// f(x) = Re g(z) + 0.7 Im g(z) with z = x0 + i x1 (w = x2 + i x3 where used).
template <class G>
auto objective(G g) {
    return [g](const auto& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        const std::complex<T> z(x[0], x[1]), w(x[2], x[3]);
        const std::complex<T> r = g(z, w, x);
        return T(r.real() + 0.7 * r.imag());
    };
}

const std::vector<double> point{0.7, -0.4, 1.3, 0.6};

// value on Real equal to the value on double, gradient equal to central differences
template <class F>
std::vector<double> check_against_differences(const F& f, const std::vector<double>& x = point) {
    const auto [value, gradient] = tapeflow::value_and_gradient([&](const std::vector<Real>& v) { return f(v); }, x);
    const std::function<double(const std::vector<double>&)> plain = [&](const std::vector<double>& v) { return f(v); };
    CHECK(tapeflow_test::close(value, plain(x), 1e-13, 1e-15));
    const std::vector<double> fd = tapeflow_test::central_gradient(plain, x);
    REQUIRE(gradient.size() == fd.size());
    for (std::size_t i = 0; i < fd.size(); ++i) {
        INFO("d/dx" << i << ": tapeflow " << gradient[i] << ", differences " << fd[i]);
        CHECK(tapeflow_test::close(gradient[i], fd[i], 1e-6, 1e-7));
    }
    return gradient;
}

struct holomorphic_case {
    std::string name;
    std::function<std::complex<Real>(const std::complex<Real>&)> on_real;
    std::function<cd(const cd&)> on_double;
    std::function<cd(const cd&)> derivative;  // f'(z), by hand
};

}  // namespace

TEST_CASE("holomorphic functions of std::complex<Real>: the Cauchy-Riemann derivative and central differences") {
    const cd i(0, 1);
    const std::vector<holomorphic_case> cases = {
        {"z * z + z / 3", [](const auto& z) { return z * z + z / Real(3); }, [](const cd& z) { return z * z + z / 3.0; },
         [](const cd& z) { return 2.0 * z + 1.0 / 3.0; }},
        {"1 / z", [](const auto& z) { return Real(1) / z; }, [](const cd& z) { return 1.0 / z; },
         [](const cd& z) { return -1.0 / (z * z); }},
        {"exp", [](const auto& z) { return std::exp(z); }, [](const cd& z) { return std::exp(z); },
         [](const cd& z) { return std::exp(z); }},
        {"log", [](const auto& z) { return std::log(z); }, [](const cd& z) { return std::log(z); },
         [](const cd& z) { return 1.0 / z; }},
        {"log10", [](const auto& z) { return std::log10(z); }, [](const cd& z) { return std::log10(z); },
         [](const cd& z) { return 1.0 / (z * std::log(10.0)); }},
        {"sqrt", [](const auto& z) { return std::sqrt(z); }, [](const cd& z) { return std::sqrt(z); },
         [](const cd& z) { return 0.5 / std::sqrt(z); }},
        {"sin", [](const auto& z) { return std::sin(z); }, [](const cd& z) { return std::sin(z); },
         [](const cd& z) { return std::cos(z); }},
        {"cos", [](const auto& z) { return std::cos(z); }, [](const cd& z) { return std::cos(z); },
         [](const cd& z) { return -std::sin(z); }},
        {"tan", [](const auto& z) { return std::tan(z); }, [](const cd& z) { return std::tan(z); },
         [](const cd& z) { return 1.0 / (std::cos(z) * std::cos(z)); }},
        {"sinh", [](const auto& z) { return std::sinh(z); }, [](const cd& z) { return std::sinh(z); },
         [](const cd& z) { return std::cosh(z); }},
        {"cosh", [](const auto& z) { return std::cosh(z); }, [](const cd& z) { return std::cosh(z); },
         [](const cd& z) { return std::sinh(z); }},
        {"tanh", [](const auto& z) { return std::tanh(z); }, [](const cd& z) { return std::tanh(z); },
         [](const cd& z) { return 1.0 / (std::cosh(z) * std::cosh(z)); }},
        {"asin", [](const auto& z) { return std::asin(z); }, [](const cd& z) { return std::asin(z); },
         [](const cd& z) { return 1.0 / std::sqrt(1.0 - z * z); }},
        {"acos", [](const auto& z) { return std::acos(z); }, [](const cd& z) { return std::acos(z); },
         [](const cd& z) { return -1.0 / std::sqrt(1.0 - z * z); }},
        {"atan", [](const auto& z) { return std::atan(z); }, [](const cd& z) { return std::atan(z); },
         [](const cd& z) { return 1.0 / (1.0 + z * z); }},
        {"asinh", [](const auto& z) { return std::asinh(z); }, [](const cd& z) { return std::asinh(z); },
         [](const cd& z) { return 1.0 / std::sqrt(z * z + 1.0); }},
        {"acosh", [](const auto& z) { return std::acosh(z); }, [](const cd& z) { return std::acosh(z); },
         [](const cd& z) { return 1.0 / (std::sqrt(z - 1.0) * std::sqrt(z + 1.0)); }},
        {"acosh, unqualified", [](const auto& z) { return acosh(z); }, [](const cd& z) { return std::acosh(z); },
         [](const cd& z) { return 1.0 / (std::sqrt(z - 1.0) * std::sqrt(z + 1.0)); }},
        {"atanh", [](const auto& z) { return std::atanh(z); }, [](const cd& z) { return std::atanh(z); },
         [](const cd& z) { return 1.0 / (1.0 - z * z); }},
        {"pow(z, 2.5)", [](const auto& z) { return std::pow(z, 2.5); }, [](const cd& z) { return std::pow(z, 2.5); },
         [](const cd& z) { return 2.5 * std::pow(z, 1.5); }},
        {"pow(z, 3)", [](const auto& z) { return std::pow(z, 3); }, [](const cd& z) { return std::pow(z, 3); },
         [](const cd& z) { return 3.0 * z * z; }},
        {"pow(2.0, z)", [](const auto& z) { return std::pow(2.0, z); }, [](const cd& z) { return std::pow(2.0, z); },
         [](const cd& z) { return std::log(2.0) * std::pow(2.0, z); }},
        {"pow(z, 1.5 - 0.5i) (a complex<double> power)",
         [i](const auto& z) { return std::pow(z, cd(1.5, 0) - 0.5 * i); },
         [i](const cd& z) { return std::pow(z, 1.5 - 0.5 * i); },
         [i](const cd& z) { return (1.5 - 0.5 * i) * std::pow(z, 0.5 - 0.5 * i); }},
        {"mixed with numbers: (2 z + 1) / (z - 3) * 0.5 - 1 / z",
         [](const auto& z) { return (2.0 * z + 1.0) / (z - 3.0) * 0.5 - 1.0 / z; },
         [](const cd& z) { return (2.0 * z + 1.0) / (z - 3.0) * 0.5 - 1.0 / z; },
         [](const cd& z) { return 0.5 * (2.0 * (z - 3.0) - (2.0 * z + 1.0)) / ((z - 3.0) * (z - 3.0)) + 1.0 / (z * z); }},
        {"mixed with int: 1 - z * 2 + z / 4",
         [](const auto& z) { return 1 - z * 2 + z / 4; }, [](const cd& z) { return 1.0 - z * 2.0 + z / 4.0; },
         [](const cd&) { return cd(-2.0 + 0.25, 0); }},
        {"mixed with complex<double>: (1 + 2i) z - z / (0.5 - i) + (3 - i)",
         [i](const auto& z) { return (1.0 + 2.0 * i) * z - z / (0.5 - i) + (3.0 - i); },
         [i](const cd& z) { return (1.0 + 2.0 * i) * z - z / (0.5 - i) + (3.0 - i); },
         [i](const cd&) { return (1.0 + 2.0 * i) - 1.0 / (0.5 - i); }},
    };
    // points on the axes too: the standard library's pow(z, a) and sqrt(z)
    // take shortcuts there that dropped d/dIm z and d/dRe z; and where an
    // inner square root of its acosh (Re z = +-1), asinh (x^2 - y^2 + 1 = 0)
    // or asin and acos (x^2 - y^2 = 1) has real part 0
    for (const cd z0 : {cd(0.7, -0.4), cd(-1.2, 0.9), cd(0.3, 0.2), cd(0.7, 0.0), cd(0.0, 0.8), cd(0.0, -0.6),
                        cd(1.0, 2.0), cd(-1.0, 2.0), cd(0.75, 1.25), cd(1.25, 0.75), cd(-1.25, -0.75)}) {
        for (const auto& c : cases) {
            INFO(c.name << " at z = " << z0);
            const auto [value, g] = tapeflow::value_and_gradient(
                [&](const std::vector<Real>& x) {
                    const std::complex<Real> r = c.on_real(std::complex<Real>(x[0], x[1]));
                    return Real(r.real() + 0.7 * r.imag());
                },
                std::vector<double>{z0.real(), z0.imag()});
            const cd want = c.on_double(z0);
            CHECK(tapeflow_test::close(value, want.real() + 0.7 * want.imag(), 1e-13, 1e-15));
            // f = Re g + 0.7 Im g; g' = u + i v: df/dx = u + 0.7 v, df/dy = -v + 0.7 u
            const cd d = c.derivative(z0);
            CHECK(tapeflow_test::close(g[0], d.real() + 0.7 * d.imag(), 1e-12, 1e-14));
            CHECK(tapeflow_test::close(g[1], -d.imag() + 0.7 * d.real(), 1e-12, 1e-14));
        }
    }
}

TEST_CASE("asinh, asin, acos and acosh of std::complex<Real>: the values of complex<double> far out and on the cuts") {
    // asinh(z) = log(z + sqrt(z^2 + 1)) cancels for Re z < 0 (asinh(-1e8)
    // was -inf); asinh is odd, and tapeflow's takes -asinh(-z) there. On
    // the segments where a real part is 0 (acosh on [-1, 1], asinh on
    // [-i, i]) the form before the log1p one stays: 0.7 and 0.34 i are points
    // where it gives complex<double>'s 0 and the log1p form would not; p^2
    // overflowed for |z| near 1e154.
    const auto same = [](const std::complex<Real>& got, const cd& want) {
        INFO("got " << got.real().value() << " + " << got.imag().value() << " i, want " << want);
        CHECK(tapeflow_test::close(got.real().value(), want.real(), 1e-13, 1e-300));
        CHECK(tapeflow_test::close(got.imag().value(), want.imag(), 1e-13, 1e-300));
        CHECK(std::signbit(got.real().value()) == std::signbit(want.real()));
        CHECK(std::signbit(got.imag().value()) == std::signbit(want.imag()));
    };
    for (const cd z : {cd(-1e8, 0.0), cd(1e8, 0.0), cd(-1e8, 3.0), cd(1e-5, 1e8), cd(-3e5, -2e5), cd(1e154, 0.0),
                       cd(1.0, 1e154), cd(-1e154, 1e153), cd(0.7, 0.0), cd(0.0, 0.34), cd(-0.0, -0.34),
                       cd(2.0, 0.0),
                       cd(2.0, -0.0), cd(-2.0, 0.0), cd(-2.0, -0.0), cd(0.0, 2.0), cd(-0.0, 2.0), cd(0.0, -2.0)}) {
        INFO("z = " << z);
        const std::complex<Real> zr(Real(z.real()), Real(z.imag()));
        same(std::asinh(zr), std::asinh(z));
        same(std::asin(zr), std::asin(z));
        same(std::acos(zr), std::acos(z));
        same(std::acosh(zr), std::acosh(z));
    }
}

TEST_CASE("asinh and asin near 0, acosh near 1, of std::complex<Real>: the relative accuracy of complex<double>") {
    // their logarithm's real part log |w| with |w| near 1 lost half the
    // digits (asinh(1e-8 (1 + i)) was off by 8e-9 relative): it is a log1p
    const auto close = [](const std::complex<Real>& got, const cd& want) {
        INFO("got " << got.real().value() << " + " << got.imag().value() << " i, want " << want);
        CHECK(tapeflow_test::close(got.real().value(), want.real(), 1e-14, 1e-320));
        CHECK(tapeflow_test::close(got.imag().value(), want.imag(), 1e-14, 1e-320));
    };
    for (const cd z : {cd(1e-8, 1e-8), cd(1e-8, -3e-9), cd(-2e-9, 1e-9), cd(-1e-12, -4e-12), cd(1e-300, 1e-300),
                       cd(3e-5, 0.0)}) {
        INFO("z = " << z);
        const std::complex<Real> zr(Real(z.real()), Real(z.imag()));
        close(std::asinh(zr), std::asinh(z));
        close(std::asin(std::complex<Real>(zr.imag(), zr.real())), std::asin(cd(z.imag(), z.real())));
        close(std::acosh(std::complex<Real>(Real(1.0 + z.real()), zr.imag())), std::acosh(cd(1.0 + z.real(), z.imag())));
    }
}

TEST_CASE("std::complex<Real> with expressions and Reals beside it, against central differences") {
    check_against_differences(objective([](const auto& z, const auto& w, const auto& x) {
        // an expression of Real (x2 * x3) as a real operand on either side
        return z * (x[2] * x[3]) + (x[2] - x[3]) / w - (x[2] * 2.0) - z / (x[3] + 1.0);
    }));
    check_against_differences(objective([](const auto& z, const auto& w, const auto& x) {
        // a Real, and two complex<Real>
        return z * w / (w - z) + x[2] * z - w / x[3];
    }));
    check_against_differences(objective([](const auto& z, const auto& w, const auto& x) {
        // powers with a Real or an expression exponent, and a Real base
        using std::pow;
        return pow(z, x[2]) + pow(w, x[2] * 0.5) + pow(x[3], z) + pow(x[2] + 1.0, w) + pow(z, w);
    }));
    check_against_differences(objective([](const auto& z, const auto&, const auto& x) {
        // a complex<double> with a Real or an expression of Reals: complex<Real>
        const cd i(0, 1);
        return i * x[2] * z + (x[3] * 2.0) * cd(1, -1) - cd(0.5, 0.5) / x[2] + x[3] / cd(2, 1) + (cd(1, 1) - x[2]);
    }));
    check_against_differences(objective([](const auto& z, const auto& w, const auto&) {
        // compound assignment with numbers and complex<double>
        auto r = z;
        r += 1.5;
        r *= cd(0.5, -2.0);
        r -= w;
        r /= 3.0;
        return r;
    }));
}

TEST_CASE("the real-valued functions of std::complex<Real>: abs, arg, norm, real, imag, conj, proj, polar") {
    using std::abs;
    using std::arg;
    using std::norm;
    check_against_differences([](const auto& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        const std::complex<T> z(x[0], x[1]), w(x[2], x[3]);
        const std::complex<T> p = std::polar(x[2], x[3]);
        return T(abs(z) + 2.0 * arg(w) + norm(z) * 0.5 + std::real(w) * std::imag(z) + std::conj(z).imag() +
                 std::proj(w).real() + p.real() - 0.3 * p.imag());
    });
    // |z| and arg z by hand: d|z| = z / |z|, d arg z = (-y, x) / |z|^2
    const auto g = tapeflow::gradient(
        [](const std::vector<Real>& x) {
            const std::complex<Real> z(x[0], x[1]);
            return Real(std::abs(z) + 3.0 * std::arg(z));
        },
        std::vector<double>{0.6, -0.8});
    CHECK(g[0] == Approx(0.6 + 3.0 * 0.8).epsilon(1e-14));
    CHECK(g[1] == Approx(-0.8 + 3.0 * 0.6).epsilon(1e-14));
}

TEST_CASE("comparisons of std::complex<Real> with numbers, complex<double> and Reals") {
    tapeflow::tape tape;
    tape.activate();
    tape.start_recording();
    Real x = 2.0, y = 0.0;
    tape.register_input(x);
    tape.register_input(y);
    const std::complex<Real> z(x, y);
    CHECK(z == 2.0);
    CHECK(2 == z);
    CHECK(z != 3.0);
    CHECK(z == cd(2.0, 0.0));
    CHECK(cd(2.0, 1.0) != z);
    CHECK(z == x);
    CHECK(z == x * 1.0);  // an expression
    CHECK_FALSE(z != 2.0);
    tape.stop_recording();
    tape.reset();
}

TEST_CASE("std::complex<Real> on a streaming tape that spills gives the gradient of the tape in memory") {
    const auto f = [](const std::vector<Real>& x) {
        std::complex<Real> z(x[0], x[1]);
        for (int k = 0; k < 2000; ++k) z = 0.5 * std::sin(z) + cd(0.01, 0.02) * std::exp(-z * z) + 0.1;
        return Real(std::abs(z));
    };
    const std::vector<double> x{0.3, 0.4};
    const std::vector<double> in_memory = tapeflow::gradient(f, x);
    tapeflow::tape_options o;
    o.memory_budget_bytes = 64 * 1024;
    o.tile_bytes = 4096;
    tapeflow::tape spilling(o);
    spilling.activate();
    const std::vector<double> spilled = tapeflow::gradient(f, x);
    tapeflow::tape::thread_default().activate();
    CHECK(spilling.statistics().tiles_spilled > 0);
    CHECK(spilled == in_memory);  // the same records: the same bits
}

TEST_CASE("quotients of std::complex<Real> far out: the values of complex<double>, derivatives 1/w and -q/w") {
    // The standard library's generic quotient divides by |w|^2, which
    // overflows from |w| about 1e154 and underflows below 1e-154 (NaN, inf
    // or 0 where complex<double> is finite); tapeflow's is Smith's.
    using cl = std::complex<long double>;
    const std::vector<std::pair<cd, cd>> cases{{{1e300, 1e300}, {3e300, 4e300}}, {{1.0, 0.0}, {1e-170, 1e-170}},
                                               {{1.0, 2.0}, {3e300, 4e300}},    {{-2e-160, 3e-161}, {5e-170, -1e-169}},
                                               {{0.7, -0.4}, {0.3, -1.6}},     {{0.7, -0.4}, {1.3, 0.6}}};
    for (const auto& [z, w] : cases) {
        INFO("z = " << z << ", w = " << w);
        const cd want = z / w;
        const cl zl(z.real(), z.imag()), wl(w.real(), w.imag());
        const cl dz = 1.0L / wl, dw = -(zl / wl) / wl;  // dq/dz, dq/dw
        // d Re q / d(a, b, c, d) and d Im q / d(a, b, c, d), z = a + i b, w = c + i d
        const long double by_hand[2][4] = {{dz.real(), -dz.imag(), dw.real(), -dw.imag()},
                                           {dz.imag(), dz.real(), dw.imag(), dw.real()}};
        for (int part = 0; part < 2; ++part) {
            const auto [value, gradient] = tapeflow::value_and_gradient(
                [&](const std::vector<Real>& x) {
                    const std::complex<Real> q = std::complex<Real>(x[0], x[1]) / std::complex<Real>(x[2], x[3]);
                    return Real(part == 0 ? q.real() : q.imag());
                },
                std::vector<double>{z.real(), z.imag(), w.real(), w.imag()});
            CHECK(tapeflow_test::close(value, part == 0 ? want.real() : want.imag(), 1e-14, 1e-320));
            for (int i = 0; i < 4; ++i) {
                // dq/dw = -q / w past the range of double (1 / w^2 at |w| =
                // 1e-170): its parts are not double numbers, not checked
                if (i >= 2 && !std::isfinite(double(std::abs(dw)))) continue;
                INFO("part " << part << ", d/dx" << i << ": tapeflow " << gradient[i] << ", by hand "
                             << double(by_hand[part][i]));
                CHECK(tapeflow_test::close(gradient[i], double(by_hand[part][i]), 1e-13, 1e-320));
            }
        }
        // a Real over a complex<Real> (its own overload): Re(a / w) and its
        // gradient 1 / w, -(a / w) / w in (a, c, d)
        const cd over = z.real() / w;
        const cl d_over = -(cl(z.real()) / wl) / wl;
        const auto [value, gradient] = tapeflow::value_and_gradient(
            [&](const std::vector<Real>& x) { return Real((x[0] / std::complex<Real>(x[1], x[2])).real()); },
            std::vector<double>{z.real(), w.real(), w.imag()});
        CHECK(tapeflow_test::close(value, over.real(), 1e-14, 1e-320));
        CHECK(tapeflow_test::close(gradient[0], double(dz.real()), 1e-13, 1e-320));
        if (std::isfinite(double(std::abs(d_over)))) {
            CHECK(tapeflow_test::close(gradient[1], double(d_over.real()), 1e-13, 1e-320));
            CHECK(tapeflow_test::close(gradient[2], double(-d_over.imag()), 1e-13, 1e-320));
        }
        const std::complex<Real> by_number = 1.0 / std::complex<Real>(Real(w.real()), Real(w.imag()));
        CHECK(tapeflow_test::close(by_number.real().value(), (1.0 / w).real(), 1e-14, 1e-320));
        CHECK(tapeflow_test::close(by_number.imag().value(), (1.0 / w).imag(), 1e-14, 1e-320));
    }
}

TEST_CASE("tanh and tan of std::complex<Real> far out: finite, the values of complex<double>, derivative sech^2") {
    // sinh z / cosh z (the standard library's generic tanh) was inf / inf
    // from |Re z| about 355, and sin z / cos z from |Im z| about 355
    using cl = std::complex<long double>;
    for (const cd z : {cd(400.0, 1.0), cd(-360.0, 1.0), cd(25.0, -2.0), cd(19.0, 2.0), cd(3.0, 0.5), cd(0.3, -0.8),
                       cd(1e-10, 1e-12), cd(0.0, 1.2)}) {
        for (const bool is_tan : {false, true}) {
            // tan at i z: the same cases turned onto the other axis
            const cd at = is_tan ? cd(-z.imag(), z.real()) : z;
            INFO((is_tan ? "tan(" : "tanh(") << at << ")");
            const cd want = is_tan ? std::tan(at) : std::tanh(at);
            const cl al(at.real(), at.imag());
            const cl c = is_tan ? std::cos(al) : std::cosh(al);
            const cl d = 1.0L / (c * c);  // f'(z): sech^2 z, sec^2 z
            for (int part = 0; part < 2; ++part) {
                const auto [value, gradient] = tapeflow::value_and_gradient(
                    [&](const std::vector<Real>& x) {
                        const std::complex<Real> zr(x[0], x[1]);
                        const std::complex<Real> f = is_tan ? std::tan(zr) : std::tanh(zr);
                        return Real(part == 0 ? f.real() : f.imag());
                    },
                    std::vector<double>{at.real(), at.imag()});
                REQUIRE(std::isfinite(value));
                CHECK(tapeflow_test::close(value, part == 0 ? want.real() : want.imag(), 1e-14, 1e-300));
                // Cauchy-Riemann: d Re / dx = Re f', d Re / dy = -Im f', d Im / dx = Im f', d Im / dy = Re f'
                const double by_hand[2][2] = {{double(d.real()), double(-d.imag())}, {double(d.imag()), double(d.real())}};
                // Im tanh (Re tan) is a product of small factors, its derivatives
                // accurate relative to their size, about e^(-2|x|) far out; Re tanh
                // is near +-1, its derivatives accurate to 1e-15 absolute only, as
                // for tanh of a real number (docs/expressions.md)
                const double floor = part == (is_tan ? 0 : 1) ? 1e-300 : 1e-15;
                for (int i = 0; i < 2; ++i) {
                    INFO("part " << part << ", d/dx" << i << ": tapeflow " << gradient[i] << ", by hand " << by_hand[part][i]);
                    CHECK(tapeflow_test::close(gradient[i], by_hand[part][i], 1e-12, floor));
                }
            }
        }
    }
}
