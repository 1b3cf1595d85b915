// tests/support/dual.hpp - forward-mode dual numbers, the reference of the tests.
//
// A dual number is a value v and one tangent d: it represents v + d*eps with
// eps^2 = 0, so that f(v + d eps) = f(v) + f'(v) d eps. Seeding the tangent of
// input i with 1 (and 0 for the others) and running a program once gives
// d(output)/d(input i). Every derivative below is written from calculus,
// independently of tapeflow (this header must not include tapeflow).
//
// Values are computed with exactly the std:: function the library uses for
// the primal, so a program run with dual numbers takes the same branches as
// the same program run with tapeflow::Real or double.
//
// Where a derivative does not exist the dual follows the conventions that
// tapeflow documents (expr/unary_functions.hpp, expr/binary_functions.hpp):
// abs'(0) = 0; fmin/fmax pick the first argument at a tie, min/max follow
// std::min/std::max; atan2 and hypot have zero partials at the origin;
// floor/ceil/round/trunc/rint/nearbyint have derivative 0; fdim has zero
// partials where a <= b.
//
// dual_magnitude runs the same chain rule with the magnitude of every
// coefficient: its tangent is the sum over all paths from the input of
// |product of the partials|, the scale of the terms that a derivative adds
// up. Rounding errors of any way of computing the derivative are a small
// multiple of eps times it, however much the terms cancel.
#pragma once

#include <cmath>
#include <ostream>

namespace tapeflow_test {

template <bool Magnitudes>
struct basic_dual {
    using D = basic_dual;

    double v = 0;  ///< value
    double d = 0;  ///< tangent

    constexpr basic_dual() = default;
    constexpr basic_dual(double value) : v(value) {}  // NOLINT: a constant has tangent 0
    constexpr basic_dual(double value, double tangent) : v(value), d(tangent) {}

    constexpr double value() const { return v; }
    constexpr double tangent() const { return d; }

    D& operator+=(const D& b) { return *this = *this + b; }
    D& operator-=(const D& b) { return *this = *this - b; }
    D& operator*=(const D& b) { return *this = *this * b; }
    D& operator/=(const D& b) { return *this = *this / b; }
    D& operator++() { return *this = *this + 1.0; }
    D& operator--() { return *this = *this - 1.0; }
    D operator++(int) {
        const D old = *this;
        ++*this;
        return old;
    }
    D operator--(int) {
        const D old = *this;
        --*this;
        return old;
    }

    friend bool operator<(const D& a, const D& b) { return a.v < b.v; }
    friend bool operator>(const D& a, const D& b) { return a.v > b.v; }
    friend bool operator<=(const D& a, const D& b) { return a.v <= b.v; }
    friend bool operator>=(const D& a, const D& b) { return a.v >= b.v; }
    friend bool operator==(const D& a, const D& b) { return a.v == b.v; }
    friend bool operator!=(const D& a, const D& b) { return a.v != b.v; }
    friend std::ostream& operator<<(std::ostream& out, const D& a) {
        return out << a.v << " + " << a.d << " eps";
    }

private:
    /// A coefficient of the chain rule: itself, or its magnitude.
    static double c(double k) { return Magnitudes ? std::fabs(k) : k; }
    /// f(x) with f'(x) = slope.
    static D chain(double value, double slope, const D& x) { return {value, c(slope) * x.d}; }
    static double pi() { return std::acos(-1.0); }

    /// psi(x) = Gamma'(x) / Gamma(x) for x not in {0, -1, -2, ...}: move x up
    /// with psi(x) = psi(x + 1) - 1/x (valid on both sides of 0) until x >= 15,
    /// then the asymptotic series ln x - 1/(2x) - sum_k B_2k / (2k x^2k).
    static double digamma(double x) {
        double shift = 0;
        while (x < 15) {
            shift -= 1 / x;
            x += 1;
        }
        const double r = 1 / x, s = r * r;
        // B2/2 = 1/12, B4/4 = -1/120, B6/6 = 1/252, B8/8 = -1/240,
        // B10/10 = 1/132, B12/12 = -691/32760, B14/14 = 1/12.
        const double tail =
            s * (1.0 / 12 -
                 s * (1.0 / 120 -
                      s * (1.0 / 252 - s * (1.0 / 240 - s * (1.0 / 132 - s * (691.0 / 32760 - s / 12))))));
        return shift + std::log(x) - 0.5 * r - tail;
    }

