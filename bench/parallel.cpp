// bench/parallel.cpp - independent gradients on several threads at once
// (docs/parallel.md): a batch of gradients of one kernel at perturbed inputs,
// one after the other and on T threads (std::thread, and OpenMP when built
// with it), each thread on its own tape. Wall time of the whole batch,
// median of interleaved runs; speed-up = serial / parallel. Every parallel
// gradient is checked against the serial one (bit for bit) first.
//
// Then one gradient whose loop is parallel (built with OpenMP): the heat
// kernel with its cell loop an `omp for` inside a parallel_region per time
// step (tape/parallel_region.hpp), against the same gradient on one thread;
// the region's segments swept one by one (the default) and at once. Checked
// against the one-thread gradient (1e-12) first.
//
// Usage: tapeflow_bench_parallel [--threads T] [--batch N] [--runs R]
#include <tapeflow/tapeflow.hpp>

#include <algorithm>
#include <cmath>
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

#if defined(_OPENMP)
// bench::heat with its cell loop in parallel: a region per time step.
struct parallel_heat : bench::heat {
    int threads = 1;
    tapeflow::region_sweep mode = tapeflow::region_sweep::serial;

    tapeflow::Real operator()(const std::vector<tapeflow::Real>& x) const {
        using tapeflow::Real;
        std::vector<Real> u(x), next(x);
        for (std::size_t s = 0; s < steps; ++s) {
            tapeflow::parallel_region region(tapeflow::tape::active(), std::size_t(threads), mode);
#pragma omp parallel num_threads(threads)
            {
                tapeflow::parallel_region::worker w(region, std::size_t(omp_get_thread_num()));
                // the static schedule's share of cells 1 .. cells - 2
                const std::size_t t = std::size_t(omp_get_thread_num()), n = std::size_t(omp_get_num_threads());
                const std::size_t inner = cells - 2;
                step(u, next, 1 + inner * t / n, 1 + inner * (t + 1) / n);
            }
            region.close();
            std::swap(u, next);
        }
        return loss(u);
    }
};

void measure_region(std::size_t cells, std::size_t steps, const settings& s) {
    bench::heat plain;
    plain.cells = cells;
    plain.steps = steps;
    const std::vector<double> x = plain.inputs();
    const auto f = [&plain](const std::vector<tapeflow::Real>& v) { return plain(v); };
    parallel_heat one, serial, together;
    for (parallel_heat* p : {&one, &serial, &together}) {
        p->cells = cells;
        p->steps = steps;
        p->threads = s.threads;
    }
    one.threads = 1;
    together.mode = tapeflow::region_sweep::parallel;
    std::vector<double> g0, g1, g2, g3;
    const auto run = [&](const parallel_heat& k, std::vector<double>& g) {
        return [&] { g = tapeflow::gradient([&k](const std::vector<tapeflow::Real>& v) { return k(v); }, x); };
    };
    const auto run_plain = [&] { g0 = tapeflow::gradient(f, x); };
    const auto run_one = run(one, g1), run_serial = run(serial, g2), run_together = run(together, g3);
    run_plain();
    run_one();
    run_serial();
    run_together();
    double scale = 0, worst = 0;
    for (std::size_t i = 0; i < g0.size(); ++i) {
        scale = std::max(scale, std::abs(g0[i]));
        for (const std::vector<double>* g : {&g1, &g2, &g3}) worst = std::max(worst, std::abs((*g)[i] - g0[i]));
    }
    if (!(worst <= 1e-12 * scale)) {
        std::printf("heat %zu x %zu: MISMATCH, the regions' gradients differ from the plain one by %g\n", cells,
                    steps, worst);
        std::exit(1);
    }
    std::vector<double> t0, t1, t2, t3;
    for (int r = 0; r < s.runs; ++r) {
        t0.push_back(bench::wall_seconds(run_plain));
        t1.push_back(bench::wall_seconds(run_one));
        t2.push_back(bench::wall_seconds(run_serial));
        t3.push_back(bench::wall_seconds(run_together));
    }
    const double m0 = bench::median(t0) * 1e3, m1 = bench::median(t1) * 1e3, m2 = bench::median(t2) * 1e3,
                 m3 = bench::median(t3) * 1e3;
    std::printf("heat %6zu x %4zu %10.2f %10.2f %10.2f %8.2f %10.2f %8.2f\n", cells, steps, m0, m1, m2, m0 / m2, m3,
                m0 / m3);
}
#endif

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
#if defined(_OPENMP)
    std::printf("\nOne gradient, the cell loop in parallel (a parallel_region per step, %d OpenMP threads, the "
                "region's sweep serial or parallel; wall ms):\n",
                s.threads);
    std::printf("%-17s %10s %10s %10s %8s %10s %8s\n", "kernel", "one thread", "region x1", "serial", "speedup",
                "parallel", "speedup");
    measure_region(4000, 500, s);
    measure_region(50000, 100, s);
#endif
    return 0;
}
