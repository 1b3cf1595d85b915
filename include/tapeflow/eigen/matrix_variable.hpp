// tapeflow/eigen/matrix_variable.hpp - a whole matrix as ONE variable: its
// elements hold consecutive identifiers, so its adjoints are one slice of the
// adjoint vector.
//
// A matrix of Real is n^2 variables: registering it, recording a product of
// two of them as one entry (products.hpp) and reading its adjoints each walk
// n^2 identifiers one by one, which at n = 128 costs more than three double
// products (docs/eigen.md). A matrix_variable holds its values as an Eigen
// matrix of doubles and a range of identifiers:
//
//   adjoint:  | ... | A(0,0) A(1,0) ... A(m-1,n-1) | ... | C(0,0) ... | ...
//                     ^ first_identifier()               (column-major)
//
// so registering and reading it are one copy, and the reverse rule of a
// product C = A B is two matrix products on slices of the adjoint vector
// (A_bar += C_bar B^T, B_bar += A^T C_bar), with no gather or scatter.
//
//   tapeflow::matrix_variable A(A0), B(B0);   // values (Eigen::MatrixXd)
//   tape.start_recording();
//   tapeflow::register_input(tape, A);       // one input range each
//   tapeflow::register_input(tape, B);
//   tapeflow::matrix_variable C = A * B;     // one entry
//   tapeflow::Real f = tapeflow::dot(C, R);  // R an Eigen::MatrixXd: one entry
//   tape.stop_recording();
//   tape.set_adjoint(f, 1.0);
//   tape.sweep();
//   Eigen::MatrixXd A_bar = tapeflow::adjoints(tape, A);
//
// Operations, each one entry on the recording tape when an operand is active
// (otherwise the values only, and the result is a constant):
//   A * B, A + B, A - B, -A, s * A, A * s   (B may be an Eigen double matrix,
//                                            s a number)
//   transpose(A)
//   dot(A, B) (sum of A .* B), sum(A), squared_norm(A)     -> Real
//   to_reals(A)                   -> Eigen matrix of Real (elements as Reals)
//   matrix_variable(M)            from an Eigen matrix of Real (explicit)
// Anything else (elementwise functions, solves): to_reals, then the Eigen
// integration of Real matrices, and back.
//
// A matrix variable does not change: a copy is the same variable (it shares
// the values and the identifiers, which go back to the tape when the last
// copy dies), and assigning gives it new values and identifiers
// (`C = C * A` is a new variable called C). Scalars: float, double, long
// double (not second order). Not in a parallel region (its threads take
// single identifiers).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "../error.hpp"
#include "../real.hpp"
#include "../tape/external.hpp"
#include "num_traits.hpp"

namespace tapeflow {

template <class S>
class basic_matrix_variable;
/// A matrix variable of doubles.
using matrix_variable = basic_matrix_variable<double>;

namespace detail {

template <class S>
using dense_matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;

template <class S>
struct matrix_operations;

// The adjoints a reverse rule sees, as matrices over slices of the adjoint
// vector: operator()(first, rows, cols) is the column-major matrix of the
// adjoints of identifiers first .. first + rows * cols - 1, at(id) one
// adjoint. A scalar sweep's are contiguous; a vector sweep calls the rule
// once per lane with that lane's, every `lanes`-th element.
template <class S>
struct contiguous_slices {
    S* adjoint;
    Eigen::Map<dense_matrix<S>> operator()(identifier first, Eigen::Index rows, Eigen::Index cols) const {
        return {adjoint + first, rows, cols};
    }
    S& at(identifier id) const { return adjoint[id]; }
};
template <class S>
struct strided_slices {
    S* adjoint;  // lane l's adjoint of identifier 0
    std::size_t lanes;
    using map = Eigen::Map<dense_matrix<S>, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;
    map operator()(identifier first, Eigen::Index rows, Eigen::Index cols) const {
        const auto step = Eigen::Index(lanes);
        return map(adjoint + std::size_t(first) * lanes, rows, cols,
                   Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(rows * step, step));
    }
    S& at(identifier id) const { return adjoint[std::size_t(id) * lanes]; }
};

// The entry of one matrix operation: its outputs are the `count`
// identifiers from `first`; `rule(slices, first)` adds what their adjoints
// give to the adjoints of the inputs, then the entry zeroes the outputs'
// (outputs are new identifiers, never an input's). Not called when every
// output adjoint is 0.
template <class S, class Rule>
class matrix_entry final : public external_entry<S> {
public:
    matrix_entry(identifier first, std::size_t count, Rule rule, std::size_t bytes)
        : first_(first), count_(count), rule_(std::move(rule)), bytes_(bytes) {}

