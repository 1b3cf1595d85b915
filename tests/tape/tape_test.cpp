// The explicit tape API: recording, inputs and outputs, adjoints, sweeps to
// positions, reset, statistics, tiles, identifier reuse, and every misuse
// (documented ones, and those a user would plausibly try: copying or moving
// a tape, two tapes recording at once, a Real of another thread or of a
// destroyed tape, sweeping an empty tape, registering an input twice,
// seeding an input, reading adjoints of variables made after the sweep,
// sweeping or resetting the tape from inside its own sweep).
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include "stream/stream_support.hpp"
#include "support/options.hpp"
#include "support/sanitized.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

using tapeflow::Real;

namespace {

// y = x0 * sin(x1) + x1^2 / x0, with its analytic gradient.
Real f(const Real& x0, const Real& x1) { return x0 * sin(x1) + x1 * x1 / x0; }
std::vector<double> df(double x0, double x1) {
    return {std::sin(x1) - x1 * x1 / (x0 * x0), x0 * std::cos(x1) + 2 * x1 / x0};
}

bool message_contains(const std::exception& e, const std::string& part) {
    return std::string(e.what()).find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("record, seed, sweep, read adjoints") {
    tapeflow::tape t;
    t.start_recording();
    CHECK(t.is_recording());
    CHECK(t.is_active());
    Real x0 = 1.5, x1 = -0.7;
    t.register_input(x0);
    t.register_input(x1);
    Real y = f(x0, x1);
    t.register_output(y);
    t.stop_recording();
    CHECK_FALSE(t.is_recording());

    t.set_adjoint(y, 1.0);
    t.sweep();
    const auto g = df(1.5, -0.7);
    CHECK(t.adjoint(x0) == Approx(g[0]).epsilon(1e-14));
    CHECK(t.adjoint(x1) == Approx(g[1]).epsilon(1e-14));
    CHECK(t.adjoint(x0.id()) == t.adjoint(x0));

    // Sweeping again with a new seed: adjoints are linear in the seed.
    t.clear_adjoints();
    t.set_adjoint(y, -2.0);
    t.sweep();
    CHECK(t.adjoint(x0) == Approx(-2 * g[0]).epsilon(1e-14));
}

TEST_CASE("register_inputs and adjoints over a range: the same as register_input and adjoint on each") {
    // y = sum_i (i + 1) x_i^2: dy/dx_i = 2 (i + 1) x_i
    tapeflow::tape t;
    std::vector<Real> x = {0.5, -1.25, 2.0, 3.5};
    Real passive = 7.0;
    for (int round = 0; round < 2; ++round) {  // a second recording registers the same variables again
        t.reset();
        t.start_recording();
        t.register_inputs(x.begin(), x.end());
        Real y = 0.0;
        for (std::size_t i = 0; i < x.size(); ++i) y += double(i + 1) * x[i] * x[i] + passive;
        t.register_output(y);
        t.stop_recording();
        for (const Real& xi : x) CHECK(xi.is_active());
        t.set_adjoint(y, 1.0);
        t.sweep();
        std::vector<double> g(x.size(), -1.0);
        CHECK(t.adjoints(x.cbegin(), x.cend(), g.begin()) == g.end());
        for (std::size_t i = 0; i < x.size(); ++i) {
            CHECK(g[i] == 2.0 * double(i + 1) * x[i].value());
            CHECK(g[i] == t.adjoint(x[i]));
        }
        double a = -1.0;
        t.adjoints(&passive, &passive + 1, &a);  // a passive variable reads 0
        CHECK(a == 0.0);
    }
    // empty ranges do nothing
    t.reset();
    t.start_recording();
    t.register_inputs(x.begin(), x.begin());
    t.stop_recording();
    CHECK(t.adjoints(x.begin(), x.begin(), static_cast<double*>(nullptr)) == nullptr);
    // not recording: nothing registered
    t.reset();
    CHECK_THROWS_WITH(t.register_inputs(x.begin(), x.end()),
                      Catch::Contains("register_inputs() called while not recording"));
    // a variable of another tape
    tapeflow::tape other;
    other.start_recording();
    Real z = 1.0;
    other.register_input(z);
    other.stop_recording();
    std::vector<Real> mixed;
    mixed.push_back(std::move(z));
    double a = 0;
    CHECK_THROWS_WITH(t.adjoints(mixed.begin(), mixed.end(), &a), Catch::Contains("adjoints(): the variable belongs to another tape"));
}

TEST_CASE("the tape is reused across many recordings") {
    tapeflow::tape t;
    for (int i = 0; i < 200; ++i) {
        const double a = 0.1 + 0.01 * i, b = 1.0 - 0.003 * i;
        t.reset();
        t.start_recording();
        Real x0 = a, x1 = b;
        t.register_input(x0);
        t.register_input(x1);
        Real y = f(x0, x1);
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        t.sweep();
        const auto g = df(a, b);
        REQUIRE(t.adjoint(x0) == Approx(g[0]).epsilon(1e-13));
        REQUIRE(t.adjoint(x1) == Approx(g[1]).epsilon(1e-13));
    }
    CHECK(t.statistics().statements == 1);
}

TEST_CASE("sweeping to a position gives the adjoints at that point") {
    // a = x^2 (before p), b = sin(a) (after p). Sweeping from the end to p
    // leaves the adjoint of a = cos(a); sweeping the rest gives cos(a) 2x.
    tapeflow::tape t;
    t.start_recording();
    Real x = 0.8;
    t.register_input(x);
    Real a = x * x;
    const tapeflow::position p = t.get_position();
    CHECK(p.statements == 1);
    Real b = sin(a);
    t.register_output(b);
    t.stop_recording();

    t.set_adjoint(b, 1.0);
    t.sweep(p);
    CHECK(t.adjoint(a) == Approx(std::cos(0.64)).epsilon(1e-15));
    CHECK(t.adjoint(x) == 0.0);
    t.sweep(p, tapeflow::position{});
    CHECK(t.adjoint(x) == Approx(std::cos(0.64) * 1.6).epsilon(1e-15));
}

TEST_CASE("tiny tiles: records cross many tile boundaries, the gradient is unchanged") {
    const bool scratchpad = GENERATE(false, true);
    auto run = [scratchpad](std::size_t tile_bytes) {
        tapeflow::tape t(tapeflow_test::tape_options(tile_bytes, scratchpad));
        t.start_recording();
        std::vector<Real> u{0.1, 0.4, 0.9, 1.3};
        for (auto& v : u) t.register_input(v);
        Real s = 0.0;
        for (int step = 0; step < 300; ++step)
            for (std::size_t i = 0; i < u.size(); ++i) {
                u[i] = u[i] + 0.01 * sin(u[(i + 1) % u.size()]) * cos(u[i]);
                s += u[i] * u[i];
            }
        t.register_output(s);
        t.stop_recording();
        t.set_adjoint(s, 1.0);
        t.sweep();
        std::vector<double> g;
        // Inputs were overwritten; the adjoints of their identifiers are the gradient.
        for (tapeflow::identifier id = 1; id <= 4; ++id) g.push_back(t.adjoint(id));
        return std::make_pair(g, t.statistics());
    };
    const auto [small, small_stats] = run(tapeflow::min_tile_bytes);
    const auto [large, large_stats] = run(tapeflow::default_tile_bytes);
    CHECK(small_stats.tiles > 50);
    CHECK(large_stats.tiles == 1);
    CHECK(small_stats.statements == large_stats.statements);
    for (std::size_t i = 0; i < 4; ++i) CHECK(small[i] == large[i]);  // same records, same order
}

TEST_CASE("tile_bytes 0 (the default): the tape chooses from the mode and the budget") {
    auto chosen = [](std::size_t budget, bool scratchpad, std::size_t tile_bytes = 0) {
        tapeflow::tape_options o;
        o.memory_budget_bytes = budget;
        o.scratchpad = scratchpad;
        o.tile_bytes = tile_bytes;
        return tapeflow::tape(o).statistics().tile_bytes;
    };
    const std::size_t unlimited = std::numeric_limits<std::size_t>::max();
    CHECK(tapeflow::tape_options{}.tile_bytes == 0);
    CHECK(tapeflow::tape_options{}.prefetch);  // on by default (only a streaming tape has the thread)
    CHECK(chosen(unlimited, false) == tapeflow::default_tile_bytes);            // in memory
    CHECK(chosen(unlimited, true) == tapeflow::default_tile_bytes);             // scratchpad alone
    CHECK(chosen(256u << 20, true) == tapeflow::default_streaming_tile_bytes);  // scratchpad and budget
    CHECK(chosen(256u << 20, false) == tapeflow::default_streaming_tile_bytes); // large budget
    CHECK(chosen(1u << 20, false) == (1u << 20) / 8);                           // an eighth of a small one
    CHECK(chosen(4096, false) == tapeflow::min_tile_bytes);                     // never below the minimum
    CHECK(chosen(1000 + (1u << 20), false) == 2050 * 64);                       // /8 = 131197, up to 64: 2050 x 64
    CHECK(chosen(256u << 20, false, 4096) == 4096);                             // an explicit size is kept
    // a budget below two of the smallest tiles still says what to change
    CHECK_THROWS_WITH(chosen(2000, false), Catch::Contains("memory_budget_bytes = 2000 is below"));

    // A budget of 64 KiB: 8 KiB tiles, most of the tape spilled; the
    // gradient of sum(x_i^2) is 2 x.
    tapeflow_test::temp_directory dir;
    tapeflow::tape_options o;
    o.memory_budget_bytes = 64 * 1024;
    o.spill_directory = dir.path();
    tapeflow::tape t(o);
    t.start_recording();
    std::vector<Real> x(20000);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = 0.001 * double(i) - 3.0;
        t.register_input(x[i]);
    }
    Real y = 0.0;
    for (const Real& xi : x) y += xi * xi;
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    CHECK(t.statistics().tile_bytes == 8 * 1024);
    CHECK(t.statistics().tiles_spilled > 10);
    for (std::size_t i = 0; i < x.size(); i += 997) CHECK(t.adjoint(x[i]) == 2.0 * x[i].value());
}

TEST_CASE("sweep and reset to positions inside earlier tiles") {
    const bool scratchpad = GENERATE(false, true);
    tapeflow::tape t(tapeflow_test::tape_options(tapeflow::min_tile_bytes, scratchpad));
    t.start_recording();
    Real x = 1.1;
    t.register_input(x);
    Real y = x;
    std::vector<tapeflow::position> marks;
    for (int i = 0; i < 200; ++i) {
        marks.push_back(t.get_position());
        y = y * 1.01 + 0.001 * x;
    }
    t.register_output(y);
    t.stop_recording();
    REQUIRE(t.statistics().tiles > 3);
    // Sweep the tape in pieces between the marks: same result as one sweep.
    t.set_adjoint(y, 1.0);
    tapeflow::position from = t.get_position();
    for (auto it = marks.rbegin(); it != marks.rend(); ++it) {
        t.sweep(from, *it);
        from = *it;
    }
    t.sweep(from, tapeflow::position{});
    const double pieces = t.adjoint(x);
    t.clear_adjoints();
    t.set_adjoint(y, 1.0);
    t.sweep();
    CHECK(pieces == t.adjoint(x));
    // Analytic: y_n = 1.01 y_{n-1} + 0.001 x, y_0 = x.
    double dy = 1.0;
    for (int i = 0; i < 200; ++i) dy = 1.01 * dy + 0.001;
    CHECK(pieces == Approx(dy).epsilon(1e-13));

    // reset(position) keeps the first 50 statements and lets recording go on.
    t.reset(marks[50]);
    CHECK(t.statistics().statements == 51);  // the copy y = x, then 50 loop statements
    CHECK(t.get_position() == marks[50]);
    // Record the rest again after the reset: same gradient as before.
    t.start_recording();
    Real z = y;  // y's value is from the end, so rebuild the chain from x
    (void)z;
    t.stop_recording();
    t.reset(marks[50]);
    t.clear_adjoints();
    t.set_adjoint(y, 0.0);
    t.sweep();
    CHECK(t.statistics().statements == 51);
}

TEST_CASE("reset keeps the memory and live variables become constants") {
    tapeflow::tape t;
    t.start_recording();
    Real x = 3.0;
    t.register_input(x);
    std::vector<Real> keep;
    for (int i = 0; i < 5000; ++i) keep.push_back(x * double(i));
    const auto before = t.statistics();
    t.stop_recording();
    t.reset();
    const auto after = t.statistics();
    CHECK(after.statements == 0);
    CHECK(after.tiles == 0);
    CHECK(after.allocated_bytes == before.allocated_bytes);
    CHECK(after.live_identifiers == before.live_identifiers);

    // New recording that uses a variable from before the reset: it is a
    // constant now, so the gradient with respect to the new input ignores it.
    t.start_recording();
    Real z = 2.0;
    t.register_input(z);
    Real y = z * keep[7];
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    CHECK(t.adjoint(z) == 21.0);
}

TEST_CASE("identifiers of dead temporaries are reused: the adjoint vector stays small") {
    tapeflow::tape t;
    t.start_recording();
    Real x = 0.5;
    t.register_input(x);
    Real acc = 0.0;
    for (int i = 0; i < 100000; ++i) {
        Real tmp = sin(x * double(i % 7));
        acc += tmp * tmp;
    }
    t.register_output(acc);
    t.stop_recording();
    const auto s = t.statistics();
    CHECK(s.statements == 200000);
    CHECK(s.peak_identifiers <= 4);  // x, acc, tmp (+ one in flight)
    t.set_adjoint(acc, 1.0);
    t.sweep();
    CHECK(t.statistics().adjoint_bytes <= 16 * sizeof(double));
    double expected = 0.0;  // d/dx sum sin(kx)^2 = sum k sin(2kx)
    for (int i = 0; i < 100000; ++i) expected += (i % 7) * std::sin(2.0 * (i % 7) * 0.5);
    CHECK(t.adjoint(x) == Approx(expected).epsilon(1e-10));
}

TEST_CASE("statistics count statements, arguments and bytes") {
    tapeflow::tape t;
    t.start_recording();
    Real a = 1.0, b = 2.0;
    t.register_input(a);
    t.register_input(b);
    Real c = a * b;          // 2 arguments
    Real d = c * a + b * b;  // c, a, b: 3 distinct arguments
    Real e = 2.0 * 3.0 + a;  // 1 argument (constants are never arguments)
    Real passive = 2.0;
    Real p2 = passive * 4.0;  // all passive: nothing recorded
    const auto s = t.statistics();
    t.stop_recording();
    CHECK(s.statements == 3);
    CHECK(s.arguments == 6);
    using L = tapeflow::record_layout<double>;
    CHECK(s.record_bytes == L::size(2) + L::size(3) + L::size(1));
    CHECK(s.bytes_per_statement() == Approx(double(s.record_bytes) / 3));
    CHECK(s.tiles == 1);
    CHECK_FALSE(p2.is_active());
    CHECK(e.is_active());
}

TEST_CASE("misuse throws usage_error with a message that says what to do") {
    tapeflow::tape t;
    Real x = 1.0;
    SECTION("register_input while not recording") {
        try {
            t.register_input(x);
            FAIL("no exception");
        } catch (const tapeflow::usage_error& e) {
            CHECK(message_contains(e, "start_recording()"));
        }
    }
    SECTION("sweep while recording") {
        t.start_recording();
        try {
            t.sweep();
            FAIL("no exception");
        } catch (const tapeflow::usage_error& e) {
            CHECK(message_contains(e, "stop_recording()"));
        }
        t.stop_recording();
    }
    SECTION("start_recording twice") {
        t.start_recording();
        CHECK_THROWS_AS(t.start_recording(), tapeflow::usage_error);
        t.stop_recording();
    }
    SECTION("seeding a passive variable") {
        CHECK_THROWS_WITH(t.set_adjoint(x, 1.0), Catch::Contains("register_output()"));
    }
    SECTION("adjoint of a variable of another tape") {
        tapeflow::tape other;
        other.start_recording();
        Real y = 2.0;
        other.register_input(y);
        other.stop_recording();
        CHECK_THROWS_WITH(t.adjoint(y), Catch::Contains("another tape"));
        CHECK_THROWS_AS(t.register_output(y), tapeflow::usage_error);
        CHECK_THROWS_AS(t.adjoint(tapeflow::identifier(1000)), tapeflow::usage_error);
    }
    SECTION("an expression mixing two tapes (debug checks)") {
        tapeflow::tape other;
        other.start_recording();
        Real y = 2.0;
        other.register_input(y);
        other.stop_recording();
        t.start_recording();
        Real z = 1.0;
        t.register_input(z);
        CHECK_THROWS_WITH(Real(z * y), Catch::Contains("mixes variables of two tapes"));
        t.stop_recording();
    }
    SECTION("activating a second tape while one records") {
        tapeflow::tape other;
        other.start_recording();
        CHECK_THROWS_WITH(t.start_recording(), Catch::Contains("another tape is recording"));
        other.stop_recording();
    }
    SECTION("a tape used from another thread") {
        std::string message;
        std::thread worker([&] {
            try {
                t.start_recording();
            } catch (const tapeflow::usage_error& e) {
                message = e.what();
            }
        });
        worker.join();
        CHECK(message.find("does not own") != std::string::npos);
    }
    SECTION("positions that are not on the tape") {
        t.start_recording();
        Real y = 1.0;
        t.register_input(y);
        Real z = y * 2.0;
        const auto end = t.get_position();
        t.stop_recording();
        t.reset();
        CHECK_THROWS_AS(t.sweep(end), tapeflow::usage_error);
        CHECK_THROWS_AS(t.reset(end), tapeflow::usage_error);
    }
    SECTION("a tile too small for one statement") {
        CHECK_THROWS_AS(tapeflow::tape(tapeflow_test::tape_options(16)), tapeflow::usage_error);
    }
}

TEST_CASE("each thread records on its own active tape") {
    std::vector<double> results(4);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([i, &results] {
            const double a = 1.0 + i;
            results[i] = tapeflow::gradient(
                [](const std::vector<Real>& x) { return x[0] * x[0] * x[0]; },
                std::vector<double>{a})[0];
        });
    for (auto& th : threads) th.join();
    for (int i = 0; i < 4; ++i) CHECK(results[i] == Approx(3.0 * (1.0 + i) * (1.0 + i)));
}

namespace {
template <std::size_t... I>
auto sum_of(const std::vector<Real>& x, std::index_sequence<I...>) {
    return (x[I] + ...);  // ONE expression with sizeof...(I) operands (not yet a Real)
}
}  // namespace

TEST_CASE("a statement with 40 distinct operands is one long record") {
    tapeflow::tape t;
    t.start_recording();
    std::vector<Real> x(40);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = 0.1 * double(i);
        t.register_input(x[i]);
    }
    Real y = sum_of(x, std::make_index_sequence<40>{}) * 1.0;
    t.register_output(y);
    t.stop_recording();
    const auto s = t.statistics();
    // sum and product are one expression, so one record with 40 pairs (long)
    CHECK(s.statements == 1);
    CHECK(s.arguments == 40);
    CHECK(s.record_bytes == tapeflow::record_layout<double>::size(40));
    t.set_adjoint(y, 1.0);
    t.sweep();
    for (const auto& xi : x) CHECK(t.adjoint(xi) == 1.0);
}

