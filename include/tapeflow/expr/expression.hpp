// tapeflow/expr/expression.hpp - the expression-template machinery.
//
// `a * sin(b) + 2.0` does not compute anything by itself: it builds a small
// tree of nodes, each holding its operands and its own primal value.
// Assigning the tree to a Real computes the value once and, when the tape is
// recording, walks the tree once with the chain rule to collect one
// (identifier, partial) pair per active leaf. Those pairs become ONE record.
//
//        binary<add>              push(sink, w):
//        /         \                add:  a.push(w * 1),  b.push(w * 1)
//   binary<mul>   passive 2.0       mul:  a.push(w * b),  b.push(w * a)
//    /      \                       sin:  x.push(w * cos(x))
//  leaf a  unary<sin>               leaf: sink.add(id, w)   (id 0 = passive: dropped
//              |                                            when the record is written)
//              |
//            leaf b
//
// Nodes hold their operands BY VALUE: a Real operand is captured as a
// (value, identifier) snapshot, a number as a passive leaf, a sub-expression
// as itself. An expression therefore never dangles (a function may return
// one), but it is a snapshot, stale once an operand changes. So it is used
// in the statement that builds it: an expression kept in a variable
// (`auto e = a * b;`) does not compile as an operand or as the source of a
// Real (check_not_named below; const ones are let through, see there).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../config.hpp"
#include "../tape/record.hpp"

namespace tapeflow {

template <class Scalar>
class basic_real;

/// Base of every expression type (CRTP). `Derived` has scalar_type,
/// leaf_count (active leaves, known at compile time), value() and push().
template <class Derived>
struct expression {
    constexpr const Derived& derived() const noexcept { return static_cast<const Derived&>(*this); }
};

namespace detail {

template <class T>
struct is_real : std::false_type {};
template <class S>
struct is_real<basic_real<S>> : std::true_type {};

template <class T>
inline constexpr bool is_expression_v = std::is_base_of_v<expression<T>, T>;

/// An active variable type: a leaf of trees, never a tree itself. basic_real
/// here; tapeflow/dual.hpp adds basic_dual.
template <class T>
struct is_variable : is_real<T> {};

/// A tree of operations (or a leaf captured in one): an expression that is
/// not a variable (a Real or a Dual).
template <class T>
inline constexpr bool is_node_v = is_expression_v<T> && !is_variable<T>::value;

/// A plain number that may stand beside an expression (int, double, ...).
template <class T>
inline constexpr bool is_passive_v = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

template <class T>
inline constexpr bool is_operand_v = is_expression_v<T> || is_passive_v<T>;

/// At least one of Ts is an expression and all are operands: the condition
/// under which tapeflow's operators and functions take part in overloading.
template <class... Ts>
inline constexpr bool enables_v = (is_operand_v<Ts> && ...) && (is_expression_v<Ts> || ...);

/// T without reference and const: operators take forwarding references.
template <class T>
using bare_t = std::remove_cv_t<std::remove_reference_t<T>>;

template <class... Ts>
using enable_t = std::enable_if_t<enables_v<bare_t<Ts>...>, int>;

/// T (as deduced for a forwarding reference) is a named expression: a
/// non-const lvalue of a tree type (not a Real, not a number), which is what
/// `auto e = a * b;` declares. A const lvalue is let through: that is how
/// function templates receive an expression of their caller's statement
/// (`template <class T> auto sq(const T& t) { return t * t; }`, Eigen's
/// scalar operations), which is alive and current; `const auto e = ...` is
/// therefore not caught.
template <class T>
inline constexpr bool named_node_v =
    std::is_lvalue_reference_v<T> && !std::is_const_v<std::remove_reference_t<T>> && is_node_v<bare_t<T>>;

/// An expression is a snapshot of the values and identifiers of its operands
/// taken when it is built. Kept in a variable (`auto e = a * b;`) and used
/// after an operand changed, it would give the old value and an identifier
/// that may belong to another variable by then: a wrong derivative. So an
/// expression can only be used in the statement that builds it: operators,
/// functions and Real's constructor and assignment reject named ones.
template <class... Ts>
constexpr void check_not_named() noexcept {
    static_assert(!(named_node_v<Ts> || ...),
                  "tapeflow: an expression kept in a variable (e.g. `auto e = a * b;`) cannot be "
                  "used: it is a snapshot of its operands, stale once one of them changes. Declare "
                  "the variable as a Real (`Real e = a * b;`), or write the expression where it "
                  "is used");
}

/// Scalar type of the first expression among Ts.
template <class T>
struct scalar_type_of {
    using type = typename T::scalar_type;
};
template <class... Ts>
struct scalar_of;
template <class T, class... Ts>
struct scalar_of<T, Ts...> {
    using type = typename std::conditional_t<is_expression_v<T>, scalar_type_of<T>, scalar_of<Ts...>>::type;
};
template <class... Ts>
using scalar_of_t = typename scalar_of<Ts...>::type;

template <class S, class T, bool = is_expression_v<T>>
struct has_scalar : std::true_type {};  // numbers convert to any scalar
template <class S, class T>
struct has_scalar<S, T, true> : std::is_same<typename T::scalar_type, S> {};
template <class S, class... Ts>
inline constexpr bool same_scalar_v = (has_scalar<S, Ts>::value && ...);

/// A copy of scalar s made component by component: for a Dual (the scalar
/// of basic_real<Dual>, second order) its value and tangents one by one,
/// which keeps an expression tree in registers where the Dual's own
/// 16-byte copy sends it through the stack (see nodes.hpp). A number as is.
template <class S>
TAPEFLOW_ALWAYS_INLINE constexpr S copy_of(const S& s) noexcept {
    if constexpr (std::is_arithmetic_v<S>)
        return s;
    else
        return S(s.value(), s.tangents());
}

/// Tag of the copy constructors that clone() forces inline (nodes.hpp).
struct copy_parts_t {};

/// Snapshot of an active variable inside an expression.
template <class S>
struct active_leaf {
    using scalar_type = S;
    static constexpr std::size_t leaf_count = 1;
    static constexpr std::size_t depth = 0;
    S v;
    identifier id;

