// tape/parallel_region.hpp: a loop whose iterations several threads record
// inside one recording. The threads here are std::threads (this test runs
// under ThreadSanitizer too); tests/parallel_openmp_test.cpp runs the same
// kernel with OpenMP. References: the same program recorded on one thread
// (values bit for bit, gradients to rounding: the threads' adds to a shared
// adjoint come in another order) and central differences. Built with the
// debug checks on (tests/tape/CMakeLists.txt), which find threads of one
// region that depend on each other.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/finite_difference.hpp"
#include "support/parallel_loop.hpp"

using tapeflow::Real;
using tapeflow::region_sweep;
using tapeflow_test::loop;

namespace {

constexpr std::size_t cells = 48;
constexpr int steps = 5;

// x = [c, k_0 .. k_{n-1}, u0_0 .. u0_{n-1}]: explicit heat steps with a
// shared coefficient c (every thread reads it: its adjoint is added to by
// all of them), a per-cell conductivity, a temporary per cell, and a fresh
// vector `next` per step whose variables get their identifiers inside the
// workers and are read after the region. The temporary and next[i] take
// their last terms by += (update records, swept in the workers' segments).
template <class T, class Loop>
T heat(const std::vector<T>& x, const Loop& parallel) {
    const T& c = x[0];
    std::vector<T> u(x.begin() + 1 + long(cells), x.end());
    for (int s = 0; s < steps; ++s) {
        std::vector<T> next(cells);
        next[0] = u[0];
        next[cells - 1] = u[cells - 1];
        parallel(1, long(cells) - 1, [&](long il) {
            const std::size_t i = std::size_t(il);
            T flux = u[i - 1] - 2.0 * u[i];
            flux += u[i + 1];
            next[i] = u[i] + c * x[1 + i] * flux;
            next[i] += 0.01 * sin(u[i]);
        });
        u.swap(next);
    }
    T f = 0.0;
    for (const T& v : u) f += v * v;
    return f + c * u[cells / 2];
}

std::vector<double> inputs() {
    std::vector<double> x(1 + 2 * cells);
    x[0] = 0.2;
    for (std::size_t i = 0; i < cells; ++i) {
        x[1 + i] = 0.8 + 0.01 * double(i % 7);
        x[1 + cells + i] = std::sin(0.3 * double(i)) + 0.1;
    }
    return x;
}

struct result {
    double value;
    std::vector<double> gradient;
};

// The heat program recorded with `threads` threads (0: one, no region).
result recorded_gradient(std::size_t threads, region_sweep mode) {
    const std::vector<double> x0 = inputs();
    tapeflow::tape tape;
    tape.activate();
    tape.start_recording();
    std::vector<Real> x(x0.begin(), x0.end());
    tape.register_inputs(x.begin(), x.end());
    Real f = heat(x, [&](long b, long e, const auto& body) { loop(tape, threads, mode, b, e, body); });
    tape.register_output(f);
    tape.stop_recording();
    tape.set_adjoint(f, 1.0);
    tape.sweep();
    result r{f.value(), std::vector<double>(x.size())};
    tape.adjoints(x.begin(), x.end(), r.gradient.begin());
    tapeflow::tape::thread_default().activate();
    return r;
}

double largest(const std::vector<double>& v) {
    double m = 0;
    for (double e : v) m = std::max(m, std::fabs(e));
    return m;
}

}  // namespace

TEST_CASE("a loop recorded by 1 to 5 threads gives the one-thread value and gradient") {
    const result one = recorded_gradient(0, region_sweep::serial);
    REQUIRE(largest(one.gradient) > 0.1);
    // the reference against central differences (the threads are checked against it)
    const auto f = [](const std::vector<double>& x) {
        return heat(x, [](long b, long e, const auto& body) {
            for (long i = b; i < e; ++i) body(i);
        });
    };
    const std::vector<double> fd = tapeflow_test::central_gradient(f, inputs());
    for (std::size_t i = 0; i < fd.size(); ++i) {
        INFO("input " << i);
        CHECK(tapeflow_test::close(one.gradient[i], fd[i], 1e-6, 1e-8));
    }
    for (region_sweep mode : {region_sweep::parallel, region_sweep::serial}) {
        for (std::size_t threads : {1u, 2u, 3u, 5u}) {
            INFO(threads << " threads, " << (mode == region_sweep::parallel ? "parallel" : "serial") << " sweep");
            const result r = recorded_gradient(threads, mode);
            CHECK(r.value == one.value);
            double worst = 0;
            for (std::size_t i = 0; i < r.gradient.size(); ++i)
                worst = std::max(worst, std::fabs(r.gradient[i] - one.gradient[i]));
            CHECK(worst <= 1e-13 * largest(one.gradient));
        }
    }
}

