// tapeflow/expr/binary_functions.hpp - math functions of two and three arguments.
//
// Values at points where a derivative does not exist (docs/expressions.md):
//   pow(a, b):   d/db = 0 where a <= 0 (log a undefined); d/da = 0 where b == 0
//   atan2(y, x): both partials 0 at the origin
//   hypot:       all partials 0 where the result is 0
//   fmin, fmax, min, max: the derivative follows the argument returned; at a
//                tie the FIRST argument gets 1. fmin/fmax ignore a NaN
//                argument (as std::fmin does); min/max follow std::min/max.
//   fmod(a, b):  d/da = 1, d/db = -(a - r) / b (the integer quotient)
//   copysign(a, b): d/da = +-1 (whether the sign flipped), d/db = 0
//   remainder(a, b): as fmod, the quotient rounded to nearest
//   fdim(a, b):  1 and -1 where a > b, else both 0 (the result is +0)
//   fma(a, b, c): b, a, 1 (the product is not rounded: the value is
//                std::fma's, the partials are those of a * b + c)
//   ldexp(x, e), scalbn(x, e), scalbln(x, e): 2^e rounded to the scalar
//                (inf past the largest number, 0 below the smallest
//                subnormal, even where x 2^e is neither); e is a constant
#pragma once

#include <cmath>
#include <utility>

#include "nodes.hpp"
#include "std_math.hpp"

namespace tapeflow {
namespace detail {

struct pow_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return pow(a, b); }
    // b a^(b-1). Where b == 0 that is b / a: 0 (+-0), with b's tangent
    // kept, which second order needs (d2 pow / da db = a^(b-1) (1 + b ln a)
    // = 1 / a at b = 0); b * a^(-1) would be 0 * inf = NaN at a subnormal
    // a. At a = 0 (and a NaN a) the constant 0.
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S a, S b, S) {
        if (b == 0) return a == 0 || isnan(a) ? S(0) : b / a;
        return b * pow(a, b - S(1));
    }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S a, S, S r) { return a > 0 ? r * log(a) : S(0); }
};
template <>
struct nonfinite_partials<pow_op> : std::true_type {};  // see expr/nodes.hpp
struct atan2_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S y, S x) { return atan2(y, x); }
    // x / (x^2 + y^2) as (x / h) / h with h = hypot(x, y): no overflow or
    // underflow of the squares at large or tiny |x|, |y|.
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S y, S x, S) {
        const S h = hypot(x, y);
        return h == 0 ? S(0) : x / h / h;
    }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S y, S x, S) {
        const S h = hypot(x, y);
        return h == 0 ? S(0) : -y / h / h;
    }
};
struct hypot_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return hypot(a, b); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S a, S, S r) { return r == 0 ? S(0) : a / r; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S, S b, S r) { return r == 0 ? S(0) : b / r; }
};
struct hypot3_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b, S c) { return hypot(a, b, c); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S a, S, S, S r) { return r == 0 ? S(0) : a / r; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S, S b, S, S r) { return r == 0 ? S(0) : b / r; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_c(S, S, S c, S r) { return r == 0 ? S(0) : c / r; }
};
// fmin/fmax: NaN arguments are ignored; ties go to the first argument.
struct fmin_op {
    template <class S> static bool first(S a, S b) { return isnan(b) || (!isnan(a) && a <= b); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return first(a, b) ? a : b; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S a, S b, S) { return first(a, b) ? S(1) : S(0); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S a, S b, S) { return first(a, b) ? S(0) : S(1); }
};
struct fmax_op {
    template <class S> static bool first(S a, S b) { return isnan(b) || (!isnan(a) && a >= b); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return first(a, b) ? a : b; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S a, S b, S) { return first(a, b) ? S(1) : S(0); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S a, S b, S) { return first(a, b) ? S(0) : S(1); }
};
// min/max: exactly std::min / std::max (b < a ? b : a and a < b ? b : a).
struct min_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return b < a ? b : a; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S a, S b, S) { return b < a ? S(0) : S(1); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S a, S b, S) { return b < a ? S(1) : S(0); }
};
struct max_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return a < b ? b : a; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S a, S b, S) { return a < b ? S(0) : S(1); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S a, S b, S) { return a < b ? S(1) : S(0); }
};
struct fmod_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return fmod(a, b); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S, S, S) { return S(1); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S a, S b, S r) { return -round((a - r) / b); }
};
struct copysign_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return copysign(a, b); }
    template <class S>
    static TAPEFLOW_ALWAYS_INLINE S d_a(S a, S b, S) {
        return signbit(a) == signbit(b) ? S(1) : S(-1);
    }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S, S, S) { return S(0); }
};

