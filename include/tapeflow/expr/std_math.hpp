// tapeflow/expr/std_math.hpp - the <cmath> functions as the operations call them.
//
// The operations (unary_functions.hpp, binary_functions.hpp) and digamma are
// templates on the scalar S. S is a floating-point type, or for second
// derivatives a basic_dual (basic_real<Dual>: docs/modes.md), whose values
// and partials are themselves Duals. So they call `sin(x)`, not
// `std::sin(x)`: the using-declarations below find std::sin for a double,
// and argument-dependent lookup finds tapeflow::sin for a Dual.
#pragma once

#include <cmath>
#include <type_traits>

namespace tapeflow {
namespace detail {

using std::acos;
using std::acosh;
using std::asin;
using std::asinh;
using std::atan;
using std::atan2;
using std::atanh;
using std::cbrt;
using std::copysign;
using std::cos;
using std::cosh;
using std::erf;
using std::erfc;
using std::exp;
using std::exp2;
using std::expm1;
using std::fabs;
using std::fdim;
using std::fma;
using std::fmod;
using std::hypot;
using std::isinf;
using std::isnan;
using std::ldexp;
using std::lgamma;
using std::log;
using std::log10;
using std::log1p;
using std::log2;
using std::pow;
using std::remainder;
using std::round;
using std::signbit;
using std::sin;
using std::sinh;
using std::sqrt;
using std::tan;
using std::tanh;
using std::tgamma;

/// f (floor, ceil, round, trunc, rint or nearbyint) of a scalar: of a Dual,
/// a constant (its tangents 0, the derivative of a step function where it
/// has one).
template <class S, class F>
S step_function(const S& x, F f) {
    if constexpr (std::is_arithmetic_v<S>)
        return f(x);
    else
        return S(step_function(x.value(), f));
}

/// The plain number at the bottom of an operand's value: the value itself
/// for a Real or a Dual, the value's value for a basic_real<Dual>.
template <class S>
constexpr auto innermost_value(const S& x) noexcept {
    if constexpr (std::is_arithmetic_v<S>)
        return x;
    else
        return innermost_value(x.value());
}

}  // namespace detail
}  // namespace tapeflow
