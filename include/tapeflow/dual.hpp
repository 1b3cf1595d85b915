// tapeflow/dual.hpp - forward (tangent) mode: a number that carries its
// directional derivatives along, no tape.
//
// basic_dual<S, N> holds a value and N tangent lanes (N directions at once,
// "vector forward mode"; N = 1 is plain forward mode):
//
//   +-----------+---------------+-----+-----------------+
//   | value (S) | tangent[0] (S)| ... | tangent[N-1] (S)|   8 (N + 1) bytes for double
//   +-----------+---------------+-----+-----------------+
//
// It uses the expression trees of Real (expr/): `a * sin(b) + 2.0` builds the
// same nodes, with the operands captured by value, and a Dual captured in a
// tree is a leaf whose push(sink, w) adds w * tangent to the sink. Assigning
// a tree to a Dual computes
//
//   value   = e.value()
//   tangent = sum over the leaves l of (d e / d l) * tangent(l)   (lane by lane)
//
// by one walk of the tree with the chain rule, the walk that Real uses to
// collect its record's partials. So Dual has every operator and function of
// Real, with the same values where a derivative does not exist
// (docs/expressions.md), and nothing to keep in step.
//
// A tree holds Real operands or Dual operands, not both: mixing the modes, or
// Duals of two lane counts, is a compile error (expr/mode.hpp).
//
// **Example**:
//   tapeflow::Dual x = 2.0, y = 3.0;
//   x.set_tangent(1.0);                  // direction (1, 0): d/dx
//   tapeflow::Dual z = x * y + sin(x);
//   z.value();                           // 6 + sin 2
//   z.tangent();                         // y + cos x = 3 + cos 2
#pragma once

#include <array>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "error.hpp"
#include "expr/binary_functions.hpp"
#include "expr/binary_operators.hpp"
#include "expr/comparisons.hpp"
#include "expr/expression.hpp"
#include "expr/mode.hpp"
#include "expr/unary_functions.hpp"
#include "numeric_limits.hpp"

namespace tapeflow {

template <class S, std::size_t N = 1>
class basic_dual;

namespace detail {

template <class S, std::size_t N>
struct is_variable<basic_dual<S, N>> : std::true_type {};
template <class S, std::size_t N>
struct mode_of<basic_dual<S, N>> { using type = forward_mode<N>; };

template <class T>
inline constexpr bool always_false_v = false;

/// Where the walk of a tree assigned to a Dual adds up the N tangent lanes.
template <class S, std::size_t N>
struct tangent_sink {
    // Starts at -0, not +0: -0 + x == x for every x, so the compiler drops
    // the first addition (+0 + x is not x when x is -0, and stays).
    std::array<S, N> t;
    // Forced inline: in long second-order functions GCC had called it out of
    // line at every statement; forced, bundle_adjustment's second-order
    // recording runs 13% fewer instructions (docs/modes.md).
    TAPEFLOW_ALWAYS_INLINE tangent_sink() noexcept {
        for (S& x : t) x = -S(0);
    }

    TAPEFLOW_ALWAYS_INLINE void add_tangent(S w, const std::array<S, N>& leaf) noexcept {
        for (std::size_t i = 0; i < N; ++i) t[i] += w * leaf[i];
    }
    /// What a Real's leaf calls. Unreachable (check_same_mode refuses such a
    /// tree first) except through a tree built by hand; say why it fails.
    template <class T = void>
    void add(identifier, S) noexcept {
        static_assert(always_false_v<T>,
                      "tapeflow: an expression with Real operands cannot be assigned to a Dual");
    }
};

/// tangent_sink under a node whose partial can be inf or NaN where its value
/// is finite (sqrt at 0; expr/nodes.hpp, nonfinite_partials): adds w * leaf
/// only for the lanes whose leaf tangent is not 0, where inf * 0 would have
/// made a NaN and the exact derivative adds nothing (as the reverse sweep's
/// add_lanes). A select, not a branch; used only there, because it costs a
/// compare per lane and a branch stopped GCC from vectorizing loops of Dual
/// statements (heat's derivative 2.5x slower, masking every leaf 1.5-2.7x).
template <class S, std::size_t N>
struct masked_tangent_sink {
    tangent_sink<S, N>& sink;
    TAPEFLOW_ALWAYS_INLINE void add_tangent(S w, const std::array<S, N>& leaf) noexcept {
        for (std::size_t i = 0; i < N; ++i) {
            const S p = w * leaf[i];
            sink.t[i] += leaf[i] != S(0) ? p : S(0);
        }
    }
    template <class T = void>
    void add(identifier id, S w) noexcept {
        sink.template add<T>(id, w);
    }
};

template <class T>
struct is_tangent_sink : std::false_type {};
template <class S, std::size_t N>
struct is_tangent_sink<tangent_sink<S, N>> : std::true_type {};
template <class S, std::size_t N>
struct is_tangent_sink<masked_tangent_sink<S, N>> : std::true_type {};

template <class S, std::size_t N>
struct masking_sink<tangent_sink<S, N>> {
    static TAPEFLOW_ALWAYS_INLINE masked_tangent_sink<S, N> of(tangent_sink<S, N>& sink) noexcept { return {sink}; }
};

/// The members of basic_dual. With N > 1 copied member by member, lane by
/// lane, as the expression nodes are (expr/nodes.hpp): with the implicit
/// copy GCC moves a Dual captured in a tree, or pushed into a vector,
/// through the stack with wide loads over narrower stores (stalled store
/// forwarding): wide_jacobian with 4 lanes 0.8 -> 0.56 ms. With N = 1 the
/// implicit copy (one 16-byte move) is the faster (least_squares 1.0x the
/// primal against 1.7x member-wise).
template <class S, std::size_t N, bool = (N > 1)>
struct dual_members {
    S value_;
    std::array<S, N> tangent_;