// remainder(a, b) = a - n b with n = a / b rounded to nearest (ties to
// even): fmod's partials, whose d/db recovers the quotient from r.
struct remainder_op : fmod_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return remainder(a, b); }
};
// fdim(a, b) = a - b where a > b, else +0 (a NaN argument gives NaN and
// partials 0: every comparison with it is false).
struct fdim_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return fdim(a, b); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S a, S b, S) { return a > b ? S(1) : S(0); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S a, S b, S) { return a > b ? S(-1) : S(0); }
};
struct fma_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b, S c) { return fma(a, b, c); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S, S b, S, S) { return b; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S a, S, S, S) { return a; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_c(S, S, S, S) { return S(1); }
};
// ldexp(x, e) = x 2^e. The exponent arrives as a passive operand (converted
// exactly from the int); its innermost value is the int again.
struct ldexp_op {
    template <class S> static int exponent(const S& e) { return static_cast<int>(innermost_value(e)); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S x, S e) { return ldexp(x, exponent(e)); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S, S e, S) { return ldexp(S(1), exponent(e)); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S, S, S) { return S(0); }
};
template <>
struct nonfinite_partials<ldexp_op> : std::true_type {};  // 2^e may overflow; see expr/nodes.hpp

}  // namespace detail

// pow covers Real^Real, Real^double, double^Real and Real^int (the int is
// converted to the scalar type exactly; d/da = n a^(n-1)).
template <class A, class B, detail::enable_t<A, B> = 0>
auto pow(A&& a, B&& b) { return detail::make_binary<detail::pow_op, A, B>(a, b); }
template <class A, class B, detail::enable_t<A, B> = 0>
auto atan2(A&& y, B&& x) { return detail::make_binary<detail::atan2_op, A, B>(y, x); }
template <class A, class B, detail::enable_t<A, B> = 0>
auto hypot(A&& a, B&& b) { return detail::make_binary<detail::hypot_op, A, B>(a, b); }
template <class A, class B, class C, detail::enable_t<A, B, C> = 0>
auto hypot(A&& a, B&& b, C&& c) { return detail::make_ternary<detail::hypot3_op, A, B, C>(a, b, c); }
template <class A, class B, detail::enable_t<A, B> = 0>
auto fmin(A&& a, B&& b) { return detail::make_binary<detail::fmin_op, A, B>(a, b); }
template <class A, class B, detail::enable_t<A, B> = 0>
auto fmax(A&& a, B&& b) { return detail::make_binary<detail::fmax_op, A, B>(a, b); }
template <class A, class B, detail::enable_t<A, B> = 0>
auto min(A&& a, B&& b) { return detail::make_binary<detail::min_op, A, B>(a, b); }
template <class A, class B, detail::enable_t<A, B> = 0>
auto max(A&& a, B&& b) { return detail::make_binary<detail::max_op, A, B>(a, b); }
template <class A, class B, detail::enable_t<A, B> = 0>
auto fmod(A&& a, B&& b) { return detail::make_binary<detail::fmod_op, A, B>(a, b); }
template <class A, class B, detail::enable_t<A, B> = 0>
auto copysign(A&& a, B&& b) { return detail::make_binary<detail::copysign_op, A, B>(a, b); }
template <class A, class B, detail::enable_t<A, B> = 0>
auto remainder(A&& a, B&& b) { return detail::make_binary<detail::remainder_op, A, B>(a, b); }
template <class A, class B, detail::enable_t<A, B> = 0>
auto fdim(A&& a, B&& b) { return detail::make_binary<detail::fdim_op, A, B>(a, b); }
template <class A, class B, class C, detail::enable_t<A, B, C> = 0>
auto fma(A&& a, B&& b, C&& c) { return detail::make_ternary<detail::fma_op, A, B, C>(a, b, c); }
// ldexp, and scalbn and scalbln (the same for a binary scalar): x times
// 2^e. e is clamped to +-65536 first: every result is the same (no floating
// type's exponents reach that far), and the clamped e converts exactly to
// the scalar and back (INT_MAX would not, in float).
namespace detail {
inline int exponent_operand(long e) noexcept { return e > 65536 ? 65536 : (e < -65536 ? -65536 : int(e)); }
}  // namespace detail
template <class E, detail::enable_t<E> = 0>
auto ldexp(E&& x, int e) {
    return detail::make_binary<detail::ldexp_op, E, int>(x, detail::exponent_operand(e));
}
template <class E, detail::enable_t<E> = 0>
auto scalbn(E&& x, int e) { return tapeflow::ldexp(std::forward<E>(x), e); }
template <class E, detail::enable_t<E> = 0>
auto scalbln(E&& x, long e) { return tapeflow::ldexp(std::forward<E>(x), detail::exponent_operand(e)); }

}  // namespace tapeflow
