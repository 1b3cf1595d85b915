// bench/record_phases.cpp - a gradient split in its two phases, recording
// (reset, register, run the kernel) and sweeping (seed, sweep, read the
// adjoints), for tapeflow and, when built with TAPEFLOW_BENCH_CODIPACK_DIR,
// CoDiPack's RealReverse (each kernel on its own active type, as in the
// harness). Which phase a change to the record path moves, kernel by kernel
// (docs/performance.md, "The record path").
//
// Usage: tapeflow_bench_record_phases [rounds]   (default 31)
// The tools alternate gradient by gradient; the medians of the rounds are
// printed in ms, with tapeflow / CoDiPack for each phase.
#include <tapeflow/tapeflow.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "harness/timing.hpp"
#include "harness/tools.hpp"
#include "kernels/all.hpp"
#ifdef TAPEFLOW_BENCH_CODIPACK
#include "harness/codipack_tool.hpp"
#endif

namespace {

// Milliseconds of each round, per phase.
struct phase_times {
    std::vector<double> record, sweep;
    void add(double r, double s) {
        record.push_back(1e3 * r);
        sweep.push_back(1e3 * s);
    }
};

template <class K>
void run(const K& kernel, int rounds) {
    const std::vector<double> xd = kernel.inputs();
    std::vector<double> g(xd.size());
    bench::tapeflow_tool tool;
    phase_times ours;
#ifdef TAPEFLOW_BENCH_CODIPACK
    bench::codipack_tool::phases<K> codi;
    phase_times theirs;
#endif
    for (int round = 0; round < rounds; ++round) {
        const double r = bench::wall_seconds([&] { tool.record(kernel, xd); });
        ours.add(r, bench::wall_seconds([&] { tool.sweep(g); }));
#ifdef TAPEFLOW_BENCH_CODIPACK
        const double codi_r = bench::wall_seconds([&] { codi.record(kernel, xd); });
        theirs.add(codi_r, bench::wall_seconds([&] { codi.sweep(g); }));
#endif
    }
    const double rec = bench::median(ours.record), swp = bench::median(ours.sweep);
#ifdef TAPEFLOW_BENCH_CODIPACK
    const double codi_rec = bench::median(theirs.record), codi_swp = bench::median(theirs.sweep);
    std::printf("%-18s record %8.3f sweep %8.3f | codipack record %8.3f sweep %8.3f | ratio record %.2f sweep %.2f\n",
                K::name, rec, swp, codi_rec, codi_swp, rec / codi_rec, swp / codi_swp);
#else
    std::printf("%-18s record %8.3f sweep %8.3f\n", K::name, rec, swp);
#endif
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 31;
    run(bench::heat{}, rounds);
    run(bench::gmm{}, rounds);
    run(bench::lstm{}, rounds);
    run(bench::mlp{}, rounds);
    run(bench::nbody{}, rounds);
    run(bench::black_scholes{}, rounds);
    run(bench::determinant{}, rounds);
    run(bench::least_squares{}, rounds);
    run(bench::ode{}, rounds);
    run(bench::bundle_adjustment{}, rounds);
}
