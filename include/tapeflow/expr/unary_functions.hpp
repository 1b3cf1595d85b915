// tapeflow/expr/unary_functions.hpp - unary operators and one-argument math.
//
// Each operation is a struct with value(x) and d(x, r) where r = value(x).
// Values at points where the derivative does not exist (see docs/expressions.md):
//   abs, fabs at 0          -> 0
//   floor ceil round trunc rint nearbyint -> 0 everywhere (passive results)
//   sqrt, cbrt at 0; log at 0; asin, acos at +-1; acosh at 1; atanh at +-1
//                           -> the IEEE value of the formula (+-inf)
//   tgamma, lgamma at the poles 0, -1, -2, ... -> NaN
#pragma once

#include <cmath>

#include "nodes.hpp"
#include "std_math.hpp"
#include "special_functions.hpp"

namespace tapeflow {
namespace detail {

template <class S>
inline constexpr S ln2_v = S(0.693147180559945309417232121458176568L);
template <class S>
inline constexpr S ln10_v = S(2.302585092994045684017991454684364208L);
template <class S>
inline constexpr S two_over_sqrt_pi_v = S(1.128379167095512573896158903121545172L);

struct negate_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return -x; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S, S) { return S(-1); }
};
struct identity_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return x; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S, S) { return S(1); }
};
struct sqrt_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return sqrt(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S, S r) { return S(0.5) / r; }
};
template <>
struct nonfinite_partials<sqrt_op> : std::true_type {};  // see expr/nodes.hpp
struct cbrt_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return cbrt(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S, S r) { return S(1) / (S(3) * r * r); }
};
template <>
struct nonfinite_partials<cbrt_op> : std::true_type {};  // see expr/nodes.hpp
struct exp_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return exp(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S, S r) { return r; }
};
struct exp2_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return exp2(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S, S r) { return r * ln2_v<S>; }
};
struct expm1_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return expm1(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return exp(x); }
};
struct log_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return log(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return S(1) / x; }
};
struct log2_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return log2(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return S(1) / (x * ln2_v<S>); }
};
struct log10_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return log10(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return S(1) / (x * ln10_v<S>); }
};
struct log1p_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return log1p(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return S(1) / (S(1) + x); }
};
struct sin_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return sin(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return cos(x); }
};
struct cos_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return cos(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return -sin(x); }
};
struct tan_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return tan(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S, S r) { return S(1) + r * r; }
};
struct asin_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return asin(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return S(1) / sqrt((S(1) - x) * (S(1) + x)); }
};
template <>
struct nonfinite_partials<asin_op> : std::true_type {};  // see expr/nodes.hpp
struct acos_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return acos(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return S(-1) / sqrt((S(1) - x) * (S(1) + x)); }
};
template <>
struct nonfinite_partials<acos_op> : std::true_type {};  // see expr/nodes.hpp
struct atan_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return atan(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return S(1) / (S(1) + x * x); }
};
struct sinh_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return sinh(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return cosh(x); }
};
struct cosh_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return cosh(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return sinh(x); }
};
struct tanh_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return tanh(x); }
    // 1 - tanh^2 cancels for |x| > 1 (all digits lost by |x| = 20): there
    // use sech^2 x = 4 e / (1 + e)^2 with e = exp(-2|x|), which neither
    // cancels nor overflows (1 / cosh^2 does past |x| = 355: its Dual tangent,
    // a second derivative, came out NaN).
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S r) {
        if (fabs(x) < S(1)) return S(1) - r * r;
        const S e = exp(S(-2) * fabs(x));
        const S q = S(1) + e;
        return S(4) * e / (q * q);
    }
};
struct asinh_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return asinh(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return S(1) / hypot(x, S(1)); }
};
struct acosh_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return acosh(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return S(1) / (sqrt(x - S(1)) * sqrt(x + S(1))); }
};
template <>
struct nonfinite_partials<acosh_op> : std::true_type {};  // see expr/nodes.hpp
struct atanh_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return atanh(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return S(1) / ((S(1) - x) * (S(1) + x)); }
};
struct abs_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return fabs(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return x > 0 ? S(1) : (x < 0 ? S(-1) : S(0)); }
};
struct erf_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return erf(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return two_over_sqrt_pi_v<S> * exp(-x * x); }
};
struct erfc_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return erfc(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return -two_over_sqrt_pi_v<S> * exp(-x * x); }
};
struct tgamma_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return tgamma(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S r) { return r * digamma(x); }
};
struct lgamma_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x) { return lgamma(x); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d(S x, S) { return digamma(x); }
};

}  // namespace detail

