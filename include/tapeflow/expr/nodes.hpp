// tapeflow/expr/nodes.hpp - the generic expression nodes.
//
// One node template per arity. The operation is a small struct `Op` with
// static functions: value(...) for the primal and d(...) / d_a, d_b, d_c for
// the partial derivatives, which receive the operand values and the result
// (many derivatives reuse it: exp' = exp, tanh' = 1 - tanh^2). Partials are
// evaluated only when a recording tape walks the node.
//
// A node holds its operands by value, so building `a0*p0 + ... + a7*p7`
// copies each subtree into its parent. The copy constructors below copy
// member by member on purpose: the implicit ones copy a node as one block,
// and GCC (12, -O3) keeps a tree of more than about 136 bytes in memory and
// moves it with wide loads over narrower stores (stalled store forwarding);
// member-wise copies let it keep the whole tree in registers. Measured on
// the least_squares bench kernel (8-term sums): recording 2.96 -> 1.42 ms.
// The same holds one level down for a basic_real<Dual> (second order),
// whose node values and leaves are Duals: copy_of (expression.hpp) copies
// them component by component (heat's H v: 3.6-4.6 s -> 2.3-2.8 s for 10).
//
// A node copies each operand once, with clone() below (make_binary & co.
// pass sub-trees by reference); the copies of active leaves and of nodes
// over leaves are forced inline, deeper ones are the compiler's choice
// (why: see clone()).
//
// The rest of a node's one-line members (constructors, value(), the make_
// functions, the operators and the operations' value and derivative
// functions) are forced inline too: in a large translation unit GCC's
// growth limits left them out of line for a Dual scalar, a call per
// statement (bench/second_order.cpp built with CoDiPack: bundle_adjustment's
// H v 8-9.5 ms -> 3.1-4.6 ms, determinant's 17.6 -> 9.3 ms; first order
// within the noise; docs/modes.md).
#pragma once

#include "expression.hpp"
#include "mode.hpp"

namespace tapeflow {

template <class S, std::size_t N>
class basic_dual;

namespace detail {

/// What a node stores for a sub-expression that is already
/// max_expression_depth deep: a variable of the tree's mode holding its
/// value (reverse: a temporary Real, recorded; forward: a Dual).
template <class Mode, class S>
struct split_variable;
template <class S>
struct split_variable<reverse_mode, S> { using type = temporary_leaf<S>; };
template <std::size_t N, class S>
struct split_variable<forward_mode<N>, S> { using type = basic_dual<S, N>; };

/// Operand x as a node of scalar type S stores it (after clone()). A
/// sub-expression is passed on by reference, unless it is
/// max_expression_depth deep: then it is evaluated into a variable first,
/// and the tree goes on over that variable. Without that, a sum of n terms
/// written out holds n nested trees of up to n levels on the stack until the
/// statement ends (stack and compile time grow as n^2: 2.1 MB of stack and
/// 100 s to compile 300 terms, g++ 12 -O3); with it, at most
/// max_expression_depth levels each (453 KiB and 20 s; docs/expressions.md),
/// and one record more per max_expression_depth levels.
template <class S, class T>
constexpr decltype(auto) split_operand(const T& x) {
    if constexpr (!is_node_v<T>)
        return capture<S>(x);
    else if constexpr (T::depth < max_expression_depth)
        return (x);
    else if constexpr (std::is_same_v<mode_of_t<T>, passive_mode>)
        return passive_leaf<S>{x.value()};  // no active leaf: its value is all there is
    else
        return typename split_variable<mode_of_t<T>, S>::type(x);
}
template <class S, class T>
using operand_t = std::remove_cv_t<std::remove_reference_t<decltype(split_operand<S>(std::declval<const T&>()))>>;

/// Checked in each node type as it is built: split_operand keeps every tree
/// at most max_expression_depth deep. The nodes' static_asserts also name
/// leaf_count (an equality that always holds), so that each level computes
/// its own as the node is instantiated, not recursively at the root.
template <std::size_t Depth>
constexpr bool depth_ok() noexcept {
    static_assert(Depth <= max_expression_depth, "tapeflow: internal: split_operand keeps trees this shallow");
    return true;
}

/// The copy of operand x that a node stores. Active leaves (active_leaf)
/// and nodes over leaves (depth <= 1) are copied by their copy_parts_t
/// constructor, forced inline: in long second-order functions
/// (bundle_adjustment's rotation) GCC otherwise called their copies out of
/// line at every statement and passed the Duals through the stack (its
/// recording: 106 M -> 82 M instructions). Deeper nodes are copied by
/// their copy constructor, inlined or not as the compiler decides: forced,
/// a node's copy inlines its whole subtree at every level, O(depth^2) code
/// (a 300-term sum of products took more than 5 minutes to compile; with
/// this rule 82 s, 91 s with no forcing, g++ 12 -O3).
template <class T>
TAPEFLOW_ALWAYS_INLINE constexpr T clone(const T& x) {
    if constexpr (std::is_constructible_v<T, copy_parts_t, const T&> && T::depth <= 1)
        return T(copy_parts_t{}, x);
    else
        return x;
}

/// Whether Op's partial derivative is inf at a finite value at an end of its
/// domain: sqrt, cbrt, asin, acos and acosh there, pow at a base of 0; and
/// ldexp's 2^e past the largest number. (atan2 and hypot define theirs as 0
/// at the origin; log at 0 and a quotient by 0 have a non-finite value too.)
/// Not covered: other partials that overflow while the value is finite (a
/// division by a subnormal number, log of one, a product of large partials
/// along a path): forward mode can give a NaN there, where a reverse sweep
/// skips a zero adjoint. Declared beside each such op.
template <class Op>
struct nonfinite_partials : std::false_type {};

/// The sink a node pushes its operands into: the sink itself, except that a
/// forward-mode tangent sink under an op with nonfinite_partials leaves out
/// the lanes of tangent 0 (dual.hpp: inf * 0 would be a NaN there, where the
/// reverse sweep adds nothing). Recording into a tape is never changed.
template <class Sink>
struct masking_sink {
    static TAPEFLOW_ALWAYS_INLINE Sink& of(Sink& sink) noexcept { return sink; }
};
template <class Op, class Sink>
TAPEFLOW_ALWAYS_INLINE decltype(auto) sink_under(Sink& sink) noexcept {
    if constexpr (nonfinite_partials<Op>::value)
        return masking_sink<Sink>::of(sink);
    else
        return (sink);
}

template <class Op, class A>
struct unary_expr : expression<unary_expr<Op, A>> {
    using scalar_type = typename A::scalar_type;
    static constexpr std::size_t leaf_count = A::leaf_count;
    static constexpr std::size_t depth = A::depth + 1;
    static_assert(depth_ok<depth>() && leaf_count == A::leaf_count);

