// The tile stream and its two stores (direct_store.hpp: every tile in memory;
// streaming_store.hpp: scratchpad, budget, spill file; most cases run both):
// tiles come back byte for byte, last first, from memory,
// the scratchpad or the spill file; reopen() restores a tile; and faults of
// the spill file injected through tape_options::io (disk full and other I/O
// errors on writes and reads, corruption, a truncated file, an unusable
// directory; in a sweep and in reset(position)) reach the caller of the tape
// as tapeflow::error without hanging, after which reset() makes the tape
// usable, and the tape leaves no thread, descriptor or file behind.
// Destroying a tape with tile moves queued (forwards, or a sweep stopped by
// an exception while a tile is staged back) neither hangs nor leaks.
#include <catch2/catch.hpp>
#include <tapeflow/stream/tile_stream.hpp>
#include <tapeflow/tapeflow.hpp>

#include "stream/stream_support.hpp"
#include "support/options.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using tapeflow_test::contains;
using tapeflow_test::faulty_io;
using tapeflow_test::heat_recording;
using tapeflow_test::mismatches;

namespace {

constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();

// Byte j of tile t.
std::byte tile_byte(std::size_t t, std::size_t j) { return std::byte((t * 131 + j * 7 + (j >> 8)) & 0xff); }

// Records `tiles` finished tiles of varying fill into the stream, then opens
// one more and seals it with `last_used` bytes. Returns the used bytes of each.
std::vector<std::size_t> fill(tapeflow::tile_stream& s, std::size_t tile_bytes, std::size_t tiles,
                              std::size_t last_used) {
    std::vector<std::size_t> used;
    for (std::size_t t = 0; t <= tiles; ++t) {
        std::byte* data = s.open_tile();
        const std::size_t n = t == tiles ? last_used : tile_bytes - (t * 52) % 700;
        for (std::size_t j = 0; j < n; ++j) data[j] = tile_byte(t, j);
        used.push_back(n);
        if (t < tiles) s.close_tile(n);
    }
    if (s.streaming()) {
        CHECK(s.seal(last_used) == (last_used > 0));
    } else {
        s.close_tile(last_used);
    }
    return used;
}

struct visit {
    std::size_t begin, end;
    double done;
    bool bytes_ok;
};

std::vector<visit> read_back(tapeflow::tile_stream& s, std::size_t from_tile, std::size_t from_offset,
                             std::size_t to_tile, std::size_t to_offset, std::vector<std::size_t>& tiles_seen) {
    std::vector<visit> visits;
    std::size_t t = from_tile + 1;
    s.read_reverse(from_tile, from_offset, to_tile, to_offset,
                   [&](const std::byte* data, std::size_t begin, std::size_t end, double done, std::size_t tile) {
                       --t;  // tiles come last first, one call each
                       CHECK(tile == t);
                       bool ok = true;
                       for (std::size_t j = begin; j < end; ++j) ok = ok && data[j] == tile_byte(t, j);
                       tiles_seen.push_back(t);
                       visits.push_back({begin, end, done, ok});
                   });
    return visits;
}

tapeflow::tape_options options_for(std::size_t tile, bool scratchpad, std::size_t budget, bool prefetch,
                                   const std::string& dir, std::shared_ptr<tapeflow::spill_io> io = {}) {
    auto o = tapeflow_test::tape_options(tile, scratchpad, budget, prefetch);
    o.spill_directory = dir;
    o.io = std::move(io);
    return o;
}

// The reference gradient of the heat program at the sizes used below.
constexpr std::size_t cells = 32;
constexpr std::size_t steps = 200;
const std::vector<double>& reference_gradient() {
    static const std::vector<double> g = [] {
        tapeflow::tape t;
        heat_recording r(t, cells, steps);
        return r.gradient();
    }();
    return g;
}

// Records the heat program and sweeps it; returns the gradient.
std::vector<double> record_and_sweep(tapeflow::tape& t) {
    heat_recording r(t, cells, steps);
    return r.gradient();
}

// After a fault: reset, switch the faults off, record again and compare.
void check_usable_after_reset(tapeflow::tape& t, faulty_io& io) {
    io.heal();
    t.stop_recording();
    t.reset();
    CHECK(mismatches(record_and_sweep(t), reference_gradient()) == 0);
    // and once more, on the reset tape
    t.reset();
    CHECK(mismatches(record_and_sweep(t), reference_gradient()) == 0);
}

// After the tape is gone: its thread is joined, its spill file closed, and
// nothing is left in the spill directory.
void check_nothing_left(const tapeflow_test::process_resources& before, const faulty_io& io,
                        const tapeflow_test::temp_directory& dir) {
    CHECK(tapeflow_test::settled_thread_count(before.threads) == before.threads);
    CHECK(tapeflow_test::descriptor_count() == before.descriptors);
    CHECK(io.closes == io.creates);
    CHECK(dir.entries().empty());
}

enum class failed_in { nothing, recording, sweep };

// Records and sweeps, catching the first tapeflow::error; says where it came.
failed_in run_until_error(tapeflow::tape& t, std::string& message) {
    std::unique_ptr<heat_recording> r;
    try {
        r = std::make_unique<heat_recording>(t, cells, steps);
    } catch (const tapeflow::error& e) {
        message = e.what();
        return failed_in::recording;
    }
    try {
        r->gradient();
    } catch (const tapeflow::error& e) {
        message = e.what();
        return failed_in::sweep;
    }
    return failed_in::nothing;
}

}  // namespace