TEST_CASE("long statements: repeats merge up to merge_limit operands, and stay separate pairs past it") {
    tapeflow::tape t;
    t.start_recording();
    std::vector<Real> x(4);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = 1.0 + double(i);
        t.register_input(x[i]);
    }
    // 12 operands, 4 distinct (<= merge_limit): one record of 4 pairs.
    Real a = x[0] + x[1] + x[2] + x[3] + x[0] * x[1] + x[2] * x[3] + x[0] * x[3] + x[1] * x[2];
    CHECK(t.statistics().arguments == 4);
    // 40 operands, 4 distinct (> merge_limit): 40 pairs, repeats included.
    Real b = sum_of(x, std::make_index_sequence<4>{}) * 0.0 + sum_of(x, std::make_index_sequence<4>{}) * 0.0 +
             sum_of(x, std::make_index_sequence<4>{}) * 0.0 + sum_of(x, std::make_index_sequence<4>{}) * 0.0 +
             sum_of(x, std::make_index_sequence<4>{}) * 0.0 + sum_of(x, std::make_index_sequence<4>{}) +
             sum_of(x, std::make_index_sequence<4>{}) + sum_of(x, std::make_index_sequence<4>{}) +
             sum_of(x, std::make_index_sequence<4>{}) + sum_of(x, std::make_index_sequence<4>{});
    CHECK(t.statistics().arguments == 4 + 40);
    Real y = a + b;
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    // da/dx = 1 + (x1, x0, x3, x2) + (x3, 0, 0, x0) + (0, x2, x1, 0); db/dx = 5
    const double x0 = 1, x1 = 2, x2 = 3, x3 = 4;
    CHECK(t.adjoint(x[0]) == Approx(1 + x1 + x3 + 5));
    CHECK(t.adjoint(x[1]) == Approx(1 + x0 + x2 + 5));
    CHECK(t.adjoint(x[2]) == Approx(1 + x3 + x1 + 5));
    CHECK(t.adjoint(x[3]) == Approx(1 + x2 + x0 + 5));
}

