// tapeflow/expr/special_functions.hpp - functions the standard library lacks
// but derivatives need: digamma, for the derivatives of tgamma and lgamma.
#pragma once

#include <cmath>
#include <limits>

#include "std_math.hpp"

namespace tapeflow {

/// The digamma function psi(x) = d/dx log|Gamma(x)|.
/// NaN at the poles (0, -1, -2, ...), at -inf and for NaN; +inf at +inf.
/// S may be a Dual (second order): the same steps then carry the tangent,
/// the derivative of the series, accurate as the series is.
template <class S>
S digamma(S x) noexcept {
    using namespace detail;  // the <cmath> functions, for a double or a Dual (std_math.hpp)
    if (isnan(x)) return x;
    if (x == step_function(x, [](auto v) { return std::floor(v); }) && x <= 0)
        return std::numeric_limits<S>::quiet_NaN();
    if (isinf(x)) return x > 0 ? x : std::numeric_limits<S>::quiet_NaN();
    const S pi = S(3.141592653589793238462643383279502884L);
    S result = 0;
    if (x < 0) {
        // Reflection: psi(1 - x) - psi(x) = pi / tan(pi x). tan has period pi:
        // use the exact x - round(x) in [-1/2, 1/2] so that pi * x does not
        // lose the distance to the pole.
        result -= pi / tan(pi * (x - step_function(x, [](auto v) { return std::round(v); })));
        x = 1 - x;
    }
    // Recurrence psi(x) = psi(x + 1) - 1/x up to where the asymptotic series
    // is accurate (the first term left out is x^-14 / 12: 1e-15 at 10, 7e-19 at 16).
    const S threshold = sizeof(innermost_value(x)) > sizeof(double) ? S(16) : S(10);
    while (x < threshold) {
        result -= 1 / x;
        x += 1;
    }
    const S r = 1 / x, r2 = r * r;
    // ln x - 1/(2x) - sum B_2n / (2n x^2n), Bernoulli numbers B_2..B_12.
    const S series =
        r2 * (S(1) / 12 -
              r2 * (S(1) / 120 -
                    r2 * (S(1) / 252 -
                          r2 * (S(1) / 240 - r2 * (S(1) / 132 - r2 * (S(691) / 32760))))));
    return result + log(x) - r / 2 - series;
}

}  // namespace tapeflow