    void reverse(S* adjoint, std::vector<S>&) override {
        S* const out = adjoint + first_;
        if (std::all_of(out, out + count_, [](const S& a) { return detail::is_zero(a); })) return;
        rule_(contiguous_slices<S>{adjoint}, first_);
        std::fill(out, out + count_, S(0));
    }
    void reverse_lanes(S* adjoint, std::size_t lanes, std::vector<S>&) override {
        for (std::size_t l = 0; l < lanes; ++l) {
            const strided_slices<S> slices{adjoint + l, lanes};
            bool any = false;
            for (std::size_t k = 0; k < count_ && !any; ++k) any = !detail::is_zero(slices.at(identifier(first_ + k)));
            if (!any) continue;
            rule_(slices, first_);
            for (std::size_t k = 0; k < count_; ++k) slices.at(identifier(first_ + k)) = S(0);
        }
    }
    bool assigned_identifiers(std::vector<identifier>& out) const override {
        for (std::size_t k = 0; k < count_; ++k) out.push_back(identifier(first_ + k));
        return true;
    }
    std::size_t bytes() const noexcept override { return bytes_; }

private:
    identifier first_;
    std::size_t count_;
    Rule rule_;
    std::size_t bytes_;
};

// The entry of to_reals: the Reals' identifiers are `outputs` (in the
// matrix's order), the matrix's from `input`.
template <class S>
class element_entry final : public external_entry<S> {
public:
    element_entry(identifier input, pooled_buffer<identifier> outputs)
        : input_(input), outputs_(std::move(outputs)) {}

    void reverse(S* adjoint, std::vector<S>&) override { add(contiguous_slices<S>{adjoint}); }
    void reverse_lanes(S* adjoint, std::size_t lanes, std::vector<S>&) override {
        for (std::size_t l = 0; l < lanes; ++l) add(strided_slices<S>{adjoint + l, lanes});
    }
    bool assigned_identifiers(std::vector<identifier>& out) const override {
        out.insert(out.end(), outputs_->begin(), outputs_->end());
        return true;
    }
    std::size_t bytes() const noexcept override { return sizeof(*this) + outputs_->size() * sizeof(identifier); }

private:
    template <class Slices>
    void add(const Slices& slices) {
        const std::vector<identifier>& out = *outputs_;
        for (std::size_t k = 0; k < out.size(); ++k) {
            S& y_bar = slices.at(out[k]);
            slices.at(identifier(input_ + k)) += y_bar;
            y_bar = S(0);
        }
    }

    identifier input_;
    pooled_buffer<identifier> outputs_;
};

}  // namespace detail

template <class S>
class basic_matrix_variable {
    static_assert(std::is_floating_point_v<S>,
                  "tapeflow::basic_matrix_variable<S> needs a floating-point S (float, double, long double)");

public:
    using scalar_type = S;
    using matrix_type = detail::dense_matrix<S>;
    using tape_type = basic_tape<S>;
    using real_type = basic_real<S>;

