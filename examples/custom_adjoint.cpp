// A Newton solve taped as ONE entry whose reverse rule is the implicit
// function theorem (tapeflow::custom_adjoint).
//
// The steady state y of a nonlinear reaction-diffusion problem on (0, 1),
//   -y'' + k y^3 = a sin(pi x) + b,   y(0) = y(1) = 0,
// discretized on n interior points, solves F(y, p) = 0 with
//   F_i = (2 y_i - y_{i-1} - y_{i+1}) / h^2 + k y_i^3 - a sin(pi x_i) - b.
// The parameters come from the design variables theta = (log k, a, b), and
// the objective is the misfit J = h sum_i (y_i - target_i)^2.
//
// Taping the solver statement by statement records every Newton iteration
// and every elimination step. Its derivative does not need them: at the
// solution, dF/dy dy + dF/dp dp = 0, so for an output adjoint y_bar
//   solve (dF/dy)^T lambda = y_bar,   p_bar = -(dF/dp)^T lambda,
// one tridiagonal solve. The program records the solve as one entry with
// that rule, and checks the gradient of J against
//   - central finite differences of the same program on doubles, and
//   - the gradient through the Newton iterations taped as ordinary statements.
// It prints the three and returns 1 if they differ by more than 1e-6
// (relative).
#include <tapeflow/tapeflow.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

using tapeflow::Real;

namespace {

constexpr std::size_t n = 64;  // interior points
constexpr double h = 1.0 / double(n + 1);
const double pi = std::acos(-1.0);

double node(std::size_t i) { return double(i + 1) * h; }
double target(std::size_t i) { return 0.08 * std::sin(pi * node(i)) + 0.02 * node(i); }

double value_of(double v) { return v; }
double value_of(const Real& v) { return v.value(); }

// Solves the symmetric tridiagonal system with diagonal `diag` and the
// constant off-diagonal `off` (Thomas algorithm). Written once for double and
// for Real.
template <class T>
std::vector<T> solve_tridiagonal(double off, std::vector<T> diag, std::vector<T> rhs) {
    for (std::size_t i = 1; i < n; ++i) {
        const T m = off / diag[i - 1];
        diag[i] = diag[i] - m * off;
        rhs[i] = rhs[i] - m * rhs[i - 1];
    }
    std::vector<T> x(n);
    x[n - 1] = rhs[n - 1] / diag[n - 1];
    for (std::size_t i = n - 1; i-- > 0;) x[i] = (rhs[i] - off * x[i + 1]) / diag[i];
    return x;
}

// Newton's method for F(y, p) = 0 from y = 0, until the step is below 1e-14.
template <class T>
std::vector<T> newton_solve(const T& k, const T& a, const T& b) {
    std::vector<T> y(n, T(0.0));
    for (int iteration = 0; iteration < 50; ++iteration) {
        std::vector<T> residual, diag;
        for (std::size_t i = 0; i < n; ++i) {
            const T left = i == 0 ? T(0.0) : y[i - 1];
            const T right = i + 1 == n ? T(0.0) : y[i + 1];
            residual.push_back((2.0 * y[i] - left - right) / (h * h) + k * y[i] * y[i] * y[i] -
                               a * std::sin(pi * node(i)) - b);
            diag.push_back(2.0 / (h * h) + 3.0 * k * y[i] * y[i]);
        }
        const std::vector<T> step = solve_tridiagonal(-1.0 / (h * h), diag, residual);
        double largest = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            y[i] = y[i] - step[i];
            largest = std::max(largest, std::fabs(value_of(step[i])));
        }
        if (largest < 1e-14) break;
    }
    return y;
}

// The steady state as ONE tape entry: Newton runs on doubles, and the reverse
// rule applies the implicit function theorem with the Jacobian at the solution.
std::vector<Real> steady_state(const Real& k, const Real& a, const Real& b) {
    std::vector<double> y = newton_solve(k.value(), a.value(), b.value());
    std::vector<double> diag(n);  // dF/dy = tridiag(-1/h^2, diag, -1/h^2), symmetric
    for (std::size_t i = 0; i < n; ++i) diag[i] = 2.0 / (h * h) + 3.0 * k.value() * y[i] * y[i];

    std::vector<Real> out(n);
    tapeflow::custom_adjoint op;
    op.add_input(k);  // input slots 0, 1, 2
    op.add_input(a);
    op.add_input(b);
    for (std::size_t i = 0; i < n; ++i) op.add_output(out[i], y[i]);  // output slots 0 .. n-1
    const std::size_t captured = 2 * n * sizeof(double);
    op.record(
        [y = std::move(y), diag = std::move(diag)](const double* y_bar, double* p_bar) {
            // (dF/dy)^T lambda = y_bar, then p_bar = -(dF/dp)^T lambda with
            // dF_i/dk = y_i^3, dF_i/da = -sin(pi x_i), dF_i/db = -1
            const std::vector<double> lambda =
                solve_tridiagonal(-1.0 / (h * h), diag, std::vector<double>(y_bar, y_bar + n));
            for (std::size_t i = 0; i < n; ++i) {
                p_bar[0] -= lambda[i] * y[i] * y[i] * y[i];
                p_bar[1] += lambda[i] * std::sin(pi * node(i));
                p_bar[2] += lambda[i];
            }
        },
        captured);
    return out;
}

