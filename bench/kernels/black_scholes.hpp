// bench/kernels/black_scholes.hpp - Black-Scholes prices of a book of calls.
//
//   d1 = (log(S/K) + (r + sigma^2/2) T) / (sigma sqrt T),   d2 = d1 - sigma sqrt T
//   C  = S N(d1) - K exp(-r T) N(d2),   N(x) = erfc(-x / sqrt 2) / 2
//
// 20 000 European calls; f = sum_i w_i C_i with fixed position sizes w_i.
// Inputs per option (x[5i .. 5i+4]): spot S, strike K, volatility sigma,
// rate r, maturity T, so 100 000 inputs. Each option is 8 statements with
// log, sqrt, exp and two erfc: about 160 000 statements, many distinct
// operands per statement and few statements per input.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "../harness/kernel.hpp"

namespace bench {

struct black_scholes {
    static constexpr const char* name = "black_scholes";
    static constexpr bool adolc = false;
    static constexpr const char* adolc_note = "ADOL-C 2.7 has erf but no erfc";
    std::size_t options = 20000;
    std::vector<double> position = uniform(options, 0.5, 1.5, 31);  // w_i

    std::vector<double> inputs() const {
        const std::vector<double> spot = uniform(options, 80.0, 120.0, 32);
        const std::vector<double> strike = uniform(options, 80.0, 120.0, 33);
        const std::vector<double> vol = uniform(options, 0.15, 0.45, 34);
        const std::vector<double> rate = uniform(options, 0.0, 0.05, 35);
        const std::vector<double> maturity = uniform(options, 0.25, 2.0, 36);
        std::vector<double> x(5 * options);
        for (std::size_t i = 0; i < options; ++i) {
            x[5 * i] = spot[i];
            x[5 * i + 1] = strike[i];
            x[5 * i + 2] = vol[i];
            x[5 * i + 3] = rate[i];
            x[5 * i + 4] = maturity[i];
        }
        return x;
    }

    template <class T>
    T operator()(const std::vector<T>& x) const {
        using std::erfc;
        using std::exp;
        using std::log;
        using std::sqrt;
        const double inv_sqrt2 = 0.70710678118654752440;
        T f = 0.0;
        for (std::size_t i = 0; i < options; ++i) {
            const T& s = x[5 * i];
            const T& k = x[5 * i + 1];
            const T& sigma = x[5 * i + 2];
            const T& r = x[5 * i + 3];
            const T& t = x[5 * i + 4];
            T sqrt_t = sqrt(t);
            T vol = sigma * sqrt_t;
            T d1 = (log(s / k) + (r + 0.5 * sigma * sigma) * t) / vol;
            T d2 = d1 - vol;
            T n1 = 0.5 * erfc(-d1 * inv_sqrt2);
            T n2 = 0.5 * erfc(-d2 * inv_sqrt2);
            T call = s * n1 - k * exp(-r * t) * n2;
            f += position[i] * call;
        }
        return f;
    }

    // Reverse mode by hand, option by option (each option is independent, so
    // its forward values live in locals). N'(d) = exp(-d^2/2) / sqrt(2 pi).
    double adjoint(const std::vector<double>& x, std::vector<double>& g) const {
        const double inv_sqrt2 = 0.70710678118654752440;
        const double inv_sqrt_2pi = 0.39894228040143267794;
        g.resize(5 * options);
        double f = 0.0;
        for (std::size_t i = 0; i < options; ++i) {
            const double s = x[5 * i], k = x[5 * i + 1], sigma = x[5 * i + 2];
            const double r = x[5 * i + 3], t = x[5 * i + 4];
            // forward
            const double sqrt_t = std::sqrt(t);
            const double vol = sigma * sqrt_t;
            const double drift = r + 0.5 * sigma * sigma;
            const double d1 = (std::log(s / k) + drift * t) / vol;
            const double d2 = d1 - vol;
            const double n1 = 0.5 * std::erfc(-d1 * inv_sqrt2);
            const double n2 = 0.5 * std::erfc(-d2 * inv_sqrt2);
            const double disc = std::exp(-r * t);
            const double call = s * n1 - k * disc * n2;
            f += position[i] * call;
            // backward from callbar = w_i
            const double cbar = position[i];
            double sbar = cbar * n1, kbar = -cbar * disc * n2;
            const double n1bar = cbar * s, n2bar = -cbar * k * disc;
            const double discbar = -cbar * k * n2;
            double rbar = -t * disc * discbar, tbar = -r * disc * discbar;  // disc = exp(-r t)
            const double d2bar = n2bar * inv_sqrt_2pi * std::exp(-0.5 * d2 * d2);
            const double d1bar = n1bar * inv_sqrt_2pi * std::exp(-0.5 * d1 * d1) + d2bar;
            double volbar = -d2bar;                 // d2 = d1 - vol
            const double numbar = d1bar / vol;      // d1 = num / vol
            volbar -= d1bar * d1 / vol;
            sbar += numbar / s;                     // num = log(s/k) + drift t
            kbar -= numbar / k;
            const double driftbar = numbar * t;
            tbar += numbar * drift;
            rbar += driftbar;                       // drift = r + sigma^2 / 2
            double sigmabar = driftbar * sigma;
            sigmabar += volbar * sqrt_t;            // vol = sigma sqrt(t)
            tbar += volbar * sigma * 0.5 / sqrt_t;
            g[5 * i] = sbar;
            g[5 * i + 1] = kbar;
            g[5 * i + 2] = sigmabar;
            g[5 * i + 3] = rbar;
            g[5 * i + 4] = tbar;
        }
        return f;
    }
};

}  // namespace bench