TEST_CASE("tiles come back byte for byte, last first, with the asked ranges") {
    constexpr std::size_t tile = 1024;
    const std::size_t budget_tiles = GENERATE(std::size_t(0), std::size_t(2), std::size_t(5));
    const bool scratchpad = GENERATE(false, true);
    const bool prefetch = GENERATE(true, false);
    CAPTURE(budget_tiles, scratchpad, prefetch);
    tapeflow_test::temp_directory dir;
    tapeflow::tile_stream s(
        options_for(tile, scratchpad, budget_tiles ? budget_tiles * tile : unlimited, prefetch, dir.path()));
    CHECK(s.streaming() == (scratchpad || budget_tiles > 0));
    const auto used = fill(s, tile, 12, 300);
    REQUIRE(s.count() == 13);

    std::vector<std::size_t> seen;
    SECTION("everything") {
        const auto v = read_back(s, 12, used[12], 0, 0, seen);
        REQUIRE(v.size() == 13);
        for (std::size_t i = 0; i < v.size(); ++i) {
            CAPTURE(i);
            CHECK(seen[i] == 12 - i);
            CHECK(v[i].bytes_ok);
            CHECK(v[i].begin == 0);
            CHECK(v[i].end == used[12 - i]);
            CHECK(v[i].done == Approx(double(i + 1) / 13).epsilon(1e-15));
        }
        CHECK(v.back().done == 1.0);
    }
    SECTION("a piece from inside tile 9 to inside tile 3") {
        const auto v = read_back(s, 9, 200, 3, 130, seen);
        REQUIRE(v.size() == 7);
        CHECK(seen.front() == 9);
        CHECK(seen.back() == 3);
        CHECK(v.front().begin == 0);
        CHECK(v.front().end == 200);
        CHECK(v.back().begin == 130);
        CHECK(v.back().end == used[3]);
        for (const auto& x : v) CHECK(x.bytes_ok);
        CHECK(v.back().done == 1.0);
    }
    SECTION("twice: the file tiles are read again") {
        read_back(s, 12, used[12], 0, 0, seen);
        const auto first = s.statistics().tiles_read_back;
        const auto v = read_back(s, 12, used[12], 0, 0, seen);
        for (const auto& x : v) CHECK(x.bytes_ok);
        CHECK(s.statistics().tiles_read_back == 2 * first);
        if (budget_tiles > 0) {
            CHECK(first == s.statistics().tiles_spilled);
            CHECK(s.statistics().tiles_spilled == 13 - (budget_tiles - 2));
        }
    }
    SECTION("reopen a tile: its first bytes are back, later tiles are gone") {
        for (std::size_t t : {std::size_t(10), std::size_t(1)}) {
            CAPTURE(t);
            std::byte* data = s.reopen(t, 500);
            CHECK(s.count() == t);
            bool ok = true;
            for (std::size_t j = 0; j < 500; ++j) ok = ok && data[j] == tile_byte(t, j);
            CHECK(ok);
            // write the rest of the tile again and finish it: it reads back whole
            for (std::size_t j = 500; j < used[t]; ++j) data[j] = tile_byte(t, j);
            if (s.streaming()) {
                s.seal(used[t]);
            } else {
                s.close_tile(used[t]);
            }
            REQUIRE(s.count() == t + 1);
            const auto v = read_back(s, t, used[t], 0, 0, seen);
            for (const auto& x : v) CHECK(x.bytes_ok);
        }
    }
    CHECK(dir.entries().empty());
}

