// tapeflow/expr/binary_operators.hpp - + - * / between expressions and numbers.
//
// Each operator takes any pair of operands of which at least one is a
// tapeflow expression (a Real or a tree of them) and the other an expression
// or a plain number (int, double, ...). A number is a passive leaf: it never
// becomes an argument of the record.
#pragma once

#include "nodes.hpp"

namespace tapeflow {
namespace detail {

struct add_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return a + b; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S, S, S) { return S(1); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S, S, S) { return S(1); }
};
struct subtract_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return a - b; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S, S, S) { return S(1); }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S, S, S) { return S(-1); }
};
struct multiply_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return a * b; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S, S b, S) { return b; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S a, S, S) { return a; }
};
struct divide_op {
    template <class S> static TAPEFLOW_ALWAYS_INLINE S value(S a, S b) { return a / b; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_a(S, S b, S) { return S(1) / b; }
    template <class S> static TAPEFLOW_ALWAYS_INLINE S d_b(S, S b, S r) { return -r / b; }
};

}  // namespace detail

template <class A, class B, detail::enable_t<A, B> = 0>
TAPEFLOW_ALWAYS_INLINE constexpr auto operator+(A&& a, B&& b) {
    return detail::make_binary<detail::add_op, A, B>(a, b);
}
template <class A, class B, detail::enable_t<A, B> = 0>
TAPEFLOW_ALWAYS_INLINE constexpr auto operator-(A&& a, B&& b) {
    return detail::make_binary<detail::subtract_op, A, B>(a, b);
}
template <class A, class B, detail::enable_t<A, B> = 0>
TAPEFLOW_ALWAYS_INLINE constexpr auto operator*(A&& a, B&& b) {
    return detail::make_binary<detail::multiply_op, A, B>(a, b);
}
template <class A, class B, detail::enable_t<A, B> = 0>
TAPEFLOW_ALWAYS_INLINE constexpr auto operator/(A&& a, B&& b) {
    return detail::make_binary<detail::divide_op, A, B>(a, b);
}

}  // namespace tapeflow
