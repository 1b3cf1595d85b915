// The explicit tape API on a damped pendulum: record once, sweep many times.
//
// The simulation is a template on its number type. With double it is the
// plain program (and gives the finite differences that check the adjoints);
// with tapeflow::Real it is recorded once on the thread's active tape, then
//   1. swept twice, seeding one output at a time: the two rows of the
//      Jacobian of (theta, omega) at the end w.r.t. the four inputs;
//   2. swept back to a position in the middle only: the adjoints of the
//      state at that step; then from there to the start (sweep(from, to));
//   3. recorded again at new parameter values, the way a loop of gradients
//      does it: reset(), the same inputs given new values (they keep their
//      identifiers), record, sweep.
// Every number is compared with central finite differences; the program
// prints why and returns 1 if one differs by more than 1e-6 (relative to
// max(1, |finite difference|)).
#include <tapeflow/tapeflow.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

namespace {

constexpr int steps = 400;
constexpr double dt = 0.01;

// `count` semi-implicit Euler steps of theta'' = -k sin(theta) - c theta'.
template <class T>
void advance(T& theta, T& omega, const T& c, const T& k, int count) {
    for (int n = 0; n < count; ++n) {
        omega = omega - dt * (k * std::sin(theta) + c * omega);  // one record, 4 arguments
        theta = theta + dt * omega;                              // one record, 2 arguments
    }
}

// (theta, omega) after `count` steps, in double.
std::array<double, 2> run(double theta, double omega, double c, double k, int count) {
    advance(theta, omega, c, k, count);
    return {theta, omega};
}

// Central differences of g: double -> (theta, omega) at v.
template <class G>
std::array<double, 2> central_difference(G g, double v) {
    const double h = 1e-6 * std::max(1.0, std::fabs(v));
    const std::array<double, 2> plus = g(v + h), minus = g(v - h);
    return {(plus[0] - minus[0]) / (2 * h), (plus[1] - minus[1]) / (2 * h)};
}

// Central differences of (theta, omega) at the end w.r.t. input j, at q.
std::array<double, 2> difference_in_input(const std::vector<double>& q, int j) {
    return central_difference(
        [&](double v) {
            std::vector<double> r = q;
            r[j] = v;
            return run(r[0], r[1], r[2], r[3], steps);
        },
        q[j]);
}

int failures = 0;

void check(const char* what, double tape_value, double fd_value) {
    const double err = std::fabs(tape_value - fd_value) / std::max(1.0, std::fabs(fd_value));
    std::printf("  %-26s tape %+.9f   finite differences %+.9f\n", what, tape_value, fd_value);
    if (err > 1e-6) {
        std::printf("  ^ MISMATCH: relative error %.3g > 1e-6\n", err);
        ++failures;
    }
}

}  // namespace

