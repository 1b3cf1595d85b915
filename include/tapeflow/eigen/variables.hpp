// tapeflow/eigen/variables.hpp - the elements of an Eigen matrix of Real as
// the inputs of a gradient, and their adjoints as a matrix of doubles.
//
//   Eigen::MatrixX<Real> A = A0.cast<Real>();   // values
//   tape.start_recording();
//   tapeflow::register_inputs(tape, A);         // every element an input
//   ... record f(A), seed, sweep ...
//   Eigen::MatrixXd A_bar = tapeflow::adjoints(tape, A);
//
// The same as tape.register_input / tape.adjoint on each element, with the
// owner-thread and recording checks made once per column (per row of a
// row-major matrix, once for a vector) instead of once per element (the
// difference shows in the gradient of a cheap function of a big matrix:
// bench/eigen.cpp). Works for matrices, vectors, maps and blocks (A.col(j),
// A.topRows(k)), in either storage order.
#pragma once

#include <type_traits>

#include <Eigen/Core>

#include "../real.hpp"
#include "num_traits.hpp"

namespace tapeflow {

namespace detail {

// Calls f(first, last, k) with iterators over the k-th run of m's elements
// in storage order: all of a vector (k = -1), else column k of a
// column-major matrix or row k of a row-major one. The tape checks once per
// run.
template <class Derived, class F>
void for_each_run(Derived& m, F f) {
    if constexpr (Derived::IsVectorAtCompileTime) {
        f(m.begin(), m.end(), Eigen::Index(-1));
    } else {
        for (Eigen::Index k = 0; k < m.outerSize(); ++k) {
            auto run = [&] {
                if constexpr (Derived::IsRowMajor) return m.row(k);
                else return m.col(k);
            }();
            f(run.begin(), run.end(), k);
        }
    }
}

}  // namespace detail

/// t.register_input on every element of m (which must be writable: a
/// matrix, a map or a block of one).
/// \throws usage_error if the tape is not recording or belongs to another thread.
template <class S, class Derived>
void register_inputs(basic_tape<S>& t, Eigen::DenseBase<Derived>& m) {
    static_assert(std::is_same_v<typename Derived::Scalar, basic_real<S>>,
                  "tapeflow::register_inputs: the matrix must hold the tape's Real");
    detail::for_each_run(m.derived(), [&](auto first, auto last, Eigen::Index) { t.register_inputs(first, last); });
}
/// For a block given as a temporary: register_inputs(tape, A.topRows(2)).
template <class S, class Derived>
void register_inputs(basic_tape<S>& t, Eigen::DenseBase<Derived>&& m) {
    register_inputs(t, m);
}

/// The adjoints of the elements of m, as a double matrix of m's shape:
/// t.adjoint on every element (0 for a passive one).
/// \throws usage_error if an element belongs to another tape.
template <class S, class Derived>
Eigen::Matrix<S, Derived::RowsAtCompileTime, Derived::ColsAtCompileTime> adjoints(
    const basic_tape<S>& t, const Eigen::DenseBase<Derived>& m) {
    static_assert(std::is_same_v<typename Derived::Scalar, basic_real<S>>,
                  "tapeflow::adjoints: the matrix must hold the tape's Real");
    Eigen::Matrix<S, Derived::RowsAtCompileTime, Derived::ColsAtCompileTime> a(m.rows(), m.cols());
    detail::for_each_run(m.derived(), [&](auto first, auto last, Eigen::Index k) {
        if constexpr (Derived::IsVectorAtCompileTime)
            t.adjoints(first, last, a.data());  // a vector's elements are contiguous
        else if constexpr (Derived::IsRowMajor)
            t.adjoints(first, last, a.row(k).begin());
        else
            t.adjoints(first, last, a.col(k).begin());
    });
    return a;
}

}  // namespace tapeflow