TEST_CASE("variables created by the workers get identifiers no other variable holds") {
    tapeflow::tape tape;
    tape.activate();
    tape.start_recording();
    Real a = 2.0;
    tape.register_input(a);
    std::vector<Real> made(400);
    loop(tape, 4, region_sweep::parallel, 0, long(made.size()), [&](long i) {
        Real t = a * double(i + 1);  // a temporary: its identifier goes back to the thread's pool
        made[std::size_t(i)] = t + 1.0;
    });
    std::set<tapeflow::identifier> ids{a.id()};
    for (const Real& m : made) {
        CHECK(m.id() != 0);
        ids.insert(m.id());
    }
    CHECK(ids.size() == made.size() + 1);
    // after the region, the tape hands out identifiers no live variable has
    std::vector<Real> later(400);
    for (std::size_t i = 0; i < later.size(); ++i) later[i] = made[i] * made[(i + 1) % made.size()];
    for (const Real& l : later) CHECK(ids.insert(l.id()).second);
    Real f = 0.0;
    for (const Real& l : later) f += l;
    tape.register_output(f);
    tape.stop_recording();
    tape.set_adjoint(f, 1.0);
    tape.sweep();
    // f = sum_i (a (i+1) + 1)(a (j+1) + 1), j = i+1 mod 400
    double want = 0;
    for (std::size_t i = 0; i < made.size(); ++i) {
        const double p = double(i + 1), q = double((i + 1) % made.size() + 1);
        want += p * (2.0 * q + 1.0) + q * (2.0 * p + 1.0);
    }
    CHECK(tape.adjoint(a) == Approx(want).epsilon(1e-14));
    tapeflow::tape::thread_default().activate();
}

TEST_CASE("regions of a time loop: record once, sweep twice, reset and record again with other threads") {
    const result one = recorded_gradient(0, region_sweep::serial);
    const std::vector<double> x0 = inputs();
    tapeflow::tape tape;
    tape.activate();
    for (std::size_t threads : {3u, 2u, 4u}) {  // the tape keeps 4 segments after the last
        tape.reset();
        tape.start_recording();
        std::vector<Real> x(x0.begin(), x0.end());
        tape.register_inputs(x.begin(), x.end());
        Real f = heat(x, [&](long b, long e, const auto& body) { loop(tape, threads, region_sweep::parallel, b, e, body); });
        tape.register_output(f);
        tape.stop_recording();
        CHECK(tape.statistics().externals == std::size_t(steps));  // one entry per region
        CHECK(tape.statistics().regions == std::size_t(steps));    // in a tape region ("parallel") each
        for (int sweep = 0; sweep < 2; ++sweep) {
            INFO(threads << " threads, sweep " << sweep);
            tape.clear_adjoints();
            tape.set_adjoint(f, 1.0);
            tape.sweep();
            double worst = 0;
            for (std::size_t i = 0; i < x.size(); ++i)
                worst = std::max(worst, std::fabs(tape.adjoint(x[i]) - one.gradient[i]));
            CHECK(worst <= 1e-13 * largest(one.gradient));
        }
    }
    tapeflow::tape::thread_default().activate();
}

TEST_CASE("a region inside tapeflow::gradient, on the driver's tape") {
    const result one = recorded_gradient(0, region_sweep::serial);
    const std::vector<double> g = tapeflow::gradient(
        [](const std::vector<Real>& x) {
            return heat(x, [](long b, long e, const auto& body) {
                loop(tapeflow::tape::active(), 2, region_sweep::parallel, b, e, body);
            });
        },
        inputs());
    double worst = 0;
    for (std::size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::fabs(g[i] - one.gradient[i]));
    CHECK(worst <= 1e-13 * largest(one.gradient));
}

