// tapeflow/eigen/detail/products.hpp - dense matrix products of Real as ONE
// tape entry each. A part of eigen/num_traits.hpp, which includes it after
// NumTraits<Real>: every translation unit that can name Matrix<Real> sees
// these specializations, so no two of them compile a product differently.
//
// Eigen evaluates a dynamic-size product (C = A * B, y = A * x, and the
// blocks of its own decompositions) through two kernels,
// general_matrix_matrix_product and general_matrix_vector_product. For
// Real x Real, Real x double and double x Real they are specialized here:
//
//   forward:  the values of A and B are copied to double matrices, C = A B is
//             computed by Eigen's double kernel, and one external entry
//             (custom_adjoint.hpp) is taped for  C += alpha A B.
//   reverse:  A_bar += alpha C_bar B^T,  B_bar += alpha A^T C_bar,
//             alpha_bar += sum(C_bar .* A B),  C_old_bar += C_bar.
//
// So an n x n product tapes O(n^2) data (identifiers and the two operand
// matrices), not n^3 statements, and runs at double speed both ways. This
// also makes the mixed products compile, which Eigen 3.4 cannot do for a
// custom scalar (its blocked kernel needs packet arithmetic between the two
// scalar types). A dynamic matrix times a vector (or a row vector times a
// matrix) reaches GEMV at any size, so it is one entry even when small.
// Small matrix products (rows + cols + depth < 20) and lazyProduct() stay
// coefficient-wise: Eigen's coefficient-based product, taped per scalar
// operation (about 3 to 4 records per multiply-add, counting the copies of
// Real temporaries that Eigen makes).
//
// The specializations replace internals of Eigen 3.4 (the two kernels and
// their argument lists, get_factor): num_traits.hpp stops the build with
// another Eigen version.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include <Eigen/Core>

#include "../../custom_adjoint.hpp"
#include "../../error.hpp"

#ifndef TAPEFLOW_EIGEN_NUM_TRAITS
#error "tapeflow/eigen/detail/products.hpp is a part of tapeflow/eigen/num_traits.hpp: include that, or any tapeflow Eigen header"
#endif