    /// A 0 x 0 constant.
    basic_matrix_variable() noexcept : values_(empty_values()) {}
    basic_matrix_variable(const basic_matrix_variable&) = default;
    basic_matrix_variable& operator=(const basic_matrix_variable&) = default;
    /// Takes over `other`'s values and identifiers; `other` is a 0 x 0 constant.
    basic_matrix_variable(basic_matrix_variable&& other) noexcept
        : values_(std::exchange(other.values_, empty_values())), ids_(std::move(other.ids_)) {}
    basic_matrix_variable& operator=(basic_matrix_variable&& other) noexcept {
        if (this != &other) {
            values_ = std::exchange(other.values_, empty_values());
            ids_ = std::move(other.ids_);
        }
        return *this;
    }
    /// A constant (passive) matrix of these values: an Eigen matrix or
    /// expression of S. Also what a double matrix operand becomes (A * D).
    template <class Derived, std::enable_if_t<std::is_same_v<typename Derived::Scalar, S>, int> = 0>
    basic_matrix_variable(const Eigen::MatrixBase<Derived>& values)
        : values_(std::make_shared<const matrix_type>(values)) {}
    /// The elements of a matrix of Real, as ONE entry on the recording tape
    /// when any is active (their identifiers are kept in it).
    template <class Derived, std::enable_if_t<std::is_same_v<typename Derived::Scalar, real_type>, int> = 0>
    explicit basic_matrix_variable(const Eigen::MatrixBase<Derived>& reals);

    Eigen::Index rows() const noexcept { return values_->rows(); }
    Eigen::Index cols() const noexcept { return values_->cols(); }
    Eigen::Index size() const noexcept { return values_->size(); }
    /// The primal values.
    const matrix_type& values() const noexcept { return *values_; }
    /// Whether it depends on registered inputs of a recording.
    bool is_active() const noexcept { return ids_ != nullptr; }
    /// Identifier of element (0, 0); element (i, j) has first_identifier() +
    /// i + j * rows(). 0 when passive.
    identifier first_identifier() const noexcept { return ids_ ? ids_->first : 0; }
    /// Serial number of the tape that owns the identifiers (0: none).
    std::uint32_t tape_tag() const noexcept { return ids_ ? ids_->tag : 0; }

private:
    // The identifiers, given back when the last copy of the variable dies.
    struct identifier_range {
        identifier first;
        std::size_t count;
        std::uint32_t tag;
        identifier_range(identifier f, std::size_t c, std::uint32_t t) noexcept : first(f), count(c), tag(t) {}
        identifier_range(const identifier_range&) = delete;
        identifier_range& operator=(const identifier_range&) = delete;
        ~identifier_range() {
            if (tape_type* active = tape_type::active_if_any())
                active->release_range(first, count, tag);
            else
                tape_type::release_range_to_owner(first, count, tag);
        }
    };

    // what a 0 x 0 constant holds (shared: no allocation per empty variable)
    static const std::shared_ptr<const matrix_type>& empty_values() noexcept {
        static const std::shared_ptr<const matrix_type> empty = std::make_shared<const matrix_type>();
        return empty;
    }

    basic_matrix_variable(std::shared_ptr<const matrix_type> values, std::shared_ptr<identifier_range> ids)
        : values_(std::move(values)), ids_(std::move(ids)) {}

    template <class T>
    friend struct detail::matrix_operations;

    std::shared_ptr<const matrix_type> values_;
    std::shared_ptr<identifier_range> ids_;  // null when passive
};

namespace detail {

// What the operations below share: which tape records (recording_tape), and
// how a result's identifiers are taken and its entry pushed (result,
// real_result).
template <class S>
struct matrix_operations {
    using variable = basic_matrix_variable<S>;
    using matrix_type = dense_matrix<S>;
    using tape_type = basic_tape<S>;
    using range = typename variable::identifier_range;

    static const std::shared_ptr<const matrix_type>& values_of(const variable& a) noexcept { return a.values_; }
    static variable make(std::shared_ptr<const matrix_type> values, std::shared_ptr<range> ids) {
        return variable(std::move(values), std::move(ids));
    }

