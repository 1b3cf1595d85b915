// tests/random/interpreter_custom.hpp - custom statements (program.hpp): the
// formula, evaluated directly on any number type, and its taping as ONE
// tapeflow custom-adjoint entry with a hand-written reverse rule.
//
//   y_j = s_j g(u_j),  u_j = b_j + w_j0 x_0 + w_j1 x_1 + ...  (in this order)
//   g = tanh, sin or u / (1 + u^2);  ks, per output j: b_j, s_j, w_j0, w_j1, ...
//
// The entry's forward runs custom_value<double> on the values of the inputs:
// the same operations in the same order as the double and dual runs, so the
// values are bit-identical. Its reverse rule adds
//   x_bar_i += sum_j y_bar_j s_j g'(u_j) w_ji
// with g' written by hand (1 / cosh^2, cos, (1 - u^2) / (1 + u^2)^2). The
// dual numbers differentiate the formula itself: they check the rule.
#pragma once

#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include <tapeflow/tapeflow.hpp>

#include "fused.hpp"
#include "program.hpp"

namespace tapeflow_random {

/// y_j of custom statement s; x(i) is the value of input i (any number type U).
template <class U, class X>
U custom_value(const statement& s, std::size_t j, const X& x) {
    const std::size_t n = s.leaves.size();
    const double* k = s.ks.data() + j * (n + 2);
    U u = k[0];
    for (std::size_t i = 0; i < n; ++i) u = u + k[2 + i] * x(i);
    switch (custom_family(s.form)) {
    case custom_family::tanh: return k[1] * tanh(u);
    case custom_family::sin: return k[1] * sin(u);
    default: return k[1] * (u / (1 + u * u));
    }
}

/// g'(u), by hand.
inline double custom_slope(custom_family family, double u) {
    switch (family) {
    case custom_family::tanh: {
        const double c = std::cosh(u);  // not 1 - tanh^2: that cancels where tanh saturates
        return 1 / (c * c);
    }
    case custom_family::sin: return std::cos(u);
    default: {
        const double q = 1 + u * u;
        return (1 - u * u) / (q * q);
    }
    }
}

/// The reverse rule of a custom statement, on the input values x.
struct custom_rule {
    custom_family family = custom_family::tanh;
    std::vector<double> ks;
    std::size_t n = 0, m = 0;
    std::size_t first_input = 0;  ///< x_bar index of input 0 (inputs declared before it)
    bool reversed = false;        ///< output j was declared (m - 1 - j)-th

    void operator()(const double* x, const double* y_bar, double* x_bar) const {
        for (std::size_t j = 0; j < m; ++j) {
            const double* k = ks.data() + j * (n + 2);
            double u = k[0];
            for (std::size_t i = 0; i < n; ++i) u = u + k[2 + i] * x[i];
            const double a = y_bar[reversed ? m - 1 - j : j] * k[1] * custom_slope(family, u);
            for (std::size_t i = 0; i < n; ++i) x_bar[first_input + i] += a * k[2 + i];
        }
    }
};

/// Tapes custom statement s as one entry on the active tape; slot(i) and
/// target(i) give the Reals of the slots (read / written).
template <class Slot, class Target>
void tape_custom(const statement& s, const Slot& slot, const Target& target) {
    using tapeflow::Real;
    const std::size_t n = s.leaves.size(), m = s.outs.size();
    const auto forward = [&s, m](const double* x, double* y) {
        for (std::size_t j = 0; j < m; ++j)
            y[j] = custom_value<double>(s, j, [x](std::size_t i) { return x[i]; });
    };
    custom_rule rule{custom_family(s.form), s.ks, n, m, 0, false};

    if (custom_api(s.api) == custom_api::external_function) {
        std::vector<Real> x;  // copies of the slots (one record each)
        x.reserve(n);
        for (const leaf& l : s.leaves) x.push_back(slot(l.slot));
        std::vector<Real> y = tapeflow::external_function(
            x, m, forward,
            [rule = std::move(rule)](const double* xv, const double*, const double* y_bar, double* x_bar) {
                rule(xv, y_bar, x_bar);
            });
        for (std::size_t j = 0; j < m; ++j) target(s.outs[j].slot) = std::move(y[j]);
        return;
    }

    std::vector<double> x(n), y(m);
    for (std::size_t i = 0; i < n; ++i) x[i] = slot(s.leaves[i].slot).value();
    forward(x.data(), y.data());
    const std::size_t captured = (x.size() + rule.ks.size()) * sizeof(double);
    if (custom_api(s.api) == custom_api::in_place) {
        tapeflow::custom_adjoint op;
        for (const leaf& l : s.leaves) op.add_input(slot(l.slot));  // an input may repeat
        for (std::size_t j = 0; j < m; ++j) op.add_output(target(s.outs[j].slot), y[j]);  // may be an input
        op.record(
            [rule = std::move(rule), x = std::move(x)](const double* y_bar, double* x_bar) {
                rule(x.data(), y_bar, x_bar);
            },
            captured);
        return;
    }
    // shuffled: the explicit tape, a passive input in slot 0, outputs backwards
    tapeflow::custom_adjoint op(tapeflow::tape::active());
    op.reserve(n + 1, m);
    const Real passive = 0.5;  // a constant: the rule's adjoint for it is discarded
    op.add_input(passive);
    for (const leaf& l : s.leaves) op.add_input(slot(l.slot));
    for (std::size_t j = m; j-- > 0;) op.add_output(target(s.outs[j].slot), y[j]);
    rule.first_input = 1;
    rule.reversed = true;
    op.record(
        [rule = std::move(rule), x = std::move(x)](const double* y_bar, double* x_bar) {
            x_bar[0] += 1e300;  // for the passive input: must go nowhere
            rule(x.data(), y_bar, x_bar);
        },
        captured);
}

}  // namespace tapeflow_random
