#include <catch2/catch.hpp>
#include <tapeflow/tape/tile.hpp>

#include <cstdint>

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