TEST_CASE("a swept recording is not recorded on by accident: start_recording throws until a reset") {
    // The newcomer's trap: a driver call, then a recording by hand on the
    // same (active) tape without reset(). It used to keep the driver's
    // records and adjoints: ds/da came out 9.39 where 1 is right.
    auto& t = tapeflow::tape::active();
    t.reset();
    const auto g = tapeflow::gradient([](const std::vector<Real>& v) { return v[0] * v[0] * v[1]; }, {3.0, 2.0});
    CHECK(g[0] == Approx(12.0));
    CHECK(t.statistics().statements > 0);  // the driver's recording stays, for statistics
    try {
        t.start_recording();
        FAIL("start_recording on a swept recording did not throw");
    } catch (const tapeflow::usage_error& e) {
        CHECK(message_contains(e, "call reset() first"));
    }
    CHECK_FALSE(t.is_recording());
    t.reset();
    t.start_recording();
    Real a = 2.0;
    t.register_input(a);
    Real s = a + 1.0;
    t.register_output(s);
    t.stop_recording();
    CHECK(t.adjoint(s) == 0.0);  // nothing left behind by the driver
    t.set_adjoint(s, 1.0);
    t.sweep();
    CHECK(t.adjoint(a) == 1.0);
    t.reset();
}

TEST_CASE("the drivers leave every adjoint at 0") {
    auto& t = tapeflow::tape::active();
    t.reset();
    tapeflow::jacobian([](const std::vector<Real>& v) { return std::vector<Real>{v[0] * v[1], sin(v[0])}; },
                       {1.0, 2.0});
    for (tapeflow::identifier id = 1; id <= t.statistics().peak_identifiers; ++id) CHECK(t.adjoint(id) == 0.0);
    tapeflow::gradient([](const std::vector<Real>& v) { return v[0] * v[1]; }, {1.0, 2.0});
    for (tapeflow::identifier id = 1; id <= t.statistics().peak_identifiers; ++id) CHECK(t.adjoint(id) == 0.0);
    t.reset();
}

TEST_CASE("stale positions are refused: taken before a reset, or beyond a reset(position)") {
    tapeflow::tape t;
    auto record = [&](Real& x, int n) {
        for (int i = 0; i < n; ++i) x = sin(x) * 1.5 + x;
    };
    t.start_recording();
    Real x = 0.3;
    t.register_input(x);
    record(x, 10);
    const auto p1 = t.get_position();
    record(x, 10);
    const auto p2 = t.get_position();
    record(x, 10);
    t.stop_recording();
    t.set_adjoint(x, 1.0);
    t.sweep(p2);          // fine: on the tape
    t.reset(p1);          // p2 is now beyond the end of what is kept
    CHECK_NOTHROW(t.reset(p1));
    t.start_recording();
    record(x, 20);        // the tape is longer than p2 again, with other records
    t.stop_recording();
    const auto p3 = t.get_position();
    try {
        t.sweep(p2);
        FAIL("a position beyond a reset(position) was accepted");
    } catch (const tapeflow::usage_error& e) {
        CHECK(message_contains(e, "no longer on the tape"));
    }
    CHECK_THROWS_AS(t.reset(p2), tapeflow::usage_error);
    CHECK_NOTHROW(t.sweep(p3, p1));  // p1 is still valid: the records before it stayed
    t.reset();
    t.start_recording();
    Real y = 0.2;
    t.register_input(y);
    record(y, 40);
    t.stop_recording();
    CHECK_THROWS_AS(t.sweep(p1), tapeflow::usage_error);      // taken before reset()
    CHECK_THROWS_AS(t.sweep(p3, p1), tapeflow::usage_error);
    CHECK_THROWS_AS(t.reset(p3), tapeflow::usage_error);
    CHECK_NOTHROW(t.sweep(tapeflow::position{}));               // the start is valid on any recording
}

TEST_CASE("debug checks: a tree holding a variable whose identifier went to another variable is refused") {
    // f returns an expression of its own local t: t's identifier goes back
    // to the tape at the return. In f(a) * f(b) the second call's t takes
    // it, and a release build records d/da into b's statement (60, 0
    // instead of 40, 30 at a = 2, b = 3).
    const auto f = [](const Real& x) {
        Real t = x * x;
        return t + 1.0;
    };
    tapeflow::tape t;
    t.start_recording();
    std::vector<Real> x(2);
    const std::vector<double> v = {2.0, 3.0};
    t.register_inputs(x.begin(), x.end(), v.begin());
    try {
        Real y = f(x[0]) * f(x[1]);
        FAIL("a tree holding a reused identifier was recorded");
    } catch (const tapeflow::usage_error& e) {
        CHECK(message_contains(e, "an expression uses a variable that died, and whose identifier went to another variable"));
        CHECK(message_contains(e, "Return a Real from it"));
    }
    t.stop_recording();
    // assigned at once the same helper is right (and let through): the
    // assignment takes t's identifier back after reading the tree
    t.reset();
    t.start_recording();
    t.register_inputs(x.begin(), x.end(), v.begin());
    Real ya = f(x[0]);
    Real yb = f(x[1]);
    Real y = ya * yb;
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    CHECK(t.adjoint(x[0]) == 40.0);  // 2 a (b^2 + 1)
    CHECK(t.adjoint(x[1]) == 30.0);  // 2 b (a^2 + 1)
    // and returning a Real is right in one statement too
    const auto g = [](const Real& x) -> Real {
        Real t = x * x;
        return t + 1.0;
    };
    t.reset();
    t.start_recording();
    t.register_inputs(x.begin(), x.end(), v.begin());
    Real z = g(x[0]) * g(x[1]);
    t.register_output(z);
    t.stop_recording();
    t.set_adjoint(z, 1.0);
    t.sweep();
    CHECK(t.adjoint(x[0]) == 40.0);
    CHECK(t.adjoint(x[1]) == 30.0);
}

