// tapeflow/eigen/linear_algebra.hpp - reductions and linear solves taped as
// ONE entry each (custom_adjoint.hpp), for Eigen matrices of Real.
//
// Ordinary Eigen code is taped per scalar operation: a.dot(b) records 2n
// statements, A.llt().solve(b) records the O(n^3) operations of the
// factorization. The functions here tape one entry instead:
//
//   tapeflow::dot(a, b), squared_norm(a), norm(a)
//       one entry of 2n (or n) inputs; reverse a_bar += y_bar b, ...
//
//   auto f = tapeflow::partial_piv_lu(A);      // also llt, ldlt, householder_qr
//   Eigen::VectorX<Real> x = f.solve(b);       // one entry per solve
//       The factorization of A's values is computed once and shared by every
//       solve and by their reverse rules:
//         b_bar += A^-T x_bar,   A_bar -= b_bar x^T          (square A)
//       householder_qr solves least squares (rows >= cols, full column rank):
//         z = (A^T A)^-1 x_bar = R^-1 R^-T x_bar,  b_bar += A z,
//         A_bar += r z^T - (A z) x^T,   r = b - A x
//       llt and ldlt read only the lower triangle of A (as Eigen does), so
//       the gradient lands on the lower triangle: A_bar(i,j) + A_bar(j,i).
//
// A singular A (partial_piv_lu) or one of deficient column rank
// (householder_qr) is refused with tapeflow::error; f.rcond() says how well
// conditioned an accepted one is.
//
// The factorization object holds a copy of A (its identifiers stay valid even
// if A changes afterwards) and may be used for any number of solves. A and b
// may be Real or double matrices.
#pragma once

#include <cstddef>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>
#include <Eigen/QR>

#include "../custom_adjoint.hpp"
#include "../error.hpp"
#include "num_traits.hpp"

