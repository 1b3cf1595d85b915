// tapeflow/complex.hpp - std::complex<Real>: complex arithmetic on the tape.
//
// std::complex<basic_real<S>> works through the standard library's own
// generic code (every operation becomes statements on Real), which GCC's
// libstdc++ and LLVM's libc++ provide for any number type. (The C++ standard
// leaves complex<T> for other T than float, double and long double
// unspecified; this header and tests/complex_test.cpp are what tapeflow
// promises.) What the standard library cannot do by itself is mix: its
// operators take complex<T> with T, so `z + 1.0`, `2.0 * z`, `z / (2 * x)`
// (an expression of Real) or `z * std::complex<double>(0, 1)` found no
// operator, and neither did a std::complex<double> times a Real
// (`i * w * l` for an inductor's impedance). This header adds them, in
// namespace tapeflow, found by argument-dependent lookup (through the
// template argument basic_real<S>, or the Real operand):
//
//   std::complex<Real> z(x, y);
//   std::complex<Real> w = 2.0 * z + 1.0;               // number and complex<Real>
//   w = w * std::complex<double>(0, 1) - z / (x * x);   // complex<double>, expressions
//   std::complex<Real> z_l = std::complex<double>(0, w) * l;   // complex<double> times Real
//   bool same = (w == 1.0);
//   w = std::pow(2.0, z);  w = std::log10(z);            // pow and log10 of mixed arguments
//
// pow(z, a) and sqrt(z) are tapeflow's own (polar form): the standard
// library's generic versions take shortcuts on the real or imaginary axis
// whose result drops a partial derivative there; so are acosh, asinh, asin
// and acos, which call that sqrt. Quotients (Smith's), tanh and tan are
// tapeflow's as well: the generic ones overflow far from 0 (below).
//
// The value of a complex operation on Real can differ in the last bits from
// the same operation on complex<double>: for double, the library computes
// products with the compiler's complex arithmetic (with scaling for
// overflow), for Real with the textbook formulas. docs/expressions.md lists
// what stays generic and loses range or digits (exp near overflow, atan
// and atanh past |z| 1e154, z /= w).
#pragma once

#include <complex>
#include <limits>
#include <type_traits>
#include <utility>

#include "expr/mode.hpp"
#include "real.hpp"
#include "std.hpp"