TEST_CASE("a position of another tape is refused by sweep and reset, and the tape stays usable") {
    // Both tapes count epochs alike, so the epoch check let it through: a
    // reset to B's tile offset put A's cursor past its 1 KiB tile (a heap
    // overflow at the next record), a sweep from it read garbage.
    tapeflow::tape_options small;
    small.tile_bytes = 1024;
    tapeflow::tape a(small), b;
    tapeflow::position pb;
    b.start_recording();
    Real u = 2.0;
    b.register_input(u);
    Real v = u;
    for (int i = 0; i < 300; ++i) {
        v = v * 0.99 + u;
        if (i == 100) pb = b.get_position();
    }
    b.stop_recording();
    a.start_recording();
    Real x = 1.5;
    a.register_input(x);
    Real y = x;
    for (int i = 0; i < 40; ++i) y = y * 1.01 + x;
    const tapeflow::position pa = a.get_position();
    CHECK(pa.tape == a.serial());
    CHECK(pb.tape == b.serial());
    try {
        a.reset(pb);
        FAIL("reset accepted a position of another tape");
    } catch (const tapeflow::usage_error& e) {
        CHECK(message_contains(e, "reset(position): the position was taken on another tape"));
    }
    for (int i = 0; i < 40; ++i) y = y * 1.01 + x;  // recording goes on where it was
    a.register_output(y);
    a.stop_recording();
    CHECK_THROWS_WITH(a.sweep(pb), Catch::Contains("sweep(position): the position was taken on another tape"));
    CHECK_THROWS_WITH(a.sweep(pb, tapeflow::position{}), Catch::Contains("taken on another tape"));
    CHECK_THROWS_WITH(a.sweep(a.get_position(), pb), Catch::Contains("taken on another tape"));
    // the tape is unchanged: y = 1.01^80 x + x sum_{k<80} 1.01^k, dy/dx = 1.01^80 + (1.01^80 - 1) / 0.01
    a.set_adjoint(y, 1.0);
    a.sweep();
    const double g = std::pow(1.01, 80);
    CHECK(a.adjoint(x) == Approx(g + (g - 1) / 0.01).epsilon(1e-12));
    CHECK_NOTHROW(a.reset(pa));  // its own positions still work
    CHECK_NOTHROW(b.sweep(pb));
}

// =====================================================================================
// Misuse: documented preconditions not covered above
// =====================================================================================

TEST_CASE("a tape can be neither copied nor moved") {
    STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<tapeflow::tape>);
    STATIC_REQUIRE_FALSE(std::is_copy_assignable_v<tapeflow::tape>);
    STATIC_REQUIRE_FALSE(std::is_move_constructible_v<tapeflow::tape>);
    STATIC_REQUIRE_FALSE(std::is_move_assignable_v<tapeflow::tape>);
    STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<tapeflow::tape_f>);
    STATIC_REQUIRE_FALSE(std::is_move_constructible_v<tapeflow::tape_f>);
}

TEST_CASE("set_adjoint_range and adjoint_range: seeds of a range round trip, identifiers not handed out are refused") {
    tapeflow::tape t;
    t.start_recording();
    const tapeflow::identifier first = t.register_input_range(3);
    t.stop_recording();
    const double seeds[3] = {1.5, -2.0, 4.0};
    t.set_adjoint_range(first, 3, seeds);
    double out[4] = {9, 9, 9, 9};
    t.adjoint_range(first, 3, out);
    CHECK(out[0] == 1.5);
    CHECK(out[1] == -2.0);
    CHECK(out[2] == 4.0);
    CHECK(out[3] == 9);  // only `count` values are written
    // 0 (the passive identifier) and identifiers past what the tape handed out
    CHECK_THROWS_WITH(t.set_adjoint_range(0, 1, seeds), Catch::Contains("were not handed out by this tape"));
    CHECK_THROWS_WITH(t.set_adjoint_range(first, 1000, seeds),
                      Catch::Contains("identifiers " + std::to_string(first) + " .. " +
                                      std::to_string(first + 999) + " were not handed out"));
    // past the adjoint vector: 0, not a read out of bounds
    t.adjoint_range(first + 100000, 2, out);
    CHECK(out[0] == 0.0);
    CHECK(out[1] == 0.0);
    t.set_adjoint_range(first, 0, nullptr);  // nothing to set: no check, no effect
    t.adjoint_range(first, 1, out);
    CHECK(out[0] == 1.5);
}

TEST_CASE("every owner member called from another thread throws usage_error naming the member") {
    tapeflow::tape t;
    t.start_recording();
    Real x = 1.0;
    t.register_input(x);
    Real y = x * 2.0;
    t.register_output(y);
    const tapeflow::position end = t.get_position();
    t.stop_recording();
    const std::vector<std::pair<std::string, std::function<void()>>> calls = {
        {"activate", [&] { t.activate(); }},
        {"start_recording", [&] { t.start_recording(); }},
        {"stop_recording", [&] { t.stop_recording(); }},
        {"register_input", [&] { t.register_input(x); }},
        {"register_inputs", [&] { t.register_inputs(&x, &x + 1); }},
        {"register_input", [&] { t.register_input(x, 5.0); }},
        {"register_inputs", [&] { const double v = 5.0; (void)t.register_inputs(&x, &x + 1, &v); }},
        {"register_output", [&] { t.register_output(y); }},
        {"begin_region", [&] { t.begin_region("r"); }},
        {"end_region", [&] { t.end_region(0); }},
        {"set_adjoint", [&] { t.set_adjoint(y, 1.0); }},
        {"adjoint", [&] { t.add_adjoint(y, 1.0); }},  // add_adjoint reads the adjoint first
        {"adjoint", [&] { (void)t.adjoint(x); }},
        {"adjoint", [&] { (void)t.adjoint(x.id()); }},
        {"adjoints", [&] { double a = 0; (void)t.adjoints(&x, &x + 1, &a); }},
        {"sweep", [&] { t.sweep(); }},
        {"sweep", [&] { t.sweep(end, tapeflow::position{}); }},
        {"reset", [&] { t.reset(); }},
        {"reset", [&] { t.reset(end); }},
        {"acquire_identifier_range", [&] { (void)t.acquire_identifier_range(3); }},
        {"adjoint_range", [&] { double a[1]; t.adjoint_range(x.id(), 1, a); }},
        {"set_adjoint_range", [&] { const double v = 1.0; t.set_adjoint_range(y.id(), 1, &v); }},
    };
    for (const auto& entry : calls) {
        const std::string& name = entry.first;
        CAPTURE(name);
        std::string message;
        std::thread worker([&] {
            try {
                entry.second();
            } catch (const tapeflow::usage_error& e) {
                message = e.what();
            }
        });
        worker.join();
        CHECK(message == "tapeflow: " + name +
                             "() called from a thread that does not own this tape; each thread records "
                             "on its own tape (tapeflow::tape::active())");
    }
    // nothing changed: the owner sweeps the recording as it was
    CHECK(x.value() == 1.0);
    CHECK(t.statistics().statements == 1);
    t.set_adjoint(y, 1.0);
    t.sweep();
    CHECK(t.adjoint(x) == 2.0);
}

TEST_CASE("more documented misuse: messages that say what to do") {
    tapeflow::tape t;
    SECTION("set_adjoint with a variable of another tape") {
        tapeflow::tape other;
        other.start_recording();
        Real y = 2.0;
        other.register_input(y);
        other.stop_recording();
        CHECK_THROWS_WITH(t.set_adjoint(y, 1.0),
                          "tapeflow: set_adjoint(): the variable belongs to another tape (or to a tape that "
                          "no longer exists); use the tape that recorded it");
    }
    SECTION("add_adjoint on a passive variable") {
        Real passive = 1.0;
        CHECK_THROWS_WITH(t.add_adjoint(passive, 1.0), Catch::Contains("passive variable") &&
                                                           Catch::Contains("call register_output() on it first"));
    }
    SECTION("adjoint(id) of an identifier never handed out") {
        CHECK_THROWS_WITH(t.adjoint(tapeflow::identifier(1000)),
                          "tapeflow: adjoint(): identifier 1000 was never handed out by this tape");
    }
    SECTION("sweep(from, to) with the positions swapped") {
        t.start_recording();
        Real x = 1.0;
        t.register_input(x);
        Real a = x * 2.0;
        const tapeflow::position middle = t.get_position();
        Real b = a * 3.0;
        const tapeflow::position end = t.get_position();
        t.stop_recording();
        CHECK_THROWS_WITH(t.sweep(middle, end), Catch::Contains("needs to <= from <= the current position"));
        // the tape was not touched: the right order works
        t.register_output(b);
        t.set_adjoint(b, 1.0);
        t.sweep(end, tapeflow::position{});
        CHECK(t.adjoint(x) == 6.0);
    }
    SECTION("tile_bytes below the minimum") {
        CHECK_THROWS_WITH(tapeflow::tape(tapeflow_test::tape_options(16)),
                          "tapeflow: tape_options::tile_bytes = 16 is below the minimum of 1024");
    }
    SECTION("tile_bytes too large: the value given is reported (it was rounded to 0 before)") {
        const std::size_t huge = std::numeric_limits<std::size_t>::max();
        try {
            tapeflow::tape t(tapeflow_test::tape_options(huge));
            FAIL("tile_bytes = SIZE_MAX was accepted");
        } catch (const tapeflow::usage_error& e) {
            CHECK(message_contains(e, "tile_bytes = " + std::to_string(huge) + " is above the maximum"));
        }
    }
}

