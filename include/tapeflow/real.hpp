// tapeflow/real.hpp - the active type: a number whose derivatives are taped.
//
// basic_real<S> holds a value and, while it depends on registered inputs, an
// identifier on the thread's active tape (0 = passive, a constant):
//
//   +-----------+---------------+---------------+
//   | value (S) | identifier u32| tape tag u32  |   16 bytes for double
//   +-----------+---------------+---------------+
//
// Constructing or assigning it from an expression records ONE statement when
// the active tape is recording and some operand is active; otherwise it just
// computes the value. `+=` and `-=` of an active variable record an update:
// the operands of the right-hand side alone (the old value's partial is 1,
// tape/record.hpp), nothing for a number. Copying records a one-argument
// statement; moving transfers the identifier and records nothing. Destroying
// it returns the identifier to the tape for reuse.
//
// There is no implicit conversion to S (`double d = x;` does not compile):
// write x.value(), which is passive: derivatives do not flow through it.
//
// **Example**:
//   tape.start_recording();
//   tapeflow::Real x = 2.0, y = 3.0;
//   tape.register_input(x);
//   tape.register_input(y);
//   tapeflow::Real z = x * y + sin(x);   // one record: z <- (y + cos x, x), (x, y)
//   z += x * x;                           // one update record: z += (2x, x)
//   z += 1;                               // no record: z keeps its identifier
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "expr/binary_operators.hpp"
#include "expr/expression.hpp"
#include "tape/tape.hpp"

namespace tapeflow {

template <class Scalar>
class basic_custom_adjoint;

namespace detail {
struct real_access;
}

template <class Scalar>
class basic_real : public expression<basic_real<Scalar>> {
    static_assert(detail::is_tape_scalar_v<Scalar>,
                  "tapeflow::basic_real<S> needs a floating-point S (float, double, long double), or "
                  "a tapeflow::basic_dual of one for second derivatives (basic_real<Dual>)");

public:
    using scalar_type = Scalar;
    using tape_type = basic_tape<Scalar>;

    /// A passive zero.
    constexpr basic_real() noexcept : value_(0) {}
    /// A passive constant.
    template <class T, std::enable_if_t<detail::is_passive_v<T>, int> = 0>
    constexpr basic_real(T value) noexcept : value_(static_cast<Scalar>(value)) {}
    /// A passive constant of a Dual scalar type (second order, basic_real<Dual>):
    /// its tangents are kept, they are the direction of the Dual's derivative.
    template <class T, std::enable_if_t<std::is_same_v<T, Scalar> && !std::is_arithmetic_v<T>, int> = 0>
    constexpr basic_real(const T& value) noexcept : value_(value) {}
    /// Evaluates `e`; records one statement when the active tape is recording.
    /// `e` must be an rvalue: a named expression is rejected (see detail::check_not_named).
    template <class E, std::enable_if_t<detail::is_node_v<detail::bare_t<E>>, int> = 0>
    TAPEFLOW_ALWAYS_INLINE basic_real(E&& e) {
        detail::check_not_named<E>();
        assign(e);
    }
    /// Copies the value; records `this = other` when recording (new identifier).
    basic_real(const basic_real& other) { assign(detail::capture<Scalar>(other)); }
    /// Takes over the value and the identifier of `other`, which becomes passive.
    basic_real(basic_real&& other) noexcept
        : value_(other.value_), id_(other.id_), tag_(other.tag_) {
        other.id_ = 0;
    }

    TAPEFLOW_ALWAYS_INLINE ~basic_real() { drop_identifier(); }

    TAPEFLOW_ALWAYS_INLINE basic_real& operator=(const basic_real& other) {
        if (other.id_ == 0) {  // a passive value (Eigen's setZero, fill): what recording it would do
            drop_identifier();
            value_ = other.value_;
        } else if (this != &other) {
            assign(detail::capture<Scalar>(other));
        }
        return *this;
    }
    basic_real& operator=(basic_real&& other) noexcept {
        if (this != &other) {
            drop_identifier();
            value_ = other.value_;
            id_ = other.id_;
            tag_ = other.tag_;
            other.id_ = 0;
        }
        return *this;
    }
    template <class E, std::enable_if_t<detail::is_node_v<detail::bare_t<E>>, int> = 0>
    TAPEFLOW_ALWAYS_INLINE basic_real& operator=(E&& e) {
        detail::check_not_named<E>();
        assign(e);
        return *this;
    }
    /// Assigning a number makes the variable passive.
    template <class T, std::enable_if_t<detail::is_passive_v<T>, int> = 0>
    basic_real& operator=(T value) noexcept {
        drop_identifier();
        value_ = static_cast<Scalar>(value);
        return *this;
    }
    /// Assigning a Dual (basic_real<Dual>) makes the variable passive, too.
    template <class T, std::enable_if_t<std::is_same_v<T, Scalar> && !std::is_arithmetic_v<T>, int> = 0>
    basic_real& operator=(const T& value) noexcept {
        drop_identifier();
        value_ = value;
        return *this;
    }