namespace tapeflow {

namespace detail {

/// A number or an expression that stands for a basic_real<S> beside a
/// std::complex<basic_real<S>> (a basic_real<S> itself is the standard
/// library's business: its operators take complex<T> with T).
template <class S, class A>
inline constexpr bool complex_partner_v =
    (is_passive_v<bare_t<A>> || is_node_v<bare_t<A>>) && !std::is_same_v<bare_t<A>, basic_real<S>>;

template <class S, class A>
using if_complex_partner = std::enable_if_t<complex_partner_v<S, A>, int>;

template <class U>
using if_plain_complex = std::enable_if_t<std::is_arithmetic_v<U>, int>;

/// A Real or an expression of Reals (reverse mode) beside a std::complex<double>.
template <class A>
inline constexpr bool reverse_operand_v =
    is_expression_v<bare_t<A>> && std::is_same_v<mode_of_t<bare_t<A>>, reverse_mode>;

template <class U, class A>
using if_complex_times_real = std::enable_if_t<std::is_arithmetic_v<U> && reverse_operand_v<A>, int>;

template <class A>
using real_of_t = basic_real<typename bare_t<A>::scalar_type>;

}  // namespace detail

// With a number or an expression: it becomes a basic_real<S> first.
#define TAPEFLOW_COMPLEX_MIXED(op)                                                                            \
    template <class S, class A, detail::if_complex_partner<S, A> = 0>                                        \
    std::complex<basic_real<S>> operator op(const std::complex<basic_real<S>>& z, A&& a) {                   \
        return z op basic_real<S>(std::forward<A>(a));                                                        \
    }                                                                                                         \
    template <class S, class A, detail::if_complex_partner<S, A> = 0>                                        \
    std::complex<basic_real<S>> operator op(A&& a, const std::complex<basic_real<S>>& z) {                   \
        return basic_real<S>(std::forward<A>(a)) op z;                                                        \
    }                                                                                                         \
    template <class S, class U, detail::if_plain_complex<U> = 0>                                              \
    std::complex<basic_real<S>> operator op(const std::complex<basic_real<S>>& z, const std::complex<U>& c) { \
        return z op std::complex<basic_real<S>>(c.real(), c.imag());                                          \
    }                                                                                                         \
    template <class S, class U, detail::if_plain_complex<U> = 0>                                              \
    std::complex<basic_real<S>> operator op(const std::complex<U>& c, const std::complex<basic_real<S>>& z) { \
        return std::complex<basic_real<S>>(c.real(), c.imag()) op z;                                          \
    }                                                                                                         \
    template <class U, class A, detail::if_complex_times_real<U, A> = 0>                                      \
    std::complex<detail::real_of_t<A>> operator op(const std::complex<U>& c, A&& a) {                         \
        using R = detail::real_of_t<A>;                                                                       \
        return std::complex<R>(c.real(), c.imag()) op R(std::forward<A>(a));                                  \
    }                                                                                                         \
    template <class U, class A, detail::if_complex_times_real<U, A> = 0>                                      \
    std::complex<detail::real_of_t<A>> operator op(A&& a, const std::complex<U>& c) {                         \
        using R = detail::real_of_t<A>;                                                                       \
        return R(std::forward<A>(a)) op std::complex<R>(c.real(), c.imag());                                  \
    }
TAPEFLOW_COMPLEX_MIXED(+)
TAPEFLOW_COMPLEX_MIXED(-)
TAPEFLOW_COMPLEX_MIXED(*)
TAPEFLOW_COMPLEX_MIXED(/)
#undef TAPEFLOW_COMPLEX_MIXED

/// z / w by Smith's algorithm: with |Re w| >= |Im w|, r = Im w / Re w and
///   z / w = ((Re z + Im z r) + i (Im z - Re z r)) / (Re w + Im w r)
/// (the other way round otherwise). The standard library's generic quotient
/// divides by |w|^2, which overflows from |w| about 1e154 and underflows
/// below 1e-154: (1e300 + 1e300 i) / (3e300 + 4e300 i) was NaN, 1 / z at
/// |z| = 1e-170 inf, (1 + 2 i) / (3e300 + 4e300 i) 0, where complex<double>
/// (which scales) is finite. The same quotient either way, so its
/// derivatives are the quotient's. (Found by argument-dependent lookup and
/// more specialized than the standard library's templates, so the
/// standard library's own functions of complex<Real> use it too; its
/// member z /= w does not: write z = z / w.)
namespace detail {
/// Smith's scaling of a quotient by w = c + i d: with |c| >= |d|
/// (real_larger), r = d / c and den = c + d r, else r = c / d and
/// den = c r + d; no |w|^2 is formed.
template <class S>
struct smith_divisor {
    basic_real<S> r, den;
    bool real_larger;
};
template <class S>
smith_divisor<S> smith_of(const std::complex<basic_real<S>>& w) {
    using R = basic_real<S>;
    const R &c = w.real(), &d = w.imag();
    if (abs(c) >= abs(d)) {
        R r = d / c;
        return {r, R(c + d * r), true};
    }
    R r = c / d;
    return {r, R(c * r + d), false};
}
}  // namespace detail

template <class S>
std::complex<basic_real<S>> operator/(const std::complex<basic_real<S>>& z, const std::complex<basic_real<S>>& w) {
    using R = basic_real<S>;
    const R &a = z.real(), &b = z.imag();
    const auto [r, den, real_larger] = detail::smith_of(w);
    if (real_larger) return std::complex<R>(R((a + b * r) / den), R((b - a * r) / den));
    return std::complex<R>(R((a * r + b) / den), R((b * r - a) / den));
}
template <class S>
std::complex<basic_real<S>> operator/(const basic_real<S>& x, const std::complex<basic_real<S>>& w) {
    using R = basic_real<S>;
    const auto [r, den, real_larger] = detail::smith_of(w);
    if (real_larger) return std::complex<R>(R(x / den), R(-x * r / den));
    return std::complex<R>(R(x * r / den), R(-x / den));
}

// Comparisons of values (as the standard library's: both parts equal).
template <class S, class A, detail::if_complex_partner<S, A> = 0>
bool operator==(const std::complex<basic_real<S>>& z, A&& a) {
    return z == std::complex<basic_real<S>>(basic_real<S>(std::forward<A>(a)));
}
template <class S, class A, detail::if_complex_partner<S, A> = 0>
bool operator==(A&& a, const std::complex<basic_real<S>>& z) {
    return z == std::forward<A>(a);
}
template <class S, class A, detail::if_complex_partner<S, A> = 0>
bool operator!=(const std::complex<basic_real<S>>& z, A&& a) {
    return !(z == std::forward<A>(a));
}
template <class S, class A, detail::if_complex_partner<S, A> = 0>
bool operator!=(A&& a, const std::complex<basic_real<S>>& z) {
    return !(z == std::forward<A>(a));
}
template <class S, class U, detail::if_plain_complex<U> = 0>
bool operator==(const std::complex<basic_real<S>>& z, const std::complex<U>& c) {
    return z.real() == c.real() && z.imag() == c.imag();
}
template <class S, class U, detail::if_plain_complex<U> = 0>
bool operator==(const std::complex<U>& c, const std::complex<basic_real<S>>& z) {
    return z == c;
}
template <class S, class U, detail::if_plain_complex<U> = 0>
bool operator!=(const std::complex<basic_real<S>>& z, const std::complex<U>& c) {
    return !(z == c);
}
template <class S, class U, detail::if_plain_complex<U> = 0>
bool operator!=(const std::complex<U>& c, const std::complex<basic_real<S>>& z) {
    return !(z == c);
}

/// a^z for a number or expression a: exp(z log a) (a > 0 for a real
/// logarithm; the standard library's pow(T, complex<T>) does the same).
template <class S, class A, detail::if_complex_partner<S, A> = 0>
std::complex<basic_real<S>> pow(A&& a, const std::complex<basic_real<S>>& z) {
    return std::pow(basic_real<S>(std::forward<A>(a)), z);
}
/// z^a for a Real a: exp(a log z) in polar form. (The standard library's
/// shortcut for a positive real z, pow(z.real(), a), did not compile here,
/// and it would make the imaginary part a constant: its derivative with
/// respect to Im z, a x^(a-1), would be lost.)
template <class S>
std::complex<basic_real<S>> pow(const std::complex<basic_real<S>>& z, const basic_real<S>& a) {
    using R = basic_real<S>;
    const std::complex<R> t = std::log(z);
    return std::polar(R(exp(a * t.real())), R(a * t.imag()));
}
/// z^a for a floating-point number a. Without it libstdc++ takes pow(z, int)
/// (its templates cannot match complex<Real> with double): pow(z, 2.5)
/// silently became z^2. (An int a is the standard library's pow(z, int).)
template <class S, class A, std::enable_if_t<std::is_floating_point_v<detail::bare_t<A>>, int> = 0>
std::complex<basic_real<S>> pow(const std::complex<basic_real<S>>& z, A&& a) {
    return pow(z, basic_real<S>(a));
}
/// z^a for an expression a.
template <class S, class A, std::enable_if_t<detail::is_node_v<detail::bare_t<A>>, int> = 0>
std::complex<basic_real<S>> pow(const std::complex<basic_real<S>>& z, A&& a) {
    return pow(z, basic_real<S>(std::forward<A>(a)));
}
template <class S, class U, detail::if_plain_complex<U> = 0>
std::complex<basic_real<S>> pow(const std::complex<basic_real<S>>& z, const std::complex<U>& c) {
    return std::pow(z, std::complex<basic_real<S>>(c.real(), c.imag()));
}
template <class S, class U, detail::if_plain_complex<U> = 0>
std::complex<basic_real<S>> pow(const std::complex<U>& c, const std::complex<basic_real<S>>& z) {
    return std::pow(std::complex<basic_real<S>>(c.real(), c.imag()), z);
}

/// sqrt z = sqrt|z| e^(i arg(z) / 2). The standard library's generic
/// sqrt takes a shortcut when Re z == 0 that computes the result from Im z
/// alone: its derivative with respect to Re z was lost on the imaginary axis.
template <class S>
std::complex<basic_real<S>> sqrt(const std::complex<basic_real<S>>& z) {
    using R = basic_real<S>;
    return std::polar(R(sqrt(std::abs(z))), R(0.5 * std::arg(z)));
}

namespace detail {
/// log w for |w| >= 1 (the callers' arguments). Near 1 (both parts of w - 1
/// under 1/2 in size), log |w| as log1p(|w|^2 - 1) / 2 with
/// |w|^2 - 1 = p (2 + p) + (Im w)^2, where p = Re w - 1 comes from
/// `re_w_minus_1()`, computed by the caller without cancellation: this keeps
/// the digits of a w near 1 that log |w| would round away. Elsewhere
/// std::log: p^2 could overflow where |w| does not, and p, a complex
/// division, is not taped for nothing. arg w is std::log's either way
/// (signed zeros included).
template <class S, class P>
std::complex<basic_real<S>> log_near_one(const std::complex<basic_real<S>>& w, P re_w_minus_1) {
    using R = basic_real<S>;
    const R q = w.imag();
    if (!(abs(w.real() - 1.0) < 0.5 && abs(q) < 0.5)) return std::log(w);
    const R p = re_w_minus_1();
    return std::complex<R>(R(0.5 * log1p(p * (2.0 + p) + q * q)), R(atan2(q, w.real())));
}
}  // namespace detail

/// The inverse hyperbolic and trigonometric functions that the standard
/// library builds on sqrt: its generic acosh, asinh, asin and acos call
/// std::sqrt(complex) bound where <complex> defines them, so they got its
/// shortcut (not the sqrt above) and lost a partial derivative wherever an
/// inner square root's argument has real part 0: acosh on the lines
/// Re z = +-1, asinh where x^2 - y^2 + 1 = 0, asin and acos where
/// x^2 - y^2 = 1. The formulas of libstdc++'s, with the sqrt above:
///   acosh z = 2 log(s1 + s2),  s1 = sqrt((z + 1) / 2), s2 = sqrt((z - 1) / 2)
///   asinh z = log(z + s),  s = sqrt(z^2 + 1), for Re z >= 0 (-asinh(-z) else)
///   asin z = -i asinh(i z),  acos z = pi / 2 - asin z
/// whose logarithm's real part is taken by log_near_one (above), so that
/// asinh and asin near 0 and acosh near 1 keep their relative accuracy
/// (log |w| lost half the digits: asinh(1e-8 (1 + i)) was off by 8e-9
/// relative). Re w - 1 without cancellation: s1 - 1 = ((z - 1) / 2) / (s1 + 1)
/// and s - 1 = z^2 / (s + 1), denominators at least 1 in modulus (the square
/// roots have real parts >= 0).
template <class S>
std::complex<basic_real<S>> acosh(const std::complex<basic_real<S>>& z) {
    using R = basic_real<S>;
    const std::complex<R> h = R(0.5) * (z - R(1));
    const std::complex<R> s1 = sqrt(R(0.5) * (z + R(1))), s2 = sqrt(h);
    // on [-1, 1] the real part is 0: log |w| gives it up to the rounding of
    // |w| (0 or +-1e-16, as before), the log1p form about 1e-17 off
    if (z.imag() == 0.0 && abs(z.real()) <= 1.0) return R(2) * std::log(s1 + s2);
    return R(2) * detail::log_near_one(s1 + s2, [&] { return R((h / (s1 + R(1))).real() + s2.real()); });
}
template <class S>
std::complex<basic_real<S>> asinh(const std::complex<basic_real<S>>& z) {
    using R = basic_real<S>;
    // asinh is odd (as C99's casinh, its branch cuts included): for Re z < 0
    // the sum z + sqrt(z^2 + 1) would cancel (asinh(-1e8) gave -inf)
    if (signbit(z.real())) return -asinh(std::complex<R>(R(-z.real()), R(-z.imag())));
    const R x = z.real(), y = z.imag();
    // z^2 with its real part as (x - y)(x + y), as libstdc++ writes it
    const std::complex<R> z2(R((x - y) * (x + y)), R(2.0 * x * y));
    const std::complex<R> s = sqrt(std::complex<R>(R(z2.real() + 1.0), z2.imag()));
    if (x == 0.0) return std::log(s + z);  // the real part 0 on [-i, i]: as acosh on [-1, 1]
    return detail::log_near_one(s + z, [&] { return R(x + (z2 / (s + R(1))).real()); });
}
template <class S>
std::complex<basic_real<S>> asin(const std::complex<basic_real<S>>& z) {
    using R = basic_real<S>;
    const std::complex<R> t = asinh(std::complex<R>(R(-z.imag()), z.real()));
    return std::complex<R>(t.imag(), R(-t.real()));
}
template <class S>
std::complex<basic_real<S>> acos(const std::complex<basic_real<S>>& z) {
    using R = basic_real<S>;
    const std::complex<R> t = asin(z);
    const R half_pi(S(1.5707963267948966192313216916397514L));
    return std::complex<R>(R(half_pi - t.real()), R(-t.imag()));
}

/// tanh z = (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y), z = x + i y
/// (C99's ctanh): the standard library's generic sinh z / cosh z is inf / inf,
/// NaN, from |x| about 355 (tanh(400 + i)); past the |x| where e^(-2|x|) is
/// under half an ulp of 1, sign(x) + 4 i sin y cos y e^(-2|x|), which stays
/// finite (the real part's derivatives, at most 4 e^(-2|x|), are 0 there).
/// The real part's derivatives are accurate to about 1e-15 absolute, not
/// relative, as they approach that |x| (as for tanh of a real number in
/// double); the imaginary part's keep their relative accuracy.
template <class S>
std::complex<basic_real<S>> tanh(const std::complex<basic_real<S>>& z) {
    using R = basic_real<S>;
    const R &x = z.real(), &y = z.imag();
    if (abs(x) > 0.5 * 0.6931471805599453 * (std::numeric_limits<S>::digits + 2))
        return std::complex<R>(R(signbit(x) ? -1.0 : 1.0), R(4.0 * sin(y) * cos(y) * exp(-2.0 * abs(x))));
    const R sx = sinh(x), cy = cos(y);
    const R den = sx * sx + cy * cy;
    return std::complex<R>(R(sx * cosh(x) / den), R(sin(y) * cy / den));
}
/// tan z = -i tanh(i z) (the standard library's sin z / cos z was NaN from
/// |Im z| about 355).
template <class S>
std::complex<basic_real<S>> tan(const std::complex<basic_real<S>>& z) {
    using R = basic_real<S>;
    const std::complex<R> t = tanh(std::complex<R>(R(-z.imag()), z.real()));
    return std::complex<R>(t.imag(), R(-t.real()));
}

/// log10 z = log z / log 10 (the standard library's divides by an
/// expression of Real, which its operator/ does not take).
template <class S>
std::complex<basic_real<S>> log10(const std::complex<basic_real<S>>& z) {
    return std::log(z) / basic_real<S>(std::log(S(10)));
}

}  // namespace tapeflow

#ifndef TAPEFLOW_NO_STD_OVERLOADS
namespace std {
// std::pow(2.0, z), std::pow(z, 2.5), std::sqrt(z), std::log10(z),
// std::acosh(z), std::asinh(z), std::asin(z), std::acos(z), std::tan(z) and
// std::tanh(z), called
// qualified, as for Real (tapeflow/std.hpp): these overloads are more
// specialized than the standard library's templates. (With
// TAPEFLOW_NO_STD_OVERLOADS, call them unqualified: std::pow(z, 2.5) would
// be the standard library's pow(z, int), z^2.)
using tapeflow::acos;
using tapeflow::acosh;
using tapeflow::asin;
using tapeflow::asinh;
using tapeflow::log10;
using tapeflow::pow;
using tapeflow::sqrt;
using tapeflow::tan;
using tapeflow::tanh;
}  // namespace std
#endif