    // ---- arithmetic: (u v)' = u' v + u v', (u / v)' = (u' - (u / v) v') / v ----
    friend D operator+(const D& a, const D& b) { return {a.v + b.v, a.d + b.d}; }
    friend D operator-(const D& a, const D& b) { return {a.v - b.v, a.d + c(-1) * b.d}; }
    friend D operator*(const D& a, const D& b) { return {a.v * b.v, a.d * c(b.v) + c(a.v) * b.d}; }
    friend D operator/(const D& a, const D& b) {
        const double r = a.v / b.v;
        return {r, (a.d + c(-r) * b.d) / c(b.v)};
    }
    friend D operator-(const D& a) { return {-a.v, c(-1) * a.d}; }
    friend D operator+(const D& a) { return a; }

    // ---- roots, exponentials, logarithms -----------------------------------
    friend D sqrt(const D& x) {
        const double r = std::sqrt(x.v);
        return chain(r, 1 / (2 * r), x);
    }
    friend D cbrt(const D& x) {
        const double r = std::cbrt(x.v);
        return chain(r, 1 / (3 * r * r), x);
    }
    friend D exp(const D& x) {
        const double r = std::exp(x.v);
        return chain(r, r, x);
    }
    friend D exp2(const D& x) {
        const double r = std::exp2(x.v);
        return chain(r, r * std::log(2.0), x);
    }
    friend D expm1(const D& x) { return chain(std::expm1(x.v), std::exp(x.v), x); }
    friend D log(const D& x) { return chain(std::log(x.v), 1 / x.v, x); }
    friend D log2(const D& x) { return chain(std::log2(x.v), 1 / (x.v * std::log(2.0)), x); }
    friend D log10(const D& x) { return chain(std::log10(x.v), 1 / (x.v * std::log(10.0)), x); }
    friend D log1p(const D& x) { return chain(std::log1p(x.v), 1 / (1 + x.v), x); }

    // ---- trigonometric and hyperbolic ----------------------------------------
    friend D sin(const D& x) { return chain(std::sin(x.v), std::cos(x.v), x); }
    friend D cos(const D& x) { return chain(std::cos(x.v), -std::sin(x.v), x); }
    friend D tan(const D& x) {
        const double k = std::cos(x.v);
        return chain(std::tan(x.v), 1 / (k * k), x);  // sec^2
    }
    friend D asin(const D& x) { return chain(std::asin(x.v), 1 / std::sqrt(1 - x.v * x.v), x); }
    friend D acos(const D& x) { return chain(std::acos(x.v), -1 / std::sqrt(1 - x.v * x.v), x); }
    friend D atan(const D& x) { return chain(std::atan(x.v), 1 / (1 + x.v * x.v), x); }
    friend D sinh(const D& x) { return chain(std::sinh(x.v), std::cosh(x.v), x); }
    friend D cosh(const D& x) { return chain(std::cosh(x.v), std::sinh(x.v), x); }
    friend D tanh(const D& x) {
        const double k = std::cosh(x.v);
        return chain(std::tanh(x.v), 1 / (k * k), x);  // sech^2
    }
    // 1/sqrt(x^2 + 1) and 1/sqrt(x^2 - 1), without overflow of x^2 for large |x|
    friend D asinh(const D& x) {
        const double a = std::fabs(x.v);
        return chain(std::asinh(x.v), a > 1 ? 1 / (a * std::sqrt(1 + 1 / (a * a))) : 1 / std::sqrt(a * a + 1),
                     x);
    }
    friend D acosh(const D& x) {
        const double a = x.v;
        return chain(std::acosh(a),
                     a > 2 ? 1 / (a * std::sqrt(1 - 1 / (a * a))) : 1 / std::sqrt((a - 1) * (a + 1)), x);
    }
    friend D atanh(const D& x) { return chain(std::atanh(x.v), 1 / (1 - x.v * x.v), x); }

    // ---- special functions ------------------------------------------------------
    friend D erf(const D& x) { return chain(std::erf(x.v), 2 / std::sqrt(pi()) * std::exp(-x.v * x.v), x); }
    friend D erfc(const D& x) {
        return chain(std::erfc(x.v), -2 / std::sqrt(pi()) * std::exp(-x.v * x.v), x);
    }
    friend D tgamma(const D& x) {
        const double r = std::tgamma(x.v);
        return chain(r, r * digamma(x.v), x);
    }
    friend D lgamma(const D& x) { return chain(std::lgamma(x.v), digamma(x.v), x); }

    // ---- piecewise functions ------------------------------------------------------
    friend D abs(const D& x) { return chain(std::fabs(x.v), x.v > 0 ? 1.0 : (x.v < 0 ? -1.0 : 0.0), x); }
    friend D fabs(const D& x) { return abs(x); }
    friend D floor(const D& x) { return {std::floor(x.v), 0.0}; }
    friend D ceil(const D& x) { return {std::ceil(x.v), 0.0}; }
    friend D round(const D& x) { return {std::round(x.v), 0.0}; }
    friend D trunc(const D& x) { return {std::trunc(x.v), 0.0}; }
    friend D rint(const D& x) { return {std::rint(x.v), 0.0}; }
    friend D nearbyint(const D& x) { return {std::nearbyint(x.v), 0.0}; }