TEST_CASE("a budget below two tiles is a usage_error, and the thread runs only when streaming with prefetch") {
    CHECK_THROWS_WITH(tapeflow::tile_stream(tapeflow_test::tape_options(4096, true, 8191)),
                      Catch::Contains("two tiles"));
    CHECK_NOTHROW(tapeflow::tile_stream(tapeflow_test::tape_options(4096, true, 8192)));
    // tile_bytes = 0 ("the tape chooses") is resolved by basic_tape; a
    // tile_stream made directly says so instead of dividing by zero
    CHECK_THROWS_WITH(tapeflow::tile_stream(tapeflow_test::tape_options(0, true, 8192)),
                      Catch::Contains("tile_bytes = 0 is below the minimum"));
    CHECK_THROWS_AS(tapeflow::tape(tapeflow_test::tape_options(4096, false, 4096)), tapeflow::usage_error);

    tapeflow_test::temp_directory dir;
    for (const bool streaming : {false, true})
        for (const bool prefetch : {false, true}) {
            CAPTURE(streaming, prefetch);
            tapeflow::tile_stream s(options_for(1024, streaming, unlimited, prefetch, dir.path()));
            fill(s, 1024, 6, 100);
            CHECK(s.thread_started() == (streaming && prefetch));
        }
}

TEST_CASE("disk full while recording: tapeflow::error at a later tape operation, then reset() recovers") {
    tapeflow_test::watchdog dog(120, "disk full");
    const bool prefetch = GENERATE(true, false);
    const std::size_t fail_from = GENERATE(std::size_t(0), std::size_t(5));
    CAPTURE(prefetch, fail_from);
    tapeflow_test::temp_directory dir;
    const tapeflow_test::process_resources before;
    auto io = std::make_shared<faulty_io>();
    io->fail_write_from = fail_from;
    {
        tapeflow::tape t(options_for(1024, true, 2 * 1024, prefetch, dir.path(), io));
        std::string message;
        const auto where = run_until_error(t, message);
        CHECK(where == failed_in::recording);  // ~100 tiles: long before the sweep
        CHECK(contains(message, "writing the spill file failed"));
        CHECK(contains(message, "No space left on device"));
        CHECK(contains(message, "spill_directory"));
        CHECK(dir.entries().empty());
        check_usable_after_reset(t, *io);
        CHECK(dir.entries().empty());
    }
    check_nothing_left(before, *io, dir);
}

TEST_CASE("disk full on the last tile: sweep() throws tapeflow::error, then reset() recovers") {
    tapeflow_test::watchdog dog(120, "disk full at the sweep");
    const bool prefetch = GENERATE(true, false);
    CAPTURE(prefetch);
    tapeflow_test::temp_directory dir;
    const tapeflow_test::process_resources before;
    auto io = std::make_shared<faulty_io>();
    {
        tapeflow::tape t(options_for(1024, true, 2 * 1024, prefetch, dir.path(), io));
        // How many tiles the recording finishes before the sweep seals the last one.
        std::size_t recorded = 0;
        {
            heat_recording r(t, cells, steps);
            recorded = t.statistics().tiles_written;
        }
        t.reset();
        io->fail_write_from = io->tile_writes + recorded;  // the tile sealed by the sweep
        std::string message;
        CHECK(run_until_error(t, message) == failed_in::sweep);
        CHECK(contains(message, "No space left on device"));
        check_usable_after_reset(t, *io);
    }
    check_nothing_left(before, *io, dir);
}

TEST_CASE("a corrupted tile on read-back: sweep() throws, again until reset(), then recovers") {
    tapeflow_test::watchdog dog(120, "corrupt tile");
    const bool prefetch = GENERATE(true, false);
    const std::size_t budget_tiles = GENERATE(std::size_t(2), std::size_t(6));
    CAPTURE(prefetch, budget_tiles);
    tapeflow_test::temp_directory dir;
    const tapeflow_test::process_resources before;
    auto io = std::make_shared<faulty_io>();
    {
        tapeflow::tape t(options_for(1024, true, budget_tiles * 1024, prefetch, dir.path(), io));
        heat_recording r(t, cells, steps);
        io->corrupt_read = 7;  // the 8th tile read back
        try {
            r.gradient();
            FAIL("the corrupted tile went unnoticed");
        } catch (const tapeflow::error& e) {
            CHECK(contains(e.what(), "corrupt"));
            CHECK(contains(e.what(), "reset()"));
        }
        // Without a reset the tape does not sweep garbage.
        io->corrupt_read = faulty_io::never;
        CHECK_THROWS_AS(r.gradient(), tapeflow::error);
        check_usable_after_reset(t, *io);
    }
    check_nothing_left(before, *io, dir);
}

