// bench/kernels/ode.hpp - classic Runge-Kutta (RK4) integration of a
// reversible first-order reaction chain of 560 species (isomerizations in
// series; the last species also decays out of the system):
//
//   s_i -> s_{i+1} (rate constant a_i, i < 560),  s_{i+1} -> s_i (b_i, i < 559)
//   s_i' = a_{i-1} s_{i-1} + b_i s_{i+1} - (a_i + b_{i-1}) s_i
//
// (terms outside the chain dropped), 140 steps of dt = 0.3 (a in [2, 3),
// b in [0.2, 0.5): |lambda| < 2 max(a_i + b_{i-1}) < 7, so |dt lambda| < 2.1,
// inside RK4's stability region). Only species 0-3 start nonzero; each RK4
// step carries the nonzero front four species further (one per stage), so
// species 4n+4 onwards are still exactly 0 after step n: about half the
// state is 0 over the run, and so are the partials recorded for it
// (d(a_i s_i)/da_i = s_i = 0). The front is tiny but stays above 1e-266,
// far from the smallest normal double (no denormals): that is what bounds
// the number of steps (the front shrinks ~80x a step). Inputs: a (560),
// b (559), then the initial concentrations (560, 556 of them 0).
// f = sum_i w_i s_i(T) with fixed weights w. Per species and step: 4
// right-hand-side statements, 3 stage states and the update: 0.63 M
// statements.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "../harness/kernel.hpp"

namespace bench {

struct ode {
    static constexpr const char* name = "ode";
    static constexpr bool adolc = true;
    static constexpr const char* adolc_note = "";
    static constexpr std::size_t species = 560;
    static constexpr std::size_t seeded = 4;  // species that start nonzero
    static constexpr std::size_t o_back = species;                // b
    static constexpr std::size_t o_start = o_back + species - 1;  // s(0)
    static constexpr std::size_t size = o_start + species;
    std::size_t steps = 140;
    double dt = 0.3;
    std::vector<double> weight = uniform(species, 0.0, 1.0, 71);

    std::vector<double> inputs() const {
        const std::vector<double> forward = uniform(species, 2.0, 3.0, 72);
        const std::vector<double> back = uniform(species - 1, 0.2, 0.5, 74);
        const std::vector<double> start = uniform(seeded, 0.5, 1.5, 73);
        std::vector<double> x(size, 0.0);
        std::copy(forward.begin(), forward.end(), x.begin());
        std::copy(back.begin(), back.end(), x.begin() + o_back);
        std::copy(start.begin(), start.end(), x.begin() + o_start);
        return x;
    }

    // d = ds/dt at state u for rate constants a (forward) and b (backward).
    template <class T>
    void rhs(const T* a, const T* b, const std::vector<T>& u, std::vector<T>& d) const {
        const std::size_t e = species - 1;
        d[0] = b[0] * u[1] - a[0] * u[0];
        for (std::size_t i = 1; i < e; ++i)
            d[i] = a[i - 1] * u[i - 1] + b[i] * u[i + 1] - (a[i] + b[i - 1]) * u[i];
        d[e] = a[e - 1] * u[e - 1] - (a[e] + b[e - 1]) * u[e];
    }

    // The first three stages of one RK4 step from state s: d1..d3 and the
    // stage states u1..u3 (one vector may serve for all three when they are
    // not kept); d4 = rhs(u3). step() then advances s.
    template <class T>
    void stages(const T* a, const T* b, const std::vector<T>& s, std::vector<T>& u1, std::vector<T>& u2,
                std::vector<T>& u3, std::vector<T>& d1, std::vector<T>& d2, std::vector<T>& d3) const {
        const double h = 0.5 * dt;
        rhs(a, b, s, d1);
        for (std::size_t i = 0; i < species; ++i) u1[i] = s[i] + h * d1[i];
        rhs(a, b, u1, d2);
        for (std::size_t i = 0; i < species; ++i) u2[i] = s[i] + h * d2[i];
        rhs(a, b, u2, d3);
        for (std::size_t i = 0; i < species; ++i) u3[i] = s[i] + dt * d3[i];
    }
    template <class T>
    void step(const T* a, const T* b, std::vector<T>& s, std::vector<T>& u, std::vector<T>& d1,
              std::vector<T>& d2, std::vector<T>& d3, std::vector<T>& d4) const {
        const double dt6 = dt / 6.0;
        stages(a, b, s, u, u, u, d1, d2, d3);
        rhs(a, b, u, d4);
        for (std::size_t i = 0; i < species; ++i) s[i] += dt6 * (d1[i] + 2.0 * (d2[i] + d3[i]) + d4[i]);
    }