// Unary operators.
template <class E, detail::enable_t<E> = 0>
TAPEFLOW_ALWAYS_INLINE constexpr auto operator-(E&& x) { return detail::make_unary<detail::negate_op, E>(x); }
template <class E, detail::enable_t<E> = 0>
TAPEFLOW_ALWAYS_INLINE constexpr auto operator+(E&& x) { return detail::make_unary<detail::identity_op, E>(x); }

// One-argument functions. Found by argument-dependent lookup and, unless
// TAPEFLOW_NO_STD_OVERLOADS is defined, as std::name too (tapeflow/std.hpp).
template <class E, detail::enable_t<E> = 0> auto sqrt(E&& x) { return detail::make_unary<detail::sqrt_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto cbrt(E&& x) { return detail::make_unary<detail::cbrt_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto exp(E&& x) { return detail::make_unary<detail::exp_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto exp2(E&& x) { return detail::make_unary<detail::exp2_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto expm1(E&& x) { return detail::make_unary<detail::expm1_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto log(E&& x) { return detail::make_unary<detail::log_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto log2(E&& x) { return detail::make_unary<detail::log2_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto log10(E&& x) { return detail::make_unary<detail::log10_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto log1p(E&& x) { return detail::make_unary<detail::log1p_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto sin(E&& x) { return detail::make_unary<detail::sin_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto cos(E&& x) { return detail::make_unary<detail::cos_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto tan(E&& x) { return detail::make_unary<detail::tan_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto asin(E&& x) { return detail::make_unary<detail::asin_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto acos(E&& x) { return detail::make_unary<detail::acos_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto atan(E&& x) { return detail::make_unary<detail::atan_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto sinh(E&& x) { return detail::make_unary<detail::sinh_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto cosh(E&& x) { return detail::make_unary<detail::cosh_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto tanh(E&& x) { return detail::make_unary<detail::tanh_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto asinh(E&& x) { return detail::make_unary<detail::asinh_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto acosh(E&& x) { return detail::make_unary<detail::acosh_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto atanh(E&& x) { return detail::make_unary<detail::atanh_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto abs(E&& x) { return detail::make_unary<detail::abs_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto fabs(E&& x) { return detail::make_unary<detail::abs_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto erf(E&& x) { return detail::make_unary<detail::erf_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto erfc(E&& x) { return detail::make_unary<detail::erfc_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto tgamma(E&& x) { return detail::make_unary<detail::tgamma_op, E>(x); }
template <class E, detail::enable_t<E> = 0> auto lgamma(E&& x) { return detail::make_unary<detail::lgamma_op, E>(x); }

// Piecewise-constant functions: derivative 0, so the result is passive.
namespace detail {
template <class E, class F>
auto passive_step(const E& x, F f) {
    return passive_expr<typename E::scalar_type>(step_function(x.value(), f));
}
}  // namespace detail
template <class E, detail::enable_t<E> = 0>
auto floor(const E& x) { return detail::passive_step(x, [](auto v) { return std::floor(v); }); }
template <class E, detail::enable_t<E> = 0>
auto ceil(const E& x) { return detail::passive_step(x, [](auto v) { return std::ceil(v); }); }
template <class E, detail::enable_t<E> = 0>
auto round(const E& x) { return detail::passive_step(x, [](auto v) { return std::round(v); }); }
template <class E, detail::enable_t<E> = 0>
auto trunc(const E& x) { return detail::passive_step(x, [](auto v) { return std::trunc(v); }); }
// rint and nearbyint round in the current rounding mode (to nearest, ties
// to even, unless the program changed it); rint may raise FE_INEXACT.
template <class E, detail::enable_t<E> = 0>
auto rint(const E& x) { return detail::passive_step(x, [](auto v) { return std::rint(v); }); }
template <class E, detail::enable_t<E> = 0>
auto nearbyint(const E& x) { return detail::passive_step(x, [](auto v) { return std::nearbyint(v); }); }

}  // namespace tapeflow