namespace tapeflow::detail {

template <class S>
bool is_active(const basic_real<S>& x) noexcept { return x.is_active(); }
template <class S, std::enable_if_t<std::is_floating_point_v<S>, int> = 0>
bool is_active(S) noexcept { return false; }

// What every product entry shares, whatever its operands: the double
// product and the reverse rule depend on S alone, so they are compiled once
// per S, not once per pairing, storage order and stride of the operands
// (record_product below is instantiated for each): three calls of
// add_product, with the three pairs of storage orders the forward product
// and the reverse rule need.

/// c += alpha A B, c column-major rows x cols, A (rows x depth) and B
/// (depth x cols) stored in LhsOrder and RhsOrder with outer strides
/// a_stride and b_stride: Eigen's own kernels for S, called directly (GEMM;
/// GEMV for one column; a plain loop for depth 1). The expression
/// Map * Map would compile Eigen's coefficient-based, GEMV and GEMM paths
/// behind each of an entry's three products: 5.1 s of an -O3 compile for
/// the three, 0.9 s this way (measured on Eigen 3.4, g++ 12). Eigen's
/// expression would parallelize a large GEMM under OpenMP; a Real product
/// already requires Eigen::setNbThreads(1) (gemm_adapter below).
template <class S, int LhsOrder, int RhsOrder>
TAPEFLOW_NOINLINE void add_product(Eigen::Index rows, Eigen::Index cols, Eigen::Index depth, const S* a,
                                   Eigen::Index a_stride, const S* b, Eigen::Index b_stride, S* c, S alpha) {
    using Eigen::Index;
    using namespace Eigen::internal;
    if (rows == 0 || cols == 0 || depth == 0) return;
    if (depth == 1) {  // an outer product
        const Index a_increment = LhsOrder == Eigen::ColMajor ? 1 : a_stride;
        const Index b_next = RhsOrder == Eigen::ColMajor ? b_stride : 1;  // along the row of B
        for (Index j = 0; j < cols; ++j) {
            const S bj = alpha * b[j * b_next];
            for (Index i = 0; i < rows; ++i) c[i + j * rows] += a[i * a_increment] * bj;
        }
        return;
    }
    if (cols == 1) {
        const Index b_increment = RhsOrder == Eigen::ColMajor ? 1 : b_stride;  // down the column of B
        if constexpr (LhsOrder == Eigen::ColMajor) {
            general_matrix_vector_product<Index, S, const_blas_data_mapper<S, Index, Eigen::ColMajor>,
                                          Eigen::ColMajor, false, S,
                                          const_blas_data_mapper<S, Index, Eigen::RowMajor>, false>::
                run(rows, depth, const_blas_data_mapper<S, Index, Eigen::ColMajor>(a, a_stride),
                    const_blas_data_mapper<S, Index, Eigen::RowMajor>(b, b_increment), c, 1, alpha);
            return;
        } else if (b_increment == 1) {  // the row-major GEMV reads B as one contiguous column
            general_matrix_vector_product<Index, S, const_blas_data_mapper<S, Index, Eigen::RowMajor>,
                                          Eigen::RowMajor, false, S,
                                          const_blas_data_mapper<S, Index, Eigen::ColMajor>, false>::
                run(rows, depth, const_blas_data_mapper<S, Index, Eigen::RowMajor>(a, a_stride),
                    const_blas_data_mapper<S, Index, Eigen::ColMajor>(b, 1), c, 1, alpha);
            return;
        }
    }
    gemm_blocking_space<Eigen::ColMajor, S, S, Eigen::Dynamic, Eigen::Dynamic, Eigen::Dynamic, 1, false> blocking(
        rows, cols, depth, 1, true);
    general_matrix_matrix_product<Index, S, LhsOrder, false, S, RhsOrder, false, Eigen::ColMajor, 1>::run(
        rows, cols, depth, a, a_stride, b, b_stride, c, 1, rows, alpha, blocking);
}

/// The reverse rule of  res += alpha * lhs * rhs:
///   lhs_bar += alpha C_bar B^T,  rhs_bar += alpha A^T C_bar,
///   alpha_bar += sum(C_bar .* A B),  res_old_bar += C_bar.
/// The inputs are lhs (column-major), rhs, alpha, the old res, each present
/// only when active; *_at say where each starts.
template <class S>
struct product_adjoint {
    pooled_buffer<S> a_data, b_data, c_data;  // A, B, A B: only what is read
    S alpha_value;
    Eigen::Index rows, cols, depth;
    std::size_t rhs_at, alpha_at, res_at;
    bool lhs_active, rhs_active, alpha_active, res_active;

