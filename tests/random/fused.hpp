// tests/random/fused.hpp - helpers of interpreter.hpp: math for double under
// the names tapeflow uses, and the fused patterns.
//
// A fused pattern is ONE statement with many operations and repeated
// operands (with Real: one record, duplicate operands merged; pattern 9 has
// 20 active leaves, above the merge limit of 16). Each is safe for any real
// operands; the generator passes operands with |x| <= 4 and the bounds in
// program.hpp assume that.
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>

#include <tapeflow/config.hpp>  // TAPEFLOW_NOINLINE

#include "program.hpp"  // fused_patterns

namespace tapeflow_random {

// ---- the primal value of any number type --------------------------------------
inline double primal(double x) { return x; }
template <class T>
double primal(const T& x) {
    return primal(x.value());  // a basic_real<Dual>'s value is a Dual
}

// ---- double versions, with the selection rules tapeflow documents --------------
inline double sqrt(double x) { return std::sqrt(x); }
inline double cbrt(double x) { return std::cbrt(x); }
inline double exp(double x) { return std::exp(x); }
inline double exp2(double x) { return std::exp2(x); }
inline double expm1(double x) { return std::expm1(x); }
inline double log(double x) { return std::log(x); }
inline double log2(double x) { return std::log2(x); }
inline double log10(double x) { return std::log10(x); }
inline double log1p(double x) { return std::log1p(x); }
inline double sin(double x) { return std::sin(x); }
inline double cos(double x) { return std::cos(x); }
inline double tan(double x) { return std::tan(x); }
inline double asin(double x) { return std::asin(x); }
inline double acos(double x) { return std::acos(x); }
inline double atan(double x) { return std::atan(x); }
inline double sinh(double x) { return std::sinh(x); }
inline double cosh(double x) { return std::cosh(x); }
inline double tanh(double x) { return std::tanh(x); }
inline double asinh(double x) { return std::asinh(x); }
inline double acosh(double x) { return std::acosh(x); }
inline double atanh(double x) { return std::atanh(x); }
inline double abs(double x) { return std::fabs(x); }
inline double fabs(double x) { return std::fabs(x); }
inline double erf(double x) { return std::erf(x); }
inline double erfc(double x) { return std::erfc(x); }
inline double tgamma(double x) { return std::tgamma(x); }
inline double lgamma(double x) { return std::lgamma(x); }
inline double floor(double x) { return std::floor(x); }
inline double ceil(double x) { return std::ceil(x); }
inline double round(double x) { return std::round(x); }
inline double trunc(double x) { return std::trunc(x); }
inline double rint(double x) { return std::rint(x); }
inline double nearbyint(double x) { return std::nearbyint(x); }
inline double pow(double a, double b) { return std::pow(a, b); }
inline double pow(double a, int n) { return std::pow(a, double(n)); }
inline double atan2(double y, double x) { return std::atan2(y, x); }
inline double hypot(double a, double b) { return std::hypot(a, b); }
inline double hypot(double a, double b, double c) { return std::hypot(a, b, c); }
inline double fmin(double a, double b) { return a <= b ? a : b; }
inline double fmax(double a, double b) { return a >= b ? a : b; }
inline double min(double a, double b) { return b < a ? b : a; }
inline double max(double a, double b) { return a < b ? b : a; }
inline double fmod(double a, double b) { return std::fmod(a, b); }
inline double copysign(double a, double b) { return std::copysign(a, b); }
inline double remainder(double a, double b) { return std::remainder(a, b); }
inline double fdim(double a, double b) { return std::fdim(a, b); }
inline double fma(double a, double b, double c) { return std::fma(a, b, c); }
inline double ldexp(double x, int e) { return std::ldexp(x, e); }

// ---- fused patterns ---------------------------------------------------------------
/// out = pattern K of (a, b, c, d), as one assignment. One function per
/// pattern, kept out of line: with the sixteen statements as cases of one
/// switch, GCC's inliner spent 30 of the 101 s that
/// second_order_program_test took to compile at -O3 on that one function
/// (-ftime-report, "ipa inlining heuristics"; 2.2 s split). Each statement
/// is compiled as before, inside its own function.
template <int K, class T>
TAPEFLOW_NOINLINE void fused_pattern(T& out, const T& a, const T& b, const T& c, const T& d) {
    static_assert(K >= 0 && K < fused_patterns);
    if constexpr (K == 0) {
        out = a * b + c * d - a / (1.5 + b * b);
    } else if constexpr (K == 1) {
        out = sin(a) * cos(b) + exp(-c * c) * d;
    } else if constexpr (K == 2) {
        out = sqrt(a * a + b * b + 0.25) - log(1.0 + c * c) + tanh(d) * a;
    } else if constexpr (K == 3) {
        out = pow(1.0 + a * a, 0.5 * tanh(b)) * atan2(c, 2.0 + d * d) + hypot(a, b, 0.5);
    } else if constexpr (K == 4) {
        out = (a - b) * (a + b) / (1.0 + c * c + d * d);
    } else if constexpr (K == 5) {
        out = fmax(a, b) * fmin(c, d) - max(a, c) + min(b, d);
    } else if constexpr (K == 6) {
        out = erf(a) * erfc(b) + atan(c) * asinh(d) - cbrt(2.0 + tanh(a));
    } else if constexpr (K == 7) {
        out = a * a * a - 3.0 * a * b + b / (1.0 + exp(sin(c)));
    } else if constexpr (K == 8) {
        out = log1p(a * a) * cosh(0.5 * tanh(b)) + sinh(0.3 * sin(c)) - expm1(-d * d * 0.1);
    } else if constexpr (K == 9) {
        out = a * b + b * c + c * d + d * a + a * c + b * d + a + b + c + d - 0.01 * a * b * c * d;
    } else if constexpr (K == 10) {
        out = copysign(a, b) * abs(c) + fabs(d) * fmod(a, 1.5 + b * b) - (-a);
    } else if constexpr (K == 11) {
        out = asin(0.9 * tanh(a)) + acos(0.8 * sin(b)) * atanh(0.5 * tanh(c)) + acosh(1.5 + d * d) +
              tan(0.7 * tanh(d));
    } else if constexpr (K == 12) {
        out = exp2(2.0 * tanh(a)) * log2(2.0 + b * b) + log10(3.0 + c * c) * tgamma(2.5 + tanh(d)) -
              lgamma(3.0 + sin(a));
    } else if constexpr (K == 13) {
        out = floor(a) * b + ceil(c) * d - round(a * b) + trunc(c - d);
    } else if constexpr (K == 14) {
        out = (+a) * pow(b, 2) - pow(c, 3) / (4.0 + d * d) + pow(2.0 + sin(d), -2);
    } else {
        out = -(a * b) + 2.0 * (c - 1.0) * (d + 1.0) - a / 2.5 + 1.0 / (1.0 + a * a);
    }
}

/// out = pattern k of (a, b, c, d): fused_pattern<k>, the last pattern for
/// any k outside [0, fused_patterns), as the default case of a switch.
template <class T, int... K>
void fused(int k, T& out, const T& a, const T& b, const T& c, const T& d, std::integer_sequence<int, K...>) {
    using pattern = void (*)(T&, const T&, const T&, const T&, const T&);
    static constexpr pattern patterns[] = {&fused_pattern<K, T>...};
    patterns[k >= 0 && k < fused_patterns ? k : fused_patterns - 1](out, a, b, c, d);
}
template <class T>
void fused(int k, T& out, const T& a, const T& b, const T& c, const T& d) {
    fused(k, out, a, b, c, d, std::make_integer_sequence<int, fused_patterns>{});
}

/// The discrete decisions inside pattern k (computed as the pattern computes them).
inline std::uint64_t fused_kinks(int k, double a, double b, double c, double d) {
    std::uint64_t h = 0;
    const auto bit = [&h](bool x) { h = h * 2 + (x ? 1 : 0); };
    const auto whole = [&h](double x) {
        h = h * 1000003 + std::uint64_t(std::int64_t(std::fmax(-1e15, std::fmin(1e15, x))));
    };
    switch (k) {
    case 5:
        bit(a >= b);
        bit(c <= d);
        bit(a < c);
        bit(d < b);
        break;
    case 10: {
        const double q = 1.5 + b * b;
        bit(std::signbit(a) == std::signbit(b));
        bit(c > 0);
        bit(c < 0);
        bit(d > 0);
        bit(d < 0);
        whole(std::round((a - std::fmod(a, q)) / q));
        break;
    }
    case 13:
        whole(std::floor(a));
        whole(std::ceil(c));
        whole(std::round(a * b));
        whole(std::trunc(c - d));
        break;
    default: break;
    }
    return h;
}

}  // namespace tapeflow_random
