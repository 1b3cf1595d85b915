// tapeflow/std.hpp - what the standard library needs to know of basic_real.
//
// 1. std::numeric_limits<basic_real<S>> mirrors std::numeric_limits<S>
//    (specializing numeric_limits for a program-defined type is allowed).
// 2. Unless TAPEFLOW_NO_STD_OVERLOADS is defined, tapeflow's math functions
//    are also declared in namespace std, so templated code that calls
//    std::sin(x) or std::pow(x, 2) works with Real unchanged, as it does with
//    the established AD libraries. Formally the standard reserves namespace
//    std; define TAPEFLOW_NO_STD_OVERLOADS to opt out and call the functions
//    unqualified (argument-dependent lookup finds tapeflow::sin).
#pragma once

#include <limits>

#include "real.hpp"

namespace std {

template <class S>
class numeric_limits<tapeflow::basic_real<S>> {
    using base = numeric_limits<S>;
    using real = tapeflow::basic_real<S>;

public:
    static constexpr bool is_specialized = true;
    static constexpr bool is_signed = base::is_signed;
    static constexpr bool is_integer = false;
    static constexpr bool is_exact = false;
    static constexpr bool has_infinity = base::has_infinity;
    static constexpr bool has_quiet_NaN = base::has_quiet_NaN;
    static constexpr bool has_signaling_NaN = base::has_signaling_NaN;
    static constexpr float_denorm_style has_denorm = base::has_denorm;
    static constexpr bool has_denorm_loss = base::has_denorm_loss;
    static constexpr float_round_style round_style = base::round_style;
    static constexpr bool is_iec559 = base::is_iec559;
    static constexpr bool is_bounded = base::is_bounded;
    static constexpr bool is_modulo = false;
    static constexpr int digits = base::digits;
    static constexpr int digits10 = base::digits10;
    static constexpr int max_digits10 = base::max_digits10;
    static constexpr int radix = base::radix;
    static constexpr int min_exponent = base::min_exponent;
    static constexpr int min_exponent10 = base::min_exponent10;
    static constexpr int max_exponent = base::max_exponent;
    static constexpr int max_exponent10 = base::max_exponent10;
    static constexpr bool traps = base::traps;
    static constexpr bool tinyness_before = base::tinyness_before;

    static constexpr real min() noexcept { return base::min(); }
    static constexpr real lowest() noexcept { return base::lowest(); }
    static constexpr real max() noexcept { return base::max(); }
    static constexpr real epsilon() noexcept { return base::epsilon(); }
    static constexpr real round_error() noexcept { return base::round_error(); }
    static constexpr real infinity() noexcept { return base::infinity(); }
    static constexpr real quiet_NaN() noexcept { return base::quiet_NaN(); }
    static constexpr real signaling_NaN() noexcept { return base::signaling_NaN(); }
    static constexpr real denorm_min() noexcept { return base::denorm_min(); }
};

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
using tapeflow::floor;
using tapeflow::fmax;
using tapeflow::fmin;
using tapeflow::fmod;
using tapeflow::hypot;
using tapeflow::isfinite;
using tapeflow::isinf;
using tapeflow::isnan;
using tapeflow::isnormal;
using tapeflow::lgamma;
using tapeflow::log;
using tapeflow::log10;
using tapeflow::log1p;
using tapeflow::log2;
using tapeflow::max;
using tapeflow::min;
using tapeflow::pow;
using tapeflow::round;
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
