// Independent gradients in an OpenMP parallel loop (docs/parallel.md): each
// OpenMP thread records on its own tape (the thread's default tape, kept
// across parallel regions by libgomp's thread pool). Reference: the same
// gradients one after the other, bit for bit. Built only when CMake finds
// OpenMP, and not in the ThreadSanitizer sub-build (libgomp is not
// instrumented for it).
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <set>
#include <vector>

#include "parallel_support.hpp"

using parallel_test::model;
using parallel_test::samples;
using parallel_test::serial_gradients;

TEST_CASE("per-sample gradients in an OpenMP parallel for equal the serial ones bit for bit") {
    const std::vector<std::vector<double>> xs = samples(40, 20);
    const std::vector<std::vector<double>> serial = serial_gradients(xs);
    std::vector<std::vector<double>> parallel(xs.size());

    const int threads = 3;  // more threads than this machine's cores is fine
    std::vector<const void*> tapes(threads, nullptr);
    for (int round = 0; round < 2; ++round) {  // a second parallel region reuses the threads' tapes
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
        for (long s = 0; s < long(xs.size()); ++s) {
            parallel[std::size_t(s)] = tapeflow::gradient(model, xs[std::size_t(s)]);
            tapes[std::size_t(omp_get_thread_num())] = &tapeflow::tape::active();
        }
        for (std::size_t s = 0; s < xs.size(); ++s) {
            INFO("round " << round << ", sample " << s);
            CHECK(parallel[s] == serial[s]);
        }
    }
    std::set<const void*> distinct;
    for (const void* t : tapes)
        if (t) distinct.insert(t);
    CHECK(distinct.size() >= 2);  // dynamic scheduling: at least two threads took samples
    for (const void* t : tapes)
        if (t) CHECK(std::count(tapes.begin(), tapes.end(), t) == 1);  // one tape per thread
}

TEST_CASE("an OpenMP loop inside a recording: stop_recording() throws instead of a wrong gradient") {
    // The heat-equation step of docs/parallel.md's "not supported yet", with
    // its cell loop in parallel: the statements of the other threads are
    // not on the recording tape.
    using tapeflow::Real;
    const std::vector<double> x = samples(1, 64)[0];
    const auto heat = [](const std::vector<Real>& u0) {
        std::vector<Real> u(u0), next(u0);
        const long n = long(u.size());
        for (int step = 0; step < 4; ++step) {
#pragma omp parallel for num_threads(2) schedule(static)
            for (long i = 1; i < n - 1; ++i)
                next[std::size_t(i)] = u[std::size_t(i)] + 0.2 * (u[std::size_t(i) - 1] - 2.0 * u[std::size_t(i)] +
                                                                    u[std::size_t(i) + 1]);
            std::swap(u, next);
        }
        Real f = 0.0;
        for (const Real& ui : u) f += ui * ui;
        return f;
    };
    CHECK_THROWS_WITH(tapeflow::gradient(heat, x), Catch::Contains("another thread"));
}

TEST_CASE("an OpenMP loop inside a recording, in a parallel_region: the one-thread gradient") {
    // The same heat steps, the cell loop an `omp for` inside a region (each
    // OpenMP thread a worker), against the loop run on one thread.
    using tapeflow::Real;
    const std::vector<double> x = samples(1, 200)[0];
    const auto heat = [](const std::vector<Real>& u0, int threads, tapeflow::region_sweep mode) {
        std::vector<Real> u(u0), next(u0);
        const long n = long(u.size());
        for (int step = 0; step < 6; ++step) {
            const auto cell = [&](long i) {
                const std::size_t c = std::size_t(i);
                next[c] = u[c] + 0.2 * (u[c - 1] - 2.0 * u[c] + u[c + 1]) + 0.01 * u[c] * u[c];
            };
            if (threads == 0) {
                for (long i = 1; i < n - 1; ++i) cell(i);
            } else {
                tapeflow::parallel_region region(tapeflow::tape::active(), std::size_t(threads), mode);
#pragma omp parallel num_threads(threads)
                {
                    tapeflow::parallel_region::worker w(region, std::size_t(omp_get_thread_num()));
#pragma omp for schedule(dynamic, 7)
                    for (long i = 1; i < n - 1; ++i) cell(i);
                }
                region.close();
            }
            std::swap(u, next);
        }
        Real f = 0.0;
        for (const Real& ui : u) f += ui * ui;
        return f;
    };
    const std::vector<double> one = tapeflow::gradient([&](const std::vector<Real>& u) { return heat(u, 0, {}); }, x);
    double scale = 0;
    for (double g : one) scale = std::max(scale, std::abs(g));
    REQUIRE(scale > 0.1);
    for (tapeflow::region_sweep mode : {tapeflow::region_sweep::parallel, tapeflow::region_sweep::serial}) {
        for (int threads : {1, 2, 3}) {
            INFO(threads << " threads, " << (mode == tapeflow::region_sweep::parallel ? "parallel" : "serial"));
            const std::vector<double> g =
                tapeflow::gradient([&](const std::vector<Real>& u) { return heat(u, threads, mode); }, x);
            double worst = 0;
            for (std::size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - one[i]));
            CHECK(worst <= 1e-13 * scale);
        }
    }
}
