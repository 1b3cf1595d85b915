// Compression of spilled tiles with the opt-in zstd codec: same gradients,
// fewer bytes on disk, corruption still caught, the budget still holds.
#include <catch2/catch.hpp>
#include <tapeflow/stream/zstd_codec.hpp>
#include <tapeflow/tapeflow.hpp>

#include <unistd.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
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

TEST_CASE("damage to a compressed tile in the spill file: the sweep throws, never a wrong gradient") {
    // The file is damaged after the recording, where the first spilled tile
    // lies (offset 0: 8-byte length, compressed bytes, checksums).
    const auto reference = reference_gradient();
    temp_directory dir;
    auto io = std::make_shared<faulty_io>();
    auto options = tape_options(tile, false, 0, true);
    options.spill_directory = dir.path();
    options.io = io;
    options.codec = std::make_shared<tapeflow::zstd_codec>(1);
    options.memory_budget_bytes = 2 * tile + options.codec->bound(tile);  // spill everything
    tapeflow::tape t(options);
    auto flip = [&](std::uint64_t at, std::uint8_t bits) {
        unsigned char b = 0;
        REQUIRE(::pread(io->last_fd, &b, 1, off_t(at)) == 1);
        b ^= bits;
        REQUIRE(::pwrite(io->last_fd, &b, 1, off_t(at)) == 1);
    };
    struct damage {
        const char* name;
        std::function<void(std::uint64_t stored)> apply;
    };
    const std::vector<damage> damages{
        {"one byte of the compressed data", [&](std::uint64_t stored) { flip(8 + stored / 2, 0xff); }},
        // the sign bits of two 8-byte words 128 bytes apart, which cancelled
        // in the old checksum; zstd itself does not notice them
        {"two sign flips in the compressed data, 128 bytes apart",
         [&](std::uint64_t stored) {
             const std::uint64_t at = 8 + (stored / 2) / 8 * 8 + 7;
             flip(at, 0x80);
             flip(at + 128, 0x80);
         }},
        {"near the end of the compressed data",
         [&](std::uint64_t stored) {
             flip(8 + stored - 16 - 1, 0x80);
             flip(8 + stored - 1, 0x80);
         }},
        {"the length word", [&](std::uint64_t) { flip(0, 0x08); }},
        {"the checksums", [&](std::uint64_t stored) { flip(8 + stored + 5, 0x01); }},
    };
    for (const damage& d : damages) {
        INFO(d.name);
        t.reset();
        heat_recording run(t, cells, steps);
        REQUIRE(t.statistics().tiles_spilled > 10);
        std::uint64_t stored = 0;
        REQUIRE(::pread(io->last_fd, &stored, 8, 0) == 8);
        REQUIRE(stored > 300);
        REQUIRE(stored < tile);
        d.apply(stored);
        try {
            const auto g = run.gradient();
            FAIL("the damage went unnoticed; the gradient differs in " << mismatches(g, reference) << " components");
        } catch (const tapeflow::error& e) {
            CHECK_THAT(e.what(), Catch::Contains("corrupt") && Catch::Contains("call reset()"));
        }
    }
    t.reset();
    heat_recording again(t, cells, steps);
    CHECK(mismatches(again.gradient(), reference) == 0);
}

// zstd with a fault in its decoder: one bit of every tile it expands is wrong.
class faulty_decoder : public tapeflow::zstd_codec {
public:
    using zstd_codec::zstd_codec;
    std::unique_ptr<tapeflow::tile_codec> clone() const override { return std::make_unique<faulty_decoder>(1); }
    void decompress(const std::byte* in, std::size_t stored, std::byte* out, std::size_t bytes) override {
        zstd_codec::decompress(in, stored, out, bytes);
        out[bytes / 2] ^= std::byte{0x01};
    }
};

TEST_CASE("a codec that expands a tile wrongly: the checksum of the decoded tile catches it") {
    temp_directory dir;
    auto options = tape_options(tile, false, 0, true);
    options.spill_directory = dir.path();
    options.codec = std::make_shared<faulty_decoder>(1);
    options.memory_budget_bytes = 2 * tile + options.codec->bound(tile);
    tapeflow::tape t(options);
    heat_recording run(t, cells, steps);
    CHECK_THROWS_WITH(run.gradient(), Catch::Contains("corrupt") && Catch::Contains("decompression") &&
                                          Catch::Contains("zstd-1") && Catch::Contains("call reset()"));
}

TEST_CASE("one tape_options with a zstd codec, shared by tapes on several threads and on one") {
    // Issue 17, point 9: with one zstd context shared, 4 threads crashed and
    // 2 threads failed with "Src size is incorrect".
    const auto reference = reference_gradient();
    const int threads = GENERATE(1, 2, 4);
    CAPTURE(threads);
    watchdog dog(300, "tapes sharing one zstd codec");
    temp_directory dir;
    auto options = tape_options(tile, false, 0, true);
    options.spill_directory = dir.path();
    options.codec = std::make_shared<tapeflow::zstd_codec>(1);
    options.memory_budget_bytes = 2 * tile + options.codec->bound(tile);  // spill everything
    // two tapes per thread, recorded one after the other, then swept
    std::vector<std::string> failures(static_cast<std::size_t>(threads));
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i)
        pool.emplace_back([&, i] {
            std::string& failure = failures[std::size_t(i)];
            try {
                tapeflow::tape a(options), b(options);
                heat_recording run_a(a, cells, steps);
                heat_recording run_b(b, cells, steps);
                if (mismatches(run_a.gradient(), reference) != 0) failure = "wrong gradient on tape a";
                if (mismatches(run_b.gradient(), reference) != 0) failure = "wrong gradient on tape b";
                if (a.statistics().tiles_spilled < 10) failure = "nothing spilled";
            } catch (const std::exception& e) {
                failure = e.what();
            }
        });
    for (auto& th : pool) th.join();
    for (int i = 0; i < threads; ++i) {
        CAPTURE(i);
        CHECK(failures[std::size_t(i)] == "");
    }
}

TEST_CASE("a budget too small for the scratchpad and the codec buffer is refused") {
    auto options = tape_options(tile, false, 2 * tile, true);
    options.codec = std::make_shared<tapeflow::zstd_codec>();
    CHECK_THROWS_WITH(tapeflow::tape(options), Catch::Contains("codec"));
}
