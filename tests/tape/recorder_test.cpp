#include <catch2/catch.hpp>
#include <tapeflow/tape/recorder.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

using tapeflow::basic_recorder;
using tapeflow::identifier;
using tapeflow::position;

namespace {
// An external record, as basic_tape::push_external writes it: room first.
void append_external(basic_recorder<double>& rec, std::uint32_t index) {
    rec.make_room(tapeflow::record_layout<double>::external_size);
    rec.record_external(index);
}

tapeflow::tape_options small_tiles() {
    tapeflow::tape_options o;
    o.tile_bytes = tapeflow::min_tile_bytes;
    return o;
}
}  // namespace

TEST_CASE("the recorder fills a tile, opens the next one, and says where the next record goes") {
    const tapeflow::tape_options options = small_tiles();
    tapeflow::tile_stream stream(options);
    basic_recorder<double> rec(77, stream, options);
    CHECK_FALSE(rec.has_open_tile());
    const std::size_t per_tile = options.tile_bytes / 8;  // external records are 8 bytes
    const std::size_t n = 2 * per_tile + 3;
    for (std::size_t i = 0; i < n; ++i) append_external(rec, std::uint32_t(i));
    CHECK(rec.has_open_tile());
    CHECK(rec.statements() == n);
    position p;
    rec.locate(p);
    CHECK(p.tile == 2);
    CHECK(p.offset == 3 * 8);
    CHECK(p.bytes == n * 8);
    CHECK(p.statements == n);

    // every record reads back, in reverse, from the tiles
    std::vector<std::uint32_t> seen;
    rec.seal();
    stream.read_reverse(p.tile, p.offset, 0, 0, [&](const std::byte* data, std::size_t begin, std::size_t end, double, std::size_t) {
        tapeflow::reverse_record_reader<double> r(data + begin, data + end);
        while (r.more()) {
            REQUIRE(r.previous().count == 0);
            seen.push_back(r.take_external());
        }
    });
    REQUIRE(seen.size() == n);
    for (std::size_t i = 0; i < n; ++i) CHECK(seen[i] == n - 1 - i);
}

TEST_CASE("the recorder truncates to a position in an earlier tile and records on from there") {
    const tapeflow::tape_options options = small_tiles();
    tapeflow::tile_stream stream(options);
    basic_recorder<double> rec(78, stream, options);
    append_external(rec, 0);
    position mid;
    rec.locate(mid);
    for (std::size_t i = 0; i < options.tile_bytes / 4; ++i) append_external(rec, 1);
    position end;
    rec.locate(end);
    REQUIRE(end.tile > mid.tile);
    rec.truncate(mid);
    position now;
    rec.locate(now);
    CHECK(now.tile == mid.tile);
    CHECK(now.offset == mid.offset);
    CHECK(now.bytes == mid.bytes);
    CHECK(rec.statements() == 1);
    append_external(rec, 2);
    rec.locate(now);
    CHECK(now.bytes == 16);
    rec.clear();
    rec.locate(now);
    CHECK(now.bytes == 0);
    CHECK(now.tile == 0);
    CHECK(rec.statements() == 0);
    CHECK_FALSE(rec.has_open_tile());
}

TEST_CASE("release gives an identifier to its own pool, or to the pool of the thread's tape that issued it") {
    const tapeflow::tape_options options = small_tiles();
    tapeflow::tile_stream stream_a(options), stream_b(options);
    basic_recorder<double> a(901, stream_a, options), b(902, stream_b, options);
    tapeflow::detail::thread_identifier_pools::add(901, &a.identifiers());
    identifier x = a.identifiers().acquire();
    identifier y = a.identifiers().acquire();
    CHECK(a.identifiers().live() == 2);
    b.release(x, 901);  // a variable of a, released through b
    CHECK(x == 0);
    CHECK(a.identifiers().live() == 1);
    CHECK(b.identifiers().live() == 0);
    a.release(y, 901);
    CHECK(a.identifiers().live() == 0);
    tapeflow::detail::thread_identifier_pools::remove(901);
    CHECK(tapeflow::detail::thread_identifier_pools::find(901) == nullptr);
}

TEST_CASE("the tape's prefetch hint does not fault past a tile or outside any mapping") {
    // Recording asks for the line tape_prefetch_bytes past each record, the
    // sweep for the one as far before: at a tile's ends those lie outside it.
    std::vector<std::byte> tile(tapeflow::min_tile_bytes);
    tapeflow::detail::prefetch_tape<true>(tile.data() + tile.size(), 1 << 20);
    tapeflow::detail::prefetch_tape<false>(tile.data(), -(1 << 20));
    tapeflow::detail::prefetch_tape<true>(nullptr, 64);
    tapeflow::detail::prefetch_tape<false>(nullptr, -64);  // wraps around to the top of the address space
#if defined(__linux__)
    // a page with no access at all
    const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
    void* map = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(map != MAP_FAILED);
    auto* base = static_cast<std::byte*>(map);
    REQUIRE(::mprotect(base + page, page, PROT_NONE) == 0);
    tapeflow::detail::prefetch_tape<true>(base, std::ptrdiff_t(page));
    tapeflow::detail::prefetch_tape<false>(base + page, 8);
    ::munmap(map, 2 * page);
#endif
    SUCCEED("no prefetch faulted");
}
