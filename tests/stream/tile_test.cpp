#include <catch2/catch.hpp>
#include <tapeflow/stream/tile.hpp>

#include <cstdint>
#include <cstring>

TEST_CASE("tiles are cache-line aligned and reused after truncate") {
    tapeflow::tile_list tiles(4096);
    CHECK(tiles.size() == 0);
    tapeflow::tile& first = tiles.push();
    first.set_used(100);
    CHECK(reinterpret_cast<std::uintptr_t>(first.data()) % 64 == 0);
    CHECK(first.capacity() == 4096);
    std::byte* first_data = first.data();
    tiles.push();
    tiles.push();
    CHECK(tiles.size() == 3);
    CHECK(tiles.allocated() == 3);

    tiles.truncate(0);
    CHECK(tiles.size() == 0);
    CHECK(tiles.allocated() == 3);
    tapeflow::tile& again = tiles.push();
    CHECK(again.data() == first_data);  // same memory, no new allocation
    CHECK(again.used() == 0);           // but empty
    CHECK(tiles.allocated() == 3);
}

TEST_CASE("stream_copy copies a tile's bytes") {
    tapeflow::tile from(4096), to(4096);
    for (std::size_t i = 0; i < 4096; ++i) from.data()[i] = std::byte(i * 7 % 251);
    tapeflow::stream_copy(to.data(), from.data(), 1000);  // not a multiple of 64
    for (std::size_t i = 0; i < 1000; ++i) REQUIRE(to.data()[i] == from.data()[i]);
}

TEST_CASE("past 2 MiB tiles come in 2 MiB-aligned slabs, and a limit caps them") {
    constexpr std::size_t tile_bytes = 128 * 1024, slab = std::size_t(2) << 20, per_slab = slab / tile_bytes;
    SECTION("without a limit") {
        tapeflow::tile_list tiles(tile_bytes);
        // the first 2 MiB one tile at a time: a small tape stays small
        for (std::size_t i = 0; i < per_slab; ++i) tiles.push();
        CHECK(tiles.allocated() == per_slab);
        // then a whole slab at once, handed out tile by tile
        tapeflow::tile& first = tiles.push();
        CHECK(tiles.allocated() == 2 * per_slab);
        CHECK(reinterpret_cast<std::uintptr_t>(first.data()) % slab == 0);
        for (std::size_t i = 1; i < per_slab; ++i) {
            tapeflow::tile& t = tiles.push();
            CHECK(t.data() == first.data() + i * tile_bytes);  // contiguous within the slab
            CHECK(t.capacity() == tile_bytes);
        }
        CHECK(tiles.allocated() == 2 * per_slab);
        // the tiles do not overlap: each keeps its own bytes after all are written
        for (std::size_t i = 0; i < tiles.size(); ++i) std::memset(tiles[i].data(), int(i), tile_bytes);
        for (std::size_t i = 0; i < tiles.size(); ++i) {
            CHECK(tiles[i].data()[0] == std::byte(i));
            CHECK(tiles[i].data()[tile_bytes - 1] == std::byte(i));
        }
        tiles.truncate(0);
        for (std::size_t i = 0; i < 2 * per_slab; ++i) tiles.push();
        CHECK(tiles.allocated() == 2 * per_slab);  // reused, nothing new
    }
    SECTION("a limit (a memory budget) is never exceeded, not even by a slab") {
        tapeflow::tile_list tiles(tile_bytes);
        tiles.set_limit(per_slab + 5);
        for (std::size_t i = 0; i < per_slab + 5; ++i) tiles.push();
        CHECK(tiles.allocated() == per_slab + 5);
    }
    SECTION("tiles larger than a slab: one per slab, aligned") {
        tapeflow::tile_list tiles(3 * slab);
        for (int i = 0; i < 3; ++i) tiles.push();
        CHECK(tiles.allocated() == 3);
        CHECK(reinterpret_cast<std::uintptr_t>(tiles[1].data()) % slab == 0);
        CHECK(reinterpret_cast<std::uintptr_t>(tiles[2].data()) % slab == 0);
    }
    SECTION("a tile size that does not divide 2 MiB: slabs of the fewest tiles that cover 2 MiB") {
        const std::size_t odd = 192 * 1024;  // 11 of them cover 2 MiB
        tapeflow::tile_list tiles(odd);
        for (int i = 0; i < 11; ++i) tiles.push();  // 2.06 MiB one at a time
        tapeflow::tile& first = tiles.push();
        CHECK(tiles.allocated() == 22);
        CHECK(reinterpret_cast<std::uintptr_t>(first.data()) % slab == 0);
        CHECK(reinterpret_cast<std::uintptr_t>(tiles[20].data()) % 64 == 0);
    }
}