    TAPEFLOW_NOINLINE void operator()(const S* c_bar_data, S* x_bar) const {
        using matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
        const Eigen::Map<const matrix> c_bar(c_bar_data, rows, cols);
        // B^T and A^T are B and A read row-major
        if (lhs_active)
            add_product<S, Eigen::ColMajor, Eigen::RowMajor>(rows, depth, cols, c_bar_data, rows, b_data->data(),
                                                             depth, x_bar, alpha_value);
        if (rhs_active)
            add_product<S, Eigen::RowMajor, Eigen::ColMajor>(depth, cols, rows, a_data->data(), rows, c_bar_data,
                                                             rows, x_bar + rhs_at, alpha_value);
        if (alpha_active) {
            const Eigen::Map<const matrix> c(c_data->data(), rows, cols);
            x_bar[alpha_at] += (c_bar.array() * c.array()).sum();
        }
        if (res_active) Eigen::Map<matrix>(x_bar + res_at, rows, cols) += c_bar;
    }
};

/// Tapes  res += alpha * lhs * rhs  as one entry: lhs is rows x depth, rhs is
/// depth x cols, given by accessors (i, j) -> element; res(i, j) returns the
/// basic_real<S>& to update.
template <class S, class Lhs, class Rhs, class Res, class Alpha>
void record_product(Eigen::Index rows, Eigen::Index cols, Eigen::Index depth, const Lhs& lhs,
                    const Rhs& rhs, const Res& res, const Alpha& alpha) {
    using matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
    using Index = Eigen::Index;
    constexpr bool lhs_real = is_real<std::decay_t<decltype(lhs(0, 0))>>::value;
    constexpr bool rhs_real = is_real<std::decay_t<decltype(rhs(0, 0))>>::value;

    // a, b and c live in buffers of the tape's pool (tape/buffer_pool.hpp):
    // a gradient taken again and again reuses them instead of faulting fresh
    // pages in.
    basic_custom_adjoint<S> op;
    buffer_pool<S>& pool = op.tape().scalar_buffers();
    pooled_buffer<S> a_data(pool, std::size_t(rows * depth)), b_data(pool, std::size_t(depth * cols)),
        c_data(pool, std::size_t(rows * cols));

    // Operands with no active element are left out (their adjoints are not
    // computed). Inputs, in this order: lhs (column-major), rhs
    // (column-major), alpha, the old res. Finding an active element of lhs
    // or rhs usually takes one look; the old res is looked at with the
    // outputs below.
    auto any_active = [](Index r, Index c, const auto& at) {
        for (Index j = 0; j < c; ++j)
            for (Index i = 0; i < r; ++i)
                if (detail::is_active(at(i, j))) return true;
        return false;
    };
    const bool lhs_active = lhs_real && any_active(rows, depth, lhs);
    const bool rhs_active = rhs_real && any_active(depth, cols, rhs);
    const bool alpha_active = detail::is_active(alpha);
    // Whether the old res is active is known only after the outputs: room for
    // it when its first element is (C += A * B on an active C).
    const bool res_likely_active = rows * cols > 0 && detail::is_active(res(0, 0));
    op.reserve(std::size_t(lhs_active ? rows * depth : 0) + std::size_t(rhs_active ? depth * cols : 0) + 1 +
                   std::size_t(res_likely_active ? rows * cols : 0),
               std::size_t(rows * cols));

    // One pass over each operand: its values into a (b), and for an active
    // operand its identifiers into the inputs. Passes over n x n matrices
    // are most of a product's bookkeeping (docs/eigen.md, "Why the product
    // gradient is ... not 4x").
    a_data->resize(std::size_t(rows * depth));
    b_data->resize(std::size_t(depth * cols));
    c_data->resize(std::size_t(rows * cols));
    Eigen::Map<matrix> a(a_data->data(), rows, depth), b(b_data->data(), depth, cols);
    take_operand(op, lhs_active, rows, depth, lhs, a);
    const std::size_t rhs_at = op.inputs();
    take_operand(op, rhs_active, depth, cols, rhs, b);
    // c is zero: += spares Eigen's second zeroing
    add_product<S, Eigen::ColMajor, Eigen::ColMajor>(rows, cols, depth, a_data->data(), rows, b_data->data(),
                                                     depth, c_data->data(), S(1));
    const S alpha_value = value_of(alpha);

    const std::size_t alpha_at = op.inputs();
    if constexpr (is_real<Alpha>::value)
        if (alpha_active) op.add_input(alpha);
    bool res_active = false;
    for (Index j = 0; j < cols; ++j) {
        const S* c_column = c_data->data() + j * rows;
        op.add_outputs(
            std::size_t(rows),
            [&](std::size_t i) -> decltype(auto) {
                auto& y = res(Index(i), j);
                res_active |= detail::is_active(y);
                return y;
            },
            [&](std::size_t i) { return res(Index(i), j).value() + alpha_value * c_column[i]; });
    }
    op.assume_distinct_outputs();  // the elements of one matrix
    const std::size_t res_at = op.inputs();
    if (res_active) {
        for (Index j = 0; j < cols; ++j)
            op.add_inputs(std::size_t(rows), [&](std::size_t i) -> decltype(auto) { return res(Index(i), j); });
        op.updates_in_place();  // C += A B: as s += e for reset(position), also for a small product taped per scalar
    }

    // keep only what the reverse rule reads
    if (!alpha_active) c_data.give_back();
    if (!rhs_active) a_data.give_back();
    if (!lhs_active) b_data.give_back();
    const std::size_t captured = (a_data->size() + b_data->size() + c_data->size()) * sizeof(S);
    op.record(product_adjoint<S>{std::move(a_data), std::move(b_data), std::move(c_data), alpha_value, rows, cols,
                                 depth, rhs_at, alpha_at, res_at, lhs_active, rhs_active, alpha_active,
                                 res_active},
              captured);
}

// res (column-major, inner stride res_incr) += alpha * lhs * rhs, from the
// raw arguments of Eigen's general_matrix_matrix_product.
template <class LhsScalar, int LhsOrder, class RhsScalar, int RhsOrder>
struct gemm_adapter {
    using res_scalar = typename Eigen::ScalarBinaryOpTraits<LhsScalar, RhsScalar>::ReturnType;
    using scalar = typename res_scalar::scalar_type;
    using Traits = Eigen::internal::gebp_traits<LhsScalar, RhsScalar>;  // named by gemm_functor

