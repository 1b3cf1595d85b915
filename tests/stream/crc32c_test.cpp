// CRC-32C (tapeflow/stream/crc32c.hpp): the standard check value, the
// hardware and the portable implementation agree on every length and
// alignment, pieces chain, and the damage that storage does to a tile
// changes the checksum, including the pairs of sign flips that cancelled in
// the Fletcher sums it replaced.
#include <catch2/catch.hpp>
#include <tapeflow/stream/crc32c.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/sanitized.hpp"

using tapeflow::crc32c;
using tapeflow::detail::crc32c_portable;

namespace {

std::vector<unsigned char> random_bytes(std::size_t n, unsigned seed) {
    std::mt19937_64 gen(seed);
    std::vector<unsigned char> v(n);
    for (auto& b : v) b = static_cast<unsigned char>(gen());
    return v;
}

// Bit by bit from the definition (reflected, polynomial 0x82F63B78): the
// reference the table-driven and the hardware versions are held to.
std::uint32_t crc32c_bitwise(const unsigned char* p, std::size_t n) {
    std::uint32_t c = 0xffffffffu;
    for (std::size_t i = 0; i < n; ++i) {
        c ^= p[i];
        for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    }
    return ~c;
}

std::uint32_t sum(const std::vector<unsigned char>& v) { return crc32c(v.data(), v.size()); }

void flip(std::vector<unsigned char>& v, std::size_t byte, unsigned bit) { v[byte] ^= static_cast<unsigned char>(1u << bit); }

}  // namespace

TEST_CASE("crc32c: the check value of the standard and other known values") {
    const std::string check = "123456789";
    CHECK(crc32c(check.data(), check.size()) == 0xE3069283u);
    CHECK(crc32c_portable(check.data(), check.size()) == 0xE3069283u);
    CHECK(crc32c("", 0) == 0u);
    // RFC 3720 (iSCSI) B.4: 32 bytes of zeros, of 0xff, ascending 0..31
    std::vector<unsigned char> v(32, 0);
    CHECK(sum(v) == 0x8A9136AAu);
    std::fill(v.begin(), v.end(), 0xff);
    CHECK(sum(v) == 0x62A8AB43u);
    for (std::size_t i = 0; i < 32; ++i) v[i] = static_cast<unsigned char>(i);
    CHECK(sum(v) == 0x46DD794Eu);
}

