// One tape, a prefix that stays, and a time loop recorded one piece at a
// time with reset(position): the memory of one piece, not of the whole loop.
//
// The parameters theta = (log k, c) go through a prefix (k = exp(theta_0),
// s = sin(theta_1)) that is recorded once and stays on the tape up to the
// position p. The heat-like loop u <- u + dt (k (u_{i-1} - 2 u_i + u_{i+1}) + s)
// runs once without the tape, keeping the state at the start of each piece
// (a checkpoint, plain doubles). Then, from the last piece to the first:
//
//   record the piece after p (its start state registered as inputs),
//   seed its end state with the adjoint the later pieces gave it, sweep(p),
//   read the adjoint of its start state, reset(p).
//
// What each sweep(p) leaves at p for k and s (they are alive at p, and the
// pieces read them) waits there while the next piece is recorded, and joins
// the next sweep at p (docs/tape.md, "The kept adjoints wait at `to`"): a
// piece's new records may take the identifiers of the last piece's start
// state, whose adjoints were still in the vector. Last, sweep(p, start)
// carries the sum of all the pieces through the prefix. The gradient is
// compared with one recording of the whole loop and with central finite
// differences; the program returns 1 if one differs by more than 1e-6, or
// if the tape held more than a third of the whole loop's records at once.
#include <tapeflow/tapeflow.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

constexpr int cells = 8;
constexpr int steps = 60;
constexpr int pieces = 6;  // of steps / pieces steps each
constexpr double dt = 0.05;

template <class T>
void step(std::vector<T>& u, const T& k, const T& s) {
    std::vector<T> next(u.size());
    for (std::size_t i = 0; i < u.size(); ++i) {
        const T left = i == 0 ? T(0.0) : u[i - 1];
        const T right = i + 1 == u.size() ? T(0.0) : u[i + 1];
        next[i] = u[i] + dt * (k * (left - 2.0 * u[i] + right) + s);
    }
    u = std::move(next);
}

std::vector<double> initial_state() {
    std::vector<double> u(cells);
    for (int i = 0; i < cells; ++i) u[std::size_t(i)] = std::sin(0.4 * (i + 1));
    return u;
}

// J = sum of u_i^2 at the end, with plain doubles (the finite differences).
double objective(const std::array<double, 2>& theta) {
    std::vector<double> u = initial_state();
    const double k = std::exp(theta[0]), s = std::sin(theta[1]);
    for (int t = 0; t < steps; ++t) step(u, k, s);
    double j = 0;
    for (double v : u) j += v * v;
    return j;
}

int failures = 0;
void check(const char* what, double value, double expected) {
    const double scale = std::max(1.0, std::abs(expected));
    const bool ok = std::abs(value - expected) <= 1e-6 * scale;
    std::printf("%-36s %.9f  (expected %.9f)%s\n", what, value, expected, ok ? "" : "  <-- differs");
    failures += !ok;
}

}  // namespace

int main() {
    using tapeflow::Real;
    const std::array<double, 2> theta0 = {std::log(0.6), 0.3};

    // the checkpoints: the state at the start of each piece
    const int length = steps / pieces;
    std::vector<std::vector<double>> checkpoint;
    {
        std::vector<double> u = initial_state();
        const double k = std::exp(theta0[0]), s = std::sin(theta0[1]);
        for (int piece = 0; piece < pieces; ++piece) {
            checkpoint.push_back(u);
            for (int t = 0; t < length; ++t) step(u, k, s);
        }
        checkpoint.push_back(u);  // the end state
    }

    tapeflow::tape tape;
    tape.start_recording();
    std::array<Real, 2> theta = {theta0[0], theta0[1]};
    tape.register_inputs(theta.begin(), theta.end());
    const Real k = exp(theta[0]);  // the prefix: alive while the pieces are recorded
    const Real s = sin(theta[1]);
    tape.stop_recording();
    const tapeflow::position start{};
    const tapeflow::position p = tape.get_position();

    // the adjoint of the end state: dJ/du = 2 u
    std::vector<double> u_bar(cells);
    for (int i = 0; i < cells; ++i) u_bar[std::size_t(i)] = 2.0 * checkpoint[pieces][std::size_t(i)];

    std::size_t most_bytes = 0;  // the most record bytes the tape held
    std::vector<Real> u(cells);
    for (int piece = pieces - 1; piece >= 0; --piece) {
        tape.start_recording();
        tape.register_inputs(u.begin(), u.end(), checkpoint[std::size_t(piece)].begin());
        std::vector<Real> v = u;
        for (int t = 0; t < length; ++t) step(v, k, s);
        tape.stop_recording();
        for (int i = 0; i < cells; ++i) tape.set_adjoint(v[std::size_t(i)], u_bar[std::size_t(i)]);
        most_bytes = std::max(most_bytes, tape.statistics().record_bytes);
        tape.sweep(p);  // this piece's records, down to p
        for (int i = 0; i < cells; ++i) u_bar[std::size_t(i)] = tape.adjoint(u[std::size_t(i)]);
        tape.reset(p);  // the piece goes; what the sweep left for k and s waits at p
    }
    tape.sweep(p, start);  // the prefix, with what every piece added to k and s
    const std::array<double, 2> pieces_gradient = {tape.adjoint(theta[0]), tape.adjoint(theta[1])};

    // the whole loop on one recording, for comparison
    tape.reset();
    tape.start_recording();
    tape.register_inputs(theta.begin(), theta.end(), theta0.begin());
    {
        const Real kk = exp(theta[0]);
        const Real ss = sin(theta[1]);
        const std::vector<double> u0 = initial_state();
        std::vector<Real> w(u0.begin(), u0.end());  // constants
        for (int t = 0; t < steps; ++t) step(w, kk, ss);
        Real j = 0.0;
        for (const Real& x : w) j += x * x;
        tape.register_output(j);
        tape.stop_recording();
        tape.set_adjoint(j, 1.0);
        tape.sweep();
    }
    const std::array<double, 2> whole_gradient = {tape.adjoint(theta[0]), tape.adjoint(theta[1])};
    const std::size_t whole_bytes = tape.statistics().record_bytes;
    std::printf("record bytes held at most: %zu in pieces, %zu for the whole loop\n", most_bytes, whole_bytes);
    if (3 * most_bytes > whole_bytes) {
        std::printf("the pieces held more than a third of the whole loop's records\n");
        ++failures;
    }

    const double h = 1e-6;
    for (int j = 0; j < 2; ++j) {
        std::array<double, 2> plus = theta0, minus = theta0;
        plus[std::size_t(j)] += h;
        minus[std::size_t(j)] -= h;
        const double fd = (objective(plus) - objective(minus)) / (2 * h);
        const char* name = j == 0 ? "dJ/dlog k" : "dJ/dc";
        std::printf("%s\n", name);
        check("  pieces, one tape (reset(p))", pieces_gradient[std::size_t(j)], fd);
        check("  one recording of the whole loop", whole_gradient[std::size_t(j)], fd);
    }
    if (failures != 0) {
        std::printf("%d check(s) failed\n", failures);
        return 1;
    }
    std::printf("all checks passed\n");
    return 0;
}