namespace {
template <class R, std::size_t... I>
auto sum_of_leaves(const std::vector<R>& x, std::index_sequence<I...>) {
    return (x[I] + ...);
}
}  // namespace

TEST_CASE("a statement larger than a tile chosen from a memory budget: the message says to raise the budget") {
    // tile_bytes left at 0 with a budget: a tile is an eighth of the budget
    // (1 KiB here), so "raise tile_bytes" alone was not the whole answer
    tapeflow::tape_options o;
    o.memory_budget_bytes = 8 * 1024;
    tapeflow::tape_l t(o);
    REQUIRE(t.statistics().tile_bytes == 1024);
    t.start_recording();
    std::vector<tapeflow::RealL> x(52);
    for (auto& xi : x) t.register_input(xi);
    tapeflow::RealL y;
    CHECK_THROWS_WITH(y = sum_of_leaves(x, std::make_index_sequence<52>{}),
                      Catch::Contains("raise tape_options::tile_bytes (left at 0 with a memory budget") &&
                          Catch::Contains("raise the budget, or set tile_bytes to at least 1048"));
    t.stop_recording();
}

TEST_CASE("a statement larger than a tile: usage_error, nothing recorded, the tape goes on") {
    // long double: 20-byte pairs, so 52 operands overflow the smallest tile
    using RealL = tapeflow::RealL;
    const bool scratchpad = GENERATE(false, true);
    tapeflow::tape_l t(tapeflow_test::tape_options(tapeflow::min_tile_bytes, scratchpad));
    t.start_recording();
    std::vector<RealL> x(52);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = 0.25L * (long double)(i);
        t.register_input(x[i]);
    }
    RealL y = x[0] * 2.0L;
    // 52 pairs of 20 bytes and an 8-byte long header: 1048 bytes > 1024
    CHECK_THROWS_WITH(y = sum_of_leaves(x, std::make_index_sequence<52>{}),
                      "tapeflow: a statement needs 1048 bytes but a tile holds 1024; raise "
                      "tape_options::tile_bytes");
    CHECK(t.statistics().statements == 1);
    CHECK(y.value() == 0.0L);  // the failed assignment left y as it was
    y = y + x[1] * x[2];
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0L);
    t.sweep();
    CHECK(t.adjoint(x[0]) == 2.0L);
    CHECK(t.adjoint(x[1]) == x[2].value());
    CHECK(t.adjoint(x[3]) == 0.0L);
}

// =====================================================================================
// Plausible misuse: each has a clear error or a documented behaviour
// =====================================================================================

TEST_CASE("recording on two tapes at once is refused, and the first recording goes on untouched") {
    tapeflow::tape first;
    tapeflow::tape second;
    first.start_recording();
    Real x = 1.5;
    first.register_input(x);
    Real y = x * x;
    CHECK_THROWS_WITH(second.start_recording(), Catch::Contains("another tape is recording on this thread") &&
                                                    Catch::Contains("call stop_recording() on it"));
    CHECK_THROWS_AS(second.activate(), tapeflow::usage_error);
    CHECK_FALSE(second.is_recording());
    CHECK(first.is_active());
    CHECK(first.is_recording());
    CHECK_THROWS_WITH(second.register_input(x), Catch::Contains("call start_recording() first"));
    y = y * x;  // still recorded on the first tape
    first.register_output(y);
    first.stop_recording();
    CHECK(first.statistics().statements == 2);
    CHECK(second.statistics().statements == 0);
    first.set_adjoint(y, 1.0);
    first.sweep();
    CHECK(first.adjoint(x) == 3 * 1.5 * 1.5);
    // once the first tape has stopped, the second one may record
    second.start_recording();
    Real z = 2.0;
    second.register_input(z);
    Real w = z * z;
    second.register_output(w);
    second.stop_recording();
    second.set_adjoint(w, 1.0);
    second.sweep();
    CHECK(second.adjoint(z) == 4.0);
}

TEST_CASE("a Real of another thread's tape: a clear error there, and destroying it there touches neither tape") {
    tapeflow::tape t;
    t.start_recording();
    Real x = 0.5;
    t.register_input(x);
    Real y = x * 2.0;
    t.stop_recording();
    const std::size_t live = t.statistics().live_identifiers;
    std::string mix_message, owner_message;
    std::size_t worker_live_before = 0, worker_live_after = 0;
    std::thread worker([&] {
        tapeflow::tape& mine = tapeflow::tape::active();  // the worker's own default tape
        mine.start_recording();
        Real w = 1.0;
        mine.register_input(w);
        worker_live_before = mine.statistics().live_identifiers;
        try {
            Real z = w * y;
        } catch (const tapeflow::usage_error& e) {
            mix_message = e.what();
        }
        try {
            (void)t.adjoint(y);
        } catch (const tapeflow::usage_error& e) {
            owner_message = e.what();
        }
        { Real moved = std::move(y); }  // y's identifier dies on the worker
        worker_live_after = mine.statistics().live_identifiers;
        mine.stop_recording();
    });
    worker.join();
    CHECK(tapeflow_test::contains(mix_message, "mixes variables of two tapes"));
    CHECK(tapeflow_test::contains(owner_message, "does not own this tape"));
    CHECK(worker_live_after == worker_live_before);  // not given to the worker's tape
    CHECK(t.statistics().live_identifiers == live);   // leaked on t (documented, harmless)
    CHECK_FALSE(y.is_active());
    // t still sweeps its recording
    t.register_output(x);
    t.set_adjoint(x, 1.0);
    t.sweep();
    CHECK(t.adjoint(x) == 1.0);
}

TEST_CASE("a variable of a destroyed tape in an expression: usage_error, and assigning it makes it this tape's") {
    Real orphan = 3.0;
    {
        tapeflow::tape gone;
        gone.start_recording();
        gone.register_input(orphan);
        gone.stop_recording();
    }
    tapeflow::tape t;
    t.start_recording();
    Real z = 1.0;
    t.register_input(z);
    CHECK_THROWS_WITH(Real(z * orphan), Catch::Contains("a tape that no longer exists"));
    CHECK_THROWS_WITH(t.register_output(orphan), Catch::Contains("no longer exists"));
    CHECK(t.statistics().statements == 0);
    orphan = z * 2.0;  // a new identifier of t
    CHECK(orphan.tape_tag() == t.serial());
    t.register_output(orphan);
    t.stop_recording();
    t.set_adjoint(orphan, 1.0);
    t.sweep();
    CHECK(t.adjoint(z) == 2.0);
}

TEST_CASE("a sweep before anything is recorded does nothing, and the tape records normally afterwards") {
    const bool streaming = GENERATE(false, true);
    CAPTURE(streaming);
    const std::size_t threads = tapeflow_test::steady_thread_count();  // the previous test joined a thread
    tapeflow::tape t(tapeflow_test::tape_options(1024, streaming, std::numeric_limits<std::size_t>::max(), true));
    CHECK_NOTHROW(t.sweep());
    CHECK_NOTHROW(t.sweep(tapeflow::position{}));
    CHECK_NOTHROW(t.sweep(t.get_position(), tapeflow::position{}));
    const auto s = t.statistics();
    CHECK(s.statements == 0);
    CHECK(s.tiles == 0);
    CHECK(s.tiles_written == 0);
    CHECK(s.allocated_bytes == 0);
    CHECK(tapeflow_test::settled_thread_count(threads) == threads);  // no prefetch thread for nothing
    // a recording with an input and no statement: the sweep leaves the seed
    t.start_recording();
    Real x = 2.0;
    t.register_input(x);
    t.stop_recording();
    t.set_adjoint(x, 1.0);
    t.sweep();
    CHECK(t.adjoint(x) == 1.0);
    // and a real recording after that
    t.reset();
    t.start_recording();
    t.register_input(x);
    Real y = x * x * x;
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    CHECK(t.adjoint(x) == 12.0);
}

