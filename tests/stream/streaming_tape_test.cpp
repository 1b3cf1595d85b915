// The streaming tape (scratchpad, memory budget, spill file, prefetch
// thread) computes exactly what the plain in-memory tape computes: the
// gradients are compared with == against the default tape, the reference
// configuration, across tile sizes, budgets, scratchpad and prefetch; also
// repeated sweeps, sweeps in pieces, reset(position) into spilled and memory
// tiles, reuse after reset(), statistics and the progress callback; an
// exception thrown by user code in the middle of a recording while tiles
// are moving; and the flush of moved scratchpad halves following the
// process's eviction verdict.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include "stream/stream_support.hpp"
#include "support/affinity.hpp"
#include "support/finite_difference.hpp"
#include "support/options.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using tapeflow_test::heat_recording;
#if defined(__linux__)
using tapeflow_test::pin;
#endif
using tapeflow_test::mismatches;
using tapeflow_test::zeros;

namespace {

constexpr std::size_t cells = 48;
constexpr std::size_t steps = 1000;  // ~2.4 MiB of records: 38 tiles of 64 KiB
constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();

// The reference: the default tape (tiles in memory, no scratchpad, no thread).
const std::vector<double>& reference_gradient() {
    static const std::vector<double> g = [] {
        tapeflow::tape t;
        heat_recording r(t, cells, steps);
        return r.gradient();
    }();
    return g;
}

tapeflow::tape_options streaming_options(std::size_t tile_bytes, bool scratchpad, std::size_t budget,
                                         bool prefetch, const std::string& directory) {
    auto o = tapeflow_test::tape_options(tile_bytes, scratchpad, budget, prefetch);
    o.spill_directory = directory;
    return o;
}

}  // namespace

TEST_CASE("the reference gradient agrees with finite differences") {
    const auto& g = reference_gradient();
    REQUIRE(g.size() == cells + 1);
    CHECK(zeros(g) == 0);
    std::vector<double> x = tapeflow_test::heat_initial(cells);
    x.push_back(tapeflow_test::heat_kappa);
    auto f = [](const std::vector<double>& v) { return tapeflow_test::heat_objective(v, steps); };
    for (std::size_t i : {std::size_t(0), cells / 3, cells - 1, cells}) {
        std::vector<double> xi = x;
        const double fd = tapeflow_test::central_difference(
            [&](double v) {
                xi[i] = v;
                return f(xi);
            },
            x[i]);
        INFO("component " << i << ": tape " << g[i] << ", finite difference " << fd);
        CHECK(tapeflow_test::close(g[i], fd, 1e-6, 1e-9));
    }
}

TEST_CASE("streaming gradients are bit-for-bit those of the in-memory tape") {
    const std::size_t tile = GENERATE(std::size_t(1024), std::size_t(4096), std::size_t(64 * 1024));
    // Budgets in tiles: 0 = unlimited (scratchpad only), 2 = everything
    // spilled, 3 = one tile in memory, 9 = seven tiles in memory.
    const std::size_t budget_tiles = GENERATE(std::size_t(0), std::size_t(2), std::size_t(3), std::size_t(9));
    const bool scratchpad = GENERATE(false, true);
    const bool prefetch = GENERATE(true, false);
    if (budget_tiles == 0 && !scratchpad) return;  // that is the reference configuration
    const std::size_t budget = budget_tiles == 0 ? unlimited : budget_tiles * tile;
    CAPTURE(tile, budget_tiles, scratchpad, prefetch);

    tapeflow_test::temp_directory dir;
    tapeflow::tape t(streaming_options(tile, scratchpad, budget, prefetch, dir.path()));
    heat_recording r(t, cells, steps);
    const auto recorded = t.statistics();
    CHECK(recorded.tiles >= 36);  // dozens of tiles even at 64 KiB
    CHECK(recorded.bytes_read_back == 0);

    const auto g = r.gradient();
    CHECK(mismatches(g, reference_gradient()) == 0);

    const auto s = t.statistics();
    CHECK(s.tiles_written == s.tiles);  // sealed: every tile is finished
    CHECK(s.peak_resident_bytes <= budget);
    CHECK(s.peak_resident_bytes >= 2 * tile);  // the scratchpad at least
    if (budget_tiles == 0) {
        CHECK(s.tiles_spilled == 0);
        CHECK(s.bytes_read_back == 0);
    } else {
        CHECK(s.tiles_spilled == s.tiles_written - (budget_tiles - 2));
        CHECK(s.tiles_read_back == s.tiles_spilled);   // one sweep reads each file tile once
        CHECK(s.bytes_read_back == s.bytes_spilled);
        CHECK(s.bytes_read_back > 0);
        CHECK(s.peak_resident_bytes == budget);        // the budget is used, not exceeded
    }
    CHECK(dir.entries().empty());  // the spill file was unlinked at once
}

