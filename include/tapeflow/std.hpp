// tapeflow/std.hpp - what the standard library needs to know of basic_real.
//
// 1. std::numeric_limits<basic_real<S>> mirrors std::numeric_limits<S>
//    (specializing numeric_limits for a program-defined type is allowed;
//    tapeflow/dual.hpp does the same for basic_dual).
// 2. Unless TAPEFLOW_NO_STD_OVERLOADS is defined, tapeflow's math functions
//    are also declared in namespace std, so templated code that calls
//    std::sin(x) or std::pow(x, 2) works with Real unchanged, as it does with
//    the established AD libraries. Formally the standard reserves namespace
//    std; define TAPEFLOW_NO_STD_OVERLOADS to opt out and call the functions
//    unqualified (argument-dependent lookup finds tapeflow::sin).
#pragma once

#include <limits>

#include "expr/binary_functions.hpp"
#include "expr/comparisons.hpp"
#include "expr/special_functions.hpp"
#include "expr/unary_functions.hpp"
#include "numeric_limits.hpp"
#include "real.hpp"

namespace std {

template <class S>
class numeric_limits<tapeflow::basic_real<S>>
    : public tapeflow::detail::active_numeric_limits<tapeflow::basic_real<S>, S> {};

#ifndef TAPEFLOW_NO_STD_OVERLOADS
using tapeflow::abs;
using tapeflow::acos;
using tapeflow::acosh;
using tapeflow::asin;
using tapeflow::asinh;
using tapeflow::atan;
using tapeflow::atan2;
using tapeflow::atanh;
using tapeflow::cbrt;
using tapeflow::ceil;
using tapeflow::copysign;
using tapeflow::cos;
using tapeflow::cosh;
using tapeflow::erf;
using tapeflow::erfc;
using tapeflow::exp;
using tapeflow::exp2;
using tapeflow::expm1;
using tapeflow::fabs;
using tapeflow::fdim;
using tapeflow::floor;
using tapeflow::fma;
using tapeflow::fmax;
using tapeflow::fmin;
using tapeflow::fmod;
using tapeflow::hypot;
using tapeflow::isfinite;
using tapeflow::isinf;
using tapeflow::isnan;
using tapeflow::isnormal;
using tapeflow::ldexp;
using tapeflow::lgamma;
using tapeflow::log;
using tapeflow::log10;
using tapeflow::log1p;
using tapeflow::log2;
using tapeflow::max;
using tapeflow::min;
using tapeflow::nearbyint;
using tapeflow::pow;
using tapeflow::remainder;
using tapeflow::rint;
using tapeflow::round;
using tapeflow::scalbln;
using tapeflow::scalbn;
using tapeflow::signbit;
using tapeflow::sin;
using tapeflow::sinh;
using tapeflow::sqrt;
using tapeflow::tan;
using tapeflow::tanh;
using tapeflow::tgamma;
using tapeflow::trunc;
#endif

}  // namespace std