TEST_CASE("register_input twice: uses before the second call stay with the old identifier") {
    tapeflow::tape t;
    t.start_recording();
    Real x = 2.0;
    t.register_input(x);
    const tapeflow::identifier first = x.id();
    const std::size_t live = t.statistics().live_identifiers;
    SECTION("twice in a row: one input, no identifier leaked") {
        t.register_input(x);
        // no record yet: no record assigns the identifier x gave back, so it serves again
        CHECK(x.id() == first);
        CHECK(t.statistics().live_identifiers == live);
        Real y = x * x * x;
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        t.sweep();
        CHECK(t.adjoint(x) == 12.0);
    }
    SECTION("after a use: the earlier use is a derivative with respect to the old identifier") {
        Real a = x * x;  // uses `first`
        t.register_input(x);
        CHECK(x.id() != first);  // a record uses `first`: a fresh identifier
        Real y = a + 3.0 * x;
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        t.sweep();
        CHECK(t.adjoint(x) == 3.0);      // only the use after the second call
        CHECK(t.adjoint(first) == 4.0);  // d y / d (x before the second call) = 2 x
    }
}

TEST_CASE("inputs registered again after reset() reuse their identifiers: adjoints for one recording") {
    tapeflow::tape t;
    const std::size_t n = 1000;
    std::vector<Real> x(n);
    std::size_t first_peak = 0;
    for (int round = 0; round < 4; ++round) {
        t.reset();
        t.start_recording();
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = 0.5 + 0.001 * double(i) + 0.01 * round;  // a constant again: its identifier goes back
            t.register_input(x[i]);
        }
        Real y = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            Real s = sin(x[i]);  // dies: its identifier is recycled for the next statement
            y += s * x[i];
        }
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        t.sweep();
        for (std::size_t i = 0; i < n; ++i) {
            const double v = x[i].value();  // d/dv (v sin v)
            REQUIRE(t.adjoint(x[i]) == Approx(std::sin(v) + v * std::cos(v)).epsilon(1e-14));
        }
        if (round == 0) first_peak = t.statistics().peak_identifiers;
    }
    CHECK(first_peak <= n + 4);  // the inputs, y, s (+ one in flight)
    // Before: the second recording took n fresh identifiers for the inputs
    // (the released ones were kept for statements only), and from then on
    // the inputs took one of two sets in turn: 2 n identifiers.
    CHECK(t.statistics().peak_identifiers == first_peak);
}

TEST_CASE("register_input(x, value) and register_inputs(first, last, values): inputs keep their identifiers across gradients") {
    // y = sum_i x_i^3 / (i + 1): dy/dx_i = 3 x_i^2 / (i + 1)
    tapeflow::tape t;
    const std::size_t n = 200;
    std::vector<Real> x(n);
    std::vector<tapeflow::identifier> ids;
    std::size_t peak = 0;
    for (int round = 0; round < 4; ++round) {
        std::vector<double> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = 0.25 + 0.01 * double(i) - 0.1 * round;
        t.reset();
        t.start_recording();
        if (round % 2 == 0) {
            CHECK(t.register_inputs(x.begin(), x.end(), v.cbegin()) == v.cend());
        } else {
            for (std::size_t i = 0; i < n; ++i) t.register_input(x[i], v[i]);
        }
        for (std::size_t i = 0; i < n; ++i) REQUIRE(x[i].value() == v[i]);
        Real y = 0.0;
        for (std::size_t i = 0; i < n; ++i) y += x[i] * x[i] * x[i] / double(i + 1);
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        t.sweep();
        std::vector<double> g(n);
        t.adjoints(x.begin(), x.end(), g.begin());
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(g[i] == Approx(3.0 * v[i] * v[i] / double(i + 1)).epsilon(1e-14));
        if (round == 0) {
            for (const Real& xi : x) ids.push_back(xi.id());
            peak = t.statistics().peak_identifiers;
        } else {
            // no record held, every adjoint 0: each input has its identifier
            // again (kept; giving it back and taking one would also return
            // it, so this checks the result, not the shortcut)
            for (std::size_t i = 0; i < n; ++i) REQUIRE(x[i].id() == ids[i]);
            CHECK(t.statistics().peak_identifiers == peak);
        }
    }
    CHECK(peak <= n + 3);
}

TEST_CASE("register_inputs(first, last, values) on an empty tape: passive, foreign and own variables all become inputs") {
    // y = x0 x1 + x2^2: dy/dx = (x1, x0, 2 x2)
    tapeflow::tape other;
    std::vector<Real> x(3);
    other.start_recording();
    other.register_input(x[1]);  // x[1] is the other tape's
    other.stop_recording();
    tapeflow::tape t;
    t.start_recording();
    t.register_input(x[2]);  // x[2] is already this tape's
    t.stop_recording();
    const tapeflow::identifier own = x[2].id();
    t.reset();
    t.start_recording();
    const std::vector<double> v = {2.0, 3.0, 5.0};
    CHECK(t.register_inputs(x.begin(), x.end(), v.begin()) == v.end());
    for (const Real& xi : x) CHECK(xi.tape_tag() == t.serial());
    CHECK(x[2].id() == own);  // kept
    CHECK(x[0].id() != x[1].id());
    CHECK(x[0].id() != own);
    CHECK(x[1].id() != own);
    Real y = x[0] * x[1] + x[2] * x[2];
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    std::vector<double> g(3);
    t.adjoints(x.begin(), x.end(), g.begin());
    CHECK(g == std::vector<double>{3.0, 2.0, 10.0});
}

TEST_CASE("register_inputs(first, last) over several chunks: passive, foreign and own variables all become inputs") {
    // The passive ones take their identifiers a chunk (256) at a time; a
    // chunk with an active variable goes one by one. y = sum (i + 1) x_i.
    const std::size_t n = 700;
    tapeflow::tape other;
    std::vector<Real> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = 0.5 * double(i);
    other.start_recording();
    other.register_input(x[300]);  // the other tape's
    other.stop_recording();
    tapeflow::tape t;
    t.start_recording();
    t.register_input(x[10]);  // already this tape's
    t.register_input(x[650]);
    t.stop_recording();
    const tapeflow::identifier own10 = x[10].id(), own650 = x[650].id();
    t.reset();
    t.start_recording();
    t.register_inputs(x.begin(), x.end());
    std::set<tapeflow::identifier> ids;
    for (const Real& xi : x) {
        CHECK(xi.tape_tag() == t.serial());
        ids.insert(xi.id());
    }
    CHECK(ids.size() == n);
    CHECK(ids.count(0) == 0);
    CHECK(x[10].id() == own10);  // kept: the tape holds nothing yet
    CHECK(x[650].id() == own650);
    Real y = 0.0;
    for (std::size_t i = 0; i < n; ++i) y += double(i + 1) * x[i];
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    std::vector<double> g(n);
    t.adjoints(x.begin(), x.end(), g.begin());
    for (std::size_t i = 0; i < n; ++i) CHECK(g[i] == double(i + 1));
}

TEST_CASE("register_inputs(first, last) after statements: no input takes an identifier that a record assigns") {
    const std::size_t n = 600;  // more than two chunks of inputs, more dead temporaries than that
    tapeflow::tape t;
    t.start_recording();
    Real a = 1.5;
    t.register_input(a);
    Real b = 0.0;
    std::set<tapeflow::identifier> dead;
    {
        std::vector<Real> u(n);
        for (Real& ui : u) {
            ui = a * a;  // a record assigns ui's identifier
            dead.insert(ui.id());
            b += 2.0 * ui;
        }
    }  // the temporaries die: their identifiers are free for statements only
    std::vector<Real> z(n, Real(3.0));
    t.register_inputs(z.begin(), z.end());
    for (const Real& zi : z) CHECK(dead.count(zi.id()) == 0);
    Real y = b;
    for (const Real& zi : z) y += zi * zi;
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    CHECK(t.adjoint(a) == Approx(2.0 * double(n) * 2.0 * 1.5).epsilon(1e-14));  // d(2 n a^2)/da
    for (const Real& zi : z) CHECK(t.adjoint(zi) == 2.0 * 3.0);
}