TEST_CASE("jacobian rows: repeated clear_adjoints + seed + sweep on a streaming tape") {
    const std::size_t budget_tiles = GENERATE(std::size_t(2), std::size_t(5));
    const bool prefetch = GENERATE(true, false);
    CAPTURE(budget_tiles, prefetch);
    constexpr std::size_t tile = 4096;
    constexpr std::size_t short_steps = 300;
    const std::vector<std::size_t> rows{0, 7, cells / 2, cells - 1};

    auto jacobian = [&](tapeflow::tape& t, heat_recording& r, int repeats) {
        std::vector<std::vector<double>> J;
        for (int k = 0; k < repeats; ++k)
            for (std::size_t i : rows) {
                t.register_output(r.final_cell(i));
                t.clear_adjoints();
                t.set_adjoint(r.final_cell(i), 1.0);
                t.sweep();
                J.push_back(r.input_adjoints());
            }
        return J;
    };
    tapeflow::tape reference;
    heat_recording ref_recording(reference, cells, short_steps);
    const auto expected = jacobian(reference, ref_recording, 1);

    tapeflow_test::temp_directory dir;
    tapeflow::tape t(streaming_options(tile, true, budget_tiles * tile, prefetch, dir.path()));
    heat_recording r(t, cells, short_steps);
    const auto spilled = t.statistics().tiles_spilled;
    const auto J = jacobian(t, r, 3);
    REQUIRE(J.size() == 3 * rows.size());
    for (std::size_t k = 0; k < J.size(); ++k) {
        CAPTURE(k);
        CHECK(zeros(J[k]) < J[k].size());
        CHECK(mismatches(J[k], expected[k % rows.size()]) == 0);
    }
    const auto s = t.statistics();
    CHECK(spilled > 0);
    CHECK(s.tiles_spilled == spilled + 1);  // the open tile, sealed by the first sweep
    CHECK(s.tiles_read_back == J.size() * s.tiles_spilled);
}

TEST_CASE("sweep(from, to) in pieces at positions in file tiles and memory tiles") {
    const bool scratchpad = GENERATE(false, true);
    const bool prefetch = GENERATE(true, false);
    CAPTURE(scratchpad, prefetch);
    constexpr std::size_t tile = 4096;
    constexpr std::size_t memory_tiles = 100;  // of ~600: the first sixth stays in memory
    tapeflow_test::temp_directory dir;
    tapeflow::tape t(streaming_options(tile, scratchpad, (memory_tiles + 2) * tile, prefetch, dir.path()));
    heat_recording r(t, cells, steps);

    std::vector<tapeflow::position> cuts;
    for (std::size_t s = steps - 1; s > 0; s -= std::min<std::size_t>(s, 37)) cuts.push_back(r.marks()[s]);
    // a cut in the first step (inside tile 0) and the very start
    cuts.push_back(r.marks()[0]);
    std::size_t in_memory = 0, in_file = 0;
    for (const auto& p : cuts) (p.tile < memory_tiles ? in_memory : in_file) += 1;
    CHECK(in_memory >= 3);
    CHECK(in_file >= 10);

    t.clear_adjoints();
    t.set_adjoint(r.objective(), 1.0);
    tapeflow::position from = t.get_position();
    for (const auto& to : cuts) {
        t.sweep(from, to);
        from = to;
    }
    t.sweep(from, tapeflow::position{});
    CHECK(mismatches(r.input_adjoints(), reference_gradient()) == 0);

    // A piece that ends inside a tile leaves the intermediate adjoints of that
    // point: sweeping the rest from there is the same as one full sweep.
    t.clear_adjoints();
    t.set_adjoint(r.objective(), 1.0);
    const auto middle = r.marks()[steps / 2];
    t.sweep(middle);
    CHECK(mismatches(r.input_adjoints(), reference_gradient()) > 0);  // not done yet
    t.sweep(middle, tapeflow::position{});
    CHECK(mismatches(r.input_adjoints(), reference_gradient()) == 0);
}