    template <class T>
    T operator()(const std::vector<T>& x) const {
        const T* a = &x[0];
        const T* b = &x[o_back];
        std::vector<T> s(x.begin() + o_start, x.end());
        std::vector<T> u(species), d1(species), d2(species), d3(species), d4(species);
        for (std::size_t n = 0; n < steps; ++n) step(a, b, s, u, d1, d2, d3, d4);
        T f = 0.0;
        for (std::size_t i = 0; i < species; ++i) f += weight[i] * s[i];
        return f;
    }

    // ubar += (d rhs / d u)^T dbar, abar += (d rhs / d a)^T dbar, bbar
    // likewise: a_i u_i leaves species i and enters i + 1 (if any), b_i u_{i+1}
    // leaves species i + 1 and enters i.
    void rhs_adjoint(const double* a, const double* b, const std::vector<double>& u,
                     const std::vector<double>& dbar, std::vector<double>& ubar, double* abar,
                     double* bbar) const {
        for (std::size_t i = 0; i < species; ++i) {
            const double q = (i + 1 < species ? dbar[i + 1] : 0.0) - dbar[i];
            ubar[i] += a[i] * q;
            abar[i] += u[i] * q;
        }
        for (std::size_t i = 0; i + 1 < species; ++i) {
            const double q = dbar[i] - dbar[i + 1];
            ubar[i + 1] += b[i] * q;
            bbar[i] += u[i + 1] * q;
        }
    }

    // Reverse mode by hand: the forward sweep keeps the state of every step;
    // the reverse sweep recomputes a step's stages from it and runs them
    // backwards (the rate constants' adjoints accumulate over all stages).
    double adjoint(const std::vector<double>& x, std::vector<double>& g) const {
        const double* a = &x[0];
        const double* b = &x[o_back];
        const double h = 0.5 * dt, dt6 = dt / 6.0;
        std::vector<double> states((steps + 1) * species);
        std::copy(x.begin() + o_start, x.end(), states.begin());
        std::vector<double> s(x.begin() + o_start, x.end());
        std::vector<double> u(species), d1(species), d2(species), d3(species), d4(species);
        for (std::size_t n = 0; n < steps; ++n) {
            step(a, b, s, u, d1, d2, d3, d4);
            std::copy(s.begin(), s.end(), states.begin() + (n + 1) * species);
        }
        double f = 0.0;
        for (std::size_t i = 0; i < species; ++i) f += weight[i] * s[i];

        g.assign(size, 0.0);
        double* abar = &g[0];
        double* bbar = &g[o_back];
        std::vector<double> sbar(weight), u1(species), u2(species), u3(species);
        std::vector<double> d1bar(species), d2bar(species), d3bar(species), d4bar(species), ubar(species);
        for (std::size_t n = steps; n-- > 0;) {
            // recompute the stages of step n from its start state
            std::copy(states.begin() + n * species, states.begin() + (n + 1) * species, s.begin());
            stages(a, b, s, u1, u2, u3, d1, d2, d3);
            // s' = s + dt6 (d1 + 2 d2 + 2 d3 + d4): sbar carries over
            for (std::size_t i = 0; i < species; ++i) {
                d1bar[i] = dt6 * sbar[i];
                d2bar[i] = 2.0 * dt6 * sbar[i];
                d3bar[i] = 2.0 * dt6 * sbar[i];
                d4bar[i] = dt6 * sbar[i];
            }
            // d4 = rhs(u3), u3 = s + dt d3
            ubar.assign(species, 0.0);
            rhs_adjoint(a, b, u3, d4bar, ubar, abar, bbar);
            for (std::size_t i = 0; i < species; ++i) {
                sbar[i] += ubar[i];
                d3bar[i] += dt * ubar[i];
            }
            // d3 = rhs(u2), u2 = s + h d2
            ubar.assign(species, 0.0);
            rhs_adjoint(a, b, u2, d3bar, ubar, abar, bbar);
            for (std::size_t i = 0; i < species; ++i) {
                sbar[i] += ubar[i];
                d2bar[i] += h * ubar[i];
            }
            // d2 = rhs(u1), u1 = s + h d1
            ubar.assign(species, 0.0);
            rhs_adjoint(a, b, u1, d2bar, ubar, abar, bbar);
            for (std::size_t i = 0; i < species; ++i) {
                sbar[i] += ubar[i];
                d1bar[i] += h * ubar[i];
            }
            // d1 = rhs(s)
            rhs_adjoint(a, b, s, d1bar, sbar, abar, bbar);
        }
        std::copy(sbar.begin(), sbar.end(), g.begin() + o_start);
        return f;
    }
};

}  // namespace bench