    template <class Blocking, class Info>
    static void run(Eigen::Index rows, Eigen::Index cols, Eigen::Index depth, const LhsScalar* lhs,
                    Eigen::Index lhs_stride, const RhsScalar* rhs, Eigen::Index rhs_stride, res_scalar* res,
                    Eigen::Index res_incr, Eigen::Index res_stride, const res_scalar& alpha, Blocking&,
                    Info* info = nullptr) {
        if (info != nullptr)
            throw usage_error("an Eigen product of tapeflow::Real ran multithreaded (OpenMP); a tape "
                              "belongs to one thread: call Eigen::setNbThreads(1)");
        using Index = Eigen::Index;
        record_product<scalar>(
            rows, cols, depth,
            [&](Index i, Index k) -> const LhsScalar& {
                return lhs[LhsOrder == Eigen::ColMajor ? i + k * lhs_stride : i * lhs_stride + k];
            },
            [&](Index k, Index j) -> const RhsScalar& {
                return rhs[RhsOrder == Eigen::ColMajor ? k + j * rhs_stride : k * rhs_stride + j];
            },
            [&](Index i, Index j) -> res_scalar& { return res[i * res_incr + j * res_stride]; }, alpha);
    }
};

// res (stride res_incr) += alpha * lhs * rhs for a vector rhs, from the
// arguments of Eigen's general_matrix_vector_product.
template <class LhsScalar, class LhsMapper, class RhsScalar, class RhsMapper>
struct gemv_adapter {
    using res_scalar = typename Eigen::ScalarBinaryOpTraits<LhsScalar, RhsScalar>::ReturnType;
    using scalar = typename res_scalar::scalar_type;

    template <class Alpha>
    static void run(Eigen::Index rows, Eigen::Index cols, const LhsMapper& lhs, const RhsMapper& rhs,
                    res_scalar* res, Eigen::Index res_incr, const Alpha& alpha) {
        using Index = Eigen::Index;
        record_product<scalar>(
            rows, 1, cols, [&](Index i, Index k) -> const LhsScalar& { return lhs(i, k); },
            [&](Index k, Index) -> const RhsScalar& { return rhs(k, 0); },
            [&](Index i, Index) -> res_scalar& { return res[i * res_incr]; }, alpha);
    }
};

}  // namespace tapeflow::detail