    // The tape to record on: the active one when it is recording and an
    // operand is active (nullptr otherwise: the result is a constant).
    // \throws usage_error for an operand of another tape.
    static tape_type* recording_tape(const char* what, std::initializer_list<const variable*> operands) {
        bool active = false;
        for (const variable* a : operands) active |= a->is_active();
        if (!active) return nullptr;
        tape_type* on = tape_type::active_if_any();
        if (!on || !on->is_recording()) return nullptr;
        for (const variable* a : operands)
            if (a->is_active() && a->tape_tag() != on->serial())
                throw usage_error(std::string(what) +
                                  ": a matrix variable of another tape (or of a tape that no longer exists); "
                                  "record with the tape that registered it (a checkpointed step that uses "
                                  "one from outside: put its elements into the step's state as Reals, "
                                  "elements the step leaves unchanged, or use its values() if no derivative "
                                  "should flow through it; docs/checkpointing.md)");
        return on;
    }

    // `values` as a variable of new identifiers of the tape `on` (its
    // outputs), with entry rule(slices, first output) on that tape; `bytes`:
    // what the rule captured. A constant when `on` is nullptr (nothing recorded).
    // If it throws, the identifiers are back.
    template <class Rule>
    static variable result(tape_type* on, matrix_type&& values, Rule rule, std::size_t bytes) {
        auto v = std::make_shared<const matrix_type>(std::move(values));
        if (!on || v->size() == 0) return variable(std::move(v), nullptr);
        const auto count = std::size_t(v->size());
        auto ids = std::make_shared<range>(on->acquire_identifier_range(count), count, on->serial());
        push(*on, ids->first, count, std::move(rule), bytes);
        return variable(std::move(v), std::move(ids));
    }
    // the same for a Real result (dot, sum, squared_norm): one output
    template <class Rule>
    static basic_real<S> real_result(tape_type* on, S value, Rule rule, std::size_t bytes) {
        basic_real<S> y(value);
        if (on) {
            real_access::hold(y, on->acquire_identifier(), on->serial());  // y gives it back on a throw
            push(*on, y.id(), 1, std::move(rule), bytes);
        }
        return y;
    }
    template <class Rule>
    static void push(tape_type& on, identifier first, std::size_t count, Rule&& rule, std::size_t bytes) {
        using entry = matrix_entry<S, std::decay_t<Rule>>;
        on.push_external(std::make_unique<entry>(first, count, std::forward<Rule>(rule), bytes + sizeof(entry)));
    }

    static std::size_t bytes_of(const std::shared_ptr<const matrix_type>& m) noexcept {
        return m ? std::size_t(m->size()) * sizeof(S) : 0;
    }
    static std::string shape(const variable& a) { return std::to_string(a.rows()) + " x " + std::to_string(a.cols()); }
    static void check_same_shape(const char* what, const variable& a, const variable& b) {
        if (a.rows() != b.rows() || a.cols() != b.cols())
            throw usage_error(std::string("tapeflow::") + what + " of matrix variables of different shapes (" +
                              shape(a) + " and " + shape(b) + ")");
    }

    // ---- the operations (the free functions below call these) --------------

    // C = A B: A_bar += C_bar B^T, B_bar += A^T C_bar
    static variable product(const variable& a, const variable& b) {
        if (a.cols() != b.rows())
            throw usage_error("tapeflow::matrix_variable product of a " + shape(a) + " and a " + shape(b) +
                              " matrix: the columns of the first must be as many as the rows of the second");
        tape_type* on = recording_tape("tapeflow::matrix_variable product", {&a, &b});
        const identifier ia = a.first_identifier(), ib = b.first_identifier();
        const std::shared_ptr<const matrix_type> av = ib ? a.values_ : nullptr, bv = ia ? b.values_ : nullptr;
        const Eigen::Index m = a.rows(), k = a.cols(), n = b.cols();
        matrix_type c(m, n);
        c.noalias() = a.values() * b.values();
        return result(
            on, std::move(c),
            [av, bv, ia, ib, m, k, n](const auto& slices, identifier ic) {
                const auto c_bar = slices(ic, m, n);
                if (ia) {
                    auto a_bar = slices(ia, m, k);
                    a_bar.noalias() += c_bar * bv->transpose();
                }
                if (ib) {
                    auto b_bar = slices(ib, k, n);
                    b_bar.noalias() += av->transpose() * c_bar;
                }
            },
            bytes_of(av) + bytes_of(bv));
    }