// Ways a spilled tile can be damaged, applied to the bytes of a tile read
// back: each returns whether it found its place in the tile.
struct tile_damage {
    const char* name;
    bool (*apply)(std::byte* data, std::size_t bytes);
};

double word_as_double(const std::byte* p) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
}
// A word that holds a partial derivative of moderate size, so that flipping
// its sign gives a plausible record (and, unnoticed, a wrong gradient).
bool moderate(double d) { return std::isfinite(d) && std::abs(d) > 1e-3 && std::abs(d) < 1e3; }

const tile_damage damages[] = {
    {"one bit",
     [](std::byte* d, std::size_t n) {
         d[n / 3] ^= std::byte{0x04};
         return true;
     }},
    {"three bits in three words",
     [](std::byte* d, std::size_t n) {
         d[5] ^= std::byte{0x01};
         d[n / 2] ^= std::byte{0x40};
         d[n - 3] ^= std::byte{0x80};
         return true;
     }},
    // The old checksum (Fletcher sums in eight 64-bit lanes) missed this: the
    // sign bits of two partials 16 words (two 64-byte blocks) apart.
    {"two sign flips in one lane of the old checksum",
     [](std::byte* d, std::size_t n) {
         for (std::size_t at = 0; at + 128 + 8 <= n; at += 8)
             if (moderate(word_as_double(d + at)) && moderate(word_as_double(d + at + 128))) {
                 d[at + 7] ^= std::byte{0x80};
                 d[at + 128 + 7] ^= std::byte{0x80};
                 return true;
             }
         return false;
     }},
    {"two words swapped",
     [](std::byte* d, std::size_t n) {
         for (std::size_t at = 0; at + 64 + 8 <= n; at += 8)
             if (std::memcmp(d + at, d + at + 64, 8) != 0) {
                 std::swap_ranges(d + at, d + at + 8, d + at + 64);
                 return true;
             }
         return false;
     }},
    {"a zeroed 4 KiB page",
     [](std::byte* d, std::size_t n) {
         if (n < 6144) return false;
         std::fill(d + 2048, d + 6144, std::byte{0});
         return true;
     }},
    {"the whole tile zeroed",
     [](std::byte* d, std::size_t n) {
         std::fill(d, d + n, std::byte{0});
         return true;
     }},
};

TEST_CASE("any damage to a spilled tile: sweep() throws tapeflow::error, never a wrong gradient") {
    tapeflow_test::watchdog dog(120, "damaged tile");
    const bool prefetch = GENERATE(true, false);
    const std::size_t kind = GENERATE(range(std::size_t(0), sizeof damages / sizeof damages[0]));
    const tile_damage& damage = damages[kind];
    CAPTURE(prefetch, damage.name);
    tapeflow_test::temp_directory dir;
    auto io = std::make_shared<faulty_io>();
    tapeflow::tape t(options_for(8192, true, 3 * 8192, prefetch, dir.path(), io));
    heat_recording r(t, cells, steps);
    REQUIRE(t.statistics().tiles_spilled > 10);
    io->damage = damage.apply;
    io->damage_read = 2;  // the third tile read back
    try {
        const auto g = r.gradient();
        REQUIRE(io->damaged);
        FAIL("the damaged tile went unnoticed; the gradient differs in " << mismatches(g, reference_gradient())
                                                                         << " components");
    } catch (const tapeflow::error& e) {
        CHECK(io->damaged);
        CHECK(contains(e.what(), "corrupt"));
        CHECK(contains(e.what(), "call reset()"));
    }
    check_usable_after_reset(t, *io);
}

