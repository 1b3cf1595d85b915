// examples/vector_reverse.cpp - the Jacobian of a recorded simulation by
// vector reverse sweeps: tapeflow::lane_adjoints carries 8 adjoints per
// variable, so one sweep gives 8 rows of the Jacobian.
//
// The simulation: 400 explicit steps of a nonlinear heat equation on 24
// cells, with the diffusion coefficient as a 25th input; the outputs are the
// 24 final cells. It is recorded once; the Jacobian (24 x 25) then takes 3
// vector sweeps instead of 24 scalar ones. The example checks it against
// the scalar sweeps (equal bit for bit) and against tapeflow::jacobian, and
// returns non-zero if they differ. docs/tape.md shows parts of it.
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

using tapeflow::Real;

template <class T>
void heat_steps(std::vector<T>& u, int steps) {  // u[n] is the diffusion coefficient
    const std::size_t n = u.size() - 1;
    std::vector<T> next(u);
    for (int s = 0; s < steps; ++s) {
        for (std::size_t i = 1; i + 1 < n; ++i)
            next[i] = u[i] + u[n] * (u[i - 1] - 2.0 * u[i] + u[i + 1]) + 0.01 * sin(u[i]) * u[i];
        for (std::size_t i = 1; i + 1 < n; ++i) u[i] = next[i];
    }
}

int main() {
    const std::size_t cells = 24;
    std::vector<double> start(cells + 1);
    for (std::size_t i = 0; i < cells; ++i) start[i] = std::sin(0.3 * double(i)) + 0.5;
    start[cells] = 0.2;

    // Record once.
    auto& tape = tapeflow::tape::active();
    tape.reset();
    tape.start_recording();
    std::vector<Real> x(start.begin(), start.end());
    for (Real& xi : x) tape.register_input(xi);
    std::vector<Real> u = x;
    heat_steps(u, 400);
    std::vector<Real> y(u.begin(), u.begin() + cells);
    for (Real& yi : y) tape.register_output(yi);
    tape.stop_recording();

    // Eight outputs per sweep: seed output first + l in lane l, sweep once,
    // and lane l of each input's adjoints is row first + l of the Jacobian.
    std::vector<std::vector<double>> J(y.size(), std::vector<double>(x.size()));
    tapeflow::lane_adjoints<double, 8> bar(tape);
    for (std::size_t first = 0; first < y.size(); first += 8) {
        bar.clear();
        for (std::size_t l = 0; l < 8 && first + l < y.size(); ++l) bar.set(y[first + l], l, 1.0);
        tape.sweep(bar);
        for (std::size_t l = 0; l < 8 && first + l < y.size(); ++l)
            for (std::size_t j = 0; j < x.size(); ++j) J[first + l][j] = bar.get(x[j], l);
    }

    // The same rows by one scalar sweep per output.
    std::size_t differ = 0;
    for (std::size_t k = 0; k < y.size(); ++k) {
        tape.clear_adjoints();
        tape.set_adjoint(y[k], 1.0);
        tape.sweep();
        for (std::size_t j = 0; j < x.size(); ++j) differ += tape.adjoint(x[j]) != J[k][j];
    }
    // And by the driver, which records again and chooses its lanes (8 here).
    const auto driven = tapeflow::jacobian(
        [](const std::vector<Real>& v) {
            std::vector<Real> w = v;
            heat_steps(w, 400);
            return std::vector<Real>(w.begin(), w.end() - 1);
        },
        start);
    differ += driven != J;

    std::printf("Jacobian %zu x %zu by %zu vector sweeps of 8 lanes\n", J.size(), J[0].size(), (y.size() + 7) / 8);
    std::printf("du_end[12]/du_0[11..13] = %+.6f %+.6f %+.6f, du_end[12]/dkappa = %+.6f\n", J[12][11], J[12][12],
                J[12][13], J[12][cells]);
    std::printf("entries that differ from scalar sweeps and from tapeflow::jacobian: %zu\n", differ);
    return differ == 0 ? 0 : 1;
}