namespace tapeflow {

namespace detail {

// A number in an error message: three significant digits.
inline std::string short_number(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", x);
    return text;
}

// The scalar S of an Eigen expression over basic_real<S> or S.
template <class T>
struct underlying_scalar {
    using type = T;
};
template <class S>
struct underlying_scalar<basic_real<S>> {
    using type = S;
};
template <class Derived>
using eigen_scalar_t = typename underlying_scalar<typename Derived::Scalar>::type;

// Adds the elements of an Eigen object of Real (column-major order) as inputs.
template <class S, class M>
void add_inputs(basic_custom_adjoint<S>& op, const M& m) {
    if constexpr (is_real<typename M::Scalar>::value)
        for (Eigen::Index j = 0; j < m.cols(); ++j)
            op.add_inputs(std::size_t(m.rows()),
                          [&](std::size_t i) -> decltype(auto) { return m.coeff(Eigen::Index(i), j); });
}

// The values of m (column-major) as a double matrix and, for a Real m, its
// elements added as inputs: one pass over m for both.
template <class S, class M>
Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic> inputs_and_values(basic_custom_adjoint<S>& op, const M& m) {
    Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic> v(m.rows(), m.cols());
    take_operand(op, true, m.rows(), m.cols(),
                 [&m](Eigen::Index i, Eigen::Index j) -> decltype(auto) { return m.coeff(i, j); }, v);
    return v;
}

template <class M>
auto values_of(const M& m) {
    using S = eigen_scalar_t<M>;
    Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic> v(m.rows(), m.cols());
    for (Eigen::Index j = 0; j < m.cols(); ++j)
        for (Eigen::Index i = 0; i < m.rows(); ++i) v(i, j) = value_of(m.coeff(i, j));
    return v;
}

// Which triangle of A a decomposition reads: 0 for all of A.
template <class D>
struct triangle_read {
    static constexpr int value = 0;
};
template <class M, int UpLo>
struct triangle_read<Eigen::LLT<M, UpLo>> {
    static constexpr int value = UpLo;
};
template <class M, int UpLo>
struct triangle_read<Eigen::LDLT<M, UpLo>> {
    static constexpr int value = UpLo;
};

// An operand whose elements are Real variables: the object itself when its
// coeff() returns a reference (matrices, maps, blocks, transposes of them),
// else its value as a plain matrix. An expression such as a - d returns a
// temporary Real from coeff(), whose identifier dies with it; the plain
// matrix keeps the variables alive until the entry is taped.
template <class D>
using evaluated_t = std::conditional_t<!is_real<typename D::Scalar>::value ||
                                           std::is_reference_v<decltype(std::declval<const D&>().coeff(0, 0))>,
                                       const D&, typename D::PlainObject>;
template <class D>
evaluated_t<D> evaluated(const D& d) {
    return d;
}

template <class D>
struct is_householder_qr : std::false_type {};
template <class M>
struct is_householder_qr<Eigen::HouseholderQR<M>> : std::true_type {};

}  // namespace detail

/// a . b as one tape entry. a and b: of Real or double, either two vectors
/// of one length, each a row or a column (as Eigen's a.dot(b) takes them), or
/// two matrices of one shape (summed elementwise).
/// \throws usage_error for operands of different lengths or shapes.
template <class DA, class DB>
basic_real<detail::eigen_scalar_t<DA>> dot(const Eigen::MatrixBase<DA>& a, const Eigen::MatrixBase<DB>& b) {
    using S = detail::eigen_scalar_t<DA>;
    static_assert(std::is_same_v<S, detail::eigen_scalar_t<DB>>, "tapeflow::dot: operands of different precisions");
    // A row and a column are both vectors: their elements pair up in order,
    // which is also the column-major order the entry reads them in.
    const bool vectors = (a.rows() == 1 || a.cols() == 1) && (b.rows() == 1 || b.cols() == 1);
    if (vectors ? a.size() != b.size() : a.rows() != b.rows() || a.cols() != b.cols())
        throw usage_error("tapeflow::dot: operands of different sizes (" + std::to_string(a.rows()) + " x " +
                          std::to_string(a.cols()) + " and " + std::to_string(b.rows()) + " x " +
                          std::to_string(b.cols()) + ")");
    const auto& ae = detail::evaluated(a.derived());
    const auto& be = detail::evaluated(b.derived());
    basic_real<S> y;
    basic_custom_adjoint<S> op;
    auto av = detail::inputs_and_values(op, ae);
    const std::size_t b_at = op.inputs();
    auto bv = detail::inputs_and_values(op, be);
    op.add_output(y, (av.reshaped().array() * bv.reshaped().array()).sum());  // a row and a column too
    constexpr bool a_real = detail::is_real<typename DA::Scalar>::value;
    constexpr bool b_real = detail::is_real<typename DB::Scalar>::value;
    if (!b_real) av.resize(0, 0);
    if (!a_real) bv.resize(0, 0);
    const std::size_t captured = std::size_t(av.size() + bv.size()) * sizeof(S);
    op.record(
        [av = std::move(av), bv = std::move(bv), b_at](const S* y_bar, S* x_bar) {
            (void)b_at;  // read only where b holds Reals (clang -Wall: unused capture otherwise)
            using vector = Eigen::Matrix<S, Eigen::Dynamic, 1>;
            if constexpr (a_real) Eigen::Map<vector>(x_bar, bv.size()) += y_bar[0] * bv.reshaped();
            if constexpr (b_real) Eigen::Map<vector>(x_bar + b_at, av.size()) += y_bar[0] * av.reshaped();
        },
        captured);
    return y;
}

/// The sum of the squares of the elements of a, as one tape entry.
template <class D>
basic_real<detail::eigen_scalar_t<D>> squared_norm(const Eigen::MatrixBase<D>& a) {
    using S = detail::eigen_scalar_t<D>;
    const auto& ae = detail::evaluated(a.derived());
    basic_real<S> y;
    basic_custom_adjoint<S> op;
    auto av = detail::inputs_and_values(op, ae);
    op.add_output(y, av.squaredNorm());
    const std::size_t captured = std::size_t(av.size()) * sizeof(S);
    op.record(
        [av = std::move(av)](const S* y_bar, S* x_bar) {
            Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, 1>>(x_bar, av.size()) += (2 * y_bar[0]) * av.reshaped();
        },
        captured);
    return y;
}

/// sqrt(squared_norm(a)). Like sqrt, its derivative at a = 0 is not finite.
template <class D>
basic_real<detail::eigen_scalar_t<D>> norm(const Eigen::MatrixBase<D>& a) {
    return basic_real<detail::eigen_scalar_t<D>>(sqrt(squared_norm(a)));
}

/// A factorization of a Real (or double) matrix A whose solves are taped as
/// one entry each. Decomposition: an Eigen decomposition of a double matrix
/// (Eigen::LLT<Eigen::MatrixXd>, LDLT, PartialPivLU, HouseholderQR).
template <class Decomposition>
class factorization {
public:
    using scalar_type = typename Decomposition::MatrixType::Scalar;
    using real_type = basic_real<scalar_type>;
    using value_matrix = Eigen::Matrix<scalar_type, Eigen::Dynamic, Eigen::Dynamic>;