    constexpr dual_members(S v, const std::array<S, N>& t) noexcept : value_(v), tangent_(t) {}
};
template <class S, std::size_t N>
struct dual_members<S, N, true> {
    S value_;
    std::array<S, N> tangent_;

    constexpr dual_members(S v, const std::array<S, N>& t) noexcept : value_(v), tangent_(t) {}
    constexpr dual_members(const dual_members& o) noexcept : value_(o.value_) {
        for (std::size_t i = 0; i < N; ++i) tangent_[i] = o.tangent_[i];
    }
    constexpr dual_members& operator=(const dual_members& o) noexcept {
        value_ = o.value_;
        for (std::size_t i = 0; i < N; ++i) tangent_[i] = o.tangent_[i];
        return *this;
    }
};

}  // namespace detail

template <class S, std::size_t N>
class basic_dual : public expression<basic_dual<S, N>>, private detail::dual_members<S, N> {
    using members = detail::dual_members<S, N>;
    using members::tangent_;
    using members::value_;

    static_assert(N >= 1, "tapeflow::basic_dual<S, N> needs at least one tangent lane (N >= 1)");
    static_assert(!std::is_integral_v<S>,
                  "tapeflow::basic_dual<S, N> needs a floating-point S (float, double, long double)");

public:
    using scalar_type = S;
    using tangent_type = std::array<S, N>;
    /// Number of tangent lanes (directions carried at once).
    static constexpr std::size_t lanes = N;
    // As a leaf of a tree (see expression.hpp): one active operand.
    static constexpr std::size_t leaf_count = 1;
    static constexpr std::size_t depth = 0;

    /// A passive zero (value 0, tangents 0).
    constexpr basic_dual() noexcept : members(S(0), tangent_type{}) {}
    /// A constant: tangents 0.
    template <class T, std::enable_if_t<detail::is_passive_v<T>, int> = 0>
    constexpr basic_dual(T value) noexcept : members(static_cast<S>(value), tangent_type{}) {}
    /// A value with the tangent of lane 0 (N = 1: the tangent).
    constexpr basic_dual(S value, S tangent) noexcept : members(value, tangent_type{}) { tangent_[0] = tangent; }
    /// A value with all N tangents.
    constexpr basic_dual(S value, const tangent_type& tangents) noexcept : members(value, tangents) {}
    /// Evaluates `e` with its tangents. `e` must be an rvalue: a named
    /// expression is rejected (see detail::check_not_named).
    template <class E, std::enable_if_t<detail::is_node_v<detail::bare_t<E>>, int> = 0>
    TAPEFLOW_ALWAYS_INLINE basic_dual(E&& e) noexcept : members(S(0), tangent_type{}) {
        detail::check_not_named<E>();
        assign(e);
    }

    template <class E, std::enable_if_t<detail::is_node_v<detail::bare_t<E>>, int> = 0>
    TAPEFLOW_ALWAYS_INLINE basic_dual& operator=(E&& e) noexcept {
        detail::check_not_named<E>();
        assign(e);
        return *this;
    }
    /// Assigning a number makes the variable a constant (tangents 0).
    template <class T, std::enable_if_t<detail::is_passive_v<T>, int> = 0>
    constexpr basic_dual& operator=(T value) noexcept {
        value_ = static_cast<S>(value);
        tangent_ = tangent_type{};
        return *this;
    }

