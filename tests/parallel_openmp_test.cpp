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