int main() {
    using tapeflow::Real;
    const std::vector<double> p{1.0, 0.0, 0.3, 9.81};  // theta_0, omega_0, c, k
    const char* names[4] = {"theta_0", "omega_0", "c", "k"};
    const int half = steps / 2;

    // Record the simulation once on the thread's active tape.
    auto& tape = tapeflow::tape::active();
    tape.reset();  // an empty tape; its memory is kept
    tape.start_recording();
    std::vector<Real> x(p.begin(), p.end());  // passive copies of the numbers
    for (Real& xi : x) tape.register_input(xi);
    const tapeflow::position start = tape.get_position();
    Real theta = x[0], omega = x[1];  // copies: one record each
    advance(theta, omega, x[2], x[3], half);
    const tapeflow::position middle = tape.get_position();
    // The identifiers that name the state at `middle` (for reading its adjoints).
    const tapeflow::identifier state_at_middle[2] = {theta.id(), omega.id()};
    advance(theta, omega, x[2], x[3], steps - half);
    tape.register_output(theta);
    tape.register_output(omega);
    tape.stop_recording();

    // 1. One sweep per output seed: row i of the Jacobian.
    const Real* outputs[2] = {&theta, &omega};
    double jacobian[2][4];
    for (int i = 0; i < 2; ++i) {
        tape.clear_adjoints();  // the previous sweep left the inputs' adjoints behind
        tape.set_adjoint(*outputs[i], 1.0);
        tape.sweep();
        for (int j = 0; j < 4; ++j) jacobian[i][j] = tape.adjoint(x[j]);
    }

    // 2. Sweep from the end back to `middle` only: the adjoints there are
    //    d theta_end / d (theta, omega) at step `half`. Then sweep the rest.
    tape.clear_adjoints();
    tape.set_adjoint(theta, 1.0);
    tape.sweep(middle);
    const double theta_end_wrt_middle[2] = {tape.adjoint(state_at_middle[0]),
                                            tape.adjoint(state_at_middle[1])};
    tape.sweep(middle, start);  // together with sweep(middle): one full sweep

    std::cout << "tape: " << tape.statistics() << '\n';

    // Check everything against central finite differences of the double version.
    std::printf("Jacobian of (theta, omega) at t = %g w.r.t. the inputs:\n", steps * dt);
    for (int j = 0; j < 4; ++j) {
        const auto fd = difference_in_input(p, j);
        char what[64];
        std::snprintf(what, sizeof what, "d theta / d %s", names[j]);
        check(what, jacobian[0][j], fd[0]);
        std::snprintf(what, sizeof what, "d omega / d %s", names[j]);
        check(what, jacobian[1][j], fd[1]);
    }

    std::printf("adjoints of the state at step %d (sweep back to the middle):\n", half);
    const auto mid = run(p[0], p[1], p[2], p[3], half);
    const auto fd_theta = central_difference(
        [&](double v) { return run(v, mid[1], p[2], p[3], steps - half); }, mid[0]);
    const auto fd_omega = central_difference(
        [&](double v) { return run(mid[0], v, p[2], p[3], steps - half); }, mid[1]);
    check("d theta_end / d theta_mid", theta_end_wrt_middle[0], fd_theta[0]);
    check("d theta_end / d omega_mid", theta_end_wrt_middle[1], fd_omega[0]);

    // sweep(middle) followed by sweep(middle, start) is the full sweep of row 0.
    for (int j = 0; j < 4; ++j) {
        if (tape.adjoint(x[j]) != jacobian[0][j]) {
            std::printf("MISMATCH: d theta / d %s is %.17g after the two-part sweep, %.17g after "
                        "one sweep\n", names[j], tape.adjoint(x[j]), jacobian[0][j]);
            ++failures;
        }
    }
    // Two copies, then per step one record of 4 and one of 2 arguments.
    const tapeflow::tape_statistics s = tape.statistics();
    if (s.statements != 2 + 2 * steps || s.arguments != 2 + 6 * steps) {
        std::printf("MISMATCH: %llu statements and %llu arguments, expected %d and %d\n",
                    static_cast<unsigned long long>(s.statements),
                    static_cast<unsigned long long>(s.arguments), 2 + 2 * steps, 2 + 6 * steps);
        ++failures;
    }

    // 3. A loop of gradients: new values for the same inputs after reset().
    std::printf("d theta / d (c, k) at t = %g for other dampings (recorded again):\n", steps * dt);
    const tapeflow::identifier input_ids[4] = {x[0].id(), x[1].id(), x[2].id(), x[3].id()};
    for (const double damping : {0.1, 0.6}) {
        const std::vector<double> q{p[0], p[1], damping, p[3]};
        tape.reset();
        tape.start_recording();
        tape.register_inputs(x.begin(), x.end(), q.begin());  // x[j] = q[j], inputs again
        Real th = x[0], om = x[1];
        advance(th, om, x[2], x[3], steps);
        tape.register_output(th);
        tape.stop_recording();
        tape.set_adjoint(th, 1.0);
        tape.sweep();
        double gradient[4];
        tape.adjoints(x.begin(), x.end(), gradient);
        for (int j = 2; j < 4; ++j) {
            const auto fd = difference_in_input(q, j);
            char what[64];
            std::snprintf(what, sizeof what, "c = %.1f: d theta / d %s", damping, names[j]);
            check(what, gradient[j], fd[0]);
        }
    }
    // Nothing was recorded before the inputs got their new values: each has
    // the identifier it had (the adjoint vector does not grow per gradient).
    for (int j = 0; j < 4; ++j) {
        if (x[j].id() != input_ids[j]) {
            std::printf("MISMATCH: input %s has identifier %u, was %u\n", names[j], x[j].id(), input_ids[j]);
            ++failures;
        }
    }

    if (failures != 0) {
        std::printf("%d check(s) failed\n", failures);
        return 1;
    }
    std::printf("all checks passed\n");
    return 0;
}