    // Compound assignment puts *this LAST in the tree (x + *this, not *this +
    // x): the walk then adds this->tangents last, so in a loop `s += a * b`
    // the tangent depends on the previous iteration through one addition,
    // as the value does, not through the whole sum (lstm: 4.2x -> see
    // docs/modes.md). The values are the same: a + b == b + a and
    // a - b == (-b) + a exactly in IEEE arithmetic.
    template <class T, std::enable_if_t<detail::is_operand_v<detail::bare_t<T>>, int> = 0>
    basic_dual& operator+=(T&& x) noexcept { return *this = std::forward<T>(x) + *this; }
    template <class T, std::enable_if_t<detail::is_operand_v<detail::bare_t<T>>, int> = 0>
    basic_dual& operator-=(T&& x) noexcept {
        if constexpr (detail::is_passive_v<detail::bare_t<T>>)
            return *this = *this - x;  // a number: -x would wrap for unsigned types
        else
            return *this = -std::forward<T>(x) + *this;
    }
    template <class T, std::enable_if_t<detail::is_operand_v<detail::bare_t<T>>, int> = 0>
    basic_dual& operator*=(T&& x) noexcept { return *this = std::forward<T>(x) * *this; }
    template <class T, std::enable_if_t<detail::is_operand_v<detail::bare_t<T>>, int> = 0>
    basic_dual& operator/=(T&& x) noexcept { return *this = *this / std::forward<T>(x); }

    basic_dual& operator++() noexcept {
        value_ += 1;
        return *this;
    }
    basic_dual& operator--() noexcept {
        value_ -= 1;
        return *this;
    }
    basic_dual operator++(int) noexcept {
        basic_dual old(*this);
        value_ += 1;
        return old;
    }
    basic_dual operator--(int) noexcept {
        basic_dual old(*this);
        value_ -= 1;
        return old;
    }

    /// The primal value (passive: derivatives do not flow through it).
    constexpr S value() const noexcept { return value_; }
    /// The tangent of `lane` (default 0): the derivative along direction `lane`.
    /// \requires lane < N (checked: \throws usage_error)
    constexpr S tangent(std::size_t lane = 0) const {
        check_lane(lane);
        return tangent_[lane];
    }
    /// All N tangents.
    constexpr const tangent_type& tangents() const noexcept { return tangent_; }
    /// Sets the tangent of `lane` (seeding a direction). \throws usage_error if lane >= N
    constexpr void set_tangent(S t, std::size_t lane = 0) {
        check_lane(lane);
        tangent_[lane] = t;
    }
    /// Sets all N tangents.
    constexpr void set_tangents(const tangent_type& t) noexcept { tangent_ = t; }

    /// As a leaf of a tree: adds w * tangent, lane by lane, to the sink.
    template <class Sink>
    TAPEFLOW_ALWAYS_INLINE void push(Sink& sink, S w) const noexcept {
        static_assert(detail::is_tangent_sink<Sink>::value,
                      "tapeflow: an expression with Dual operands cannot be assigned to a Real (or "
                      "recorded on a tape): Dual is forward mode, Real reverse mode. Use one active "
                      "type per computation; pass a value across with .value()");
        if constexpr (detail::is_tangent_sink<Sink>::value) sink.add_tangent(w, tangent_);
    }

private:
    template <class E>
    TAPEFLOW_ALWAYS_INLINE void assign(const E& e) noexcept {
        static_assert(std::is_same_v<typename E::scalar_type, S>,
                      "tapeflow: operands have different scalar types (e.g. basic_dual<float> and "
                      "basic_dual<double>); convert one of them explicitly");
        using mode = detail::mode_of_t<E>;
        static_assert(std::is_same_v<mode, detail::forward_mode<N>> ||
                          std::is_same_v<mode, detail::passive_mode>,
                      "tapeflow: an expression assigned to a basic_dual<S, N> must have Dual operands "
                      "with the same N (a Real is reverse mode; Duals with other lane counts do not "
                      "mix); pass a value across with .value()");
        // The tree holds copies of its operands, so `x = x * y` reads the old x.
        if constexpr (E::leaf_count == 0) {
            value_ = e.value();
            tangent_ = tangent_type{};
        } else {
            detail::tangent_sink<S, N> sink;
            e.push(sink, S(1));
            value_ = e.value();
            tangent_ = sink.t;
        }
    }

    constexpr void check_lane(std::size_t lane) const {
        if (lane >= N) no_such_lane(lane);
    }
    [[noreturn]] TAPEFLOW_COLD static void no_such_lane(std::size_t lane) {
        throw usage_error("basic_dual: tangent lane " + std::to_string(lane) + " does not exist: " +
                          "this type has " + std::to_string(N) + " lane(s), 0 to " + std::to_string(N - 1));
    }

};

/// Forward mode in double, one direction.
using Dual = basic_dual<double>;
/// Vector forward mode in double, N directions at once.
template <std::size_t N>
using DualVec = basic_dual<double, N>;

}  // namespace tapeflow

namespace std {

template <class S, std::size_t N>
class numeric_limits<tapeflow::basic_dual<S, N>>
    : public tapeflow::detail::active_numeric_limits<tapeflow::basic_dual<S, N>, S> {};

}  // namespace std