    // C = alpha A + beta B (B may be empty: C = alpha A)
    static variable combination(const char* what, S alpha, const variable& a, S beta, const variable* b) {
        if (b) check_same_shape(what, a, *b);
        tape_type* on = b ? recording_tape(what, {&a, b}) : recording_tape(what, {&a});
        const identifier ia = a.first_identifier(), ib = b ? b->first_identifier() : 0;
        const Eigen::Index m = a.rows(), n = a.cols();
        matrix_type c = b ? matrix_type(alpha * a.values() + beta * b->values()) : matrix_type(alpha * a.values());
        return result(
            on, std::move(c),
            [alpha, beta, ia, ib, m, n](const auto& slices, identifier ic) {
                const auto c_bar = slices(ic, m, n);
                if (ia) {
                    auto a_bar = slices(ia, m, n);
                    a_bar += alpha * c_bar;
                }
                if (ib) {
                    auto b_bar = slices(ib, m, n);
                    b_bar += beta * c_bar;
                }
            },
            0);
    }

    static variable transpose(const variable& a) {
        tape_type* on = recording_tape("tapeflow::transpose", {&a});
        const identifier ia = a.first_identifier();
        const Eigen::Index m = a.rows(), n = a.cols();
        return result(
            on, matrix_type(a.values().transpose()),
            [ia, m, n](const auto& slices, identifier ic) {
                auto a_bar = slices(ia, m, n);
                a_bar += slices(ic, n, m).transpose();
            },
            0);
    }

    // sum of A .* B: A_bar += y_bar B, B_bar += y_bar A
    static basic_real<S> dot(const variable& a, const variable& b) {
        check_same_shape("dot", a, b);
        tape_type* on = recording_tape("tapeflow::dot", {&a, &b});
        const identifier ia = a.first_identifier(), ib = b.first_identifier();
        const std::shared_ptr<const matrix_type> av = ib ? a.values_ : nullptr, bv = ia ? b.values_ : nullptr;
        const Eigen::Index m = a.rows(), n = a.cols();
        const S y = a.size() == 0 ? S(0) : (a.values().array() * b.values().array()).sum();
        return real_result(
            on, y,
            [av, bv, ia, ib, m, n](const auto& slices, identifier iy) {
                const S y_bar = slices.at(iy);
                if (ia) {
                    auto a_bar = slices(ia, m, n);
                    a_bar += y_bar * *bv;
                }
                if (ib) {
                    auto b_bar = slices(ib, m, n);
                    b_bar += y_bar * *av;
                }
            },
            bytes_of(av) + bytes_of(bv));
    }

    static basic_real<S> sum(const variable& a) {
        tape_type* on = recording_tape("tapeflow::sum", {&a});
        const identifier ia = a.first_identifier();
        const Eigen::Index m = a.rows(), n = a.cols();
        return real_result(
            on, a.size() == 0 ? S(0) : a.values().sum(),
            [ia, m, n](const auto& slices, identifier iy) {
                auto a_bar = slices(ia, m, n);
                a_bar.array() += slices.at(iy);
            },
            0);
    }

    static basic_real<S> squared_norm(const variable& a) {
        tape_type* on = recording_tape("tapeflow::squared_norm", {&a});
        const identifier ia = a.first_identifier();
        const Eigen::Index m = a.rows(), n = a.cols();
        std::shared_ptr<const matrix_type> av = on ? a.values_ : nullptr;
        return real_result(
            on, a.values().squaredNorm(),
            [av, ia, m, n](const auto& slices, identifier iy) {
                auto a_bar = slices(ia, m, n);
                a_bar += (S(2) * slices.at(iy)) * *av;
            },
            bytes_of(av));
    }

