// tapeflow/tape/scalar.hpp - what a tape may hold as its scalar type.
//
// A tape's Scalar is the type of its partials and adjoints, the S of
// basic_real<S>:
//
//   float, double, long double     first derivatives (the usual case)
//   basic_dual<F, N>, F one of     forward over reverse: partials and adjoints
//     those                        carry N tangents, and the gradient's
//                                  tangents are Hessian-vector products
//                                  (hessian_drivers.hpp, docs/modes.md)
//
// The sweep asks two things of an adjoint or partial that `==` cannot answer
// for a Dual (its comparisons look at the value alone): whether it is zero
// in every component (an adjoint of value 0 with a tangent of 1 still has
// something to pass on), and whether it is finite in every component.
#pragma once

#include <cstddef>
#include <type_traits>

#include "../config.hpp"

namespace tapeflow {

template <class S, std::size_t N>
class basic_dual;

namespace detail {

template <class S>
struct is_tape_scalar : std::is_floating_point<S> {};
template <class F, std::size_t N>
struct is_tape_scalar<basic_dual<F, N>> : std::is_floating_point<F> {};
/// Whether basic_real<S> and basic_tape<S> may be instantiated.
template <class S>
inline constexpr bool is_tape_scalar_v = is_tape_scalar<S>::value;

/// x == 0 in every component (-0 counts as 0).
template <class S>
TAPEFLOW_ALWAYS_INLINE bool is_zero(const S& x) noexcept {
    return x == S(0);
}
template <class F, std::size_t N>
TAPEFLOW_ALWAYS_INLINE bool is_zero(const basic_dual<F, N>& x) noexcept {
    bool zero = x.value() == F(0);
    for (std::size_t i = 0; i < N; ++i) zero &= x.tangents()[i] == F(0);
    return zero;
}

/// x is finite in every component (x - x is 0 exactly then).
template <class S>
TAPEFLOW_ALWAYS_INLINE bool is_finite(const S& x) noexcept {
    return x - x == S(0);
}
template <class F, std::size_t N>
TAPEFLOW_ALWAYS_INLINE bool is_finite(const basic_dual<F, N>& x) noexcept {
    bool finite = x.value() - x.value() == F(0);
    for (std::size_t i = 0; i < N; ++i) finite &= x.tangents()[i] - x.tangents()[i] == F(0);
    return finite;
}

}  // namespace detail
}  // namespace tapeflow
