// examples/complex_impedance.cpp - std::complex<Real>: how the gain of an
// RLC filter at one frequency depends on R, L and C.
//
// A series R-L-C circuit driven by a voltage source, output across the
// capacitor: the transfer function at angular frequency w is
//
//   H(w) = Z_C / (R + Z_L + Z_C),   Z_L = i w L,   Z_C = 1 / (i w C)
//
// and the gain is |H|. tapeflow::gradient gives d|H|/dR, d|H|/dL, d|H|/dC
// through the complex arithmetic, checked here against the derivative of
// the closed form |H| = 1 / sqrt((1 - w^2 L C)^2 + (w R C)^2).
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <complex>
#include <cstdio>
#include <vector>

template <class T>
T gain(const std::vector<T>& p, double w) {
    const T& r = p[0];
    const T& l = p[1];
    const T& c = p[2];
    const std::complex<double> i(0, 1);
    const std::complex<T> z_l = i * w * l;          // complex<double> times Real
    const std::complex<T> z_c = 1.0 / (i * w * c);  // a number over complex<Real>
    const std::complex<T> h = z_c / (r + z_l + z_c);
    return std::abs(h);
}

int main() {
    const std::vector<double> p{50.0, 10e-3, 1e-6};  // 50 ohm, 10 mH, 1 uF
    const double w = 2 * 3.14159265358979 * 1200.0;  // near resonance (1.59 kHz)
    const auto [value, g] = tapeflow::value_and_gradient(
        [w](const std::vector<tapeflow::Real>& q) { return gain(q, w); }, p);

    // the closed form and its derivative, by hand
    const double r = p[0], l = p[1], c = p[2];
    const double a = 1 - w * w * l * c, b = w * r * c;
    const double q = a * a + b * b, closed = 1 / std::sqrt(q), dq = -0.5 * closed / q;
    const double want[3] = {dq * 2 * b * w * c, dq * 2 * a * (-w * w * c), dq * (2 * a * (-w * w * l) + 2 * b * w * r)};

    std::printf("|H| = %.6f (closed form %.6f)\n", value, closed);
    const char* names[3] = {"R", "L", "C"};
    bool ok = std::fabs(value - closed) < 1e-12 * closed;
    for (int k = 0; k < 3; ++k) {
        const double rel = std::fabs(g[k] - want[k]) / std::fabs(want[k]);
        std::printf("d|H|/d%s = % .6e (closed form % .6e, relative difference %.1e)\n", names[k], g[k], want[k], rel);
        ok = ok && rel < 1e-9;
    }
    std::printf("%s\n", ok ? "agree" : "DISAGREE");
    return ok ? 0 : 1;
}