TEST_CASE("a vector sweep through a region gives the analytic rows, as the scalar sweeps do") {
    tapeflow::tape tape;
    tape.activate();
    tape.start_recording();
    std::vector<Real> x{1.5, -0.5, 2.0};
    tape.register_inputs(x.begin(), x.end());
    std::vector<Real> y(64);
    loop(tape, 3, region_sweep::parallel, 0, long(y.size()), [&](long i) {
        const double w = 0.1 * double(i);
        y[std::size_t(i)] = x[0] * cos(w * x[1]);
        y[std::size_t(i)] += x[2] * x[2] * w;  // an update record, swept with the region's lanes
    });
    Real g = 0.0, h = 0.0;
    for (std::size_t i = 0; i < y.size(); ++i) {
        g += y[i];
        h += double(i % 3) * y[i] * x[1];
    }
    tape.register_output(g);
    tape.register_output(h);
    tape.stop_recording();
    tapeflow::lane_adjoints<double, 2> bar(tape);
    bar.set(g, 0, 1.0);
    bar.set(h, 1, 1.0);
    tape.sweep(bar);
    // g = sum_i y_i, h = x1 sum_i c_i y_i, y_i = x0 cos(w_i x1) + x2^2 w_i, c_i = i mod 3
    const double x0 = 1.5, x1 = -0.5, x2 = 2.0;
    double want[2][3] = {};
    for (std::size_t i = 0; i < y.size(); ++i) {
        const double w = 0.1 * double(i), c = double(i % 3);
        const double yi = x0 * std::cos(w * x1) + x2 * x2 * w;
        const double dy[3] = {std::cos(w * x1), -x0 * w * std::sin(w * x1), 2 * x2 * w};
        for (std::size_t k = 0; k < 3; ++k) {
            want[0][k] += dy[k];
            want[1][k] += c * x1 * dy[k] + (k == 1 ? c * yi : 0.0);
        }
    }
    for (std::size_t lane = 0; lane < 2; ++lane)
        for (std::size_t k = 0; k < 3; ++k) {
            INFO("lane " << lane << ", input " << k);
            CHECK(bar.get(x[k], lane) == Approx(want[lane][k]).epsilon(1e-12));
        }
    for (std::size_t lane = 0; lane < 2; ++lane) {
        tape.clear_adjoints();
        tape.set_adjoint(lane == 0 ? g : h, 1.0);
        tape.sweep();
        for (std::size_t i = 0; i < x.size(); ++i) {
            INFO("lane " << lane << ", input " << i);
            CHECK(bar.get(x[i], lane) == Approx(tape.adjoint(x[i])).epsilon(1e-12));  // sums in another order
        }
    }
    tapeflow::tape::thread_default().activate();
}

TEST_CASE("custom adjoints recorded by the workers (a parallel sweep then takes the segments one by one)") {
    // y_i = x_i^3 as a custom adjoint with its own rule, inside the workers
    tapeflow::tape tape;
    tape.activate();
    tape.start_recording();
    std::vector<Real> x(30);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.1 * double(i + 1);
    tape.register_inputs(x.begin(), x.end());
    std::vector<Real> y(x.size());
    loop(tape, 3, region_sweep::parallel, 0, long(x.size()), [&](long il) {
        const std::size_t i = std::size_t(il);
        tapeflow::custom_adjoint op;
        const double v = x[i].value();
        op.add_input(x[i]);
        op.add_output(y[i], v * v * v);
        op.record([v](const double* ybar, double* xbar) { xbar[0] += 3 * v * v * ybar[0]; });
    });
    Real f = 0.0;
    for (const Real& v : y) f += v;
    tape.register_output(f);
    tape.stop_recording();
    tape.set_adjoint(f, 1.0);
    tape.sweep();
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double v = 0.1 * double(i + 1);
        CHECK(tape.adjoint(x[i]) == Approx(3 * v * v).epsilon(1e-14));
    }
    tapeflow::tape::thread_default().activate();
}