    A a;
    scalar_type v;

    TAPEFLOW_ALWAYS_INLINE constexpr explicit unary_expr(const A& a_) : a(clone(a_)), v(Op::value(a_.value())) {}
    TAPEFLOW_ALWAYS_INLINE constexpr unary_expr(copy_parts_t, const unary_expr& o)
        : a(clone(o.a)), v(copy_of(o.v)) {}  // member-wise: see top
    TAPEFLOW_ALWAYS_INLINE constexpr unary_expr(const unary_expr& o) : unary_expr(copy_parts_t{}, o) {}
    TAPEFLOW_ALWAYS_INLINE constexpr scalar_type value() const noexcept { return v; }

    template <class Sink>
    TAPEFLOW_ALWAYS_INLINE void push(Sink& sink, scalar_type w) const {
        if constexpr (A::leaf_count != 0) {
            auto&& s = sink_under<Op>(sink);
            a.push(s, w * Op::d(a.value(), v));
        }
    }
};

template <class Op, class A, class B>
struct binary_expr : expression<binary_expr<Op, A, B>> {
    using scalar_type = typename A::scalar_type;
    static constexpr std::size_t leaf_count = A::leaf_count + B::leaf_count;
    static constexpr std::size_t depth = (A::depth > B::depth ? A::depth : B::depth) + 1;
    static_assert(depth_ok<depth>() && leaf_count == A::leaf_count + B::leaf_count);

    A a;
    B b;
    scalar_type v;

    TAPEFLOW_ALWAYS_INLINE constexpr binary_expr(const A& a_, const B& b_)
        : a(clone(a_)), b(clone(b_)), v(Op::value(a_.value(), b_.value())) {}
    TAPEFLOW_ALWAYS_INLINE constexpr binary_expr(copy_parts_t, const binary_expr& o)
        : a(clone(o.a)), b(clone(o.b)), v(copy_of(o.v)) {}  // member-wise: see top
    TAPEFLOW_ALWAYS_INLINE constexpr binary_expr(const binary_expr& o) : binary_expr(copy_parts_t{}, o) {}
    TAPEFLOW_ALWAYS_INLINE constexpr scalar_type value() const noexcept { return v; }