    constexpr active_leaf(const S& v_, identifier id_) noexcept : v(v_), id(id_) {}
    TAPEFLOW_ALWAYS_INLINE constexpr active_leaf(copy_parts_t, const active_leaf& o) noexcept
        : v(copy_of(o.v)), id(o.id) {}
    constexpr active_leaf(const active_leaf& o) noexcept : active_leaf(copy_parts_t{}, o) {}

    constexpr S value() const noexcept { return v; }
    template <class Sink>
    TAPEFLOW_ALWAYS_INLINE void push(Sink& sink, S w) const noexcept {
        sink.add(id, w);  // also when passive: the recorder drops identifier 0
    }
};

/// The same with the tape tag, checked against the recording tape's serial
/// (debug_checks builds: catches variables of two tapes in one expression),
/// and the generation of the identifier when the leaf was made, checked
/// against the tape's: catches a variable that died and whose identifier
/// went to another variable before the statement using it was recorded (a
/// function returning an expression built on its own local Real,
/// docs/expressions.md "Pitfalls").
template <class S>
struct checked_active_leaf : active_leaf<S> {
    std::uint32_t tag;
    std::uint32_t generation;

    template <class Sink>
    TAPEFLOW_ALWAYS_INLINE void push(Sink& sink, S w) const noexcept {
        if (this->id != 0) {
            sink.check_tag(tag);
            sink.check_generation(this->id, generation);
        }
        sink.add(this->id, w);
    }
};

/// A number inside an expression: contributes its value, records nothing.
template <class S>
struct passive_leaf {
    using scalar_type = S;
    static constexpr std::size_t leaf_count = 0;
    static constexpr std::size_t depth = 0;
    S v;

    constexpr S value() const noexcept { return v; }
    template <class Sink>
    constexpr void push(Sink&, S) const noexcept {}
};

/// Captures operand `x` for storage in a node of scalar type S.
/// A node or a Dual is passed on by reference (the node that stores it
/// copies it once, with clone()).
template <class S, class T>
constexpr decltype(auto) capture(const T& x) noexcept {
    if constexpr (is_real<T>::value && debug_checks)
        return checked_active_leaf<S>{{x.value(), x.id()}, x.tape_tag(), x.identifier_generation()};
    else if constexpr (is_real<T>::value)
        return active_leaf<S>{x.value(), x.id()};
    else if constexpr (std::is_arithmetic_v<T>)
        return passive_leaf<S>{static_cast<S>(x)};
    else
        return (x);
}
template <class S, class T>
using captured_t = std::remove_cv_t<std::remove_reference_t<decltype(capture<S>(std::declval<const T&>()))>>;

/// A sub-expression too deep to nest further (max_expression_depth),
/// evaluated into a Real of its own: one record when the tape is recording.
/// Every copy of the trees built over it shares that Real, and the last copy
/// to go gives its identifier back (after the statement that reads it is
/// recorded: the trees of a statement live until its end). See split_operand
/// in nodes.hpp.
template <class S>
class temporary_leaf {
public:
    using scalar_type = S;
    static constexpr std::size_t leaf_count = 1;
    static constexpr std::size_t depth = 0;

    template <class E>
    explicit temporary_leaf(const E& e)
        : owner_(new owner{basic_real<S>(e), 1}), leaf_(capture<S>(owner_->real)) {}
    temporary_leaf(const temporary_leaf& o) noexcept : owner_(o.owner_), leaf_(o.leaf_) { ++owner_->users; }
    temporary_leaf& operator=(const temporary_leaf&) = delete;
    ~temporary_leaf() {
        if (--owner_->users == 0) delete owner_;
    }

    S value() const noexcept { return leaf_.value(); }
    template <class Sink>
    TAPEFLOW_ALWAYS_INLINE void push(Sink& sink, S w) const noexcept {
        leaf_.push(sink, w);
    }

private:
    struct owner {
        basic_real<S> real;
        std::size_t users;  // copies of this leaf alive
    };
    owner* owner_;
    captured_t<S, basic_real<S>> leaf_;
};

/// Value of an operand, whether expression or number.
template <class T>
constexpr auto value_of(const T& x) noexcept {
    if constexpr (is_expression_v<T>)
        return x.value();
    else
        return x;
}

}  // namespace detail
}  // namespace tapeflow