    /// Factorizes the values of `a`.
    /// \throws error if `a` has a NaN or infinite element, if the
    /// factorization fails (llt of a matrix that is not positive definite),
    /// or if `a` is singular to working precision (partial_piv_lu: rcond()
    /// at most epsilon) or of deficient rank (householder_qr: rcond() at
    /// most rows * epsilon).
    template <class D>
    explicit factorization(const Eigen::MatrixBase<D>& a)
        : a_(a.derived().template cast<real_type>()), state_(std::make_shared<state>()) {
        static_assert(std::is_same_v<detail::eigen_scalar_t<D>, scalar_type>,
                      "tapeflow::factorization: matrix and decomposition of different precisions");
        // the shape first: Eigen's decompositions assume it
        if (detail::is_householder_qr<Decomposition>::value ? a_.rows() < a_.cols() : a_.rows() != a_.cols())
            throw usage_error("tapeflow::factorization: needs a square matrix (householder_qr: rows >= cols)");
        state_->a = detail::values_of(a_);
        if (!state_->a.allFinite())  // checked first: Eigen's rcond() and maxCoeff() may pass a NaN by
            throw error("tapeflow::factorization: the matrix has a NaN or an infinite element; its solves "
                        "and their gradients would be NaN: check how it was computed");
        state_->decomposition.compute(state_->a);
        constexpr bool qr = detail::is_householder_qr<Decomposition>::value;
        constexpr bool lu = std::is_same_v<Decomposition, Eigen::PartialPivLU<typename Decomposition::MatrixType>>;
        if constexpr (!qr && !lu) {
            if (state_->decomposition.info() != Eigen::Success)
                throw error("tapeflow::factorization: the decomposition failed (llt needs a positive "
                            "definite matrix, ldlt a positive or negative semidefinite one); use "
                            "partial_piv_lu or householder_qr");
        } else {
            // Eigen's LU and QR do not fail on a singular matrix: their solves
            // return inf, NaN or numbers of the order of 1/epsilon, and so
            // would the gradient. Refuse such a matrix here instead.
            const scalar_type rc = rcond();
            const scalar_type eps = std::numeric_limits<scalar_type>::epsilon();
            const scalar_type least = qr ? eps * scalar_type(a_.rows()) : eps;
            if (!(rc > least))
                throw error(std::string(qr ? "tapeflow::householder_qr: the matrix is rank deficient"
                                           : "tapeflow::partial_piv_lu: the matrix is singular") +
                            " to working precision (rcond() = " + detail::short_number(detail::innermost_value(rc)) +
                            "; it must be above " + detail::short_number(detail::innermost_value(least)) +
                            "): its solves and their gradients would be inf, NaN or "
                            "meaningless; check the matrix (a repeated row or column), "
                            "remove the dependent columns, or regularize it (A + lambda I, ldlt for a "
                            "semidefinite one)");
        }
    }

    /// An estimate of the reciprocal condition number of A in the 1-norm
    /// (partial_piv_lu, llt, ldlt: Eigen's rcond()), between 0 and 1; small
    /// means that solves lose about -log10(rcond()) digits. householder_qr:
    /// min |R_ii| / max |R_ii|, a rank indicator (0 for a matrix of deficient
    /// rank), not the condition number. partial_piv_lu and householder_qr
    /// refuse a matrix where this is at most epsilon (householder_qr: at
    /// most rows * epsilon): see the constructor.
    scalar_type rcond() const {
        if constexpr (detail::is_householder_qr<Decomposition>::value) {
            const Eigen::Index n = a_.cols();
            if (n == 0) return scalar_type(1);
            const auto diagonal = state_->decomposition.matrixQR().diagonal().head(n).cwiseAbs();
            const scalar_type largest = diagonal.maxCoeff();
            return largest > scalar_type(0) ? diagonal.minCoeff() / largest : scalar_type(0);
        } else {
            return state_->decomposition.rcond();
        }
    }

