// bench/kernels/nbody.hpp - softened gravitational N-body, velocity Verlet.
//
//   a_i = sum_{j != i} m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2)     (G = 1)
//   v  += dt/2 a;   x += dt v;   a = a(x);   v += dt/2 a                    (one step)
//
// 64 bodies in 3-D for 40 steps. Inputs: initial positions and velocities
// (body i at x[6i .. 6i+2], velocity at x[6i+3 .. 6i+5]); masses are fixed.
// f = kinetic energy at the end + sum_i w_i . x_i(end) with fixed weights w.
// Forces run over pairs i < j (Newton's third law): 11 statements a pair,
// about 0.93 M statements in all.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "../harness/kernel.hpp"

namespace bench {

struct nbody {
    static constexpr const char* name = "nbody";
    static constexpr bool adolc = true;
    static constexpr const char* adolc_note = "";
    std::size_t bodies = 64;
    std::size_t steps = 40;
    double dt = 0.01;
    double eps2 = 0.01;  // softening eps^2
    std::vector<double> mass = uniform(bodies, 0.5 / 64, 1.5 / 64, 21);
    std::vector<double> weight = uniform(3 * bodies, -1.0, 1.0, 22);

    std::vector<double> inputs() const {
        const std::vector<double> pos = uniform(3 * bodies, -1.0, 1.0, 23);
        const std::vector<double> vel = uniform(3 * bodies, -0.2, 0.2, 24);
        std::vector<double> x(6 * bodies);
        for (std::size_t i = 0; i < bodies; ++i)
            for (std::size_t c = 0; c < 3; ++c) {
                x[6 * i + c] = pos[3 * i + c];
                x[6 * i + 3 + c] = vel[3 * i + c];
            }
        return x;
    }

    // a = accelerations of the bodies at positions p (both 3 * bodies, xyz per body).
    template <class T>
    void accelerations(const std::vector<T>& p, std::vector<T>& a) const {
        using std::sqrt;
        for (std::size_t i = 0; i < 3 * bodies; ++i) a[i] = 0.0;
        for (std::size_t i = 0; i < bodies; ++i)
            for (std::size_t j = i + 1; j < bodies; ++j) {
                T dx = p[3 * j] - p[3 * i];
                T dy = p[3 * j + 1] - p[3 * i + 1];
                T dz = p[3 * j + 2] - p[3 * i + 2];
                T r2 = dx * dx + dy * dy + dz * dz + eps2;
                T inv = 1.0 / (r2 * sqrt(r2));  // r^-3
                a[3 * i] += mass[j] * inv * dx;
                a[3 * i + 1] += mass[j] * inv * dy;
                a[3 * i + 2] += mass[j] * inv * dz;
                a[3 * j] -= mass[i] * inv * dx;
                a[3 * j + 1] -= mass[i] * inv * dy;
                a[3 * j + 2] -= mass[i] * inv * dz;
            }
    }

    template <class T>
    T operator()(const std::vector<T>& x) const {
        const std::size_t n = 3 * bodies;
        std::vector<T> p(n), v(n), a(n);
        for (std::size_t i = 0; i < bodies; ++i)
            for (std::size_t c = 0; c < 3; ++c) {
                p[3 * i + c] = x[6 * i + c];
                v[3 * i + c] = x[6 * i + 3 + c];
            }
        const double h = 0.5 * dt;
        accelerations(p, a);
        for (std::size_t s = 0; s < steps; ++s) {
            for (std::size_t i = 0; i < n; ++i) {
                v[i] += h * a[i];
                p[i] += dt * v[i];
            }
            accelerations(p, a);
            for (std::size_t i = 0; i < n; ++i) v[i] += h * a[i];
        }
        T f = 0.0;
        for (std::size_t i = 0; i < bodies; ++i)
            for (std::size_t c = 0; c < 3; ++c) {
                const std::size_t k = 3 * i + c;
                f += 0.5 * mass[i] * v[k] * v[k] + weight[k] * p[k];
            }
        return f;
    }

