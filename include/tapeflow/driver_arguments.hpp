// tapeflow/driver_arguments.hpp - what the drivers (drivers.hpp) accept as
// an input and what they give back for it.
//
// An input x of the drivers is a vector of plain numbers. Its traits say
// which container of active numbers f receives for it and which container
// holds its gradient:
//
//   x                                   f receives                          gradient
//   std::vector<S>                      const std::vector<basic_real<S>>&   std::vector<S>
//   std::array<S, N>                    const std::array<basic_real<S>, N>& std::array<S, N>
//   Eigen::Matrix<S, R, 1> (or 1 x C)   const Eigen::Matrix<basic_real<S>, R, 1>&  Eigen::Matrix<S, R, 1>
//     (with <tapeflow/eigen.hpp>: tapeflow/eigen/drivers.hpp)
//
// S is float, double or long double. The active container's elements are
// contiguous (data(), size()), which is how the drivers register them.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "real.hpp"

namespace tapeflow {

/// Traits of a driver input type X: `supported` is false for what the
/// drivers do not take. Specializations define `scalar`, `active` (what f
/// receives), `gradient`, `to_active(x)` (passive copies of the values) and
/// `gradient_like(x)` (zeros, sized like x).
template <class X, class = void>
struct driver_argument {
    static constexpr bool supported = false;
};

template <class S, class A>
struct driver_argument<std::vector<S, A>, std::enable_if_t<std::is_floating_point_v<S>>> {
    static constexpr bool supported = true;
    using scalar = S;
    using active = std::vector<basic_real<S>>;
    using gradient = std::vector<S>;
    static active to_active(const std::vector<S, A>& x) { return active(x.begin(), x.end()); }
    static gradient gradient_like(const std::vector<S, A>& x) { return gradient(x.size(), S(0)); }
};

template <class S, std::size_t N>
struct driver_argument<std::array<S, N>, std::enable_if_t<std::is_floating_point_v<S>>> {
    static constexpr bool supported = true;
    using scalar = S;
    using active = std::array<basic_real<S>, N>;
    using gradient = std::array<S, N>;
    static active to_active(const std::array<S, N>& x) {
        active a;
        for (std::size_t i = 0; i < N; ++i) a[i] = x[i];
        return a;
    }
    static gradient gradient_like(const std::array<S, N>&) { return gradient{}; }
};

}  // namespace tapeflow