    template <class Sink>
    TAPEFLOW_ALWAYS_INLINE void push(Sink& sink, scalar_type w) const {
        auto&& s = sink_under<Op>(sink);
        if constexpr (A::leaf_count != 0) a.push(s, w * Op::d_a(a.value(), b.value(), v));
        if constexpr (B::leaf_count != 0) b.push(s, w * Op::d_b(a.value(), b.value(), v));
    }
};

template <class Op, class A, class B, class C>
struct ternary_expr : expression<ternary_expr<Op, A, B, C>> {
    using scalar_type = typename A::scalar_type;
    static constexpr std::size_t leaf_count = A::leaf_count + B::leaf_count + C::leaf_count;
    static constexpr std::size_t depth =
        (A::depth > B::depth ? (A::depth > C::depth ? A::depth : C::depth)
                             : (B::depth > C::depth ? B::depth : C::depth)) + 1;
    static_assert(depth_ok<depth>() && leaf_count == A::leaf_count + B::leaf_count + C::leaf_count);

    A a;
    B b;
    C c;
    scalar_type v;

    TAPEFLOW_ALWAYS_INLINE constexpr ternary_expr(const A& a_, const B& b_, const C& c_)
        : a(clone(a_)), b(clone(b_)), c(clone(c_)), v(Op::value(a_.value(), b_.value(), c_.value())) {}
    TAPEFLOW_ALWAYS_INLINE constexpr ternary_expr(copy_parts_t, const ternary_expr& o)
        : a(clone(o.a)), b(clone(o.b)), c(clone(o.c)), v(copy_of(o.v)) {}  // member-wise
    TAPEFLOW_ALWAYS_INLINE constexpr ternary_expr(const ternary_expr& o) : ternary_expr(copy_parts_t{}, o) {}
    TAPEFLOW_ALWAYS_INLINE constexpr scalar_type value() const noexcept { return v; }

    template <class Sink>
    TAPEFLOW_ALWAYS_INLINE void push(Sink& sink, scalar_type w) const {
        const scalar_type x = a.value(), y = b.value(), z = c.value();
        auto&& s = sink_under<Op>(sink);
        if constexpr (A::leaf_count != 0) a.push(s, w * Op::d_a(x, y, z, v));
        if constexpr (B::leaf_count != 0) b.push(s, w * Op::d_b(x, y, z, v));
        if constexpr (C::leaf_count != 0) c.push(s, w * Op::d_c(x, y, z, v));
    }
};

/// Result of a function whose derivative is zero wherever it exists
/// (floor, ceil, round, trunc): a value with no active operand.
template <class S>
struct passive_expr : expression<passive_expr<S>> {
    using scalar_type = S;
    static constexpr std::size_t leaf_count = 0;
    static constexpr std::size_t depth = 0;
    S v;

    constexpr explicit passive_expr(S v_) : v(v_) {}
    constexpr S value() const noexcept { return v; }
    template <class Sink>
    constexpr void push(Sink&, S) const noexcept {}
};

// The make_ functions receive the operand types as the operators deduced
// them for their forwarding references (T& for an lvalue), to reject named
// expressions (check_not_named), and the operands by const reference.
template <class Op, class A>
TAPEFLOW_ALWAYS_INLINE constexpr auto make_unary(const bare_t<A>& a) {
    check_not_named<A>();
    using S = typename bare_t<A>::scalar_type;
    return unary_expr<Op, operand_t<S, bare_t<A>>>(split_operand<S>(a));
}

template <class Op, class A, class B>
TAPEFLOW_ALWAYS_INLINE constexpr auto make_binary(const bare_t<A>& a, const bare_t<B>& b) {
    check_not_named<A, B>();
    check_same_mode<bare_t<A>, bare_t<B>>();
    using S = scalar_of_t<bare_t<A>, bare_t<B>>;
    static_assert(same_scalar_v<S, bare_t<A>, bare_t<B>>,
                  "tapeflow: operands have different scalar types (e.g. basic_real<float> "
                  "and basic_real<double>); convert one of them explicitly");
    return binary_expr<Op, operand_t<S, bare_t<A>>, operand_t<S, bare_t<B>>>(split_operand<S>(a),
                                                                         split_operand<S>(b));
}

template <class Op, class A, class B, class C>
TAPEFLOW_ALWAYS_INLINE constexpr auto make_ternary(const bare_t<A>& a, const bare_t<B>& b, const bare_t<C>& c) {
    check_not_named<A, B, C>();
    check_same_mode<bare_t<A>, bare_t<B>, bare_t<C>>();
    using S = scalar_of_t<bare_t<A>, bare_t<B>, bare_t<C>>;
    static_assert(same_scalar_v<S, bare_t<A>, bare_t<B>, bare_t<C>>,
                  "tapeflow: operands have different scalar types; convert one explicitly");
    return ternary_expr<Op, operand_t<S, bare_t<A>>, operand_t<S, bare_t<B>>, operand_t<S, bare_t<C>>>(
        split_operand<S>(a), split_operand<S>(b), split_operand<S>(c));
}

}  // namespace detail
}  // namespace tapeflow
