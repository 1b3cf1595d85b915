// tapeflow/stream/crc32c.hpp - CRC-32C, the checksum of spilled tiles.
//
// CRC-32C is the CRC of iSCSI, ext4 and Btrfs (Castagnoli polynomial
// 0x1EDC6F41, bit-reflected 0x82F63B78, initial value and final xor
// 0xFFFFFFFF); crc32c("123456789") is 0xE3069283. As a check of data that
// went to a disk and came back it finds, in a tile below 256 MiB, every
// change of 1, 2 or 3 bits, any odd number of bits and any burst of up to
// 32 bits wherever they are, and misses other changes (swapped words,
// zeroed pages) with probability 2^-32. It is not a defence against an
// adversary, who can forge any CRC.
//
// Three implementations that give the same values:
//
// - x86-64 with SSE4.2 (checked at run time, so no -msse4.2 is needed): the
//   crc32 instruction, 8 bytes per instruction. One chain of it is bound by
//   the instruction's latency (3 cycles), so the data is cut into three
//   blocks whose CRCs advance side by side and are merged:
//
//     | block 0: c0 | block 1: c1 | block 2: c2 |   each block bytes long
//     crc = shift(shift(c0) ^ c1) ^ c2      shift(c) = c followed by
//                                           block zero bytes, from four
//                                           256-entry tables
//
//   Blocks of 32 KiB while they fit, then of 256 bytes. Three chains give
//   the instruction's throughput (one per cycle: 29 GB/s on the machine of
//   docs/performance.md, 10 GB/s with one chain); blocks of 32 KiB kept 21
//   GB/s for tiles read from DRAM where 1-2 KiB blocks (three streams in one
//   page, which the hardware prefetcher did not follow) fell to 8 GB/s.
//
// - x86-64 with AVX2 and VPCLMULQDQ (checked at run time), for 4 KiB or
//   more: carry-less multiplication folds the data into eight 32-byte
//   accumulators, 256 bytes a step, and the crc32 instruction takes the
//   CRC of the 256 bytes left:
//
//     | a0 | a1 | ... | a7 |  each 32 bytes, two 16-byte lanes;
//                             crc register xor'ed into a0's first 4 bytes
//     a_j = fold(a_j) ^ (the next 256 bytes)[32 j, 32 j + 32)
//     fold(lane) = lo64(lane) * k_hi  ^  hi64(lane) * k_lo   (carry-less)
//
//   A lane L at a byte offset is the polynomial L(x) there; 256 bytes on
//   it is L(x) x^2048, which fold() replaces by a 95-bit polynomial that
//   is the same modulo the CRC polynomial P: k_hi = x^(2048+64-1) mod P,
//   k_lo = x^(2048-1) mod P (the -1: a carry-less product of two
//   reflected 64-bit words comes out shifted by one bit). A CRC depends on
//   its message only modulo P, so the 256 bytes of accumulators have the
//   CRC of everything they replace. 1.6-1.8x the three chains on a 2 MiB
//   tile in cache (45-49 against 26-29 GB/s in bench/streaming.cpp's
//   checksum/, the Intel Xeon of docs/performance.md); from DRAM both run
//   at the memory's 14 GB/s.

// - elsewhere: slicing-by-8, eight table lookups per 8 bytes.
//
// crc32c(data, n, crc32c(a, m)) is the CRC of a followed by data, so a
// checksum can run over pieces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TAPEFLOW_CRC32C_X86 1
#else
#define TAPEFLOW_CRC32C_X86 0
#endif
// The folding code needs a compiler that knows VPCLMULQDQ (GCC 8, a clang
// with the 256-bit builtin); with an older one crc32c() keeps the crc32 code.
#if TAPEFLOW_CRC32C_X86 && defined(__clang__)
#if defined(__has_builtin)
#if __has_builtin(__builtin_ia32_pclmulqdq256)
#define TAPEFLOW_CRC32C_FOLD 1
#endif
#endif
#elif TAPEFLOW_CRC32C_X86 && __GNUC__ >= 8
#define TAPEFLOW_CRC32C_FOLD 1
#endif
#ifndef TAPEFLOW_CRC32C_FOLD
#define TAPEFLOW_CRC32C_FOLD 0
#endif

