// tapeflow/eigen/num_traits.hpp - what Eigen needs to know about basic_real.
//
// NumTraits makes Matrix<Real, ...> work; ScalarBinaryOpTraits both ways with
// the underlying scalar makes mixed Real/double expressions return Real
// (A_real * 2.0, A_real + B_double, ...). std::numeric_limits and the
// std:: math names come from tapeflow/std.hpp. assignment.hpp (included here,
// so every translation unit that sees NumTraits<Real> sees it too) makes
// Eigen move computed coefficients into their destination.
#pragma once

#include <Eigen/Core>

#include "../tapeflow.hpp"
#include "assignment.hpp"

namespace Eigen {

template <class S>
struct NumTraits<tapeflow::basic_real<S>> : NumTraits<S> {
    using Real = tapeflow::basic_real<S>;
    using NonInteger = Real;
    using Nested = Real;
    using Literal = S;
    enum {
        IsComplex = 0,
        IsInteger = 0,
        IsSigned = 1,
        RequireInitialization = 1,  // constructors and destructors must run (identifiers)
        ReadCost = 1,
        AddCost = 2,  // an add records a statement: dearer than a double add
        MulCost = 3
    };
    static Real epsilon() { return NumTraits<S>::epsilon(); }
    static Real dummy_precision() { return NumTraits<S>::dummy_precision(); }
    static Real highest() { return NumTraits<S>::highest(); }
    static Real lowest() { return NumTraits<S>::lowest(); }
    static Real infinity() { return NumTraits<S>::infinity(); }
    static Real quiet_NaN() { return NumTraits<S>::quiet_NaN(); }
};

template <class S, class Op>
struct ScalarBinaryOpTraits<tapeflow::basic_real<S>, S, Op> {
    using ReturnType = tapeflow::basic_real<S>;
};
template <class S, class Op>
struct ScalarBinaryOpTraits<S, tapeflow::basic_real<S>, Op> {
    using ReturnType = tapeflow::basic_real<S>;
};

}  // namespace Eigen