TEST_CASE("register_input(x, value) after a statement gives a fresh identifier, and its misuse") {
    tapeflow::tape t;
    SECTION("after a use: the earlier use keeps the old identifier") {
        t.start_recording();
        Real x = 2.0;
        t.register_input(x);
        const tapeflow::identifier first = x.id();
        Real a = x * x;  // a record uses `first`
        t.register_input(x, 5.0);
        CHECK(x.id() != first);
        CHECK(x.value() == 5.0);
        Real y = a + 3.0 * x;
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        t.sweep();
        CHECK(y.value() == 19.0);
        CHECK(t.adjoint(x) == 3.0);
        CHECK(t.adjoint(first) == 4.0);  // d(x^2)/dx at 2
    }
    SECTION("a variable of another tape becomes this tape's input") {
        tapeflow::tape other;
        other.start_recording();
        Real z = 1.0;
        other.register_input(z);
        other.stop_recording();
        t.start_recording();  // the active tape again
        t.register_input(z, 4.0);
        CHECK(z.tape_tag() == t.serial());
        Real y = z * z;
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        t.sweep();
        CHECK(t.adjoint(z) == 8.0);
    }
    SECTION("register_inputs(first, last, values) after a use, and an empty range") {
        t.start_recording();
        std::vector<Real> x = {1.0, 2.0};
        t.register_inputs(x.begin(), x.end());
        const tapeflow::identifier first = x[0].id();
        Real a = x[0] * x[1];  // a record uses both
        const double v[2] = {3.0, 5.0};
        CHECK(t.register_inputs(x.begin(), x.begin(), v) == v);  // nothing read
        CHECK(t.register_inputs(x.begin(), x.end(), v) == v + 2);
        CHECK(x[0].id() != first);
        Real y = a + x[0] * x[1];
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        t.sweep();
        CHECK(y.value() == 17.0);
        CHECK(t.adjoint(x[0]) == 5.0);
        CHECK(t.adjoint(x[1]) == 3.0);
        CHECK(t.adjoint(first) == 2.0);  // d(x0 x1)/dx0 of the first values
    }
    SECTION("not recording: usage_error, the values untouched") {
        std::vector<Real> x = {1.0, 2.0};
        const std::vector<double> v = {7.0, 8.0};
        CHECK_THROWS_WITH(t.register_input(x[0], 7.0),
                          Catch::Contains("register_input() called while not recording"));
        CHECK_THROWS_WITH(t.register_inputs(x.begin(), x.end(), v.begin()),
                          Catch::Contains("register_inputs() called while not recording"));
        CHECK(x[0].value() == 1.0);
        CHECK(x[1].value() == 2.0);
        CHECK(!x[0].is_active());
    }
}

TEST_CASE("an input registered again after reset(position) to the start does not take back its kept adjoint") {
    // reset(position) keeps the adjoints (checkpointing sweeps on from them):
    // the input must not get back its identifier, whose adjoint is 6; with
    // register_input(x, value) (rounds 3-5) it must not keep it either.
    tapeflow::tape t;
    tapeflow::position start;
    Real x = 3.0;
    for (int round = 0; round < 6; ++round) {
        if (round > 0) t.reset(start);  // to the start: a new epoch, the adjoints kept
        t.start_recording();
        start = t.get_position();
        if (round < 3) {
            x = 3.0;
            t.register_input(x);
        } else {
            t.register_input(x, 3.0);
        }
        Real y = x * x;
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        t.sweep();
        CHECK(t.adjoint(x) == 6.0);
    }
}

TEST_CASE("an input registered after a statement never takes an identifier that a record assigns") {
    tapeflow::tape t;
    t.start_recording();
    Real a = 1.5;
    t.register_input(a);
    Real b = 0.0;
    tapeflow::identifier dead = 0;
    {
        Real u = a * a;  // a record assigns u's identifier
        dead = u.id();
        b = 2.0 * u;
    }  // u dies: its identifier is free again, for statements only
    Real z = 3.0;
    t.register_input(z);
    CHECK(z.id() != dead);
    Real y = b + z * z;
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    CHECK(t.adjoint(a) == 4.0 * 1.5);  // d(2 a^2)/da
    CHECK(t.adjoint(z) == 2.0 * 3.0);
}

TEST_CASE("set_adjoint on an input: the seed adds to what the sweep brings") {
    tapeflow::tape t;
    t.start_recording();
    Real x = 3.0;
    t.register_input(x);
    Real y = x * x;
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.set_adjoint(x, 0.5);
    t.sweep();
    CHECK(t.adjoint(x) == 6.5);  // 0.5 + dy/dx
    // seeding the input alone: dx/dx = 1, nothing flows to y
    t.clear_adjoints();
    t.set_adjoint(x, 1.0);
    t.sweep();
    CHECK(t.adjoint(x) == 1.0);
    CHECK(t.adjoint(y) == 0.0);
}

TEST_CASE("a variable made after the sweep: a passive one reads 0, an active one reads 0 after clear_adjoints()") {
    tapeflow::tape t;
    t.start_recording();
    Real y;
    tapeflow::identifier x_id = 0;
    {
        Real x = 0.5;
        t.register_input(x);
        x_id = x.id();
        y = x * x * 3.0;
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        t.sweep();
        CHECK(t.adjoint(x) == 3.0);
    }  // x dies after the sweep; its identifier is free
    Real after = y * 2.0;  // not recording: a constant
    CHECK_FALSE(after.is_active());
    CHECK(t.adjoint(after) == 0.0);
    CHECK_THROWS_AS(t.set_adjoint(after, 1.0), tapeflow::usage_error);
    // Recording on a swept recording needs a reset(position) first; then z
    // may take the identifier of the dead x. The adjoints belong to
    // identifiers, so clear them before reading or seeding.
    CHECK_THROWS_AS(t.start_recording(), tapeflow::usage_error);
    t.reset(t.get_position());
    t.start_recording();
    Real z = y * 2.0;
    t.stop_recording();
    REQUIRE(z.is_active());
    t.clear_adjoints();
    CHECK(t.adjoint(z) == 0.0);
    CHECK(t.adjoint(y) == 0.0);
    t.set_adjoint(z, 1.0);
    t.sweep();
    CHECK(t.adjoint(y) == 0.0);     // y is the lhs of a record: the sweep consumed its adjoint
    CHECK(t.adjoint(x_id) == 6.0);  // d z / d x through x's identifier, as documented
}

TEST_CASE("misuse from a progress callback: sweep, reset or start_recording inside the sweep gives usage_error, then reset() recovers") {
    const std::string member = GENERATE(as<std::string>{}, "sweep", "reset", "reset(position)", "start_recording");
    CAPTURE(member);
    tapeflow::tape* self = nullptr;
    bool armed = false;
    bool sweeping_seen = false;
    auto o = tapeflow_test::tape_options(1024);
    o.progress = [&](const tapeflow::tape_progress& p) {
        if (!armed || p.stage != tapeflow::tape_progress::phase::sweeping) return;
        armed = false;
        sweeping_seen = self->is_sweeping();
        if (member == "sweep") self->sweep();
        if (member == "reset") self->reset();
        if (member == "reset(position)") self->reset(tapeflow::position{});
        if (member == "start_recording") self->start_recording();
    };
    tapeflow::tape t(o);
    self = &t;
    auto record = [&t](double x0) {
        t.start_recording();
        Real x = x0;
        t.register_input(x);
        Real y = x;
        for (int i = 0; i < 200; ++i) y = y * 1.01 + 0.001 * x;  // ~6 tiles
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        return x;
    };
    Real x = record(1.1);
    armed = true;
    const std::string name = member == "reset(position)" ? "reset" : member;
    CHECK_THROWS_WITH(t.sweep(), Catch::StartsWith("tapeflow: " + name + "() called while this tape is sweeping") &&
                                     Catch::Contains("only after sweep() returns"));
    CHECK(sweeping_seen);
    CHECK_FALSE(t.is_sweeping());
    CHECK_FALSE(t.is_recording());
    t.reset();
    Real x2 = record(1.1);
    t.sweep();
    double dy = 1.0;
    for (int i = 0; i < 200; ++i) dy = 1.01 * dy + 0.001;
    CHECK(t.adjoint(x2) == Approx(dy).epsilon(1e-13));
}

TEST_CASE("identifiers of a tape's variables that die or are reassigned while another tape is active go back to their tape") {
    // Issue 17, failure 12: they leaked, 100 000 per round of such a loop,
    // until every statement of the first tape threw "more than 134217727
    // active variables".
    tapeflow::tape a, b;
    std::size_t peak_after_first_round = 0;
    for (int round = 0; round < 20; ++round) {
        {
            a.reset();
            a.start_recording();
            Real x = 1.5;
            a.register_input(x);
            auto many = std::make_unique<std::vector<Real>>();
            for (int i = 0; i < 1000; ++i) many->push_back(x * double(i + 1));
            Real reassigned = x * x;
            a.stop_recording();
            CHECK(a.statistics().live_identifiers >= 1002);

            b.reset();
            b.start_recording();  // b is the active tape from here on
            many.reset();         // a's variables die while b is active
            CHECK(a.statistics().live_identifiers == 2);  // x and `reassigned`
            Real y = 2.0;
            b.register_input(y);
            reassigned = y * 3.0;  // recorded on b: its identifier on a goes back to a
            CHECK(a.statistics().live_identifiers == 1);
            CHECK(reassigned.tape_tag() == b.serial());
            b.register_output(reassigned);
            b.stop_recording();
            b.set_adjoint(reassigned, 1.0);
            b.sweep();
            CHECK(b.adjoint(y) == 3.0);
        }  // x dies here, b still active
        CHECK(a.statistics().live_identifiers == 0);
        if (round == 0) peak_after_first_round = a.statistics().peak_identifiers;
        CHECK(a.statistics().peak_identifiers == peak_after_first_round);  // no growth round after round
    }
}

