// bench/kernels/heat.hpp - nonlinear 1-D heat equation, explicit time stepping.
//
//   u_i' = u_i + r [ (1 + b u_{i+1}) (u_{i+1} - u_i) - (1 + b u_{i-1}) (u_i - u_{i-1}) ]
//
// on 4000 cells for 500 steps (fixed boundary values), then f = sum_i u_i^2.
// One statement per cell and step: 7 operand entries, 3 distinct variables.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "../harness/kernel.hpp"

namespace bench {

struct heat {
    static constexpr const char* name = "heat";
    static constexpr bool adolc = true;
    static constexpr const char* adolc_note = "";
    std::size_t cells = 4000;
    std::size_t steps = 500;
    double r = 0.2;  // dt / dx^2, below the explicit stability limit
    double b = 0.1;  // conductivity slope

    std::vector<double> inputs() const { return uniform(cells, 0.0, 1.0, 42); }

    template <class T>
    T operator()(const std::vector<T>& x) const {
        std::vector<T> u(x), next(x);
        for (std::size_t s = 0; s < steps; ++s) {
            step(u, next);
            std::swap(u, next);
        }
        return loss(u);
    }

    // One time step: next = F(u) (the boundary cells of next are left as they are).
    template <class T>
    void step(const std::vector<T>& u, std::vector<T>& next) const {
        step(u, next, 1, cells - 1);
    }
    // The step on cells [first, last) only (a thread's share, bench/parallel.cpp).
    template <class T>
    void step(const std::vector<T>& u, std::vector<T>& next, std::size_t first, std::size_t last) const {
        for (std::size_t i = first; i < last; ++i)
            next[i] = u[i] + r * ((1.0 + b * u[i + 1]) * (u[i + 1] - u[i]) -
                                  (1.0 + b * u[i - 1]) * (u[i] - u[i - 1]));
    }

    template <class T>
    T loss(const std::vector<T>& u) const {
        T f = 0.0;
        for (std::size_t i = 0; i < cells; ++i) f += u[i] * u[i];
        return f;
    }

    // Reverse mode by hand: store every state, sweep the steps backwards.
    double adjoint(const std::vector<double>& x, std::vector<double>& g) const {
        const std::size_t n = cells;
        std::vector<double> states((steps + 1) * n);
        std::copy(x.begin(), x.end(), states.begin());
        for (std::size_t s = 0; s < steps; ++s) {
            const double* u = &states[s * n];
            double* next = &states[(s + 1) * n];
            next[0] = u[0];
            next[n - 1] = u[n - 1];
            for (std::size_t i = 1; i + 1 < n; ++i)
                next[i] = u[i] + r * ((1.0 + b * u[i + 1]) * (u[i + 1] - u[i]) -
                                      (1.0 + b * u[i - 1]) * (u[i] - u[i - 1]));
        }
        const double* last = &states[steps * n];
        double f = 0.0;
        std::vector<double> ubar(n), prev(n);
        for (std::size_t i = 0; i < n; ++i) {
            f += last[i] * last[i];
            ubar[i] = 2.0 * last[i];
        }
        for (std::size_t s = steps; s-- > 0;) {
            const double* u = &states[s * n];
            // boundary cells carry over unchanged
            for (std::size_t i = 0; i < n; ++i) prev[i] = 0.0;
            prev[0] = ubar[0];
            prev[n - 1] = ubar[n - 1];
            for (std::size_t i = 1; i + 1 < n; ++i) {
                const double a = ubar[i];
                const double kp = 1.0 + b * u[i + 1], km = 1.0 + b * u[i - 1];
                const double dp = u[i + 1] - u[i], dm = u[i] - u[i - 1];
                prev[i] += a * (1.0 + r * (-kp - km));
                prev[i + 1] += a * r * (b * dp + kp);
                prev[i - 1] += a * r * (-b * dm + km);
            }
            std::swap(ubar, prev);
        }
        g = ubar;
        return f;
    }
};

}  // namespace bench