    // Reverse mode by hand. The accelerations depend on the positions only,
    // so the forward sweep keeps the positions of every step; velocities are
    // not needed. Per step, backwards (h = dt/2, abar = adjoint of a):
    //   v = vh + h a'      : vhbar = vbar, abar' += h vbar (abar' already holds
    //                        h vhbar of the next step's first kick)
    //   a' = A(x')         : xbar += A'(x')^T abar'
    //   x' = x + dt vh     : vhbar += dt xbar
    //   vh = v + h a       : vbar = vhbar, abar = h vhbar
    double adjoint(const std::vector<double>& x, std::vector<double>& g) const {
        const std::size_t n = 3 * bodies;
        std::vector<double> ps((steps + 1) * n), v(n), a(n);
        for (std::size_t i = 0; i < bodies; ++i)
            for (std::size_t c = 0; c < 3; ++c) {
                ps[3 * i + c] = x[6 * i + c];
                v[3 * i + c] = x[6 * i + 3 + c];
            }
        const double h = 0.5 * dt;
        std::vector<double> p(ps.begin(), ps.begin() + n);
        accelerations(p, a);
        for (std::size_t s = 0; s < steps; ++s) {
            for (std::size_t i = 0; i < n; ++i) {
                v[i] += h * a[i];
                p[i] += dt * v[i];
            }
            std::copy(p.begin(), p.end(), ps.begin() + (s + 1) * n);
            accelerations(p, a);
            for (std::size_t i = 0; i < n; ++i) v[i] += h * a[i];
        }
        double f = 0.0;
        std::vector<double> pbar(n), vbar(n), abar(n, 0.0);
        for (std::size_t i = 0; i < bodies; ++i)
            for (std::size_t c = 0; c < 3; ++c) {
                const std::size_t k = 3 * i + c;
                f += 0.5 * mass[i] * v[k] * v[k] + weight[k] * p[k];
                vbar[k] = mass[i] * v[k];
                pbar[k] = weight[k];
            }
        for (std::size_t s = steps; s-- > 0;) {
            // a' was used twice: in v = vh + h a' and (before) in the next step's first kick
            for (std::size_t i = 0; i < n; ++i) abar[i] += h * vbar[i];
            accelerations_adjoint(&ps[(s + 1) * n], abar, pbar);
            for (std::size_t i = 0; i < n; ++i) {
                vbar[i] += dt * pbar[i];  // x' = x + dt vh; vbar now holds vhbar
                abar[i] = h * vbar[i];    // vh = v + h a: the a of the step before
            }
        }
        accelerations_adjoint(&ps[0], abar, pbar);  // a = A(x0)
        g.resize(6 * bodies);
        for (std::size_t i = 0; i < bodies; ++i)
            for (std::size_t c = 0; c < 3; ++c) {
                g[6 * i + c] = pbar[3 * i + c];
                g[6 * i + 3 + c] = vbar[3 * i + c];
            }
        return f;
    }

    // pbar += A'(p)^T abar. For a pair with d = p_j - p_i, inv = r2^-3/2:
    // a_i += m_j inv d and a_j -= m_i inv d, so with q = m_j abar_i - m_i abar_j
    //   dbar = inv q + 2 d r2bar,   r2bar = (q . d) * (-3/2) inv / r2.
    void accelerations_adjoint(const double* p, const std::vector<double>& abar,
                               std::vector<double>& pbar) const {
        for (std::size_t i = 0; i < bodies; ++i)
            for (std::size_t j = i + 1; j < bodies; ++j) {
                double d[3], q[3];
                for (std::size_t c = 0; c < 3; ++c) {
                    d[c] = p[3 * j + c] - p[3 * i + c];
                    q[c] = mass[j] * abar[3 * i + c] - mass[i] * abar[3 * j + c];
                }
                const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2;
                const double inv = 1.0 / (r2 * std::sqrt(r2));
                const double r2bar = (q[0] * d[0] + q[1] * d[1] + q[2] * d[2]) * (-1.5 * inv / r2);
                for (std::size_t c = 0; c < 3; ++c) {
                    const double dbar = inv * q[c] + 2.0 * d[c] * r2bar;
                    pbar[3 * j + c] += dbar;
                    pbar[3 * i + c] -= dbar;
                }
            }
    }
};

}  // namespace bench