template <class T>
T misfit(const std::vector<T>& y) {
    T J = 0.0;
    for (std::size_t i = 0; i < n; ++i) J += h * (y[i] - target(i)) * (y[i] - target(i));
    return J;
}

// J(theta) with the solve as one entry (Real) ...
Real objective_with_entry(const std::vector<Real>& theta) {
    const Real k = exp(theta[0]);
    return misfit(steady_state(k, theta[1], theta[2]));
}
// ... with every Newton iteration taped (Real), or on doubles.
template <class T>
T objective_through_iterations(const std::vector<T>& theta) {
    using std::exp;
    const T k = exp(theta[0]);
    return misfit(newton_solve(k, theta[1], theta[2]));
}

}  // namespace

int main() {
    const std::vector<double> theta{std::log(5.0), 1.2, 0.4};
    const char* names[3] = {"dJ/d(log k)", "dJ/da", "dJ/db"};

    // Record J with the solve as one entry, and sweep.
    auto& tape = tapeflow::tape::active();
    tape.reset();
    tape.start_recording();
    std::vector<Real> x(theta.begin(), theta.end());
    for (Real& xi : x) tape.register_input(xi);
    Real J = objective_with_entry(x);
    tape.register_output(J);
    tape.stop_recording();
    const tapeflow::tape_statistics with_entry = tape.statistics();
    tape.set_adjoint(J, 1.0);
    tape.sweep();
    std::vector<double> gradient;
    for (const Real& xi : x) gradient.push_back(tape.adjoint(xi));

    // The references: the solver taped statement by statement, and finite differences.
    const std::vector<double> through_iterations =
        tapeflow::gradient([](const std::vector<Real>& v) { return objective_through_iterations(v); }, theta);
    const tapeflow::tape_statistics iterations = tape.statistics();
    std::vector<double> finite_differences;
    for (std::size_t j = 0; j < 3; ++j) {
        std::vector<double> plus = theta, minus = theta;
        const double step = 1e-6 * std::max(1.0, std::fabs(theta[j]));
        plus[j] += step;
        minus[j] -= step;
        finite_differences.push_back(
            (objective_through_iterations(plus) - objective_through_iterations(minus)) / (2 * step));
    }

    std::printf("J = %.12f\n", J.value());
    std::printf("%-12s %20s %20s %20s\n", "", "one entry (IFT)", "taped iterations", "finite differences");
    int failures = 0;
    for (std::size_t j = 0; j < 3; ++j) {
        std::printf("%-12s %+20.12e %+20.12e %+20.12e\n", names[j], gradient[j], through_iterations[j],
                    finite_differences[j]);
        const double scale = std::fabs(finite_differences[j]);
        const double fd_error = std::fabs(gradient[j] - finite_differences[j]) / scale;
        const double iteration_error = std::fabs(gradient[j] - through_iterations[j]) / scale;
        if (!(fd_error <= 1e-6) || !(iteration_error <= 1e-6)) {
            std::printf("  ^ MISMATCH: relative error %.3g against finite differences, %.3g against the "
                        "taped iterations (limit 1e-6)\n",
                        fd_error, iteration_error);
            ++failures;
        }
    }
    std::printf("tape with the solve as one entry: %llu statements (%zu external entry, %zu bytes held)\n",
                static_cast<unsigned long long>(with_entry.statements), with_entry.externals,
                with_entry.external_bytes);
    std::printf("tape through the Newton iterations: %llu statements, %llu record bytes\n",
                static_cast<unsigned long long>(iterations.statements),
                static_cast<unsigned long long>(iterations.record_bytes));
    if (failures != 0) {
        std::printf("%d gradient component(s) differ\n", failures);
        return 1;
    }
    std::printf("all gradient components agree\n");
    return 0;
}
