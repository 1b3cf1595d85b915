// tapeflow/eigen/num_traits.hpp - what Eigen needs to know about basic_real,
// in ONE place that every tapeflow Eigen header includes.
//
// NumTraits makes Matrix<Real, ...> work; ScalarBinaryOpTraits both ways with
// the underlying scalar makes mixed Real/double expressions return Real
// (A_real * 2.0, A_real + B_double, ...). std::numeric_limits and the
// std:: math names come from tapeflow/std.hpp. After them come the two other
// specializations of Eigen's internals for Real, parts of this header:
//
//   detail/assignment.hpp  Eigen MOVES a computed coefficient into its
//                          destination (one record per coefficient, not two);
//   detail/products.hpp    every dynamic-size product (Real x Real,
//                          Real x double, double x Real) is ONE tape entry.
//
// Why together: a specialization changes how Eigen compiles code on Real, so
// it must be seen by every translation unit that can name Matrix<Real>. When
// the product kernels were a header of their own, a 40 x 40 product was one
// entry in a file that included <tapeflow/eigen.hpp> and 249 600 statements
// in one that included <tapeflow/eigen/variables.hpp>; two such files in one
// program broke the one-definition rule (the linker kept one of the two
// Eigen kernels for both). Now eigen.hpp, num_traits.hpp, products.hpp,
// assignment.hpp, linear_algebra.hpp and variables.hpp all give the same
// Eigen (tests/eigen/entry_point_test.cpp).
//
// Include a tapeflow Eigen header before any code that instantiates Eigen
// templates on Real.
#pragma once

#include <Eigen/Core>

#include "../tapeflow.hpp"

// The parts below specialize internals of Eigen 3.4 (assign_op,
// general_matrix_matrix_product, general_matrix_vector_product, get_factor),
// whose names and argument lists other versions change.
static_assert(EIGEN_WORLD_VERSION == 3 && EIGEN_MAJOR_VERSION == 4,
              "tapeflow/eigen is written for Eigen 3.4: its assignment and product "
              "specializations (tapeflow/eigen/detail/) replace internals of that version");

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

// The parts refuse to be included on their own (each would give a different
// Eigen): this macro says that they are included from here.
#define TAPEFLOW_EIGEN_NUM_TRAITS 1
#include "detail/assignment.hpp"
#include "detail/products.hpp"
// Eigen vectors as inputs of tapeflow::gradient and the other drivers.
#include "drivers.hpp"