namespace tapeflow {
namespace detail {

/// The tables of both implementations, built once on first use (~0.4 ms).
struct crc32c_tables {
    static constexpr std::uint32_t polynomial = 0x82f63b78u;  // reflected
    static constexpr std::size_t long_block = 32768, short_block = 256;

    std::uint32_t slice[8][256];        // byte b followed by k zero bytes: slice[k][b]
    std::uint32_t long_shift[4][256];   // the CRC register moved over long_block zero bytes,
    std::uint32_t short_shift[4][256];  // ... over short_block: one table per register byte

    /// The register `c` times x modulo P (one zero bit fed in), reflected.
    static constexpr std::uint32_t times_x(std::uint32_t c) noexcept {
        return (c >> 1) ^ (polynomial & (0u - (c & 1u)));
    }

    crc32c_tables() noexcept {
        for (std::uint32_t b = 0; b < 256; ++b) {
            std::uint32_t c = b;
            for (int bit = 0; bit < 8; ++bit) c = times_x(c);
            slice[0][b] = c;
        }
        for (int k = 1; k < 8; ++k)
            for (int b = 0; b < 256; ++b)
                slice[k][b] = (slice[k - 1][b] >> 8) ^ slice[0][slice[k - 1][b] & 0xff];
        zeros_operator(long_block, long_shift);
        zeros_operator(short_block, short_shift);
    }