TEST_CASE("reset(position) into a spilled tile and into a memory tile, then re-recording") {
    const bool prefetch = GENERATE(true, false);
    const bool scratchpad = GENERATE(false, true);
    CAPTURE(prefetch, scratchpad);
    constexpr std::size_t tile = 4096;
    constexpr std::size_t memory_tiles = 100;
    tapeflow_test::temp_directory dir;
    tapeflow::tape t(streaming_options(tile, scratchpad, (memory_tiles + 2) * tile, prefetch, dir.path()));
    heat_recording r(t, cells, steps);
    const auto full = t.statistics();
    REQUIRE(full.tiles > memory_tiles + 10);
    CHECK(mismatches(r.gradient(), reference_gradient()) == 0);

    // Steps whose start lies inside a file tile / a memory tile (not at offset 0).
    std::size_t file_step = 0, memory_step = 0;
    for (std::size_t s = 1; s < steps; ++s) {
        const auto& p = r.marks()[s];
        if (p.offset == 0) continue;
        if (p.tile >= memory_tiles + 5 && file_step == 0 && s > steps / 2) file_step = s;
        if (p.tile > 2 && p.tile + 5 < memory_tiles && memory_step == 0 && s > 20) memory_step = s;
    }
    REQUIRE(file_step > 0);
    REQUIRE(memory_step > 0);

    for (int round = 0; round < 2; ++round) {
        for (std::size_t s : {file_step, memory_step, steps - 1, std::size_t(1)}) {
            CAPTURE(round, s);
            r.rerecord_from(s);
            const auto st = t.statistics();
            CHECK(st.statements == full.statements);
            CHECK(st.record_bytes == full.record_bytes);
            CHECK(mismatches(r.gradient(), reference_gradient()) == 0);
            CHECK(t.statistics().peak_resident_bytes <= (memory_tiles + 2) * tile);
        }
    }
    CHECK(dir.entries().empty());
}

TEST_CASE("reset(position) into a memory tile reuses the spill file from its start") {
    // Every tile after a memory tile is in the file, so recording again after
    // reset(position) into a memory tile should write the file from offset 0:
    // a checkpointing loop must not grow the spill file without bound.
    constexpr std::size_t tile = 4096;
    constexpr std::size_t memory_tiles = 100;
    auto io = std::make_shared<tapeflow_test::faulty_io>();
    tapeflow_test::temp_directory dir;
    auto o = streaming_options(tile, true, (memory_tiles + 2) * tile, true, dir.path());
    o.io = io;
    tapeflow::tape t(o);
    heat_recording r(t, cells, steps);
    t.sweep();  // seal: the whole tape is in memory tiles + the file
    const std::uint64_t file_size = io->max_end;
    REQUIRE(file_size > 0);
    std::size_t memory_step = 0;
    for (std::size_t s = 1; s < steps && memory_step == 0; ++s)
        if (r.marks()[s].tile == memory_tiles / 2 && r.marks()[s].offset > 0) memory_step = s;
    REQUIRE(memory_step > 0);
    for (int round = 0; round < 5; ++round) {
        r.rerecord_from(memory_step);
        CHECK(mismatches(r.gradient(), reference_gradient()) == 0);
    }
    INFO("spill file bytes after the first recording " << file_size << ", after 5 re-recordings "
                                                        << io->max_end.load());
    CHECK(io->max_end <= file_size + tile + tapeflow::spill_file::checksum_bytes);
}

