// tests/random/eigen_dual.hpp - what Eigen needs to know about the tests'
// dual numbers (tests/support/dual.hpp), so that Eigen::Matrix of duals runs
// the same Eigen code as a matrix of double or of tapeflow::Real.
//
// Eigen reaches the dual's math through its numext:: functions, which call
// sqrt, abs, exp, ... unqualified: argument-dependent lookup finds the
// dual's friends. Mixed dual/double expressions are not declared: the
// interpreter casts double matrices to the dual type (the value of a dual
// times a constant dual is the product of the values, as with doubles).
#pragma once

#include <Eigen/Core>

#include "support/dual.hpp"

namespace Eigen {

template <bool Magnitudes>
struct NumTraits<tapeflow_test::basic_dual<Magnitudes>> : NumTraits<double> {
    using D = tapeflow_test::basic_dual<Magnitudes>;
    using Real = D;
    using NonInteger = D;
    using Nested = D;
    using Literal = double;
    // The costs of tapeflow::Real (tapeflow/eigen/num_traits.hpp): they only
    // steer unrolling and temporaries, but keeping them equal keeps Eigen's
    // choices equal for the two types.
    enum {
        IsComplex = 0,
        IsInteger = 0,
        IsSigned = 1,
        RequireInitialization = 0,  // two doubles, trivially copyable
        ReadCost = 1,
        AddCost = 2,
        MulCost = 3
    };
    static D epsilon() { return NumTraits<double>::epsilon(); }
    static D dummy_precision() { return NumTraits<double>::dummy_precision(); }
    static D highest() { return NumTraits<double>::highest(); }
    static D lowest() { return NumTraits<double>::lowest(); }
    static D infinity() { return NumTraits<double>::infinity(); }
    static D quiet_NaN() { return NumTraits<double>::quiet_NaN(); }
    static int digits10() { return NumTraits<double>::digits10(); }
};

}  // namespace Eigen