TEST_CASE("a truncated spill file: sweep() throws a clear error, then reset() recovers") {
    tapeflow_test::watchdog dog(120, "truncated file");
    const bool prefetch = GENERATE(true, false);
    CAPTURE(prefetch);
    tapeflow_test::temp_directory dir;
    const tapeflow_test::process_resources before;
    auto io = std::make_shared<faulty_io>();
    {
        tapeflow::tape t(options_for(1024, true, 3 * 1024, prefetch, dir.path(), io));
        heat_recording r(t, cells, steps);
        io->truncate_before_read = 3;
        CHECK_THROWS_WITH(r.gradient(), Catch::Contains("shorter than the tape") && Catch::Contains("call reset()"));
        check_usable_after_reset(t, *io);
    }
    check_nothing_left(before, *io, dir);
}

TEST_CASE("an unusable spill directory: a clear tapeflow::error naming it") {
    tapeflow_test::watchdog dog(120, "bad directory");
    const bool prefetch = GENERATE(true, false);
    CAPTURE(prefetch);
    tapeflow_test::temp_directory dir;
    const std::string file = dir.path() + "/a-file";
    const int fd = ::open(file.c_str(), O_CREAT | O_WRONLY, 0600);
    REQUIRE(fd >= 0);
    ::close(fd);
    for (const std::string& bad : {dir.path() + "/does-not-exist", file}) {
        CAPTURE(bad);
        tapeflow::tape t(options_for(1024, false, 4 * 1024, prefetch, bad));
        std::string message;
        CHECK(run_until_error(t, message) != failed_in::nothing);
        CHECK(contains(message, "cannot create a spill file in '" + bad + "'"));
        CHECK(contains(message, "spill_directory"));
        // Still failing after reset (the directory is still bad), but cleanly.
        t.stop_recording();
        t.reset();
        CHECK(run_until_error(t, message) != failed_in::nothing);
        t.stop_recording();
    }
    CHECK(dir.entries() == std::vector<std::string>{"a-file"});
    // A budget that holds the whole tape never touches the directory.
    tapeflow::tape fits(options_for(1024, false, 1000 * 1024, prefetch, dir.path() + "/does-not-exist"));
    CHECK(mismatches(record_and_sweep(fits), reference_gradient()) == 0);
    CHECK(fits.statistics().tiles_spilled == 0);
}