TEST_CASE("recording more after a sweep, then sweeping again") {
    const bool prefetch = GENERATE(true, false);
    constexpr std::size_t tile = 1024;
    auto run = [](tapeflow::tape& t) {
        using tapeflow::Real;
        t.start_recording();
        Real x = 0.7;
        t.register_input(x);
        Real y = x;
        for (int i = 0; i < 3000; ++i) y = y * 0.999 + 0.01 * sin(y * x);
        Real mid = y;
        t.register_output(mid);
        t.stop_recording();
        t.set_adjoint(mid, 1.0);
        t.sweep();  // seals the open tile of a streaming tape
        const double first = t.adjoint(x);
        t.reset(t.get_position());  // keep the swept recording, record on from its end
        t.start_recording();        // and the tape goes on
        for (int i = 0; i < 3000; ++i) y = y * 1.0001 + 0.01 * cos(y + x);
        t.register_output(y);
        t.stop_recording();
        t.clear_adjoints();
        t.set_adjoint(y, 1.0);
        t.sweep();
        return std::make_pair(first, t.adjoint(x));
    };
    tapeflow::tape reference;
    const auto expected = run(reference);
    tapeflow_test::temp_directory dir;
    tapeflow::tape t(streaming_options(tile, true, 4 * tile, prefetch, dir.path()));
    const auto got = run(t);
    CHECK(expected.first != 0.0);
    CHECK(got.first == expected.first);
    CHECK(got.second == expected.second);
    CHECK(t.statistics().tiles_spilled > 50);
}

TEST_CASE("reset() and reuse many times") {
    const bool prefetch = GENERATE(true, false);
    constexpr std::size_t tile = 4096;
    constexpr std::size_t budget = 6 * tile;
    tapeflow_test::temp_directory dir;
    tapeflow::tape t(streaming_options(tile, true, budget, prefetch, dir.path()));
    tapeflow::tape reference;
    std::size_t allocated = 0;
    std::uint64_t spilled_before = 0;
    for (int round = 0; round < 25; ++round) {
        CAPTURE(round);
        const std::size_t n = 16 + std::size_t(round % 5) * 8;  // varying sizes
        const std::size_t k = 100 + std::size_t(round % 3) * 60;
        reference.reset();
        std::vector<double> expected;
        {
            heat_recording rr(reference, n, k);
            expected = rr.gradient();
        }
        t.reset();
        CHECK(t.statistics().statements == 0);
        CHECK(t.statistics().tiles == 0);
        heat_recording r(t, n, k);
        const auto g = r.gradient();
        CHECK(zeros(g) == 0);
        CHECK(mismatches(g, expected) == 0);
        const auto s = t.statistics();
        CHECK(s.peak_resident_bytes <= budget);
        CHECK(s.tiles_spilled > spilled_before);  // counters run across resets
        spilled_before = s.tiles_spilled;
        if (round == 0) allocated = s.allocated_bytes;
        CHECK(s.allocated_bytes == allocated);  // memory is kept and reused, never grown
    }
    CHECK(dir.entries().empty());
}

TEST_CASE("statistics: spilled tiles, resident bytes, read back bytes") {
    constexpr std::size_t tile = 4096;
    tapeflow_test::temp_directory dir;
    SECTION("unlimited budget with the scratchpad: nothing spilled") {
        tapeflow::tape t(streaming_options(tile, true, unlimited, true, dir.path()));
        heat_recording r(t, cells, 200);
        r.gradient();
        const auto s = t.statistics();
        CHECK(s.tiles_written > 20);
        CHECK(s.tiles_spilled == 0);
        CHECK(s.bytes_spilled == 0);
        CHECK(s.bytes_read_back == 0);
        CHECK(s.peak_resident_bytes == (s.tiles_written + 2) * tile);  // tiles + scratchpad
    }
    SECTION("a small budget: spilled tiles are read back by the sweep") {
        const std::size_t budget = 5 * tile + 100;  // not a multiple of the tile: 3 memory tiles
        tapeflow::tape t(streaming_options(tile, true, budget, true, dir.path()));
        heat_recording r(t, cells, 200);
        const auto before = t.statistics();
        CHECK(before.tiles_spilled > 0);
        CHECK(before.bytes_read_back == 0);
        r.gradient();
        const auto s = t.statistics();
        CHECK(s.tiles_spilled == s.tiles_written - 3);
        // The file holds the records of every tile but the three in memory,
        // plus an 8-byte checksum per tile.
        const std::uint64_t in_memory = s.record_bytes - (s.bytes_spilled - 8 * s.tiles_spilled);
        CHECK(in_memory <= 3 * tile);
        CHECK(in_memory > 3 * (tile - 64));
        CHECK(s.bytes_read_back == s.bytes_spilled);
        CHECK(s.tiles_read_back == s.tiles_spilled);
        CHECK(s.peak_resident_bytes <= budget);
        CHECK(s.peak_resident_bytes == 5 * tile);
    }
}

