// tapeflow/eigen.hpp - Eigen matrices of tapeflow::Real (opt-in; needs Eigen 3.4).
//
//   #include <tapeflow/eigen.hpp>
//   Eigen::Matrix<tapeflow::Real, Eigen::Dynamic, Eigen::Dynamic> A = ...;
//
// What you get:
//   eigen/num_traits.hpp   Matrix<Real, ...> of any size; mixed Real/double
//                          expressions; array() functions; reductions;
//                          Eigen's decompositions on Real (taped per scalar);
//                          and, as parts of it (eigen/detail/):
//                            every dynamic-size product (Real x Real,
//                            Real x double, double x Real) taped as ONE entry
//                            with a matrix-product reverse rule;
//                            computed coefficients moved, not copied, into
//                            their destination.
//   eigen/linear_algebra.hpp  tapeflow::dot / squared_norm / norm as one
//                          entry; tapeflow::llt / ldlt / partial_piv_lu /
//                          householder_qr: solves taped as one entry whose
//                          reverse is one solve with the same factorization.
//   eigen/variables.hpp    tapeflow::register_inputs(tape, A) and
//                          tapeflow::adjoints(tape, A): a matrix's elements
//                          as inputs, their adjoints as a double matrix.
//   eigen/matrix_variable.hpp  tapeflow::matrix_variable: a whole matrix as
//                          ONE variable (a range of identifiers): products,
//                          sums, dot and its adjoints without a pass over
//                          per-element identifiers (the fast path for big
//                          products).
// Every tapeflow Eigen header (these, and eigen/products.hpp,
// eigen/assignment.hpp) includes num_traits.hpp, so whichever one a
// translation unit includes, Eigen compiles the same code for Real.
// docs/eigen.md explains which path a piece of Eigen code takes.
#pragma once

#include "eigen/num_traits.hpp"
#include "eigen/linear_algebra.hpp"
#include "eigen/variables.hpp"
#include "eigen/matrix_variable.hpp"