    // Compound assignment with an expression or a number: one record each
    // (`s += x` of an active s of the recording tape: an update record of
    // x's operands alone, and none when x is passive; see update()).
    template <class T, std::enable_if_t<detail::is_operand_v<detail::bare_t<T>>, int> = 0>
    TAPEFLOW_ALWAYS_INLINE basic_real& operator+=(T&& x) {
        detail::check_not_named<T>();
        update<false>(x);
        return *this;
    }
    template <class T, std::enable_if_t<detail::is_operand_v<detail::bare_t<T>>, int> = 0>
    TAPEFLOW_ALWAYS_INLINE basic_real& operator-=(T&& x) {
        detail::check_not_named<T>();
        update<true>(x);
        return *this;
    }
    template <class T, std::enable_if_t<detail::is_operand_v<detail::bare_t<T>>, int> = 0>
    TAPEFLOW_ALWAYS_INLINE basic_real& operator*=(T&& x) { return *this = *this * std::forward<T>(x); }
    template <class T, std::enable_if_t<detail::is_operand_v<detail::bare_t<T>>, int> = 0>
    TAPEFLOW_ALWAYS_INLINE basic_real& operator/=(T&& x) { return *this = *this / std::forward<T>(x); }

    basic_real& operator++() { return *this += 1; }
    basic_real& operator--() { return *this -= 1; }
    basic_real operator++(int) {
        basic_real old(*this);
        *this += 1;
        return old;
    }
    basic_real operator--(int) {
        basic_real old(*this);
        *this -= 1;
        return old;
    }

    /// The primal value (passive: derivatives do not flow through it).
    constexpr Scalar value() const noexcept { return value_; }
    /// The identifier on the tape; 0 when passive.
    constexpr identifier id() const noexcept { return id_; }
    /// Whether the variable depends on registered inputs of a recording.
    constexpr bool is_active() const noexcept { return id_ != 0; }
    /// Serial number of the tape that owns the identifier (0: none).
    constexpr std::uint32_t tape_tag() const noexcept { return tag_; }
    /// (debug checks) How often its identifier was handed out by the active
    /// tape, when that tape owns it; detail::no_generation otherwise, and
    /// without debug checks. Expressions keep it to catch a variable whose
    /// identifier went to another variable before the statement using it
    /// was recorded.
    std::uint32_t identifier_generation() const noexcept {
        if (id_ != 0)
            if (const tape_type* tape = tape_type::active_if_any(); tape && tape->serial() == tag_)
                return tape->identifier_generation(id_);
        return detail::no_generation;
    }

private:
    template <class E>
    static constexpr void check_scalar() noexcept {
        static_assert(std::is_same_v<typename E::scalar_type, Scalar>,
                      "tapeflow: operands have different scalar types (e.g. basic_real<float> and "
                      "basic_real<double>); convert one of them explicitly");
    }

    template <class E>
    TAPEFLOW_ALWAYS_INLINE void assign(const E& e) {
        check_scalar<E>();
        const Scalar v = e.value();
        tape_type* tape = tape_type::active_if_any();
        if (tape && tape->is_recording())
            tape->record(id_, tag_, e);
        else
            drop_identifier();
        value_ = v;
    }

    // this += x (this -= x when Subtract), recording what this = this + x
    // would, without this's own slot: while this variable is active on the
    // recording tape, the old value's partial is exactly 1 and it keeps its
    // identifier, so only x's operands are recorded, in an update record
    // (tape/record.hpp), and a passive x records nothing; while it is
    // passive, the record is x's (negated for -=), as an assignment. A
    // variable of another tape, or no recording: as this = this + x. The
    // value is this + x in every case, the same bits.
    template <bool Subtract, class T>
    TAPEFLOW_ALWAYS_INLINE void update(const T& x) {
        tape_type* tape = tape_type::active_if_any();
        if (tape && tape->is_recording() && (id_ == 0 || tag_ == tape->serial())) {
            if constexpr (detail::is_passive_v<T>) {
                value_ = sum<Subtract>(value_, static_cast<Scalar>(x));
            } else {
                check_scalar<T>();
                decltype(auto) e = detail::capture<Scalar>(x);  // a leaf of a Real, a tree as it is
                const Scalar v = sum<Subtract>(value_, e.value());
                if (id_ != 0)
                    tape->template record_update<Subtract>(id_, e);
                else
                    tape->template record<Subtract>(id_, tag_, e);
                value_ = v;
            }
        } else if constexpr (Subtract) {
            *this = *this - x;
        } else {
            *this = *this + x;
        }
    }

    // a + b, or a - b when Subtract (as a Scalar: for a Dual scalar the
    // operators build an expression of Duals)
    template <bool Subtract>
    static TAPEFLOW_ALWAYS_INLINE Scalar sum(const Scalar& a, const Scalar& b) noexcept {
        if constexpr (Subtract)
            return a - b;
        else
            return a + b;
    }

    TAPEFLOW_ALWAYS_INLINE void drop_identifier() noexcept {
        if (id_ != 0) {
            if (tape_type* tape = tape_type::active_if_any())
                tape->release(id_, tag_);
            else
                tape_type::release_to_owner(id_, tag_);
            id_ = 0;
        }
    }

    friend tape_type;
    friend basic_custom_adjoint<Scalar>;
    friend detail::real_access;

    Scalar value_;
    identifier id_ = 0;
    std::uint32_t tag_ = 0;
};

namespace detail {

/// For entries that make Reals of identifiers their tape handed out (the
/// elements of a matrix variable, tapeflow/eigen/matrix_variable.hpp).
struct real_access {
    /// x (passive until now) holds `id` of the tape whose serial is `tag`.
    template <class S>
    static void hold(basic_real<S>& x, identifier id, std::uint32_t tag) noexcept {
        x.drop_identifier();
        x.id_ = id;
        x.tag_ = tag;
    }
};

}  // namespace detail

}  // namespace tapeflow