TEST_CASE("crc32c: hardware and portable give the same values at every length and alignment") {
#if TAPEFLOW_CRC32C_X86
    if (!tapeflow::detail::crc32c_hardware()) WARN("this CPU has no SSE4.2: crc32c() runs the portable code");
    if (!tapeflow::detail::crc32c_folding()) WARN("this CPU has no AVX2 with VPCLMULQDQ: the folding code is not run");
#endif
    constexpr std::size_t long_blocks = 3 * tapeflow::detail::crc32c_tables::long_block;
    constexpr std::size_t short_blocks = 3 * tapeflow::detail::crc32c_tables::short_block;
    const auto data = random_bytes(3 * long_blocks + 4096, 17);  // past two rounds of long blocks
    // lengths around every block boundary of the hardware code (8 bytes, the
    // short and the long three-way blocks) and odd ones, at all eight alignments
    std::vector<std::size_t> lengths;
    for (std::size_t n = 0; n < 80; ++n) lengths.push_back(n);
    // and of the folding code (its 256-byte steps, its 512-byte minimum and
    // crc32c()'s 4 KiB threshold for it)
    for (std::size_t edge : {std::size_t(256), std::size_t(512), std::size_t(768), std::size_t(4096), short_blocks,
                             2 * short_blocks, long_blocks, long_blocks + short_blocks, 2 * long_blocks})
        for (std::size_t d = 0; d < 20; ++d) {
            lengths.push_back(edge + d - 10);
            lengths.push_back(edge + 7 * d + 1);
        }
    std::mt19937 gen(5);
    const int odd = tapeflow_test::sanitized ? 10 : 60;  // the bitwise reference is slow at -O0
    for (int i = 0; i < odd; ++i) lengths.push_back(2 * (gen() % (long_blocks + 5000)) + 1);  // odd lengths
    for (std::size_t n : lengths)
        for (std::size_t start = 0; start < 8; ++start) {
            const unsigned char* p = data.data() + start;
            CAPTURE(n, start);
            const std::uint32_t expected = crc32c_bitwise(p, n);
            REQUIRE(crc32c_portable(p, n) == expected);
            REQUIRE(crc32c(p, n) == expected);
#if TAPEFLOW_CRC32C_X86
            if (tapeflow::detail::crc32c_hardware()) REQUIRE(tapeflow::detail::crc32c_sse42(p, n) == expected);
#endif
        }
#if TAPEFLOW_CRC32C_FOLD
    // the folding code on its own: every start in a 64-byte line, a CRC to
    // continue, and each input copied to a buffer of exactly its length (a
    // load past the end is an AddressSanitizer error in the sanitizer builds)
    if (tapeflow::detail::crc32c_folding())
        for (std::size_t n : lengths)
            for (std::size_t start = 0; start < 64; start += (n > 20000 ? 9 : 1)) {
                CAPTURE(n, start);
                const std::vector<unsigned char> exact(data.begin() + std::ptrdiff_t(start),
                                                       data.begin() + std::ptrdiff_t(start + n));
                const std::uint32_t before = static_cast<std::uint32_t>(gen());
                REQUIRE(tapeflow::detail::crc32c_vpclmul(exact.data(), n, before) ==
                        crc32c_portable(exact.data(), n, before));
            }
#endif
    // a 2 MiB tile (the streaming tape's default tile size)
    const auto tile = random_bytes(2u << 20, 3);
    CHECK(crc32c(tile.data(), tile.size()) == crc32c_portable(tile.data(), tile.size()));
    CHECK(crc32c(tile.data(), tile.size()) == crc32c_bitwise(tile.data(), tile.size()));
}

namespace {
// Carry-less product of two 64-bit words, bit by bit: {low, high} word.
std::pair<std::uint64_t, std::uint64_t> clmul(std::uint64_t a, std::uint64_t b) {
    std::uint64_t lo = 0, hi = 0;
    for (int bit = 0; bit < 64; ++bit)
        if (b >> bit & 1) {
            lo ^= a << bit;
            if (bit != 0) hi ^= a >> (64 - bit);
        }
    return {lo, hi};
}
}  // namespace

TEST_CASE("crc32c: the folding constants move 16 bytes on by one step (on every machine)") {
    // What a folding step does to one 16-byte lane v, done in software:
    // v followed by a step of zero bytes has the CRC register of fold(v)
    // (from register 0, so leading zeros do not count).
    using tapeflow::detail::crc32c_fold_step;
    std::mt19937_64 gen(21);
    for (int trial = 0; trial < 200; ++trial) {
        const std::uint64_t lane_lo = gen(), lane_hi = gen();  // bytes 0-7, 8-15
        const auto a = clmul(lane_lo, tapeflow::detail::crc32c_fold_hi);
        const auto b = clmul(lane_hi, tapeflow::detail::crc32c_fold_lo);
        const std::uint64_t folded[2] = {a.first ^ b.first, a.second ^ b.second};
        std::vector<unsigned char> moved(16 + crc32c_fold_step, 0);
        std::memcpy(moved.data(), &lane_lo, 8);
        std::memcpy(moved.data() + 8, &lane_hi, 8);
        CAPTURE(trial);
        REQUIRE(crc32c_portable(moved.data(), moved.size(), ~0u) == crc32c_portable(folded, 16, ~0u));
    }
}