    /// The register after `bytes` zero bytes fed to register `c`: linear in c.
    std::uint32_t after_zeros(std::uint32_t c, std::size_t bytes) const noexcept {
        for (std::size_t i = 0; i < bytes; i += 8)  // bytes is a multiple of 8
            c = slice[7][c & 0xff] ^ slice[6][(c >> 8) & 0xff] ^ slice[5][(c >> 16) & 0xff] ^ slice[4][c >> 24];
        return c;
    }
    void zeros_operator(std::size_t bytes, std::uint32_t (&table)[4][256]) const noexcept {
        std::uint32_t column[32];  // the image of each register bit
        for (int bit = 0; bit < 32; ++bit) column[bit] = after_zeros(std::uint32_t(1) << bit, bytes);
        for (int k = 0; k < 4; ++k)
            for (int b = 0; b < 256; ++b) {
                std::uint32_t c = 0;
                for (int bit = 0; bit < 8; ++bit)
                    if (b >> bit & 1) c ^= column[8 * k + bit];
                table[k][b] = c;
            }
    }
    static std::uint32_t shift(const std::uint32_t (&table)[4][256], std::uint32_t c) noexcept {
        return table[0][c & 0xff] ^ table[1][(c >> 8) & 0xff] ^ table[2][(c >> 16) & 0xff] ^ table[3][c >> 24];
    }
};

inline const crc32c_tables& crc32c_table() noexcept {
    static const crc32c_tables tables;
    return tables;
}

/// CRC-32C by slicing-by-8, on any machine. Same interface as crc32c().
inline std::uint32_t crc32c_portable(const void* data, std::size_t bytes, std::uint32_t crc = 0) noexcept {
    const crc32c_tables& t = crc32c_table();
    const unsigned char* p = static_cast<const unsigned char*>(data);
    std::uint32_t c = ~crc;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; bytes >= 8; bytes -= 8, p += 8) {
        std::uint32_t lo, hi;
        std::memcpy(&lo, p, 4);
        std::memcpy(&hi, p + 4, 4);
        c ^= lo;
        c = t.slice[7][c & 0xff] ^ t.slice[6][(c >> 8) & 0xff] ^ t.slice[5][(c >> 16) & 0xff] ^
            t.slice[4][c >> 24] ^ t.slice[3][hi & 0xff] ^ t.slice[2][(hi >> 8) & 0xff] ^
            t.slice[1][(hi >> 16) & 0xff] ^ t.slice[0][hi >> 24];
    }
#endif
    for (; bytes > 0; --bytes, ++p) c = t.slice[0][(c ^ *p) & 0xff] ^ (c >> 8);
    return ~c;
}

#if TAPEFLOW_CRC32C_X86
// The hardware CRC. Compiled for SSE4.2 whatever the flags of the
// translation unit (the target attribute), called only where the CPU has it.
// Builtins rather than <nmmintrin.h>, which would bring the x86 intrinsic
// headers into every user of the tape.

/// Three chains over three blocks of `block` bytes at a time while they fit.
__attribute__((target("sse4.2"))) inline std::uint32_t crc32c_sse42_blocks(
    std::uint32_t c, const unsigned char*& p, std::size_t& bytes, std::size_t block,
    const std::uint32_t (&shift)[4][256]) noexcept {
    for (; bytes >= 3 * block; bytes -= 3 * block, p += 3 * block) {
        unsigned long long c0 = c, c1 = 0, c2 = 0;
        for (const unsigned char* q = p; q < p + block; q += 8) {
            unsigned long long w0, w1, w2;
            std::memcpy(&w0, q, 8);
            std::memcpy(&w1, q + block, 8);
            std::memcpy(&w2, q + 2 * block, 8);
            c0 = __builtin_ia32_crc32di(c0, w0);
            c1 = __builtin_ia32_crc32di(c1, w1);
            c2 = __builtin_ia32_crc32di(c2, w2);
        }
        // c0 then c1 then c2: a register moved over a block of zeros, xor the
        // register of the next block started from 0 (the CRC is linear)
        c = crc32c_tables::shift(shift, std::uint32_t(c0)) ^ std::uint32_t(c1);
        c = crc32c_tables::shift(shift, c) ^ std::uint32_t(c2);
    }
    return c;
}

/// CRC-32C with the SSE4.2 crc32 instruction. \requires the CPU has SSE4.2.
__attribute__((target("sse4.2"))) inline std::uint32_t crc32c_sse42(const void* data, std::size_t bytes,
                                                                     std::uint32_t crc = 0) noexcept {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    std::uint32_t c = ~crc;
    for (; bytes > 0 && (reinterpret_cast<std::uintptr_t>(p) & 7) != 0; --bytes, ++p)
        c = __builtin_ia32_crc32qi(c, *p);
    if (bytes >= 3 * crc32c_tables::short_block) {
        const crc32c_tables& t = crc32c_table();
        c = crc32c_sse42_blocks(c, p, bytes, crc32c_tables::long_block, t.long_shift);
        c = crc32c_sse42_blocks(c, p, bytes, crc32c_tables::short_block, t.short_shift);
    }
    unsigned long long c64 = c;
    for (; bytes >= 8; bytes -= 8, p += 8) {
        unsigned long long w;
        std::memcpy(&w, p, 8);
        c64 = __builtin_ia32_crc32di(c64, w);
    }
    c = std::uint32_t(c64);
    for (; bytes > 0; --bytes, ++p) c = __builtin_ia32_crc32qi(c, *p);
    return ~c;
}
#endif

// x^(bits - 1) mod P, reflected, in the high half of a 64-bit word: the
// constant that moves a 64-bit reflected word `bits` bits on (see above).
constexpr std::uint64_t crc32c_fold_constant(std::size_t bits) noexcept {
    std::uint32_t c = 0x80000000u;  // x^0, reflected
    for (std::size_t i = 1; i < bits; ++i) c = crc32c_tables::times_x(c);
    return std::uint64_t(c) << 32;
}
/// Bytes a folding step takes, and the constants of a step.
constexpr std::size_t crc32c_fold_step = 256;
constexpr std::uint64_t crc32c_fold_hi = crc32c_fold_constant(8 * crc32c_fold_step + 64);
constexpr std::uint64_t crc32c_fold_lo = crc32c_fold_constant(8 * crc32c_fold_step);

#if TAPEFLOW_CRC32C_FOLD
typedef long long crc32c_ymm __attribute__((vector_size(32)));
typedef long long crc32c_ymm_unaligned __attribute__((vector_size(32), aligned(1), may_alias));

/// The CRC register `c` after the whole 256-byte steps of `bytes` bytes at
/// `p`, by carry-less folding; p and bytes step past them (as in
/// crc32c_sse42_blocks). 256-bit vectors, so that AVX2 machines with
/// VPCLMULQDQ (AMD Zen 3) fold too: on the AVX-512 Xeon of
/// docs/performance.md four 512-bit accumulators ran at 57-67 GB/s against
/// these 45-49, 1-2% of a spilled gradient. Not inlined: it runs once a tile.
/// \requires bytes >= 256 (crc32c_vpclmul passes 512 or more), AVX2 and
/// VPCLMULQDQ (crc32c_folding()).
__attribute__((target("avx2,vpclmulqdq,sse4.2"), noinline)) inline std::uint32_t crc32c_fold(
    std::uint32_t c, const unsigned char*& p, std::size_t& bytes) noexcept {
    constexpr int lanes = int(crc32c_fold_step / sizeof(crc32c_ymm));  // 8 accumulators
    const crc32c_ymm k = {static_cast<long long>(crc32c_fold_hi), static_cast<long long>(crc32c_fold_lo),
                          static_cast<long long>(crc32c_fold_hi), static_cast<long long>(crc32c_fold_lo)};
    const std::size_t steps = bytes / crc32c_fold_step;
    const crc32c_ymm_unaligned* in = reinterpret_cast<const crc32c_ymm_unaligned*>(p);
    const crc32c_ymm_unaligned* const end = in + lanes * steps;
    crc32c_ymm a[lanes];
#pragma GCC unroll 8
    for (int j = 0; j < lanes; ++j) a[j] = in[j];
    a[0][0] ^= static_cast<long long>(c);
    for (in += lanes; in != end; in += lanes) {
#pragma GCC unroll 8
        for (int j = 0; j < lanes; ++j)
#if defined(__clang__)  // the two compilers name the builtin differently
            a[j] = __builtin_ia32_pclmulqdq256(a[j], k, 0x00) ^ __builtin_ia32_pclmulqdq256(a[j], k, 0x11) ^ in[j];
#else
            a[j] = __builtin_ia32_vpclmulqdq_v4di(a[j], k, 0x00) ^ __builtin_ia32_vpclmulqdq_v4di(a[j], k, 0x11) ^ in[j];
#endif
    }
    p += steps * crc32c_fold_step;
    bytes -= steps * crc32c_fold_step;
    unsigned long long words[crc32c_fold_step / 8];
    std::memcpy(words, a, crc32c_fold_step);
    unsigned long long r = 0;  // the accumulators are the message now: from 0
    for (unsigned long long w : words) r = __builtin_ia32_crc32di(r, w);
    return std::uint32_t(r);
}

/// CRC-32C by folding, the rest by crc32c_sse42. \requires crc32c_folding().
inline std::uint32_t crc32c_vpclmul(const void* data, std::size_t bytes, std::uint32_t crc = 0) noexcept {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    if (bytes < 2 * crc32c_fold_step) return crc32c_sse42(p, bytes, crc);
    const std::uint32_t c = crc32c_fold(~crc, p, bytes);
    return crc32c_sse42(p, bytes, ~c);
}
#endif

/// Whether crc32c() folds with VPCLMULQDQ on this machine (4 KiB or more).
inline bool crc32c_folding() noexcept {
#if TAPEFLOW_CRC32C_FOLD
    static const bool available = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("vpclmulqdq") != 0 &&
               __builtin_cpu_supports("sse4.2") != 0;
    }();
    return available;
#else
    return false;
#endif
}