TEST_CASE("a variable whose tape was destroyed dies quietly, with or without an active tape") {
    auto gone = std::make_unique<tapeflow::tape>();
    gone->start_recording();
    auto x = std::make_unique<Real>(2.0);
    gone->register_input(*x);
    Real y = *x * *x;
    gone->stop_recording();
    gone.reset();  // nothing to give the identifiers back to
    tapeflow::tape other;
    other.start_recording();
    x.reset();  // dies while `other` is active: `other` is left alone
    CHECK(other.statistics().live_identifiers == 0);
    other.stop_recording();
}

// reset() and clear_adjoints() zero what was written since the adjoints were
// last all 0 (tape/adjoint_store.hpp): after a large recording, a small one
// must not leave a non-zero adjoint anywhere, whichever way it was written.
namespace {

// every adjoint of the tape, identifiers 1 to the highest handed out
std::vector<double> all_adjoints(const tapeflow::tape& t) {
    std::vector<double> a;
    for (tapeflow::identifier id = 1; id <= t.statistics().peak_identifiers; ++id) a.push_back(t.adjoint(id));
    return a;
}
std::size_t nonzero(const std::vector<double>& a) { return a.size() - tapeflow_test::zeros(a); }

// a large recording and its sweep: many identifiers, most adjoints non-zero
// (a quarter under a sanitizer: still hundreds of tiles of 1 KiB and a
// spilled tape)
void large_gradient(tapeflow::tape& t, std::vector<Real>& keep) {
    t.reset();
    std::vector<Real> x(tapeflow_test::sanitized ? 15000 : 60000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1.0 + 1e-3 * double(i);
    t.start_recording();
    for (Real& xi : x) t.register_input(xi);
    Real s = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) s += sin(x[i]) * x[(i + 1) % x.size()];
    t.register_output(s);
    t.stop_recording();
    t.set_adjoint(s, 1.0);
    t.sweep();
    keep = std::move(x);  // alive: their identifiers stay taken
}

}  // namespace

TEST_CASE("after a large recording, reset and clear_adjoints after a small one leave every adjoint 0") {
    // in memory in one tile, in memory over many small tiles, streaming
    const int kind = GENERATE(0, 1, 2);
    CAPTURE(kind);
    const tapeflow::tape_options o = kind == 0   ? tapeflow::tape_options{}
                                     : kind == 1 ? tapeflow_test::tape_options(1024)
                                                 : tapeflow_test::tape_options(4096, true, 64 * 1024);
    tapeflow::tape t(o);
    t.activate();
    std::vector<Real> large;
    large_gradient(t, large);
    REQUIRE(nonzero(all_adjoints(t)) > 1000);
    t.reset();
    CHECK(nonzero(all_adjoints(t)) == 0);
    large_gradient(t, large);

    // the small recording: y = f(x0, x1), with one variable of the large
    // recording as a constant (its adjoint is written by the sweep too)
    const Real& outer = large[17];
    Real x0 = 0.7, x1 = 1.3, y;
    auto small = [&] {
        t.reset();
        t.start_recording();
        t.register_input(x0);
        t.register_input(x1);
        y = f(x0, x1) + outer * x0;
        t.register_output(y);
        t.stop_recording();
    };
    small();
    CHECK(nonzero(all_adjoints(t)) == 0);  // the reset zeroed the large sweep's adjoints

    SECTION("seed, sweep, read, reset") {
        t.set_adjoint(y, 1.0);
        t.sweep();
        const std::vector<double> want = df(0.7, 1.3);
        CHECK(t.adjoint(x0) == Approx(want[0] + outer.value()));
        CHECK(t.adjoint(x1) == Approx(want[1]));
        CHECK(t.adjoint(outer) == Approx(0.7));
        t.reset();
        CHECK(nonzero(all_adjoints(t)) == 0);
    }
    SECTION("clear_adjoints keeps the recording; a second sweep gives the same gradient") {
        t.set_adjoint(y, 1.0);
        t.sweep();
        const double g0 = t.adjoint(x0);
        t.clear_adjoints();
        CHECK(nonzero(all_adjoints(t)) == 0);
        t.set_adjoint(y, 2.0);
        t.sweep();
        CHECK(t.adjoint(x0) == Approx(2 * g0));
        t.clear_adjoints();
        CHECK(nonzero(all_adjoints(t)) == 0);
    }
    SECTION("a small recording over several tiles (finished ones, and spilled ones on the streaming tape)") {
        t.reset();
        const auto spilled_before = t.statistics().tiles_spilled;
        t.start_recording();
        t.register_input(x0);
        t.register_input(x1);
        Real z = x0 * outer;
        // about 2.4 KiB of records (3 tiles of 1 KiB), or 96 KiB on the
        // streaming tape (past its 64 KiB budget: the tiles after the
        // first dozen go to the file). x1 appears in one record only, in a
        // late tile: on the streaming tape, one in the file.
        const int steps = kind == 2 ? 6000 : 150;
        for (int k = 0; k < steps; ++k) {
            z = z * 0.999 + sin(z) * 1e-3;
            if (k == steps * 4 / 5) z += x1 * 1e-3;
        }
        t.register_output(z);
        t.stop_recording();
        if (kind == 1) CHECK(t.statistics().tiles >= 3);
        if (kind == 2) CHECK(t.statistics().tiles_spilled > spilled_before);
        t.set_adjoint(z, 1.0);
        t.sweep();
        CHECK(t.adjoint(outer) != 0.0);
        CHECK(t.adjoint(x1) != 0.0);
        t.reset();
        CHECK(nonzero(all_adjoints(t)) == 0);
    }
    SECTION("clear_adjoints() from a reverse rule while the tape sweeps") {
        t.reset();
        t.start_recording();
        t.register_input(x0);
        Real z;
        tapeflow::custom_adjoint op(t);
        op.add_input(x0);
        op.add_output(z, 2.0 * x0.value());
        op.record([&t](const double* zb, double* xb) {
            t.clear_adjoints();
            xb[0] += 2.0 * zb[0];  // written after the clear
        });
        t.register_output(z);
        t.stop_recording();
        t.set_adjoint(z, 1.0);
        t.sweep();
        CHECK(t.adjoint(x0) == 2.0);
        t.reset();
        CHECK(nonzero(all_adjoints(t)) == 0);
    }
    SECTION("a seed on a variable that no record names") {
        t.set_adjoint(large[5], 3.0);
        t.set_adjoint(y, 1.0);
        t.sweep();
        t.reset();
        CHECK(nonzero(all_adjoints(t)) == 0);
    }
    SECTION("more seeds than the tape remembers") {
        for (std::size_t i = 0; i < 40; ++i) t.set_adjoint(large[i], 1.0);
        t.reset();
        CHECK(nonzero(all_adjoints(t)) == 0);
    }
    SECTION("records dropped by reset(position) after a sweep") {
        t.set_adjoint(y, 1.0);
        t.sweep();
        t.reset(tapeflow::position{});
        t.reset();
        CHECK(nonzero(all_adjoints(t)) == 0);
    }
    SECTION("an external entry (custom adjoint) on the tape") {
        t.reset();
        t.start_recording();
        t.register_input(x0);
        Real z;
        tapeflow::custom_adjoint op(t);
        op.add_input(outer);
        op.add_input(x0);
        op.add_output(z, outer.value() * x0.value());
        op.record([v0 = x0.value(), vo = outer.value()](const double* zb, double* xb) {
            xb[0] += zb[0] * v0;
            xb[1] += zb[0] * vo;
        });
        Real w = z * x0;
        t.register_output(w);
        t.stop_recording();
        t.set_adjoint(w, 1.0);
        t.sweep();
        CHECK(t.adjoint(outer) == Approx(0.7 * 0.7));
        t.reset();
        CHECK(nonzero(all_adjoints(t)) == 0);
    }
}

TEST_CASE("gradients of a small function after a large one are right and leave no adjoint behind") {
    tapeflow::tape t;
    t.activate();
    std::vector<Real> large;
    large_gradient(t, large);
    const auto g_large = tapeflow::gradient(
        [](const std::vector<Real>& x) {
            Real s = 0.0;
            for (std::size_t i = 0; i + 1 < x.size(); ++i) s += x[i] * x[i + 1];
            return s;
        },
        std::vector<double>(2000, 0.5));
    CHECK(g_large[0] == Approx(0.5));
    for (int k = 0; k < 3; ++k) {
        const auto g = tapeflow::gradient([](const std::vector<Real>& x) { return f(x[0], x[1]); },
                                          std::vector<double>{0.7, 1.3});
        const std::vector<double> want = df(0.7, 1.3);
        CHECK(g[0] == Approx(want[0]));
        CHECK(g[1] == Approx(want[1]));
        CHECK(nonzero(all_adjoints(t)) == 0);
    }
}