TEST_CASE("crc32c: a CRC continues over pieces") {
    const auto data = random_bytes(50000, 9);
    const std::uint32_t whole = crc32c(data.data(), data.size());
    for (std::size_t cut : {std::size_t(0), std::size_t(1), std::size_t(8), std::size_t(777), std::size_t(24576),
                            std::size_t(49999), std::size_t(50000)}) {
        CAPTURE(cut);
        CHECK(crc32c(data.data() + cut, data.size() - cut, crc32c(data.data(), cut)) == whole);
        CHECK(crc32c_portable(data.data() + cut, data.size() - cut, crc32c_portable(data.data(), cut)) == whole);
    }
}

TEST_CASE("crc32c: the damage storage does to a tile changes the checksum") {
    // 1 KiB and 2 MiB tiles; damage in the first and the last bytes, in the
    // middle, across the three-way blocks of the hardware code
    const std::size_t bytes = GENERATE(std::size_t(1000), std::size_t(2u << 20));
    CAPTURE(bytes);
    const auto v = random_bytes(bytes, 11);
    const std::uint32_t base = sum(v);
    std::vector<std::size_t> places{0, 1, 7, 8, 63, 64, 65, bytes / 2, bytes - 9, bytes - 1};
    if (bytes > 100000)
        for (std::size_t k = 1; k <= 6; ++k) {  // the edges of the long blocks
            const std::size_t edge = k * tapeflow::detail::crc32c_tables::long_block;
            places.push_back(edge - 1);
            places.push_back(edge);
        }

    SECTION("every single bit flip") {
        for (std::size_t i : places)
            for (unsigned bit = 0; bit < 8; ++bit) {
                auto w = v;
                flip(w, i, bit);
                INFO("byte " << i << " bit " << bit);
                CHECK(sum(w) != base);
            }
    }
    SECTION("several bits flipped, in one byte, one word and across the tile") {
        for (std::size_t i : places) {
            auto w = v;
            w[i] ^= 0xff;  // a whole byte
            CHECK(sum(w) != base);
            w = v;
            for (unsigned bit = 0; bit < 3; ++bit) flip(w, (i + 3 * bit) % bytes, bit * 3);  // three bits
            CHECK(sum(w) != base);
        }
    }
    SECTION("two sign flips in the same lane of the old checksum, a multiple of its stride apart") {
        // The Fletcher sums in eight 64-bit lanes that CRC-32C replaced missed
        // the top bit flipped in two words of a lane an even number of
        // 64-byte blocks apart: (2^63) * (distance) = 0 mod 2^64.
        for (std::size_t first : {std::size_t(7), std::size_t(7 + 8 * 5), bytes / 2 / 64 * 64 + 7})
            for (std::size_t blocks : {std::size_t(2), std::size_t(4), std::size_t(8)}) {
                const std::size_t second = first + 64 * blocks;
                if (second >= bytes) continue;
                auto w = v;
                flip(w, first, 7);
                flip(w, second, 7);
                INFO("sign bits of the words at " << first - 7 << " and " << second - 7);
                CHECK(sum(w) != base);
            }
    }
    SECTION("two words swapped, in the same old lane and in neighbouring ones") {
        for (std::size_t other : {std::size_t(72), std::size_t(16), std::size_t(8 + 64 * 6)}) {
            auto w = v;
            std::swap_ranges(w.begin() + 8, w.begin() + 16, w.begin() + std::ptrdiff_t(other));
            REQUIRE(w != v);
            INFO("word at 8 swapped with the word at " << other);
            CHECK(sum(w) != base);
        }
    }
    SECTION("a zeroed page, a zeroed tile, data shifted by a word") {
        auto w = v;
        const std::size_t page = std::min<std::size_t>(4096, bytes / 2);
        std::fill(w.begin() + std::ptrdiff_t(page), w.begin() + std::ptrdiff_t(2 * page), 0);
        CHECK(sum(w) != base);
        std::fill(w.begin(), w.end(), 0);
        CHECK(sum(w) != base);
        w = v;
        std::rotate(w.begin(), w.begin() + 8, w.end());
        CHECK(sum(w) != base);
    }
}