TEST_CASE("progress callback: recording and sweeping phases, sweep_fraction reaches 1") {
    const bool prefetch = GENERATE(true, false);
    constexpr std::size_t tile = 4096;
    tapeflow_test::temp_directory dir;
    auto o = streaming_options(tile, true, 6 * tile, prefetch, dir.path());
    std::vector<tapeflow::tape_progress> events;
    const auto caller = std::this_thread::get_id();
    bool same_thread = true;
    o.progress = [&](const tapeflow::tape_progress& p) {
        same_thread = same_thread && std::this_thread::get_id() == caller;
        events.push_back(p);
    };
    tapeflow::tape t(o);
    heat_recording r(t, cells, 300);
    const auto recorded = t.statistics();
    const std::size_t recording_events = events.size();
    CHECK(recording_events == recorded.tiles_written);  // once per finished tile
    CHECK(recording_events > 10);
    r.gradient();
    const auto s = t.statistics();
    CHECK(same_thread);
    REQUIRE(events.size() == recording_events + s.tiles_written);  // + once per tile swept
    for (std::size_t i = 0; i < events.size(); ++i) {
        CAPTURE(i);
        const auto& e = events[i];
        if (i < recording_events) {
            CHECK(e.stage == tapeflow::tape_progress::phase::recording);
            CHECK(e.sweep_fraction == 0.0);
            CHECK(e.tiles == i + 1);
            if (i > 0) CHECK(e.statements > events[i - 1].statements);
            if (i > 0) CHECK(e.tiles_spilled >= events[i - 1].tiles_spilled);
        } else {
            CHECK(e.stage == tapeflow::tape_progress::phase::sweeping);
            CHECK(e.sweep_fraction > 0.0);
            CHECK(e.sweep_fraction <= 1.0);
            if (i > recording_events) CHECK(e.sweep_fraction > events[i - 1].sweep_fraction);
            CHECK(e.tiles_spilled == s.tiles_spilled);
        }
    }
    CHECK(events.back().sweep_fraction == 1.0);
    CHECK(events[recording_events - 1].tiles_spilled > 0);
}

namespace {
struct cancelled {};
}  // namespace

TEST_CASE("a progress callback that throws while recording (a cancel): the statement can be retried") {
    // The exception leaves record() before the statement is recorded, so the
    // program may catch it and assign again; the gradient must not change.
    const bool streaming = GENERATE(false, true);
    const bool prefetch = GENERATE(true, false);
    CAPTURE(streaming, prefetch);
    tapeflow_test::temp_directory dir;
    auto o = streaming_options(1024, streaming, streaming ? 2 * 1024 : unlimited, prefetch, dir.path());
    int events = 0;
    o.progress = [&](const tapeflow::tape_progress& p) {
        if (p.stage == tapeflow::tape_progress::phase::recording && ++events == 5) throw cancelled{};
    };
    tapeflow::tape t(o);
    using tapeflow::Real;
    t.start_recording();
    Real x = 0.7;
    t.register_input(x);
    Real y = x;
    double dy = 1.0;  // forward derivative alongside
    int cancels = 0;
    for (int i = 0; i < 1000; ++i) {
        for (;;) {
            try {
                y = y * 0.999 + sin(x) * 0.01;
                break;
            } catch (const cancelled&) {
                ++cancels;
            }
        }
        dy = dy * 0.999 + std::cos(0.7) * 0.01;
    }
    t.register_output(y);
    t.stop_recording();
    CHECK(cancels == 1);
    CHECK(t.statistics().statements == 1001);
    t.set_adjoint(y, 1.0);
    t.sweep();
    CHECK(t.adjoint(x) == Approx(dy).epsilon(1e-12));
}

