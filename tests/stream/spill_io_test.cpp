// The operating-system layer of spill files (stream/spill_io.hpp): the
// portable implementation (C library only) round-trips bytes at offsets,
// reports short reads and unusable directories as the POSIX one does, leaves
// no file behind, and carries a streaming tape's gradient bit for bit.
#include <catch2/catch.hpp>
#include <tapeflow/stream/spill_io.hpp>
#include <tapeflow/tapeflow.hpp>

#include "stream/stream_support.hpp"
#include "support/options.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

using tapeflow_test::contains;

namespace {
std::vector<std::byte> pattern(std::size_t bytes, unsigned seed) {
    std::vector<std::byte> v(bytes);
    for (std::size_t i = 0; i < bytes; ++i) v[i] = std::byte((i * 31 + seed * 17 + (i >> 9)) & 0xff);
    return v;
}
}  // namespace

TEST_CASE("portable_spill_io: bytes come back at their offsets, holes included, and no file is visible") {
    tapeflow_test::temp_directory dir;
    tapeflow::portable_spill_io io;
    const int fd = io.create(dir.path());
    CHECK(fd >= 0);
    CHECK(dir.entries().empty());  // removed at once (POSIX allows it for an open file)
    const auto a = pattern(5000, 1), b = pattern(3000, 2);
    io.write(fd, a.data(), a.size(), 0);
    io.write(fd, b.data(), b.size(), 9000);  // a hole of 4000 bytes between them
    std::vector<std::byte> got(b.size());
    io.read(fd, got.data(), got.size(), 9000);
    CHECK(got == b);
    got.resize(a.size());
    io.read(fd, got.data(), got.size(), 0);
    CHECK(got == a);
    io.write(fd, b.data(), 100, 10);  // overwrite in place
    io.read(fd, got.data(), 200, 0);
    for (std::size_t i = 0; i < 200; ++i) CHECK(got[i] == (i >= 10 && i < 110 ? b[i - 10] : a[i]));
    io.close(fd);
    io.close(fd);  // a second close does nothing
    CHECK(dir.entries().empty());
}

TEST_CASE("portable_spill_io: a short read, a bad descriptor and an unusable directory are clear errors") {
    tapeflow_test::temp_directory dir;
    tapeflow::portable_spill_io io;
    const int fd = io.create(dir.path());
    const auto a = pattern(100, 3);
    io.write(fd, a.data(), a.size(), 0);
    std::vector<std::byte> got(200);
    try {
        io.read(fd, got.data(), got.size(), 0);
        FAIL("a read past the end must throw");
    } catch (const tapeflow::error& e) {
        CHECK(contains(e.what(), "reading the spill file failed: the file is shorter than the tape"));
        CHECK(contains(e.what(), "call reset()"));
    }
    CHECK_THROWS_AS(io.write(fd + 1, a.data(), a.size(), 0), tapeflow::error);
    io.close(fd);
    try {
        io.create(dir.path() + "/missing");
        FAIL("creating in a missing directory must throw");
    } catch (const tapeflow::error& e) {
        CHECK(contains(e.what(), "cannot create a spill file in '" + dir.path() + "/missing'"));
        CHECK(contains(e.what(), "set tape_options::spill_directory"));
    }
}

TEST_CASE("a streaming tape that spills through portable_spill_io gives the in-memory gradient bit for bit") {
    const bool prefetch = GENERATE(true, false);
    CAPTURE(prefetch);
    constexpr std::size_t cells = 32, steps = 200, tile = 4096;
    tapeflow::tape reference;
    const std::vector<double> expected = tapeflow_test::heat_recording(reference, cells, steps).gradient();
    tapeflow_test::temp_directory dir;
    tapeflow::tape_options o = tapeflow_test::tape_options(tile, true, 4 * tile, prefetch);
    o.spill_directory = dir.path();
    o.io = std::make_shared<tapeflow::portable_spill_io>();
    {
        tapeflow::tape t(o);
        tapeflow_test::heat_recording r(t, cells, steps);
        CHECK(tapeflow_test::mismatches(r.gradient(), expected) == 0);
        CHECK(t.statistics().tiles_spilled > 20);
        CHECK(t.statistics().tiles_read_back > 20);
        CHECK(dir.entries().empty());
    }
    CHECK(dir.entries().empty());
}

TEST_CASE("default_spill_io is the POSIX layer where POSIX I/O exists") {
    const std::shared_ptr<tapeflow::spill_io> io = tapeflow::default_spill_io();
    REQUIRE(io);
    const bool portable = dynamic_cast<tapeflow::portable_spill_io*>(io.get()) != nullptr;
    CHECK(portable == (TAPEFLOW_POSIX_SPILL_IO == 0));
}