TEST_CASE("parallel_region misuse gives usage_error") {
    tapeflow::tape tape;
    tape.activate();
    SECTION("on a tape that does not record") {
        CHECK_THROWS_WITH(tapeflow::parallel_region(tape, 2), Catch::Contains("not recording"));
    }
    tape.start_recording();
    Real a = 1.0;
    tape.register_input(a);
    SECTION("0 threads") { CHECK_THROWS_WITH(tapeflow::parallel_region(tape, 0), Catch::Contains("0 threads")); }
    SECTION("a second region while one is open") {
        tapeflow::parallel_region region(tape, 2);
        CHECK_THROWS_WITH(tapeflow::parallel_region(tape, 2), Catch::Contains("open already"));
    }
    SECTION("a worker index past the region's threads, or taken twice") {
        tapeflow::parallel_region region(tape, 2);
        CHECK_THROWS_WITH(tapeflow::parallel_region::worker(region, 2), Catch::Contains("index 2"));
        {
            tapeflow::parallel_region::worker w(region, 1);
            CHECK_THROWS_WITH(tapeflow::parallel_region::worker(region, 1), Catch::Contains("held by another"));
        }
        tapeflow::parallel_region::worker again(region, 1);  // free once the first one went
    }
    SECTION("close() while a worker is active") {
        tapeflow::parallel_region region(tape, 2);
        tapeflow::parallel_region::worker w(region, 0);
        CHECK_THROWS_WITH(region.close(), Catch::Contains("still active"));
    }
    SECTION("register_input and register_output while a region is open") {
        // The region's threads take identifiers from the tape's free ones
        // then, which include lhs identifiers of records: an input given one
        // got a wrong adjoint (52 for 12). Inputs are registered before.
        Real z = 2.0, out = 0.0;
        {
            Real dead = a * a;  // a record assigns it; it dies
            out = 3.0 * dead;
        }
        tapeflow::parallel_region region(tape, 2);
        CHECK_THROWS_WITH(tape.register_input(z), Catch::Contains("parallel region"));
        CHECK_THROWS_WITH(tape.register_inputs(&z, &z + 1), Catch::Contains("parallel region"));
        const double v = 4.0;
        CHECK_THROWS_WITH(tape.register_input(z, v), Catch::Contains("parallel region"));
        CHECK_THROWS_WITH(tape.register_inputs(&z, &z + 1, &v), Catch::Contains("parallel region"));
        CHECK(z.value() == 2.0);
        CHECK_THROWS_WITH(tape.register_output(out), Catch::Contains("parallel region"));
        CHECK(z.id() == 0);
        region.close();
    }
    SECTION("reset, stop_recording and sweep while a region is open") {
        tapeflow::parallel_region region(tape, 2);
        CHECK_THROWS_WITH(tape.reset(), Catch::Contains("parallel region"));
        CHECK_THROWS_WITH(tape.stop_recording(), Catch::Contains("parallel region"));
        CHECK_THROWS_AS(tape.sweep(), tapeflow::usage_error);
        region.close();
        tape.stop_recording();
        CHECK_NOTHROW(tape.sweep());
    }
    SECTION("a statement on the tape itself while the region is open: close() throws") {
        tapeflow::parallel_region region(tape, 2);
        Real b = a * 2.0;  // on the tape: the thread is no worker
        CHECK_THROWS_WITH(region.close(), Catch::Contains("recorded on the tape itself"));
    }
    SECTION("the same found by the destructor: stop_recording() throws it") {
        {
            tapeflow::parallel_region region(tape, 2);
            Real b = a * 2.0;
        }
        CHECK_THROWS_WITH(tape.stop_recording(), Catch::Contains("recorded on the tape itself"));
        CHECK_NOTHROW(tape.stop_recording());  // reported once
    }
    SECTION("inside a worker: no region of its own, no tape operations but statements") {
        tapeflow::parallel_region region(tape, 2);
        {
            tapeflow::parallel_region::worker w(region, 0);
            tapeflow::tape& segment = tapeflow::tape::active();
            CHECK(&segment != &tape);
            CHECK_THROWS_WITH(tapeflow::parallel_region(segment, 2), Catch::Contains("worker"));
            CHECK_THROWS_WITH(segment.reset(), Catch::Contains("worker"));
            CHECK_THROWS_WITH(segment.stop_recording(), Catch::Contains("worker"));
            CHECK_THROWS_WITH(segment.start_recording(), Catch::Contains("worker"));
            Real c = 1.0;
            CHECK_THROWS_WITH(segment.register_input(c), Catch::Contains("worker"));
            CHECK_THROWS_WITH(segment.register_input(c, 2.0), Catch::Contains("worker"));
            CHECK_THROWS_WITH(segment.sweep(), Catch::Contains("worker"));
        }
        region.close();
    }
    SECTION("a worker after close()") {
        tapeflow::parallel_region region(tape, 2);
        region.close();
        CHECK_THROWS_WITH(tapeflow::parallel_region::worker(region, 0), Catch::Contains("closed"));
    }
    tape.stop_recording();
    tape.reset();
    tapeflow::tape::thread_default().activate();
}

