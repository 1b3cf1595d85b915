// bench/parallel.cpp - independent gradients on several threads at once
// (docs/parallel.md): a batch of gradients of one kernel at perturbed inputs,
// one after the other and on T threads (std::thread, and OpenMP when built
// with it), each thread on its own tape. Wall time of the whole batch,
// median of interleaved runs; speed-up = serial / parallel. Every parallel
// gradient is checked against the serial one (bit for bit) first.
//
// Usage: tapeflow_bench_parallel [--threads T] [--batch N] [--runs R]
#include <tapeflow/tapeflow.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "harness/timing.hpp"
#include "kernels/all.hpp"

namespace {

struct settings {
    int threads = 2;
    int batch = 8;
    int runs = 5;
};

template <class K>
void measure(const K& k, const settings& s) {
    const auto f = [&k](const std::vector<tapeflow::Real>& v) { return k(v); };
    std::vector<std::vector<double>> xs(std::size_t(s.batch), k.inputs());
    for (int b = 0; b < s.batch; ++b)
        for (double& v : xs[std::size_t(b)]) v *= 1.0 + 1e-3 * b;  // a batch of nearby points
    std::vector<std::vector<double>> serial(xs.size()), threaded(xs.size()), omp(xs.size());

    const auto run_serial = [&] {
        for (std::size_t b = 0; b < xs.size(); ++b) serial[b] = tapeflow::gradient(f, xs[b]);
    };
    const auto run_threads = [&] {
        std::vector<std::thread> pool;
        for (int t = 0; t < s.threads; ++t)
            pool.emplace_back([&, t] {
                for (std::size_t b = std::size_t(t); b < xs.size(); b += std::size_t(s.threads))
                    threaded[b] = tapeflow::gradient(f, xs[b]);
            });
        for (auto& th : pool) th.join();
    };
#if defined(_OPENMP)
    const auto run_omp = [&] {
#pragma omp parallel for num_threads(s.threads) schedule(static, 1)
        for (long b = 0; b < long(xs.size()); ++b) omp[std::size_t(b)] = tapeflow::gradient(f, xs[std::size_t(b)]);
    };
#endif
    // warm-up (every thread's tape grows to size) and the check
    run_serial();
    run_threads();
    bool same = threaded == serial;
#if defined(_OPENMP)
    run_omp();
    same = same && omp == serial;
#endif
    if (!same) {
        std::printf("%s: MISMATCH between the parallel and the serial gradients\n", K::name);
        std::exit(1);
    }
    std::vector<double> ts, tt, to;
    for (int r = 0; r < s.runs; ++r) {
        ts.push_back(bench::wall_seconds(run_serial));
        tt.push_back(bench::wall_seconds(run_threads));
#if defined(_OPENMP)
        to.push_back(bench::wall_seconds(run_omp));
#endif
    }
    const double ms = bench::median(ts) * 1e3, mt = bench::median(tt) * 1e3;
    std::printf("%-18s %10.2f %12.2f %8.2f", K::name, ms, mt, ms / mt);
    if (!to.empty()) {
        const double mo = bench::median(to) * 1e3;
        std::printf(" %12.2f %8.2f", mo, ms / mo);
    }
    std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
    settings s;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const int v = std::atoi(argv[i + 1]);
        if (a == "--threads") s.threads = std::max(1, v);
        else if (a == "--batch") s.batch = std::max(1, v);
        else if (a == "--runs") s.runs = std::max(1, v);
    }
    std::printf("%d gradients per batch, %d threads, median of %d interleaved runs (wall ms); hardware threads: %u\n",
                s.batch, s.threads, s.runs, std::thread::hardware_concurrency());
    std::printf("%-18s %10s %12s %8s", "kernel", "serial", "std::thread", "speedup");
#if defined(_OPENMP)
    std::printf(" %12s %8s", "OpenMP", "speedup");
#endif
    std::printf("\n");
    const auto each = [&](const auto& k) {
        measure(k, s);
        return true;
    };
    each(bench::gmm{});
    each(bench::black_scholes{});
    each(bench::bundle_adjustment{});
    each(bench::lstm{});
    return 0;
}