    friend D fmin(const D& a, const D& b) { return a.v <= b.v ? a : b; }
    friend D fmax(const D& a, const D& b) { return a.v >= b.v ? a : b; }
    friend D min(const D& a, const D& b) { return b.v < a.v ? b : a; }
    friend D max(const D& a, const D& b) { return a.v < b.v ? b : a; }

    /// r = a - n b with an integer n, constant between jumps: d = da - n db.
    static D minus_multiple(double r, const D& a, const D& b) {
        const double n = std::round((a.v - r) / b.v);
        return {r, a.d + c(-n) * b.d};
    }
    /// fmod(a, b): n = trunc(a / b).
    friend D fmod(const D& a, const D& b) { return minus_multiple(std::fmod(a.v, b.v), a, b); }
    /// remainder(a, b): n = a / b rounded to nearest.
    friend D remainder(const D& a, const D& b) { return minus_multiple(std::remainder(a.v, b.v), a, b); }
    /// fdim(a, b) = a - b where a > b, else 0 (a constant).
    friend D fdim(const D& a, const D& b) {
        return a.v > b.v ? D{std::fdim(a.v, b.v), a.d + c(-1.0) * b.d} : D{std::fdim(a.v, b.v), 0.0};
    }
    /// ldexp(x, e) = x 2^e, e an integer: d = 2^e dx.
    friend D ldexp(const D& x, int e) { return {std::ldexp(x.v, e), c(std::ldexp(1.0, e)) * x.d}; }
    friend D scalbn(const D& x, int e) { return ldexp(x, e); }
    /// copysign(a, b) = +-a; the sign in front of a is constant between jumps.
    friend D copysign(const D& a, const D& b) {
        return {std::copysign(a.v, b.v), c(std::signbit(a.v) == std::signbit(b.v) ? 1.0 : -1.0) * a.d};
    }

    // ---- two and three arguments -----------------------------------------------------
    /// atan2(y, x) = angle of (x, y): d = (x dy - y dx) / (x^2 + y^2), computed
    /// with x and y scaled by s = max(|x|, |y|) so that the squares neither
    /// overflow nor underflow.
    friend D atan2(const D& y, const D& x) {
        const double s = std::fmax(std::fabs(x.v), std::fabs(y.v));
        if (s == 0) return {std::atan2(y.v, x.v), 0.0};
        const double xs = x.v / s, ys = y.v / s, n = xs * xs + ys * ys;
        return {std::atan2(y.v, x.v), (c(xs) * y.d + c(-ys) * x.d) / (s * n)};
    }
    /// hypot(a, b) = r: dr = (a da + b db) / r.
    friend D hypot(const D& a, const D& b) {
        const double r = std::hypot(a.v, b.v);
        return {r, r == 0 ? 0.0 : (c(a.v) * a.d + c(b.v) * b.d) / r};
    }
    /// fma(a, b, e) = a b + e, rounded once: d = b da + a db + de.
    friend D fma(const D& a, const D& b, const D& e) {
        return {std::fma(a.v, b.v, e.v), c(b.v) * a.d + c(a.v) * b.d + e.d};
    }
    friend D hypot(const D& a, const D& b, const D& e) {
        const double r = std::hypot(a.v, b.v, e.v);
        return {r, r == 0 ? 0.0 : (c(a.v) * a.d + c(b.v) * b.d + c(e.v) * e.d) / r};
    }

    /// a^b = exp(b ln a): d = b a^(b-1) da + a^b ln(a) db. The ln a term exists
    /// for a > 0 only; overloads with a constant exponent or base leave it out.
    friend D pow(const D& a, const D& b) {
        const double r = std::pow(a.v, b.v);
        const double da = b.v == 0 ? 0.0 : b.v * std::pow(a.v, b.v - 1);
        const double db = b.d == 0 || !(a.v > 0) ? 0.0 : r * std::log(a.v);
        return {r, c(da) * a.d + c(db) * b.d};
    }
    friend D pow(const D& a, double b) {
        return {std::pow(a.v, b), b == 0 ? 0.0 : c(b * std::pow(a.v, b - 1)) * a.d};
    }
    friend D pow(const D& a, int n) {
        return {std::pow(a.v, double(n)), n == 0 ? 0.0 : c(n * std::pow(a.v, double(n - 1))) * a.d};
    }
    friend D pow(double a, const D& b) {
        const double r = std::pow(a, b.v);
        return {r, c(r * std::log(a)) * b.d};
    }
};

/// The reference: value and derivative.
using dual = basic_dual<false>;
/// Value and the magnitude of the terms of the derivative (see above).
using dual_magnitude = basic_dual<true>;

}  // namespace tapeflow_test