TEST_CASE("float tapes and second-order tapes take parallel regions too") {
    SECTION("float") {
        tapeflow::basic_tape<float> tape;
        tape.activate();
        tape.start_recording();
        tapeflow::basic_real<float> c = 1.5f;
        tape.register_input(c);
        std::vector<tapeflow::basic_real<float>> y(40);
        loop(tape, 2, region_sweep::parallel, 0, long(y.size()),
             [&](long i) { y[std::size_t(i)] = c * c * float(i); });
        tapeflow::basic_real<float> f = 0.0f;
        for (const auto& v : y) f += v;
        tape.register_output(f);
        tape.stop_recording();
        tape.set_adjoint(f, 1.0f);
        tape.sweep();
        CHECK(tape.adjoint(c) == Approx(2 * 1.5 * 780.0).epsilon(1e-6));  // sum of i < 40 is 780
        tapeflow::basic_tape<float>::thread_default().activate();
    }
    SECTION("second order (adjoints are Duals)") {
        using D = tapeflow::basic_dual<double>;
        tapeflow::basic_tape<D> tape;
        tape.activate();
        tape.start_recording();
        tapeflow::basic_real<D> x = D(0.7, 1.0);  // tangent 1: d/dx of the adjoints
        tape.register_input(x);
        std::vector<tapeflow::basic_real<D>> y(20);
        loop(tape, 2, region_sweep::parallel, 0, long(y.size()),
             [&](long i) { y[std::size_t(i)] = sin(x * double(i)); });
        tapeflow::basic_real<D> f = 0.0;
        for (const auto& v : y) f += v;
        tape.register_output(f);
        tape.stop_recording();
        tape.set_adjoint(f, D(1.0));
        tape.sweep();
        double first = 0, second = 0;  // f = sum sin(i x): f' = sum i cos(i x), f'' = -sum i^2 sin(i x)
        for (std::size_t i = 0; i < y.size(); ++i) {
            const double w = double(i);
            first += w * std::cos(w * 0.7);
            second -= w * w * std::sin(w * 0.7);
        }
        CHECK(tape.adjoint(x).value() == Approx(first).epsilon(1e-13));
        CHECK(tape.adjoint(x).tangent() == Approx(second).epsilon(1e-13));
        tapeflow::basic_tape<D>::thread_default().activate();
    }
}

TEST_CASE("repeated gradients with regions reuse identifiers (the tape does not grow)") {
    const auto f = [](const std::vector<Real>& x) {
        return heat(x, [](long b, long e, const auto& body) {
            loop(tapeflow::tape::active(), 3, region_sweep::serial, b, e, body);
        });
    };
    tapeflow::tape tape;
    tape.activate();
    std::vector<std::size_t> peaks;
    for (int call = 0; call < 5; ++call) {
        tapeflow::gradient(f, inputs());
        peaks.push_back(tape.statistics().peak_identifiers);
    }
    INFO("peak identifiers of calls 1-5: " << peaks[0] << " " << peaks[1] << " " << peaks[2] << " " << peaks[3]
                                           << " " << peaks[4]);
    CHECK(peaks[4] == peaks[1]);
    // at most a block of fresh identifiers per thread more than on one thread
    // (the 5 regions of a gradient reuse them)
    tapeflow::tape one;
    one.activate();
    tapeflow::gradient(
        [](const std::vector<Real>& x) {
            return heat(x, [](long b, long e, const auto& body) { loop(tapeflow::tape::active(), 0, {}, b, e, body); });
        },
        inputs());
    const std::size_t serial = one.statistics().peak_identifiers;
    INFO("one thread: " << serial);
    CHECK(peaks[4] <= serial + 3 * tapeflow::identifier_pool::block);
    tapeflow::tape::thread_default().activate();
}

TEST_CASE("threads of one region that depend on each other: close() throws (debug checks)") {
    // thread 0 writes a, then (after a handshake, a barrier in effect)
    // thread 1 reads it: the segments depend on each other
    tapeflow::tape tape;
    tape.activate();
    tape.start_recording();
    Real x = 3.0;
    tape.register_input(x);
    Real a, b;
    SECTION("one thread reads what another assigned") {
        tapeflow::parallel_region region(tape, 2);
        std::atomic<bool> written{false};
        std::thread t0([&] {
            tapeflow::parallel_region::worker w(region, 0);
            a = x * x;
            written.store(true);
        });
        std::thread t1([&] {
            tapeflow::parallel_region::worker w(region, 1);
            while (!written.load()) std::this_thread::yield();
            b = a * 2.0;
        });
        t0.join();
        t1.join();
        CHECK_THROWS_WITH(region.close(), Catch::Contains("depend on each other"));
    }
    SECTION("two threads assign one variable (a reduction)") {
        tapeflow::parallel_region region(tape, 2);
        std::mutex m;
        Real sum = 0.0;
        std::vector<std::thread> team;
        for (std::size_t t = 0; t < 2; ++t)
            team.emplace_back([&, t] {
                tapeflow::parallel_region::worker w(region, t);
                Real part = x * double(t + 1);
                std::lock_guard<std::mutex> lock(m);
                sum += part;
            });
        for (std::thread& t : team) t.join();
        CHECK_THROWS_WITH(region.close(), Catch::Contains("depend on each other"));
    }
    tape.stop_recording();
    tape.reset();
    tapeflow::tape::thread_default().activate();
}