namespace Eigen::internal {

// The three scalar pairings, column-major result (Eigen maps a row-major
// result onto these by transposing).
template <typename Index, class S, int LhsOrder, bool ConjLhs, int RhsOrder, bool ConjRhs, int ResInnerStride>
struct general_matrix_matrix_product<Index, tapeflow::basic_real<S>, LhsOrder, ConjLhs, tapeflow::basic_real<S>,
                                     RhsOrder, ConjRhs, ColMajor, ResInnerStride>
    : tapeflow::detail::gemm_adapter<tapeflow::basic_real<S>, LhsOrder, tapeflow::basic_real<S>, RhsOrder> {};
template <typename Index, class S, int LhsOrder, bool ConjLhs, int RhsOrder, bool ConjRhs, int ResInnerStride>
struct general_matrix_matrix_product<Index, tapeflow::basic_real<S>, LhsOrder, ConjLhs, S, RhsOrder, ConjRhs,
                                     ColMajor, ResInnerStride>
    : tapeflow::detail::gemm_adapter<tapeflow::basic_real<S>, LhsOrder, S, RhsOrder> {};
template <typename Index, class S, int LhsOrder, bool ConjLhs, int RhsOrder, bool ConjRhs, int ResInnerStride>
struct general_matrix_matrix_product<Index, S, LhsOrder, ConjLhs, tapeflow::basic_real<S>, RhsOrder, ConjRhs,
                                     ColMajor, ResInnerStride>
    : tapeflow::detail::gemm_adapter<S, LhsOrder, tapeflow::basic_real<S>, RhsOrder> {};

// Matrix-vector: the three pairings for each storage order of the matrix.
template <typename Index, class S, typename LhsMapper, bool ConjLhs, typename RhsMapper, bool ConjRhs, int Version>
struct general_matrix_vector_product<Index, tapeflow::basic_real<S>, LhsMapper, ColMajor, ConjLhs,
                                     tapeflow::basic_real<S>, RhsMapper, ConjRhs, Version>
    : tapeflow::detail::gemv_adapter<tapeflow::basic_real<S>, LhsMapper, tapeflow::basic_real<S>, RhsMapper> {};
template <typename Index, class S, typename LhsMapper, bool ConjLhs, typename RhsMapper, bool ConjRhs, int Version>
struct general_matrix_vector_product<Index, tapeflow::basic_real<S>, LhsMapper, RowMajor, ConjLhs,
                                     tapeflow::basic_real<S>, RhsMapper, ConjRhs, Version>
    : tapeflow::detail::gemv_adapter<tapeflow::basic_real<S>, LhsMapper, tapeflow::basic_real<S>, RhsMapper> {};
template <typename Index, class S, typename LhsMapper, bool ConjLhs, typename RhsMapper, bool ConjRhs, int Version>
struct general_matrix_vector_product<Index, tapeflow::basic_real<S>, LhsMapper, ColMajor, ConjLhs, S, RhsMapper,
                                     ConjRhs, Version>
    : tapeflow::detail::gemv_adapter<tapeflow::basic_real<S>, LhsMapper, S, RhsMapper> {};
template <typename Index, class S, typename LhsMapper, bool ConjLhs, typename RhsMapper, bool ConjRhs, int Version>
struct general_matrix_vector_product<Index, tapeflow::basic_real<S>, LhsMapper, RowMajor, ConjLhs, S, RhsMapper,
                                     ConjRhs, Version>
    : tapeflow::detail::gemv_adapter<tapeflow::basic_real<S>, LhsMapper, S, RhsMapper> {};
template <typename Index, class S, typename LhsMapper, bool ConjLhs, typename RhsMapper, bool ConjRhs, int Version>
struct general_matrix_vector_product<Index, S, LhsMapper, ColMajor, ConjLhs, tapeflow::basic_real<S>, RhsMapper,
                                     ConjRhs, Version>
    : tapeflow::detail::gemv_adapter<S, LhsMapper, tapeflow::basic_real<S>, RhsMapper> {};
template <typename Index, class S, typename LhsMapper, bool ConjLhs, typename RhsMapper, bool ConjRhs, int Version>
struct general_matrix_vector_product<Index, S, LhsMapper, RowMajor, ConjLhs, tapeflow::basic_real<S>, RhsMapper,
                                     ConjRhs, Version>
    : tapeflow::detail::gemv_adapter<S, LhsMapper, tapeflow::basic_real<S>, RhsMapper> {};

// A Real x double matrix-vector product passes its scale factor as a double.
// The factor is 1 unless Eigen pulled a scalar out of the operands, as in
// (s * A) * v; when that scalar is active its derivative cannot be kept.
// (Eigen rewrites s * (A * v) into (s * A) * v, so that form meets it too.)
template <class S>
struct get_factor<tapeflow::basic_real<S>, S> {
    static S run(const tapeflow::basic_real<S>& x) {
        if (x.is_active())
            throw tapeflow::usage_error("Eigen product (s * A) * v (or s * (A * v), which Eigen rewrites into "
                                        "it) with an active Real s, a Real matrix A and a double vector v: "
                                        "write (s * A) * v.cast<Real>(), or name the product first "
                                        "(VectorX<Real> t = A * v; then s * t)");
        return x.value();
    }
};

}  // namespace Eigen::internal