TEST_CASE("a progress callback that throws while sweeping: recording can go on safely") {
    // The sweep stops with tile reads still in flight; recording more must not
    // race with them (they write into the scratchpad the recording uses).
    const bool cancel = GENERATE(false, true);
    CAPTURE(cancel);
    tapeflow_test::watchdog dog(60, "cancelled sweep");
    tapeflow_test::temp_directory dir;
    auto io = std::make_shared<tapeflow_test::faulty_io>();
    auto o = streaming_options(1024, true, 2 * 1024, true, dir.path());
    o.io = io;
    int sweep_events = 0;
    bool armed = cancel;
    o.progress = [&](const tapeflow::tape_progress& p) {
        if (p.stage == tapeflow::tape_progress::phase::sweeping && armed && ++sweep_events == 2) {
            armed = false;
            throw cancelled{};
        }
    };
    tapeflow::tape t(o);
    using tapeflow::Real;
    t.start_recording();
    Real x = 0.7;
    t.register_input(x);
    Real y = x;
    double dy = 1.0;
    for (int i = 0; i < 400; ++i) {
        y = y * 0.999 + sin(x) * 0.01;
        dy = dy * 0.999 + std::cos(0.7) * 0.01;
    }
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    io->read_delay_us = 20000;  // the next tile read is still going when the callback throws
    if (cancel) {
        CHECK_THROWS_AS(t.sweep(), cancelled);
    } else {
        t.sweep();
    }
    io->read_delay_us = 0;
    t.reset(t.get_position());  // record on from the end of the swept recording
    t.start_recording();
    for (int i = 0; i < 400; ++i) {  // other partials: stale records would show
        y = y * 1.001 + cos(x) * 0.02;
        dy = dy * 1.001 - std::sin(0.7) * 0.02;
    }
    t.stop_recording();
    t.clear_adjoints();
    t.set_adjoint(y, 1.0);
    t.sweep();
    CHECK(t.adjoint(x) == Approx(dy).epsilon(1e-12));
}

namespace {
struct user_failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};
}  // namespace

TEST_CASE("user code throws in the middle of a streaming recording: after reset() the gradient is right, nothing left") {
    // Small tiles, a budget that spills, spill writes that lag behind the
    // recording: when the user's exception leaves the recording, tiles are
    // still on their way to the file.
    tapeflow_test::watchdog dog(120, "exception in a streaming recording");
    const std::size_t budget_tiles = GENERATE(std::size_t(2), std::size_t(6));
    const bool prefetch = GENERATE(true, false);
    CAPTURE(budget_tiles, prefetch);
    constexpr std::size_t tile = 1024;
    tapeflow_test::temp_directory dir;
    const tapeflow_test::process_resources before;
    auto io = std::make_shared<tapeflow_test::faulty_io>();
    {
        auto o = streaming_options(tile, true, budget_tiles * tile, prefetch, dir.path());
        o.io = io;
        tapeflow::tape t(o);
        io->write_delay_us = 20000;
        bool moves_in_flight = false;
        try {
            using tapeflow::Real;
            t.start_recording();
            const auto u0 = tapeflow_test::heat_initial(cells);
            std::vector<Real> u(u0.begin(), u0.end());
            for (Real& x : u) t.register_input(x);
            Real kappa = tapeflow_test::heat_kappa;
            t.register_input(kappa);
            for (std::size_t s = 0; s < steps; ++s) {
                if (s == 20) {
                    moves_in_flight = t.statistics().tiles_spilled > io->tile_writes_done;
                    throw user_failure("the simulation diverged");
                }
                u = tapeflow_test::heat_step(u, kappa);
            }
            FAIL("the recording did not throw");
        } catch (const user_failure& e) {
            CHECK(std::string(e.what()) == "the simulation diverged");
        }
        if (prefetch) CHECK(moves_in_flight);
        CHECK(t.is_recording());  // the tape is as the exception left it
        CHECK(t.statistics().tiles_spilled > 20);
        io->heal();
        t.stop_recording();
        t.reset();
        CHECK(t.statistics().statements == 0);
        heat_recording r(t, cells, steps);
        CHECK(mismatches(r.gradient(), reference_gradient()) == 0);
        CHECK(tapeflow_test::thread_count() == before.threads + (prefetch ? 1 : 0));
    }
    CHECK(tapeflow_test::settled_thread_count(before.threads) == before.threads);
    CHECK(tapeflow_test::descriptor_count() == before.descriptors);
    CHECK(io->creates == 1);
    CHECK(io->closes == 1);
    CHECK(dir.entries().empty());
}

