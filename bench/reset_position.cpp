// bench/reset_position.cpp - what reset(position) costs in the pattern it is
// for (docs/tape.md, "The kept adjoints wait at `to`"): a prefix on the tape,
// then pieces recorded after the position p one at a time, each swept back to
// p and dropped with reset(p). Each piece assigns `live` variables that stay
// alive across the pieces (so that every reset fences them) and sums them.
//
// Usage: tapeflow_bench_reset_position [live] [pieces] [repeats]
// Prints the median over the repeats of the time per piece (record, sweep to
// p, reset(p)) and of reset(p) alone, in microseconds, and checks the
// gradient of the sum over all pieces against its analytic value.
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "harness/timing.hpp"

int main(int argc, char** argv) {
    using tapeflow::Real;
    const int live = argc > 1 ? std::atoi(argv[1]) : 2000;
    const int pieces = argc > 2 ? std::atoi(argv[2]) : 1000;
    const int repeats = argc > 3 ? std::atoi(argv[3]) : 7;
    std::vector<double> per_piece, per_reset;
    for (int r = 0; r < repeats; ++r) {
        tapeflow::tape tape;
        tape.start_recording();
        Real x = 1.0;
        tape.register_input(x);
        const Real k = 2.0 * x;  // the prefix: one record before p
        tape.stop_recording();
        const tapeflow::position p = tape.get_position();
        std::vector<Real> v(static_cast<std::size_t>(live));
        double resets = 0;
        const double all = bench::wall_seconds([&] {
            for (int piece = 0; piece < pieces; ++piece) {
                tape.start_recording();
                Real y = 0.0;
                for (int i = 0; i < live; ++i) {
                    v[std::size_t(i)] = k * double(i);
                    y += v[std::size_t(i)];
                }
                tape.register_output(y);
                tape.stop_recording();
                tape.set_adjoint(y, 1.0);
                tape.sweep(p);
                resets += bench::wall_seconds([&] { tape.reset(p); });
            }
        });
        tape.sweep(p, tapeflow::position{});
        // d/dx of pieces x sum_i 2 x i
        const double expected = 2.0 * pieces * (double(live) * (live - 1) / 2);
        if (std::abs(tape.adjoint(x) - expected) > 1e-9 * expected) {
            std::printf("wrong gradient: %.17g, expected %.17g\n", tape.adjoint(x), expected);
            return 1;
        }
        per_piece.push_back(1e6 * all / pieces);
        per_reset.push_back(1e6 * resets / pieces);
    }
    std::printf("live %d, pieces %d: %.2f us per piece, of which reset(p) %.2f us (medians of %d)\n", live, pieces,
                bench::median(per_piece), bench::median(per_reset), repeats);
    return 0;
}