    // the elements as Reals (single identifiers: a Real gives its own back
    // alone)
    static dense_matrix<basic_real<S>> to_reals(const variable& a) {
        tape_type* on = recording_tape("tapeflow::to_reals", {&a});
        dense_matrix<basic_real<S>> r(a.rows(), a.cols());
        for (Eigen::Index k = 0; k < a.size(); ++k) r.data()[k] = basic_real<S>(a.values().data()[k]);
        if (!on || a.size() == 0) return r;
        pooled_buffer<identifier> ids(on->identifier_buffers(), std::size_t(a.size()));
        ids->resize(std::size_t(a.size()));
        on->acquire_identifiers(ids->size(), ids->data());
        const std::uint32_t tag = on->serial();
        for (std::size_t k = 0; k < ids->size(); ++k) real_access::hold(r.data()[k], (*ids)[k], tag);
        on->push_external(std::make_unique<element_entry<S>>(a.first_identifier(), std::move(ids)));
        return r;
    }

    // a variable of the elements of a Real matrix: one entry whose inputs
    // are their identifiers (0 for constants)
    template <class Derived>
    static variable from_reals(const Eigen::MatrixBase<Derived>& reals) {
        // An expression (e + e, a lazy product, array functions) gives each
        // coefficient as a temporary Real, which dies, identifier and all,
        // before the next is made: every element would name the one recycled
        // identifier (a red-team run: [0 0; 0 8] for [2 2; 2 2]). Evaluated
        // first, each element is a Real of its own for as long as it is read.
        if constexpr (!(int(Derived::Flags) & Eigen::LvalueBit))
            return from_reals(dense_matrix<basic_real<S>>(reals));
        const Eigen::Index m = reals.rows(), n = reals.cols();
        matrix_type v(m, n);
        std::vector<identifier> ids(std::size_t(m * n));
        bool active = false;
        tape_type* on = tape_type::active_if_any();
        const bool recording = on && on->is_recording();
        for (Eigen::Index j = 0; j < n; ++j)
            for (Eigen::Index i = 0; i < m; ++i) {
                const basic_real<S>& x = reals.coeff(i, j);
                v(i, j) = x.value();
                identifier& id = ids[std::size_t(i + j * m)];
                id = x.id();
                if (id != 0 && recording && x.tape_tag() != on->serial())
                    throw usage_error("tapeflow::matrix_variable of Reals of another tape (or of a tape that no "
                                      "longer exists); record with the tape that recorded them");
                active |= id != 0;
            }
        if (!active || !recording) return variable(std::make_shared<const matrix_type>(std::move(v)), nullptr);
        const std::size_t bytes = ids.size() * sizeof(identifier);
        return result(
            on, std::move(v),
            [ids = std::move(ids), m, n](const auto& slices, identifier ic) {
                const auto c_bar = slices(ic, m, n);
                for (std::size_t k = 0; k < ids.size(); ++k)
                    if (ids[k] != 0) slices.at(ids[k]) += c_bar(Eigen::Index(k) % m, Eigen::Index(k) / m);
            },
            bytes);
    }
};

}  // namespace detail

template <class S>
template <class Derived, std::enable_if_t<std::is_same_v<typename Derived::Scalar, basic_real<S>>, int>>
basic_matrix_variable<S>::basic_matrix_variable(const Eigen::MatrixBase<Derived>& reals)
    : basic_matrix_variable(detail::matrix_operations<S>::from_reals(reals)) {}

// ---- operations --------------------------------------------------------------

/// C = A B, one entry when A or B is active (either may be an Eigen matrix of S).
/// \throws usage_error when the shapes do not fit.
template <class S>
basic_matrix_variable<S> operator*(const basic_matrix_variable<S>& a, const basic_matrix_variable<S>& b) {
    return detail::matrix_operations<S>::product(a, b);
}
template <class S, class Derived, std::enable_if_t<std::is_same_v<typename Derived::Scalar, S>, int> = 0>
basic_matrix_variable<S> operator*(const basic_matrix_variable<S>& a, const Eigen::MatrixBase<Derived>& b) {
    return a * basic_matrix_variable<S>(b);
}
template <class S, class Derived, std::enable_if_t<std::is_same_v<typename Derived::Scalar, S>, int> = 0>
basic_matrix_variable<S> operator*(const Eigen::MatrixBase<Derived>& a, const basic_matrix_variable<S>& b) {
    return basic_matrix_variable<S>(a) * b;
}
/// s A and A s for a number s.
template <class S, class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
basic_matrix_variable<S> operator*(T s, const basic_matrix_variable<S>& a) {
    return detail::matrix_operations<S>::combination("matrix_variable scaling", S(s), a, S(0), nullptr);
}
template <class S, class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
basic_matrix_variable<S> operator*(const basic_matrix_variable<S>& a, T s) {
    return S(s) * a;
}
template <class S>
basic_matrix_variable<S> operator-(const basic_matrix_variable<S>& a) {
    return detail::matrix_operations<S>::combination("matrix_variable negation", S(-1), a, S(0), nullptr);
}
/// A + B and A - B (same shapes; either may be an Eigen matrix of S).
template <class S>
basic_matrix_variable<S> operator+(const basic_matrix_variable<S>& a, const basic_matrix_variable<S>& b) {
    return detail::matrix_operations<S>::combination("matrix_variable sum", S(1), a, S(1), &b);
}
template <class S>
basic_matrix_variable<S> operator-(const basic_matrix_variable<S>& a, const basic_matrix_variable<S>& b) {
    return detail::matrix_operations<S>::combination("matrix_variable difference", S(1), a, S(-1), &b);
}
template <class S, class Derived, std::enable_if_t<std::is_same_v<typename Derived::Scalar, S>, int> = 0>
basic_matrix_variable<S> operator+(const basic_matrix_variable<S>& a, const Eigen::MatrixBase<Derived>& b) {
    return a + basic_matrix_variable<S>(b);
}
template <class S, class Derived, std::enable_if_t<std::is_same_v<typename Derived::Scalar, S>, int> = 0>
basic_matrix_variable<S> operator+(const Eigen::MatrixBase<Derived>& a, const basic_matrix_variable<S>& b) {
    return basic_matrix_variable<S>(a) + b;
}
template <class S, class Derived, std::enable_if_t<std::is_same_v<typename Derived::Scalar, S>, int> = 0>
basic_matrix_variable<S> operator-(const basic_matrix_variable<S>& a, const Eigen::MatrixBase<Derived>& b) {
    return a - basic_matrix_variable<S>(b);
}
template <class S, class Derived, std::enable_if_t<std::is_same_v<typename Derived::Scalar, S>, int> = 0>
basic_matrix_variable<S> operator-(const Eigen::MatrixBase<Derived>& a, const basic_matrix_variable<S>& b) {
    return basic_matrix_variable<S>(a) - b;
}
/// A^T.
template <class S>
basic_matrix_variable<S> transpose(const basic_matrix_variable<S>& a) {
    return detail::matrix_operations<S>::transpose(a);
}

/// The sum of the products of corresponding elements (A and B of one shape;
/// either may be an Eigen matrix of S), as a Real: one entry.
template <class S>
basic_real<S> dot(const basic_matrix_variable<S>& a, const basic_matrix_variable<S>& b) {
    return detail::matrix_operations<S>::dot(a, b);
}
template <class S, class Derived, std::enable_if_t<std::is_same_v<typename Derived::Scalar, S>, int> = 0>
basic_real<S> dot(const basic_matrix_variable<S>& a, const Eigen::MatrixBase<Derived>& b) {
    return dot(a, basic_matrix_variable<S>(b));
}
template <class S, class Derived, std::enable_if_t<std::is_same_v<typename Derived::Scalar, S>, int> = 0>
basic_real<S> dot(const Eigen::MatrixBase<Derived>& a, const basic_matrix_variable<S>& b) {
    return dot(basic_matrix_variable<S>(a), b);
}
/// The sum of the elements, as a Real: one entry.
template <class S>
basic_real<S> sum(const basic_matrix_variable<S>& a) {
    return detail::matrix_operations<S>::sum(a);
}
/// The sum of the squares of the elements, as a Real: one entry.
template <class S>
basic_real<S> squared_norm(const basic_matrix_variable<S>& a) {
    return detail::matrix_operations<S>::squared_norm(a);
}
/// The elements as an Eigen matrix of Real (one entry): for everything the
/// matrix variable does not do itself; matrix_variable(M) goes back.
template <class S>
detail::dense_matrix<basic_real<S>> to_reals(const basic_matrix_variable<S>& a) {
    return detail::matrix_operations<S>::to_reals(a);
}

// ---- inputs and adjoints ---------------------------------------------------

/// Makes `a` an independent variable of `t`: new identifiers that no record
/// assigns (as t.register_input does for a Real). Its copies stay the
/// variable they were.
/// \throws usage_error as basic_tape::register_input.
template <class S>
void register_input(basic_tape<S>& t, basic_matrix_variable<S>& a) {
    using operations = detail::matrix_operations<S>;
    const std::size_t count = std::size_t(a.size());
    t.register_input_range(0);  // the checks, before anything changes
    a = operations::make(operations::values_of(a), nullptr);  // its old identifiers first back (if no copy holds them)
    if (count == 0) return;
    auto ids = std::make_shared<typename operations::range>(t.register_input_range(count), count, t.serial());
    a = operations::make(operations::values_of(a), std::move(ids));
}

/// The adjoints of a's elements as a matrix of a's shape (0 when a is
/// constant): one copy.
/// \throws usage_error if a belongs to another tape.
template <class S>
detail::dense_matrix<S> adjoints(const basic_tape<S>& t, const basic_matrix_variable<S>& a) {
    detail::dense_matrix<S> out = detail::dense_matrix<S>::Zero(a.rows(), a.cols());
    if (!a.is_active()) return out;
    if (a.tape_tag() != t.serial())
        throw usage_error("tapeflow::adjoints: the matrix variable belongs to another tape (or to a tape that no "
                          "longer exists); use the tape that recorded it");
    t.adjoint_range(a.first_identifier(), std::size_t(a.size()), out.data());
    return out;
}

/// Sets the adjoints of a's elements (seeds: a is an output), one copy.
/// \throws usage_error if a is constant, of another tape, or of another shape.
template <class S, class Derived>
void set_adjoints(basic_tape<S>& t, const basic_matrix_variable<S>& a, const Eigen::MatrixBase<Derived>& seeds) {
    if (seeds.rows() != a.rows() || seeds.cols() != a.cols())
        throw usage_error("tapeflow::set_adjoints: seeds of shape " + std::to_string(seeds.rows()) + " x " +
                          std::to_string(seeds.cols()) + " for a " +
                          detail::matrix_operations<S>::shape(a) + " matrix variable");
    if (!a.is_active())
        throw usage_error("tapeflow::set_adjoints on a constant matrix variable; register it as an input or "
                          "compute it from one while recording");
    if (a.tape_tag() != t.serial())
        throw usage_error("tapeflow::set_adjoints: the matrix variable belongs to another tape (or to a tape "
                          "that no longer exists); use the tape that recorded it");
    const detail::dense_matrix<S> s = seeds;
    t.set_adjoint_range(a.first_identifier(), std::size_t(a.size()), s.data());
}

}  // namespace tapeflow
