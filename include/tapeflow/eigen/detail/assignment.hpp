// tapeflow/eigen/detail/assignment.hpp - Eigen stores a coefficient that is
// a temporary by MOVING it into the destination. A part of
// eigen/num_traits.hpp, which includes it after NumTraits<Real>: alone,
// is_arithmetic<Real> would make Eigen's default NumTraits treat Real as a
// plain number that needs no constructor.
//
// Eigen evaluates `C = A + B` coefficient by coefficient and stores each one
// through assign_op::assignCoeff(Real& c, const Real& value). Copying an
// active Real is a statement on the tape (real.hpp), so a copy there would
// make two statements per coefficient where one does. Two pieces avoid it:
//
// - Eigen returns an expression's coefficient as `const Scalar` unless
//   internal::is_arithmetic<Scalar> holds (the const only silences compiler
//   warnings for built-in types, says DenseCoeffsBase.h), and a const
//   temporary cannot be moved from. is_arithmetic<Real> is true here; Eigen
//   3.4 reads it nowhere else for a Real (NumTraits<Real> sets
//   RequireInitialization itself).
// - assign_op<Real, Real> gets an overload for rvalues that takes the
//   temporary's identifier.
//
// Coefficients read from a matrix (`C = A`, blocks, maps) arrive as const
// references and are still copied, as they must be: the source keeps its
// identifier.
#pragma once

#include <utility>

#include <Eigen/Core>

#include "../../real.hpp"

#ifndef TAPEFLOW_EIGEN_NUM_TRAITS
#error "tapeflow/eigen/detail/assignment.hpp is a part of tapeflow/eigen/num_traits.hpp: include that, or any tapeflow Eigen header"
#endif

namespace Eigen::internal {

template <class S>
struct is_arithmetic<tapeflow::basic_real<S>> {
    enum { value = true };
};

template <class S>
struct assign_op<tapeflow::basic_real<S>, tapeflow::basic_real<S>> {
    using real = tapeflow::basic_real<S>;
    void assignCoeff(real& a, const real& b) const { a = b; }
    void assignCoeff(real& a, real&& b) const { a = std::move(b); }  // b: a coefficient Eigen computed
};

}  // namespace Eigen::internal
