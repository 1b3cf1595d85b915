// tapeflow/eigen/drivers.hpp - Eigen vectors as inputs of the drivers
// (tapeflow::gradient, value_and_gradient, jacobian; driver_arguments.hpp).
//
// An Eigen column or row vector of float, double or long double (fixed or
// dynamic size) is an input: f receives the same vector type of Real, and
// the gradient comes back as the input's vector type. (jacobian also takes
// an f that returns an Eigen vector of Real: any contiguous range does.)
// Included by num_traits.hpp, so every tapeflow Eigen header gives it.
//
// **Example**:
//   Eigen::VectorXd x(3);
//   x << 1, 2, 3;
//   Eigen::VectorXd g = tapeflow::gradient(
//       [](const Eigen::Matrix<tapeflow::Real, Eigen::Dynamic, 1>& v) { return v.squaredNorm(); }, x);
#pragma once

#include <type_traits>

#include <Eigen/Core>

#include "../driver_arguments.hpp"

namespace tapeflow {

template <class S, int Rows, int Cols, int Options, int MaxRows, int MaxCols>
struct driver_argument<Eigen::Matrix<S, Rows, Cols, Options, MaxRows, MaxCols>,
                       std::enable_if_t<std::is_floating_point_v<S> && (Rows == 1 || Cols == 1)>> {
    static constexpr bool supported = true;
    using scalar = S;
    using input = Eigen::Matrix<S, Rows, Cols, Options, MaxRows, MaxCols>;
    using active = Eigen::Matrix<basic_real<S>, Rows, Cols, Options, MaxRows, MaxCols>;
    using gradient = input;
    static active to_active(const input& x) {
        active a;
        a.resize(x.rows(), x.cols());  // (a constructor with two sizes would set a Vector2's values)
        for (Eigen::Index i = 0; i < x.size(); ++i) a.data()[i] = x.data()[i];
        return a;
    }
    static gradient gradient_like(const input& x) { return gradient::Zero(x.rows(), x.cols()); }
};

}  // namespace tapeflow