    /// x = A^-1 b (householder_qr: the least-squares solution), taped as one entry.
    /// \throws usage_error if b has not as many rows as A.
    template <class D>
    Eigen::Matrix<real_type, Eigen::Dynamic, D::ColsAtCompileTime == 1 ? 1 : Eigen::Dynamic> solve(
        const Eigen::MatrixBase<D>& b) const {
        static_assert(std::is_same_v<detail::eigen_scalar_t<D>, scalar_type>,
                      "tapeflow::factorization::solve: right-hand side of a different precision");
        if (b.rows() != a_.rows())
            throw usage_error("tapeflow::factorization::solve: the right-hand side has " +
                              std::to_string(b.rows()) + " rows, the matrix " + std::to_string(a_.rows()));
        const auto& be = detail::evaluated(b.derived());
        const value_matrix bv = detail::values_of(be);
        value_matrix xv = state_->decomposition.solve(bv);
        constexpr bool qr = detail::is_householder_qr<Decomposition>::value;
        value_matrix rv;  // the residual b - A x (least squares)
        if constexpr (qr) rv = bv - state_->a * xv;

        Eigen::Matrix<real_type, Eigen::Dynamic, D::ColsAtCompileTime == 1 ? 1 : Eigen::Dynamic> x(xv.rows(),
                                                                                               xv.cols());
        basic_custom_adjoint<scalar_type> op;
        detail::add_inputs(op, a_);
        const std::size_t b_at = op.inputs();
        detail::add_inputs(op, be);
        for (Eigen::Index j = 0; j < x.cols(); ++j)
            for (Eigen::Index i = 0; i < x.rows(); ++i) op.add_output(x(i, j), xv(i, j));
        op.assume_distinct_outputs();
        const std::size_t captured = std::size_t(xv.size() + rv.size()) * sizeof(scalar_type);
        constexpr bool b_real = detail::is_real<typename D::Scalar>::value;
        op.record(
            [state = state_, xv = std::move(xv), rv = std::move(rv), b_at](const scalar_type* x_bar_data,
                                                                          scalar_type* in_bar) {
                const Eigen::Index m = state->a.rows(), n = state->a.cols(), k = xv.cols();
                const Eigen::Map<const value_matrix> x_bar(x_bar_data, n, k);
                value_matrix b_bar, a_bar;
                if constexpr (qr) {
                    const auto r = state->decomposition.matrixQR().topLeftCorner(n, n)
                                       .template triangularView<Eigen::Upper>();
                    value_matrix z = r.transpose().solve(x_bar);
                    r.solveInPlace(z);
                    b_bar = state->a * z;
                    a_bar = rv * z.transpose() - b_bar * xv.transpose();
                } else if constexpr (detail::triangle_read<Decomposition>::value != 0) {
                    b_bar = state->decomposition.solve(x_bar);  // A is symmetric
                    a_bar = -b_bar * xv.transpose();
                } else {
                    b_bar = state->decomposition.transpose().solve(x_bar);
                    a_bar = -b_bar * xv.transpose();
                }
                constexpr int tri = detail::triangle_read<Decomposition>::value;
                if constexpr (tri != 0) {  // fold onto the triangle that was read
                    value_matrix folded = value_matrix::Zero(n, n);
                    folded.template triangularView<tri>() = a_bar + a_bar.transpose();
                    folded.diagonal() = a_bar.diagonal();
                    a_bar = std::move(folded);
                }
                Eigen::Map<value_matrix>(in_bar, m, n) += a_bar;  // A's inputs come first
                if constexpr (b_real)
                    Eigen::Map<value_matrix>(in_bar + b_at, m, k) += b_bar;
                else
                    (void)b_at;  // b is passive: no slots of its own (clang warns of an unused capture)
            },
            captured);
        return x;
    }

    /// The decomposition of A's values.
    const Decomposition& decomposition() const noexcept { return state_->decomposition; }
    /// The copy of A whose identifiers the solves use.
    const Eigen::Matrix<real_type, Eigen::Dynamic, Eigen::Dynamic>& matrix() const noexcept { return a_; }

private:
    struct state {
        value_matrix a;
        Decomposition decomposition;
    };
    Eigen::Matrix<real_type, Eigen::Dynamic, Eigen::Dynamic> a_;
    std::shared_ptr<state> state_;  // shared with the entries of the solves
};

template <class D>
using value_matrix_of = Eigen::Matrix<detail::eigen_scalar_t<D>, Eigen::Dynamic, Eigen::Dynamic>;

/// Cholesky factorization (A symmetric positive definite; reads the lower triangle).
template <class D>
factorization<Eigen::LLT<value_matrix_of<D>>> llt(const Eigen::MatrixBase<D>& a) {
    return factorization<Eigen::LLT<value_matrix_of<D>>>(a);
}
/// Robust Cholesky (A symmetric positive or negative semidefinite; reads the lower triangle).
template <class D>
factorization<Eigen::LDLT<value_matrix_of<D>>> ldlt(const Eigen::MatrixBase<D>& a) {
    return factorization<Eigen::LDLT<value_matrix_of<D>>>(a);
}
/// LU with partial pivoting (A square and invertible).
template <class D>
factorization<Eigen::PartialPivLU<value_matrix_of<D>>> partial_piv_lu(const Eigen::MatrixBase<D>& a) {
    return factorization<Eigen::PartialPivLU<value_matrix_of<D>>>(a);
}
/// Householder QR (rows >= cols, full column rank); solve() gives least squares.
template <class D>
factorization<Eigen::HouseholderQR<value_matrix_of<D>>> householder_qr(const Eigen::MatrixBase<D>& a) {
    return factorization<Eigen::HouseholderQR<value_matrix_of<D>>>(a);
}

}  // namespace tapeflow