TEST_CASE("the smallest budget is two tiles: 2 KiB with the automatic tile size (docs/streaming.md)") {
    tapeflow::tape_options o;
    o.memory_budget_bytes = 2048;
    tapeflow::tape smallest(o);
    CHECK(smallest.statistics().tile_bytes == 1024);  // an eighth of 2 KiB is below the 1 KiB minimum
    o.memory_budget_bytes = 64 * 1024;
    CHECK(tapeflow::tape(o).statistics().tile_bytes == 8 * 1024);  // an eighth of the budget
    o.memory_budget_bytes = 2047;
    CHECK_THROWS_WITH(tapeflow::tape(o), Catch::Contains("memory_budget_bytes = 2047 is below 2048 bytes (two "
                                                         "tiles of scratchpad") &&
                                             Catch::Contains("raise it or lower tile_bytes"));
}

#if defined(__linux__)
namespace {

// What one tape flushed of the scratchpad halves it moved: the recorder on
// CPU `a`, its prefetch thread (the thread that appears with the first
// tile move) on CPU `b`, so every move the thread runs ran on another CPU
// than the recorder's. Records y = c y + x about 150 times a 64 KiB tile
// and checks the gradient.
std::uint64_t halves_flushed(int a, int b) {
    REQUIRE(pin(0, {a, b}));  // the prefetch thread starts on both
    tapeflow_test::temp_directory dir;
    const std::vector<std::string> before = tapeflow_test::directory_entries("/proc/self/task");
    tapeflow::tape t(streaming_options(64 * 1024, true, unlimited, true, dir.path()));
    constexpr double c = 0.9999;
    constexpr int n = 400000;
    t.start_recording();
    tapeflow::Real x = 0.5;
    t.register_input(x);
    tapeflow::Real y = 0.0;
    for (int i = 0; i < n; ++i) {
        y = c * y + x;
        if (i == 5000) {  // a tile has been moved: the thread exists
            REQUIRE(t.statistics().tiles_written >= 1);
            // threads that are new since the tape was made: its prefetch
            // thread (and, under ThreadSanitizer, the sanitizer's own
            // background thread, started with the process's first thread)
            int started = 0;
            for (const std::string& task : tapeflow_test::directory_entries("/proc/self/task"))
                if (std::find(before.begin(), before.end(), task) == before.end()) {
                    REQUIRE(pin(pid_t(std::stoi(task)), {b}));
                    ++started;
                }
            REQUIRE(started >= 1);
            REQUIRE(pin(0, {a}));
        }
    }
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    const double expected = (1 - std::pow(c, n)) / (1 - c);  // dy/dx of the recursion
    CHECK(t.adjoint(x) == Approx(expected).epsilon(1e-12));
    const auto s = t.statistics();
    CHECK(s.tiles_written > 100);
    CHECK(s.tiles_flushed <= s.tiles_written);
    return s.tiles_flushed;
}

}  // namespace

TEST_CASE("moved scratchpad halves are flushed as the process's eviction verdict says (cache_eviction.hpp)") {
    using tapeflow::detail::eviction_policy;
    if (!tapeflow::detail::can_flush) return;  // nothing is ever flushed here
    const tapeflow_test::affinity_guard restore;
    REQUIRE(restore.saved());
    const std::vector<int> cpus = restore.cpus();
    if (cpus.size() < 2) {
        WARN("one usable CPU: a move never runs on another CPU than the recorder's, nothing to flush");
        return;
    }
    const double before = tapeflow::detail::process_eviction_verdict().ns_per_line();
    const std::uint64_t first = halves_flushed(cpus[0], cpus[1]);
    const double verdict = tapeflow::detail::process_eviction_verdict().ns_per_line();
    const std::uint64_t second = halves_flushed(cpus[0], cpus[1]);
    CAPTURE(before, verdict, first, second);
    // the first tape of the process decides (three timed flushes), or
    // follows an earlier test's tapes; either way the verdict is given now
    REQUIRE(verdict > 0);
    if (before > 0) CHECK(verdict == before);  // given once, never changed
    const bool flushing = verdict <= eviction_policy::max_ns_per_line;
    if (flushing) {
        CHECK(second > 0);
    } else {
        // the tape that decided flushed its three samples and stopped; a
        // tape made after the verdict times nothing and flushes nothing
        CHECK(first == (before > 0 ? 0u : std::uint64_t(eviction_policy::samples)));
        CHECK(second == 0);
    }
}
#endif
