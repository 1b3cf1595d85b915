// Compression of spilled tiles with the opt-in zstd codec: same gradients,
// fewer bytes on disk, corruption still caught, the budget still holds.
#include <catch2/catch.hpp>
#include <tapeflow/stream/zstd_codec.hpp>
#include <tapeflow/tapeflow.hpp>

#include <memory>
#include <vector>

#include "stream_support.hpp"
#include "support/options.hpp"

using namespace tapeflow_test;

namespace {
constexpr std::size_t cells = 300, steps = 60, tile = 4096;

std::vector<double> reference_gradient() {
    tapeflow::tape t;
    heat_recording r(t, cells, steps);
    return r.gradient();
}
}  // namespace

TEST_CASE("zstd codec: a tile round-trips and a damaged one is refused") {
    tapeflow::zstd_codec codec(1);
    std::vector<std::byte> tile_bytes(10000);
    for (std::size_t i = 0; i < tile_bytes.size(); ++i) tile_bytes[i] = std::byte((i * 7) % 13);
    std::vector<std::byte> packed(codec.bound(tile_bytes.size()));
    const std::size_t stored = codec.compress(tile_bytes.data(), tile_bytes.size(), packed.data());
    CHECK(stored < tile_bytes.size() / 4);  // a periodic pattern compresses well
    std::vector<std::byte> back(tile_bytes.size());
    codec.decompress(packed.data(), stored, back.data(), back.size());
    CHECK(back == tile_bytes);
    CHECK_THROWS_AS(codec.decompress(packed.data(), stored, back.data(), back.size() + 1), tapeflow::error);
    packed[stored / 2] ^= std::byte{0xff};
    packed[1] ^= std::byte{0xff};
    CHECK_THROWS_AS(codec.decompress(packed.data(), stored, back.data(), back.size()), tapeflow::error);
}

TEST_CASE("spilled tiles compressed with zstd give bit-identical gradients with fewer bytes") {
    const auto reference = reference_gradient();
    const bool prefetch = GENERATE(true, false);
    temp_directory dir;

    auto plain_options = tape_options(tile, false, 4 * tile, prefetch);
    plain_options.spill_directory = dir.path();
    tapeflow::tape plain(plain_options);
    heat_recording plain_run(plain, cells, steps);
    CHECK(mismatches(plain_run.gradient(), reference) == 0);

    auto options = plain_options;
    options.codec = std::make_shared<tapeflow::zstd_codec>(1);
    options.memory_budget_bytes = 4 * tile + options.codec->bound(tile);  // the codec buffer counts
    tapeflow::tape packed(options);
    heat_recording run(packed, cells, steps);
    CHECK(mismatches(run.gradient(), reference) == 0);
    CHECK(mismatches(run.gradient(), reference) == 0);  // a second sweep reads the file again

    const auto p = plain.statistics(), s = packed.statistics();
    REQUIRE(s.tiles_spilled > 10);
    CHECK(s.tiles_spilled == p.tiles_spilled);
    CHECK(s.bytes_spilled < p.bytes_spilled);  // compressed
    INFO("spilled " << s.bytes_spilled << " bytes compressed vs " << p.bytes_spilled << " plain");
    CHECK(s.peak_resident_bytes <= options.memory_budget_bytes);
    CHECK(directory_entries(dir.path()).empty());
}

TEST_CASE("a corrupted compressed tile is reported and reset() recovers") {
    const auto reference = reference_gradient();
    temp_directory dir;
    auto io = std::make_shared<faulty_io>();
    io->corrupt_read = 3;
    auto options = tape_options(tile, false, 0, true);
    options.spill_directory = dir.path();
    options.io = io;
    options.codec = std::make_shared<tapeflow::zstd_codec>(3);
    options.memory_budget_bytes = 2 * tile + options.codec->bound(tile);  // spill everything
    tapeflow::tape t(options);
    {
        heat_recording run(t, cells, steps);
        CHECK_THROWS_WITH(run.gradient(), Catch::Contains("corrupt"));
    }
    io->corrupt_read = faulty_io::never;
    t.reset();
    heat_recording again(t, cells, steps);
    CHECK(mismatches(again.gradient(), reference) == 0);
}

TEST_CASE("a budget too small for the scratchpad and the codec buffer is refused") {
    auto options = tape_options(tile, false, 2 * tile, true);
    options.codec = std::make_shared<tapeflow::zstd_codec>();
    CHECK_THROWS_WITH(tapeflow::tape(options), Catch::Contains("codec"));
}