/// Whether crc32c() uses the crc32 instruction on this machine.
/// Checked at run time even where the translation unit is built for SSE4.2:
/// an inline function must have one body in every translation unit (the
/// linker keeps any one copy).
inline bool crc32c_hardware() noexcept {
#if TAPEFLOW_CRC32C_X86
    static const bool available = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("sse4.2") != 0;
    }();
    return available;
#else
    return false;
#endif
}

}  // namespace detail

/// CRC-32C of `bytes` bytes at `data`, continuing `crc` (the CRC of the
/// bytes before them; 0 to start). Checked once, at the first call: with
/// AVX2 and VPCLMULQDQ 45-49 GB/s on a tile in cache, with SSE4.2 26-29
/// GB/s (the machines of docs/performance.md), else slicing-by-8.
inline std::uint32_t crc32c(const void* data, std::size_t bytes, std::uint32_t crc = 0) noexcept {
#if TAPEFLOW_CRC32C_X86
#if TAPEFLOW_CRC32C_FOLD
    if (bytes >= 4096 && detail::crc32c_folding()) return detail::crc32c_vpclmul(data, bytes, crc);
#endif
    if (detail::crc32c_hardware()) return detail::crc32c_sse42(data, bytes, crc);
#endif
    return detail::crc32c_portable(data, bytes, crc);
}

}  // namespace tapeflow