TEST_CASE("destroying a tape with tile moves queued: no hang, no thread, no descriptor, no file left") {
    tapeflow_test::watchdog dog(120, "tape destructor");
    const bool fault = GENERATE(false, true);
    CAPTURE(fault);
    tapeflow_test::temp_directory dir;
    auto io = std::make_shared<faulty_io>();
    io->write_delay_us = 20000;  // the prefetcher lags behind the recording
    if (fault) io->fail_write_from = 4;
    const auto threads_before = tapeflow_test::steady_thread_count();
    const auto descriptors_before = tapeflow_test::descriptor_count();
    double destroy_seconds = 0;
    {
        auto t = std::make_unique<tapeflow::tape>(options_for(1024, true, 2 * 1024, true, dir.path(), io));
        using tapeflow::Real;
        t->start_recording();
        Real x = 0.5;
        t->register_input(x);
        Real y = x;
        try {
            for (int i = 0; i < 400; ++i) y = y * 0.99 + sin(x * y);  // ~11 tiles
        } catch (const tapeflow::error&) {
            CHECK(fault);
        }
        CHECK(tapeflow_test::thread_count() == threads_before + 1);
        // the last finished tile is still on its way to the file
        if (!fault) CHECK(io->tile_writes_done < t->statistics().tiles_written);
        const auto start = std::chrono::steady_clock::now();
        t.reset();  // the tape goes while its last tiles are still moving
        destroy_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    INFO("destructor took " << destroy_seconds << " s");
    CHECK(destroy_seconds < 5.0);
    CHECK(tapeflow_test::settled_thread_count(threads_before) == threads_before);
    CHECK(tapeflow_test::descriptor_count() == descriptors_before);
    CHECK(io->creates == 1);
    CHECK(io->closes == io->creates);
    CHECK(dir.entries().empty());
}

TEST_CASE("no spill file is ever visible in the spill directory") {
    tapeflow_test::temp_directory dir;
    std::vector<std::size_t> entries_seen;
    auto o = options_for(1024, true, 2 * 1024, true, dir.path());
    o.progress = [&](const tapeflow::tape_progress&) { entries_seen.push_back(dir.entries().size()); };
    {
        tapeflow::tape t(o);
        CHECK(mismatches(record_and_sweep(t), reference_gradient()) == 0);
        CHECK(t.statistics().tiles_spilled > 50);
    }
    REQUIRE(entries_seen.size() > 100);
    for (std::size_t n : entries_seen) CHECK(n == 0);
    CHECK(dir.entries().empty());
}

TEST_CASE("an I/O error on a spill write: tapeflow::error while recording, again until reset(), then recovers") {
    tapeflow_test::watchdog dog(120, "write error");
    const bool prefetch = GENERATE(true, false);
    const std::size_t fail_from = GENERATE(std::size_t(0), std::size_t(7));
    CAPTURE(prefetch, fail_from);
    tapeflow_test::temp_directory dir;
    const tapeflow_test::process_resources before;
    auto io = std::make_shared<faulty_io>();
    io->io_error_on_write_from = fail_from;
    {
        tapeflow::tape t(options_for(1024, true, 2 * 1024, prefetch, dir.path(), io));
        std::string message;
        CHECK(run_until_error(t, message) == failed_in::recording);
        CHECK(contains(message, "tapeflow: writing the spill file failed: Bad file descriptor"));
        CHECK(contains(message, "spill_directory"));
        // Recording again without reset(): the first tile that moves out
        // throws the same error (the failed write is not forgotten).
        t.stop_recording();
        std::string again;
        CHECK(run_until_error(t, again) == failed_in::recording);
        CHECK(again == message);
        check_usable_after_reset(t, *io);
    }
    check_nothing_left(before, *io, dir);
}

TEST_CASE("an I/O error on a spill read: sweep() throws tapeflow::error, again until reset(), then recovers") {
    tapeflow_test::watchdog dog(120, "read error");
    const bool prefetch = GENERATE(true, false);
    const std::size_t failing_read = GENERATE(std::size_t(0), std::size_t(5));
    CAPTURE(prefetch, failing_read);
    tapeflow_test::temp_directory dir;
    const tapeflow_test::process_resources before;
    auto io = std::make_shared<faulty_io>();
    {
        tapeflow::tape t(options_for(1024, true, 2 * 1024, prefetch, dir.path(), io));
        heat_recording r(t, cells, steps);
        io->io_error_on_read = failing_read;
        CHECK_THROWS_WITH(r.gradient(), Catch::Contains("tapeflow: reading the spill file failed: Is a directory") &&
                                            Catch::Contains("call reset()"));
        CHECK(io->tile_reads == failing_read + 1);  // no read after the failed one
        // The fault is gone, but the tape does not sweep what it could not read.
        io->heal();
        CHECK_THROWS_AS(r.gradient(), tapeflow::error);
        check_usable_after_reset(t, *io);
    }
    check_nothing_left(before, *io, dir);
}

namespace {
// Reads of a part on one thread right after the part before it of the same
// tile (read_part_bytes lower in the file) was read on the other: a tile
// that both threads read. (A waiter that takes over a queued job reads all
// of that tile itself.)
std::size_t parts_read_by_both(const faulty_io& io) {
    std::map<std::uint64_t, bool> on_watched;
    for (const auto& r : io.read_log()) on_watched[r.offset] = r.on_watched;
    std::size_t n = 0;
    for (const auto& [offset, watched] : on_watched) {
        const auto before = on_watched.find(offset - tapeflow::streaming_store::read_part_bytes);
        n += before != on_watched.end() && before->second != watched;
    }
    return n;
}
}  // namespace

TEST_CASE("tiles read back in parts by both threads: the same gradient, and a fault in a part is caught") {
    // Tiles of four read parts; the reads are slowed so that the sweep, done
    // with a tile, finds parts of the next one left and reads them itself.
    // The faults hit the first part read on the sweeping thread.
    tapeflow_test::watchdog dog(120, "parts");
    const bool prefetch = GENERATE(true, false);
    const int fault = GENERATE(0, 1, 2);  // none, an I/O error, a flipped byte
    CAPTURE(prefetch, fault);
    constexpr std::size_t tile = 4 * tapeflow::streaming_store::read_part_bytes;
    constexpr std::size_t big_cells = 2000, big_steps = 100;
    static const std::vector<double> reference = [] {
        tapeflow::tape t;
        heat_recording r(t, big_cells, big_steps);
        return r.gradient();
    }();
    tapeflow_test::temp_directory dir;
    const tapeflow_test::process_resources before;
    auto io = std::make_shared<faulty_io>();
    io->watched = std::this_thread::get_id();  // before the tape's thread starts
    {
        tapeflow::tape t(options_for(tile, true, 3 * tile, prefetch, dir.path(), io));
        heat_recording r(t, big_cells, big_steps);
        const std::size_t spilled = t.statistics().tiles_spilled;
        REQUIRE(spilled >= 4);
        io->read_delay_us = 2000;
        if (fault == 0) {
            CHECK(mismatches(r.gradient(), reference) == 0);
            const auto st = t.statistics();  // the sweep spilled the open tile too
            CHECK(st.tiles_read_back == st.tiles_spilled);
            CHECK(io->tile_reads >= 4 * spilled);  // the full tiles in four reads each, the last one in one at least
            if (prefetch) {
                CHECK(parts_read_by_both(*io) > 0);
            } else {
                CHECK(io->watched_reads == io->tile_reads);  // every job runs on the caller
            }
            // A layer whose reads may not run side by side gets whole tiles.
            io->concurrent = false;
            tapeflow::tape whole(options_for(tile, true, 3 * tile, prefetch, dir.path(), io));
            heat_recording w(whole, big_cells, big_steps);
            const std::size_t reads = io->tile_reads;
            CHECK(mismatches(w.gradient(), reference) == 0);
            CHECK(io->tile_reads - reads == whole.statistics().tiles_read_back);
        } else {
            (fault == 1 ? io->io_error_on_watched_read : io->corrupt_watched_read) = true;
            try {
                const auto g = r.gradient();
                FAIL("the fault went unnoticed; the gradient differs in " << mismatches(g, reference)
                                                                          << " components");
            } catch (const tapeflow::error& e) {
                CHECK(contains(e.what(), fault == 1 ? "reading the spill file failed" : "corrupt"));
                CHECK(contains(e.what(), "call reset()"));
            }
            CHECK_FALSE(io->io_error_on_watched_read);  // the fault was met
            CHECK_FALSE(io->corrupt_watched_read);
            // The fault is gone, but the tape does not sweep what it could not read.
            io->heal();
            CHECK_THROWS_AS(r.gradient(), tapeflow::error);
            check_usable_after_reset(t, *io);
        }
    }
    check_nothing_left(before, *io, dir);
}

TEST_CASE("a read fault while reset(position) brings a spilled tile back: tapeflow::error, then reset() recovers") {
    tapeflow_test::watchdog dog(120, "reset(position) read fault");
    const bool prefetch = GENERATE(true, false);
    const bool corrupt = GENERATE(false, true);  // else an I/O error
    CAPTURE(prefetch, corrupt);
    tapeflow_test::temp_directory dir;
    const tapeflow_test::process_resources before;
    auto io = std::make_shared<faulty_io>();
    {
        tapeflow::tape t(options_for(1024, true, 2 * 1024, prefetch, dir.path(), io));
        heat_recording r(t, cells, steps);
        REQUIRE(t.statistics().tiles_spilled == t.statistics().tiles_written);  // every tile is in the file
        const std::size_t reads = io->tile_reads;
        if (corrupt)
            io->corrupt_read = reads;
        else
            io->io_error_on_read = reads;
        try {
            t.reset(r.marks()[steps / 2]);
            FAIL("reset(position) did not report the fault");
        } catch (const tapeflow::error& e) {
            CHECK(contains(e.what(), corrupt ? "checksum mismatch" : "Is a directory"));
            CHECK(contains(e.what(), "call reset()"));
        }
        // The one tile to reopen, and no other after a failed read; a damaged
        // tile is found by the sweeping thread when the read of the one
        // before it in the file has been started already.
        CHECK(io->tile_reads >= reads + 1);
        CHECK(io->tile_reads <= reads + (corrupt ? 2 : 1));
        io->heal();
        CHECK_THROWS_AS(r.gradient(), tapeflow::error);
        check_usable_after_reset(t, *io);
    }
    check_nothing_left(before, *io, dir);
}

namespace {
struct sweep_stopped {};
}  // namespace

TEST_CASE("no hang, nothing left: destroying a tape whose sweep stopped while a tile was being staged back") {
    // A reverse rule or the progress callback throws while the prefetch
    // thread is reading the next tile into the scratchpad; the tape is then
    // destroyed without a reset. The read must not land in freed memory
    // (AddressSanitizer) and the destructor must not hang.
    tapeflow_test::watchdog dog(120, "destroy after a stopped sweep");
    const bool from_rule = GENERATE(true, false);  // else from the progress callback
    CAPTURE(from_rule);
    tapeflow_test::temp_directory dir;
    const tapeflow_test::process_resources before;
    auto io = std::make_shared<faulty_io>();
    bool read_in_flight = false;
    double destroy_seconds = 0;
    {
        auto o = options_for(1024, true, 2 * 1024, true, dir.path(), io);
        tapeflow::tape* self = nullptr;
        // staging reads submitted (counted by the tape) but not finished
        auto in_flight = [&] { return self->statistics().tiles_read_back > io->tile_reads_done; };
        int sweep_events = 0;
        if (!from_rule)
            o.progress = [&](const tapeflow::tape_progress& p) {
                if (p.stage == tapeflow::tape_progress::phase::sweeping && ++sweep_events == 3) {
                    read_in_flight = in_flight();
                    throw sweep_stopped{};
                }
            };
        auto t = std::make_unique<tapeflow::tape>(o);
        self = t.get();
        using tapeflow::Real;
        t->start_recording();
        Real x = 0.5;
        t->register_input(x);
        Real y = x;
        for (int i = 0; i < 600; ++i) {  // 28-byte records: ~17 tiles, all spilled
            if (from_rule && i == 300) {
                tapeflow::custom_adjoint op(*t);
                op.add_input(y);
                op.add_output(y, y.value());
                op.record([&](const double*, double*) {
                    read_in_flight = in_flight();
                    throw sweep_stopped{};
                });
            }
            y = y * 0.999 + sin(x) * 0.01;
        }
        t->register_output(y);
        t->stop_recording();
        REQUIRE(t->statistics().tiles_spilled > 10);
        t->set_adjoint(y, 1.0);
        io->read_delay_us = 20000;  // each tile read takes 20 ms
        CHECK_THROWS_AS(t->sweep(), sweep_stopped);
        CHECK(read_in_flight);
        // as documented, the read in flight finished before the exception left sweep()
        CHECK(io->tile_reads_done == t->statistics().tiles_read_back);
        CHECK(tapeflow_test::thread_count() == before.threads + 1);
        const auto start = std::chrono::steady_clock::now();
        t.reset();  // no tape reset: the tape goes as the sweep left it
        destroy_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        // x and y outlive their tape; destroying them must not touch it
    }
    INFO("destructor took " << destroy_seconds << " s");
    CHECK(destroy_seconds < 5.0);
    CHECK(io->creates == 1);
    check_nothing_left(before, *io, dir);
}

TEST_CASE("close_tile that throws changes nothing: the tile stays open, and a retry registers it once") {
    tapeflow_test::watchdog dog(60, "close_tile retry");
    // Without the prefetch thread the failing write runs inside close_tile's
    // submit(), so close_tile is what throws (with the thread, the error
    // comes back at whichever call waits next, open_tile() as often).
    const bool prefetch = false;
    // 1: the first finished tile goes to memory, the next to the file; 0:
    // straight to the spill file
    const std::size_t memory_tiles = GENERATE(std::size_t(0), std::size_t(1));
    CAPTURE(memory_tiles);
    constexpr std::size_t tile = 1024;
    tapeflow_test::temp_directory dir;
    auto io = std::make_shared<faulty_io>();
    io->io_error_on_write_from = 0;  // every spill write fails
    tapeflow::tape_options o = options_for(tile, true, 2 * tile + memory_tiles * tile, prefetch, dir.path(), io);
    tapeflow::tile_stream s(o);
    // Fill memory (if any), then tiles go to the file, whose first write fails.
    std::size_t closed = 0;
    bool threw = false;
    for (int i = 0; i < 50 && !threw; ++i) {
        std::byte* data = s.open_tile();
        std::memset(data, 1, 100);
        try {
            s.close_tile(100);
            ++closed;
        } catch (const tapeflow::error&) {
            threw = true;
        }
    }
    REQUIRE(threw);
    CHECK(s.count() == closed);
    const auto written = s.statistics().tiles_written;
    const auto spilled = s.statistics().tiles_spilled;
    for (int retry = 0; retry < 3; ++retry) {  // the tile is still open: close it again
        CHECK_THROWS_AS(s.close_tile(100), tapeflow::error);
        CHECK(s.count() == closed);
        CHECK(s.statistics().tiles_written == written);
        CHECK(s.statistics().tiles_spilled == spilled);
    }
    io->io_error_on_write_from = faulty_io::never;
    s.clear();
    CHECK(s.count() == 0);
    s.open_tile();
    s.close_tile(64);
    CHECK(s.count() == 1);
}
