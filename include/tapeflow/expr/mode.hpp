// tapeflow/expr/mode.hpp - which mode of differentiation a tree belongs to.
//
// Real (reverse mode, on a tape) and Dual (forward mode, tangents carried in
// the variable) share the expression nodes, and both have scalar type double,
// so the scalar type alone cannot keep them apart. The mode of a tree is that
// of its active leaves; numbers fit any mode:
//
//   mode_of<Real>                      reverse_mode
//   mode_of<basic_dual<S, N>>          forward_mode<N>   (tapeflow/dual.hpp)
//   mode_of<binary_expr<Op, A, B>>     join(mode_of<A>, mode_of<B>)
//   join(passive, m) = m, join(m, m) = m, otherwise mixed_mode
//
// The binary and ternary nodes refuse a mixed tree as it is built
// (check_same_mode in nodes.hpp), so the error names the operation that mixes.
// The trait is computed at compile time only: no node carries a member for it.
#pragma once

#include <cstddef>
#include <type_traits>

#include "expression.hpp"

namespace tapeflow {
namespace detail {

struct passive_mode {};  ///< numbers and passive results (floor of anything)
struct reverse_mode {};  ///< basic_real and its leaves
template <std::size_t N>
struct forward_mode {};  ///< basic_dual with N tangent lanes
struct mixed_mode {};    ///< an error: operands of two modes in one tree

template <class A, class B>
struct join_mode { using type = mixed_mode; };
template <class A>
struct join_mode<A, A> { using type = A; };
template <class A>
struct join_mode<A, passive_mode> { using type = A; };
template <class B>
struct join_mode<passive_mode, B> { using type = B; };
template <>
struct join_mode<passive_mode, passive_mode> { using type = passive_mode; };

/// The mode of T; anything that is not a known active type or node is passive.
template <class T>
struct mode_of { using type = passive_mode; };
template <class T>
using mode_of_t = typename mode_of<T>::type;

template <class... Ts>
struct joined_mode { using type = passive_mode; };
template <class T, class... Ts>
struct joined_mode<T, Ts...> {
    using type = typename join_mode<mode_of_t<T>, typename joined_mode<Ts...>::type>::type;
};
template <class... Ts>
using joined_mode_t = typename joined_mode<Ts...>::type;

template <class S>
struct mode_of<basic_real<S>> { using type = reverse_mode; };
template <class S>
struct mode_of<active_leaf<S>> { using type = reverse_mode; };
template <class S>
struct mode_of<checked_active_leaf<S>> { using type = reverse_mode; };
template <class S>
struct mode_of<temporary_leaf<S>> { using type = reverse_mode; };

// The nodes (nodes.hpp) take the mode of their operands.
template <class Op, class A>
struct unary_expr;
template <class Op, class A, class B>
struct binary_expr;
template <class Op, class A, class B, class C>
struct ternary_expr;

template <class Op, class A>
struct mode_of<unary_expr<Op, A>> : mode_of<A> {};
template <class Op, class A, class B>
struct mode_of<binary_expr<Op, A, B>> : joined_mode<A, B> {};
template <class Op, class A, class B, class C>
struct mode_of<ternary_expr<Op, A, B, C>> : joined_mode<A, B, C> {};

/// Operands of one operation belong to one mode (or are numbers).
template <class... Ts>
constexpr void check_same_mode() noexcept {
    static_assert(!std::is_same_v<joined_mode_t<Ts...>, mixed_mode>,
                  "tapeflow: an expression mixes modes: a Real (reverse mode, taped) with a Dual "
                  "(forward mode), or Duals with different lane counts N. Use one active type per "
                  "computation; pass a value across with .value()");
}

}  // namespace detail
}  // namespace tapeflow
