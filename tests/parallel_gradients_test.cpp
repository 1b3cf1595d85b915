// Independent gradients on several threads at once (docs/parallel.md): one
// tape per thread, with std::thread. The OpenMP form is in
// parallel_openmp_test.cpp (libgomp is not built for ThreadSanitizer; this
// file runs in the ThreadSanitizer sub-build). Reference: the same gradients
// computed one after the other on the main thread, bit for bit.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <set>
#include <thread>
#include <vector>

#include "parallel_support.hpp"

using tapeflow::Real;
using parallel_test::model;
using parallel_test::samples;
using parallel_test::serial_gradients;

TEST_CASE("per-sample gradients on 4 std::threads equal the serial ones bit for bit") {
    const std::vector<std::vector<double>> xs = samples(48, 24);
    const std::vector<std::vector<double>> serial = serial_gradients(xs);
    std::vector<std::vector<double>> parallel(xs.size());

    constexpr std::size_t threads = 4;
    std::vector<std::thread> pool;
    std::vector<const void*> tapes(threads);
    for (std::size_t t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (std::size_t s = t; s < xs.size(); s += threads) parallel[s] = tapeflow::gradient(model, xs[s]);
            tapes[t] = &tapeflow::tape::active();
        });
    for (auto& th : pool) th.join();
    for (std::size_t s = 0; s < xs.size(); ++s) {
        INFO("sample " << s);
        CHECK(parallel[s] == serial[s]);
    }
    // each thread recorded on a tape of its own
    CHECK(std::set<const void*>(tapes.begin(), tapes.end()).size() == threads);
    CHECK(tapes[0] != &tapeflow::tape::active());
}

TEST_CASE("the gradient of a sample against central differences (the reference of the bitwise test)") {
    const std::vector<double> x = samples(1, 24)[0];
    const std::vector<double> g = tapeflow::gradient(model, x);
    for (std::size_t i = 0; i < x.size(); ++i) {
        std::vector<double> up = x, down = x;
        const double h = 1e-6 * std::fmax(1.0, std::fabs(x[i]));
        up[i] += h;
        down[i] -= h;
        const double fd = (model(up) - model(down)) / (2 * h);
        INFO("d/dx" << i);
        CHECK(g[i] == Approx(fd).epsilon(1e-6).margin(1e-8));
    }
}

TEST_CASE("a tape per thread by hand: record once, sweep many times, on 3 threads at once") {
    // Each thread constructs its own tape, activates it, records the model
    // once and sweeps it five times (the tape API of
    // docs/tape.md), while the other threads do the same.
    const std::vector<std::vector<double>> xs = samples(3, 16);
    const std::vector<std::vector<double>> want = serial_gradients(xs);
    std::vector<std::vector<double>> got(xs.size());
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < xs.size(); ++t)
        pool.emplace_back([&, t] {
            tapeflow::tape_options o;
            o.tile_bytes = 4096;  // several tiles
            tapeflow::tape mine(o);
            mine.start_recording();
            std::vector<Real> x(xs[t].begin(), xs[t].end());
            for (Real& xi : x) mine.register_input(xi);
            Real y = model(x);
            mine.register_output(y);
            mine.stop_recording();
            for (int sweep = 0; sweep < 5; ++sweep) {
                mine.clear_adjoints();
                mine.set_adjoint(y, 1.0);
                mine.sweep();
            }
            for (const Real& xi : x) got[t].push_back(mine.adjoint(xi));
        });
    for (auto& th : pool) th.join();
    for (std::size_t t = 0; t < xs.size(); ++t) CHECK(got[t] == want[t]);
}

TEST_CASE("a tape used from a thread that does not own it throws usage_error") {
    tapeflow::tape mine;
    std::atomic<int> refused{0};
    std::thread other([&] {
        try {
            mine.start_recording();
        } catch (const tapeflow::usage_error&) {
            ++refused;
        }
        try {
            mine.activate();
        } catch (const tapeflow::usage_error&) {
            ++refused;
        }
    });
    other.join();
    CHECK(refused == 2);
    CHECK_FALSE(mine.is_recording());
}

TEST_CASE("a loop of a recording run on another thread: stop_recording() throws instead of a wrong gradient") {
    // The worker's assignments to variables of the recording are not
    // recorded (its thread's tape is not recording): the gradient would
    // miss them. The worker tells the tape (tape_registry.hpp).
    tapeflow::tape t;
    t.start_recording();
    std::vector<Real> v(8);
    for (std::size_t i = 0; i < v.size(); ++i) {
        v[i] = 0.5 + double(i);
        t.register_input(v[i]);
    }
    std::vector<Real> w(v);  // active copies, recorded here
    std::thread worker([&] {
        for (std::size_t i = 4; i < w.size(); ++i) w[i] = w[i] * w[i];  // half the loop elsewhere
    });
    for (std::size_t i = 0; i < 4; ++i) w[i] = w[i] * w[i];
    worker.join();
    Real y = 0.0;
    for (const Real& wi : w) y += wi;
    t.register_output(y);
    CHECK_THROWS_WITH(t.stop_recording(), Catch::Contains("assigned or destroyed on another thread") &&
                                              Catch::Contains("docs/parallel.md"));
    CHECK_FALSE(t.is_recording());

    // the tape is usable again after reset(), and a clean recording does not throw
    t.reset();
    t.start_recording();
    Real x = 3.0;
    t.register_input(x);
    Real z = x * x;
    t.register_output(z);
    CHECK_NOTHROW(t.stop_recording());
    t.set_adjoint(z, 1.0);
    t.sweep();
    CHECK(t.adjoint(x) == 6.0);
}

TEST_CASE("the same inside tapeflow::gradient: the driver throws usage_error") {
    const auto f = [](const std::vector<Real>& x) {
        std::vector<Real> h(x);
        std::thread worker([&] { h[1] = sin(h[1]) * h[0].value(); });
        worker.join();
        return Real(h[0] * h[1]);
    };
    CHECK_THROWS_AS(tapeflow::gradient(f, std::vector<double>{0.3, 0.7}), tapeflow::usage_error);
    // and the thread's tape works for the next gradient
    const std::vector<double> g = tapeflow::gradient(
        [](const std::vector<Real>& x) { return Real(x[0] * x[1]); }, std::vector<double>{0.3, 0.7});
    CHECK(g == std::vector<double>{0.7, 0.3});
}
