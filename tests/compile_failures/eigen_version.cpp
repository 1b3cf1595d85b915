// The Eigen integration specializes internals of Eigen 3.4 (the product
// kernels, assign_op): with another Eigen it must stop at the static_assert
// of tapeflow/eigen/num_traits.hpp rather than compile against internals
// that may have changed. Here the Eigen found claims to be 3.3; the legal
// spelling leaves its version alone.
#include <Eigen/Core>

#ifndef TAPEFLOW_CONTROL
#undef EIGEN_MAJOR_VERSION
#define EIGEN_MAJOR_VERSION 3
#endif

#include <tapeflow/eigen/variables.hpp>

tapeflow::Real first(const Eigen::Matrix<tapeflow::Real, Eigen::Dynamic, 1>& v) { return v(0); }