TEST_CASE("a region left to its destructor is closed by it") {
    tapeflow::tape tape;
    tape.activate();
    tape.start_recording();
    Real a = 1.5;
    tape.register_input(a);
    std::vector<Real> y(2);
    {
        tapeflow::parallel_region region(tape, 2, region_sweep::parallel);
        std::vector<std::thread> team;
        for (std::size_t t = 0; t < 2; ++t)
            team.emplace_back([&, t] {
                tapeflow::parallel_region::worker w(region, t);
                y[t] = a * a * double(t + 1);
            });
        for (std::thread& t : team) t.join();
    }  // no close(): the destructor puts the region on the tape
    Real f = y[0] + y[1];  // 3 a^2
    tape.register_output(f);
    CHECK_NOTHROW(tape.stop_recording());
    CHECK(tape.statistics().externals == 1);
    tape.set_adjoint(f, 1.0);
    tape.sweep();
    CHECK(tape.adjoint(a) == Approx(6 * 1.5).epsilon(1e-15));
    tapeflow::tape::thread_default().activate();
}

TEST_CASE("a position taken by a worker is refused by the region's tape") {
    // A worker records on a segment under the tape's serial; its position
    // points into the segment's tiles. reset or sweep of the tape to it
    // would have put the tape's cursor there (the heap overflow of a
    // position of another tape): it carries a tag of the segment's own.
    tapeflow::tape tape;
    tape.activate();
    tape.start_recording();
    Real a = 1.5;
    tape.register_input(a);
    for (int i = 0; i < 50; ++i) a = a * 1.01 + 0.5;  // records on the tape itself
    std::vector<Real> y(2);
    std::vector<tapeflow::position> taken(2);
    {
        tapeflow::parallel_region region(tape, 2, region_sweep::parallel);
        std::vector<std::thread> team;
        for (std::size_t t = 0; t < 2; ++t)
            team.emplace_back([&, t] {
                tapeflow::parallel_region::worker w(region, t);
                for (int i = 0; i < 20; ++i) y[t] = a * a * double(t + 1) + y[t];
                taken[t] = tapeflow::tape::active().get_position();
            });
        for (std::thread& t : team) t.join();
        region.close();
    }
    Real f = y[0] + y[1];
    tape.register_output(f);
    tape.stop_recording();
    for (const tapeflow::position& p : taken) {
        CHECK(p.statements > 0);
        CHECK(p.tape != 0);
        CHECK(p.tape != tape.serial());
        CHECK_THROWS_WITH(tape.sweep(p), Catch::Contains("the position was taken on another tape"));
        CHECK_THROWS_WITH(tape.reset(p), Catch::Contains("the position was taken on another tape"));
    }
    tape.set_adjoint(f, 1.0);  // the tape is as it was
    CHECK_NOTHROW(tape.sweep());
    CHECK(tape.adjoint(a) != 0.0);
    tapeflow::tape::thread_default().activate();
}

TEST_CASE("an exception out of a driver's function with a region open reaches the caller, and the tape works on") {
    // The region's destructor finds statements recorded on the tape itself
    // and leaves that error for stop_recording(), which the driver calls
    // while the function's exception unwinds: that one must come out (not
    // std::terminate), and the next gradient must not see the stale error.
    const auto failing = [](const std::vector<Real>& x) -> Real {
        tapeflow::parallel_region region(tapeflow::tape::active(), 2);
        Real on_tape = x[0] * x[0];  // recorded outside a worker
        throw std::runtime_error("the model failed");
    };
    const std::vector<double> x{1.5, 2.0};
    CHECK_THROWS_WITH(tapeflow::gradient(failing, x), "the model failed");
    const std::vector<double> g = tapeflow::gradient(
        [](const std::vector<Real>& v) {
            Real f;
            loop(tapeflow::tape::active(), 2, region_sweep::serial, 0, 1, [&](long) { f = v[0] * v[1]; });
            return f;
        },
        x);
    CHECK(g[0] == 2.0);
    CHECK(g[1] == 1.5);
}
