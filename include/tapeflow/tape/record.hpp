// tapeflow/tape/record.hpp - the statement record: one per assignment.
//
// A statement  y = f(x_1, ..., x_k)  becomes ONE contiguous record of k
// (partial, identifier) pairs followed by a 4-byte header. The partials
// df/dx_i are computed when the statement is recorded, so the reverse sweep
// only multiplies and adds:
//
//   offset 0          P           2P               kP          kP+4
//   +-----------+----+-----------+----+- ... -+-------------------------+
//   | partial_1 |id_1| partial_2 |id_2|       | lhs << 5 | a | k (4 b) |
//   +-----------+----+-----------+----+- ... -+-------------------------+
//    pair 1 (P = sizeof(S) + 4 bytes)           header: 27 + 1 + 4 bits
//
//   size(k) = k * (sizeof(S) + 4) + 4       double: 1 arg 16 B, 2: 28 B, 3: 40 B
//
// Two kinds of record, told apart by the header's bit a:
//   a = 0  an assignment  y = f(x_1..x_k): the sweep reads y's adjoint and
//          sets it to 0, then adds partial_i * adjoint to each x_i;
//   a = 1  an update  y += f(x_1..x_k)  (or -=, the partials negated): the
//          old y's partial is exactly 1, so it is not stored and the sweep
//          leaves y's adjoint as it is (the adjoint of the new y is that of
//          the old one); only the pairs of f are added. A compound
//          assignment `s += a * b` of a variable of the recording tape
//          records this kind (basic_real::operator+=): one pair and 12
//          bytes less than `s = s + a * b`, and no store to s's adjoint in
//          the sweep, so a sum's records do not wait on each other there.
// A record with k >= 16 stores 0 in the header's k field (with a = 1, which
// no record of k = 0 has) and the real k, with a in its top bit, in a 4-byte
// word just before the header (size k * P + 8); such statements (16 or more
// distinct operands) are rare. Identifiers fit in 27 bits.
//
// A record with k = 0 (and a = 0) is an EXTERNAL entry (a custom adjoint, see
// tape/external.hpp): header word 0 (lhs 0, k 0) and, before it, the index of
// the entry in the tape's table of external entries (8 bytes). No statement
// records k = 0 (an all-passive statement records nothing), and lhs 0 is the
// passive identifier whose adjoint is always 0, so the sweep meets an
// external entry on its rarely taken "adjoint is zero" path:
//
//   +-------------+-------------+
//   | entry index | 0 (lhs, k)  |     8 bytes
//   +-------------+-------------+
//
// Records are packed at 4-byte granularity and read with memcpy, so no
// padding is spent on alignment. (A basic_dual partial, second order, is
// copied as bytes too: it is N + 1 floating-point numbers and nothing
// else.) Pair i sits at i*P whatever k is, so the
// recorder can store all candidate pairs at fixed offsets and only then
// decide k (after merging repeated operands: x*x records one pair). The
// sweep, the hardware model and every other reader walk records with
// reverse_record_reader: this header is the only one that knows the layout.
//
// The header sits at the END because the tape is read backwards: the sweep
// reads the 4 bytes before its cursor, learns k, and steps back size(k).
// Identifier 0 means "passive" and never appears in a record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../config.hpp"

// The exact test of distinct operands (record_layout::distinct_and_active)
// in vector registers, with GCC or Clang (__builtin_constant_p):
//   2  one AVX2 vector of 8 lanes, where the compiler targets AVX2
//      (-march=native on a machine that has it, -mavx2);
//   1  two SSE2 vectors of 4 lanes, where the compiler targets SSE2 but
//      not AVX2 (every x86-64 build without -march);
//   0  no vector test: a mask of id mod 64 (other targets).
// Define TAPEFLOW_SIMD_DISTINCT to 0 (or 1) to choose a lesser one. (Until
// session 21, 1 meant AVX2.)
#ifndef TAPEFLOW_SIMD_DISTINCT
#if (defined(__GNUC__) || defined(__clang__)) && defined(__AVX2__)
#define TAPEFLOW_SIMD_DISTINCT 2
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__SSE2__)
#define TAPEFLOW_SIMD_DISTINCT 1
#else
#define TAPEFLOW_SIMD_DISTINCT 0
#endif
#endif
#if TAPEFLOW_SIMD_DISTINCT == 2
#include <immintrin.h>
#elif TAPEFLOW_SIMD_DISTINCT == 1
#include <emmintrin.h>
#endif

namespace tapeflow {

/// Identifier of an active variable; 0 is the passive identifier.
using identifier = std::uint32_t;

namespace detail {
/// (debug checks) An identifier's generation that is not known: nothing to
/// compare with (tape/identifier_pool.hpp, generation()).
inline constexpr std::uint32_t no_generation = ~std::uint32_t(0);

/// Asks for the tape's cache line `distance` bytes after `at` (before it,
/// for a negative distance), to be written or read; recording and the sweep
/// use the distance TAPEFLOW_TAPE_PREFETCH_BYTES (config.hpp, which says
/// why). With GCC and Clang only: a write is `prefetchw` where the compiler
/// targets it (PRFCHW, as with -march=native on recent x86), else a read
/// prefetch; other compilers get no prefetch. A hint only: an address
/// outside the tile, or outside any allocation, does not fault; it is
/// computed as an integer, so no pointer leaves its object.
template <bool ForWrite>
TAPEFLOW_ALWAYS_INLINE void prefetch_tape(const void* at, std::ptrdiff_t distance) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    if constexpr (tape_prefetch_bytes != 0) {
        const auto line = reinterpret_cast<std::uintptr_t>(at) + static_cast<std::uintptr_t>(distance);
        __builtin_prefetch(reinterpret_cast<const void*>(line), ForWrite ? 1 : 0, 3);
        return;
    }
#endif
    static_cast<void>(at);
    static_cast<void>(distance);
}
}  // namespace detail

/// The header of a record, decoded.
struct record_header {
    identifier lhs;       ///< identifier the statement assigns
    std::uint32_t count;  ///< k, the number of (partial, identifier) pairs
    bool update;          ///< an update (`lhs += ...`): the sweep keeps lhs's adjoint
};

/// Bits of the header word that hold k and the kind (4 + 1); the other 27
/// hold the lhs identifier.
inline constexpr unsigned record_count_bits = 5;
/// Largest identifier a record header can hold (2^27 - 1): the limit on
/// variables alive at once (tape/identifier_pool.hpp).
inline constexpr identifier max_record_identifier = (identifier(1) << (32 - record_count_bits)) - 1;

/// Size and field offsets of a record holding `Scalar` partials.
template <class Scalar>
struct record_layout {
    static_assert(sizeof(Scalar) % 4 == 0, "records are packed at 4-byte granularity");
    static constexpr std::size_t pair_bytes = sizeof(Scalar) + sizeof(identifier);
    static constexpr unsigned count_bits = record_count_bits;
    /// The header's low count_bits bits: the kind and k.
    static constexpr std::uint32_t field_mask = (1u << count_bits) - 1;
    /// The header's bit that marks an update record (`lhs += ...`).
    static constexpr std::uint32_t update_bit = 1u << (count_bits - 1);
    /// Records of this many pairs or more are long: their count is in the
    /// word before the header, whose field is then long_field.
    static constexpr std::uint32_t long_count = update_bit;
    /// The field of a long record: k 0 with update_bit, which no short record has.
    static constexpr std::uint32_t long_field = update_bit;
    /// The long count word's bit that marks an update record.
    static constexpr std::uint32_t long_update_bit = 0x80000000u;
    /// Largest identifier a header can hold.
    static constexpr identifier max_identifier = max_record_identifier;

    /// Bytes of a record with k pairs. For k = 0 it is the header alone: an
    /// external record is external_size bytes (the sweep steps over its
    /// index word only when it meets one, keeping this on the hot path cheap).
    static constexpr TAPEFLOW_ALWAYS_INLINE std::size_t size(std::size_t k) noexcept {
        return k * pair_bytes + (k < long_count ? 4 : 8);
    }
    /// Bytes of an external record: the entry index and the header.
    static constexpr std::size_t external_size = 8;
    /// Number of pairs of a record of `bytes` bytes.
    static constexpr std::size_t count(std::size_t bytes) noexcept {
        const std::size_t k = (bytes - 4) / pair_bytes;
        return k < long_count && size(k) == bytes ? k : (bytes - 8) / pair_bytes;
    }

    /// Stores pair i of the record starting at `at`.
    static TAPEFLOW_ALWAYS_INLINE void write_pair(std::byte* at, std::size_t i, Scalar partial, identifier id) noexcept {
        std::memcpy(at + i * pair_bytes, static_cast<const void*>(&partial), sizeof(Scalar));
        std::memcpy(at + i * pair_bytes + sizeof(Scalar), &id, sizeof(identifier));
    }
    /// Stores the header of a record of k pairs starting at `at`: an
    /// assignment, or an update (`lhs += ...`) when `update`.
    static TAPEFLOW_ALWAYS_INLINE void write_header(std::byte* at, identifier lhs, std::uint32_t k,
                                                    bool update = false) noexcept {
        std::byte* h = at + k * pair_bytes;
        std::uint32_t field = update ? update_bit | k : k;
        if (k >= long_count) {
            const std::uint32_t count = update ? long_update_bit | k : k;
            std::memcpy(h, &count, 4);
            h += 4;
            field = long_field;
        }
        const std::uint32_t word = (lhs << count_bits) | field;
        std::memcpy(h, &word, 4);
    }
    /// Writes a whole record at `at` (which must have size(k) bytes), an
    /// update record when `update`; returns its size.
    static std::size_t write(std::byte* at, identifier lhs, std::uint32_t k, const Scalar* partials,
                             const identifier* ids, bool update = false) noexcept {
        for (std::uint32_t i = 0; i < k; ++i) write_pair(at, i, partials[i], ids[i]);
        write_header(at, lhs, k, update);
        return size(k);
    }

    /// Stores the pairs of a statement whose operand slots are (ids[i],
    /// partials[i]), i < N, at `at` (which must have room for size(N)), and
    /// returns k, the pairs stored (0: every slot was passive); the caller
    /// then writes the header. Passive slots (identifier 0) are dropped and
    /// a repeated identifier (x*x) becomes one pair with the partials summed
    /// (for N <= merge_limit; larger statements keep repeats as they are).
    ///
    /// Two ways, chosen by N (measured on the bench kernels, see
    /// docs/performance.md, "The record path"):
    /// - N <= 3 (`f += r * r`): each slot is compared with the pairs already
    ///   stored; those branches repeat from one run of a statement to the
    ///   next, so they predict well.
    /// - 4 <= N <= 7 floating-point slots (heat's 7 slots for 3 variables):
    ///   the slots are merged in registers first, without a branch: each
    ///   later repeat is added into its first occurrence and its identifier
    ///   cleared; then every slot is stored at position k and k grows only
    ///   for the live ones (a passive or merged slot is overwritten by the
    ///   next one, or lies past the record). The partials are added in the
    ///   same order as by the branchy merge, so the records are the same
    ///   bit for bit.
    ///   From 8 slots on the N(N-1)/2 compares are not worth it: with them
    ///   inlined, GCC kept least_squares' 8 distinct slots in registers and
    ///   spilled them, and its fast path got 8% slower. A Dual scalar (the
    ///   second-order tape) keeps the branchy merge: a select per compare
    ///   would add whole Duals where the branch adds only on a repeat.
    ///
    /// The caller tests distinct_and_active() first and, when it holds,
    /// stores the slots with write_pair at constant offsets: k is then a
    /// compile-time constant for the header and the size.
    template <std::size_t N>
    static TAPEFLOW_ALWAYS_INLINE std::uint32_t merge_pairs(std::byte* at, const identifier* ids,
                                                            const Scalar* partials) noexcept {
        if constexpr (N >= 4 && N <= 7 && N <= merge_limit && std::is_floating_point_v<Scalar>) {
            identifier id[N];
            Scalar p[N];
#pragma GCC unroll 16
            for (std::size_t i = 0; i < N; ++i) {
                id[i] = ids[i];
                p[i] = partials[i];
            }
#pragma GCC unroll 16
            for (std::size_t i = 1; i < N; ++i) {
#pragma GCC unroll 16
                for (std::size_t j = 0; j < i; ++j) {
                    const bool same = (id[j] == id[i]) & (id[i] != 0);
                    const Scalar sum = p[j] + p[i];
                    p[j] = same ? sum : p[j];  // (adding 0 instead would turn a -0 into +0)
                    id[i] = same ? identifier(0) : id[i];
                }
            }
            std::uint32_t k = 0;
#pragma GCC unroll 16
            for (std::size_t i = 0; i < N; ++i) {
                write_pair(at, k, p[i], id[i]);
                k += id[i] != 0;
            }
            return k;
        } else {
            std::uint32_t k = 0;
#pragma GCC unroll 16
            for (std::size_t i = 0; i < N; ++i) {
                const identifier id = ids[i];
                if (id == 0) continue;
                bool merged = false;
                if constexpr (N > 1 && N <= merge_limit) {
                    for (std::uint32_t j = 0; j < k; ++j)
                        if (record_layout::id(at, j) == id) {
                            add_partial(at, j, partials[i]);
                            merged = true;
                            break;
                        }
                }
                if (!merged) write_pair(at, k++, partials[i], id);
            }
            return k;
        }
    }

    /// Writes an external record (external_size bytes) at `at`.
    static void write_external(std::byte* at, std::uint32_t index) noexcept {
        const std::uint32_t word = 0;
        std::memcpy(at, &index, 4);
        std::memcpy(at + 4, &word, 4);
    }
    /// The entry index of the external record starting at `at`.
    static std::uint32_t external_index(const std::byte* at) noexcept {
        std::uint32_t index;
        std::memcpy(&index, at, 4);
        return index;
    }

    static Scalar partial(const std::byte* at, std::size_t i) noexcept {
        Scalar p;
        std::memcpy(static_cast<void*>(&p), at + i * pair_bytes, sizeof(Scalar));
        return p;
    }
    static identifier id(const std::byte* at, std::size_t i) noexcept {
        identifier id;
        std::memcpy(&id, at + i * pair_bytes + sizeof(Scalar), sizeof(identifier));
        return id;
    }

    /// True when every slot is active and no identifier repeats (then no
    /// merge is needed); one branch for the caller. Always false past
    /// merge_limit, where nothing merges.
    ///
    /// Up to 3 slots every pair is compared. From 4 to 8, with GCC or Clang
    /// and SSE2 (x86-64), all pairs are compared at once, exactly, in one
    /// AVX2 vector or in two SSE2 vectors (distinct_and_active_vector).
    /// Otherwise, and past 8, each
    /// identifier sets bit (id mod 64) of a mask (distinct_and_active_mask):
    /// N steps, but two different identifiers that share the bit (3 and
    /// 67) fail it too, which sends the statement to merge_pairs, the
    /// general path: the same record, found more slowly. Whether that
    /// happens depends on where the identifiers lie, not on the statement:
    /// a[i] * b[i] + ... over arrays of 64 n variables each, registered one
    /// after the other, shares bits for every i; the same RK4 code (the ode
    /// bench kernel) recorded in 108 to 143 M instructions a gradient with
    /// the identifiers of one recording or another. The vector test is
    /// exact, so no layout sends a statement to the merge: 93.5 M
    /// (docs/performance.md).
    template <std::size_t N>
    static TAPEFLOW_ALWAYS_INLINE bool distinct_and_active(const identifier* ids) noexcept {
        if constexpr (N > merge_limit) {
            return false;
        } else if constexpr (N <= 3) {
            bool ok = true;
#pragma GCC unroll 16
            for (std::size_t i = 0; i < N; ++i) {
                ok &= ids[i] != 0;
#pragma GCC unroll 16
                for (std::size_t j = 0; j < i; ++j) ok &= ids[j] != ids[i];
            }
            return ok;
        }
#if TAPEFLOW_SIMD_DISTINCT
        else if constexpr (N <= 8) {
            // A statement that names a variable twice (x * x, heat's u[i])
            // has a repeat the compiler sees: the scalar compares of such a
            // pair fold to a constant, the vector compares would not (28
            // instructions a statement on heat). Those go to the merge at
            // no cost; the rest take the vector test.
            bool repeat_seen_by_compiler = false;
#pragma GCC unroll 16
            for (std::size_t i = 1; i < N; ++i)
#pragma GCC unroll 16
                for (std::size_t j = 0; j < i; ++j)
                    repeat_seen_by_compiler |= __builtin_constant_p(ids[j] == ids[i]) && ids[j] == ids[i];
            if (repeat_seen_by_compiler) return false;
            return distinct_and_active_vector<N>(ids);
        }
#endif
        else {
            return distinct_and_active_mask<N>(ids);
        }
    }

    /// distinct_and_active by a 64-bit mask of id mod 64 (see above): true
    /// only when all are active and distinct; false also for different
    /// identifiers congruent mod 64.
    template <std::size_t N>
    static TAPEFLOW_ALWAYS_INLINE bool distinct_and_active_mask(const identifier* ids) noexcept {
        std::uint64_t seen = 0;
        bool ok = true;
#pragma GCC unroll 16
        for (std::size_t i = 0; i < N; ++i) {
            const std::uint64_t bit = std::uint64_t(1) << (ids[i] & 63);
            ok &= (ids[i] != 0) & ((seen & bit) == 0);
            seen |= bit;
        }
        return ok;
    }

#if TAPEFLOW_SIMD_DISTINCT
    /// Lane i of the vector tests below: identifier i, or past N a value no
    /// identifier takes (2^31 + i, while identifiers stay below 2^27), so
    /// the padding neither repeats nor reads as passive. The lanes are built
    /// from the values (not loaded from `ids`), so the statement's operands
    /// can stay in registers.
    template <std::size_t N>
    static TAPEFLOW_ALWAYS_INLINE int vector_lane(const identifier* ids, std::size_t i) noexcept {
        return i < N ? int(ids[i]) : int(0x80000000u + std::uint32_t(i));
    }
#endif
#if TAPEFLOW_SIMD_DISTINCT == 2
    /// distinct_and_active for 1 to 8 identifiers, exactly, in AVX2: the
    /// identifiers in the lanes of one vector, each lane compared with the
    /// lanes 1, 2, 3 and 4 places on (every pair of 8 lanes is one of
    /// those) and with 0.
    template <std::size_t N>
    static TAPEFLOW_ALWAYS_INLINE bool distinct_and_active_vector(const identifier* ids) noexcept {
        static_assert(N >= 1 && N <= 8, "distinct_and_active_vector: 1 to 8 identifiers");
        const auto lane = [ids](std::size_t i) { return vector_lane<N>(ids, i); };
        const __m256i v =
            _mm256_setr_epi32(lane(0), lane(1), lane(2), lane(3), lane(4), lane(5), lane(6), lane(7));
        const __m256i r1 = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0));
        const __m256i r2 = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(2, 3, 4, 5, 6, 7, 0, 1));
        const __m256i r3 = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(3, 4, 5, 6, 7, 0, 1, 2));
        const __m256i r4 = _mm256_permute2x128_si256(v, v, 1);
        const __m256i same = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi32(v, r1), _mm256_cmpeq_epi32(v, r2)),
            _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi32(v, r3), _mm256_cmpeq_epi32(v, r4)),
                            _mm256_cmpeq_epi32(v, _mm256_setzero_si256())));
        return _mm256_testz_si256(same, same) != 0;
    }
#elif TAPEFLOW_SIMD_DISTINCT == 1
    /// distinct_and_active for 1 to 8 identifiers, exactly, in SSE2 (on by
    /// default on x86-64): lanes 0-3 in `a`, 4-7 in `b`. Within a vector of
    /// 4 every pair is 1 or 2 places apart (rotations 1 and 2); across, `a`
    /// meets each rotation of `b`.
    template <std::size_t N>
    static TAPEFLOW_ALWAYS_INLINE bool distinct_and_active_vector(const identifier* ids) noexcept {
        static_assert(N >= 1 && N <= 8, "distinct_and_active_vector: 1 to 8 identifiers");
        const auto lane = [ids](std::size_t i) { return vector_lane<N>(ids, i); };
        const auto within = [](__m128i v) {  // a repeat inside v, or a 0
            return _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(0, 3, 2, 1))),
                             _mm_cmpeq_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)))),
                _mm_cmpeq_epi32(v, _mm_setzero_si128()));
        };
        const __m128i a = _mm_setr_epi32(lane(0), lane(1), lane(2), lane(3));
        __m128i same = within(a);
        if constexpr (N > 4) {
            const __m128i b = _mm_setr_epi32(lane(4), lane(5), lane(6), lane(7));
            const __m128i across = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi32(a, b), _mm_cmpeq_epi32(a, _mm_shuffle_epi32(b, _MM_SHUFFLE(0, 3, 2, 1)))),
                _mm_or_si128(_mm_cmpeq_epi32(a, _mm_shuffle_epi32(b, _MM_SHUFFLE(1, 0, 3, 2))),
                             _mm_cmpeq_epi32(a, _mm_shuffle_epi32(b, _MM_SHUFFLE(2, 1, 0, 3)))));
            same = _mm_or_si128(same, _mm_or_si128(within(b), across));
        }
        return _mm_movemask_epi8(same) == 0;
    }
#endif
    static TAPEFLOW_ALWAYS_INLINE void add_partial(std::byte* at, std::size_t i, Scalar value) noexcept {
        Scalar p;
        std::memcpy(static_cast<void*>(&p), at + i * pair_bytes, sizeof(Scalar));
        p += value;
        std::memcpy(at + i * pair_bytes, static_cast<const void*>(&p), sizeof(Scalar));
    }

    /// Reads the header word before `end` as a short record's: its count
    /// is 0 for a long record and for an external entry (header_before()
    /// reads those). header_before() decodes the word again rather than
    /// calling this: written so, the sweep's dispatch on the count
    /// compiled to a different order and swept gmm and nbody 6-7% slower
    /// in an A/B of 11 alternating rounds (session 34).
    static TAPEFLOW_ALWAYS_INLINE record_header short_header_before(const std::byte* end) noexcept {
        std::uint32_t word;
        std::memcpy(&word, end - 4, 4);
        return {word >> count_bits, word & (update_bit - 1), (word & update_bit) != 0};
    }
    /// Reads the header of the record that ends at `end`.
    static TAPEFLOW_ALWAYS_INLINE record_header header_before(const std::byte* end) noexcept {
        std::uint32_t word;
        std::memcpy(&word, end - 4, 4);
        record_header h{word >> count_bits, word & (update_bit - 1), (word & update_bit) != 0};
        if (TAPEFLOW_UNLIKELY((word & field_mask) == long_field)) {
            std::uint32_t count;
            std::memcpy(&count, end - 8, 4);
            h.count = count & ~long_update_bit;
            h.update = (count & long_update_bit) != 0;
        }
        return h;
    }
};

/// Walks the records of a run of tape [begin, end) from the last to the
/// first: the one reader of the format, used by the sweep, the hardware
/// model and anything else that decodes records.
///
/// **Example**:
///   reverse_record_reader<double> r(data + begin, data + end);
///   while (r.more()) {
///       const record_header h = r.previous();   // r.record() is its first pair
///       if (h.count == 0) { std::uint32_t entry = r.take_external(); ... continue; }
///       for (std::uint32_t i = 0; i < h.count; ++i) use(r.id(i), r.partial(i));
///   }
template <class Scalar>
class reverse_record_reader {
public:
    using layout = record_layout<Scalar>;

    reverse_record_reader(const std::byte* begin, const std::byte* end) noexcept : at_(end), stop_(begin) {}

    /// Whether a record lies before the current one.
    TAPEFLOW_ALWAYS_INLINE bool more() const noexcept { return at_ > stop_; }
    /// Steps to the previous record and returns its header. For an external
    /// entry (count 0) call take_external() before the next step.
    TAPEFLOW_ALWAYS_INLINE record_header previous() noexcept {
        const record_header h = layout::header_before(at_);
        at_ -= layout::size(h.count);
        return h;
    }
    /// The header of the record before the current one, without stepping
    /// to it, when that is a short record (1 <= count < long_count); count
    /// 0 when it is a long record or an external entry (take previous()).
    /// With step<K>(), for a sweep that switches on the count and steps
    /// back by a constant in each case: the address of the header after
    /// that then waits on a predicted branch, not on the count just
    /// loaded (a chain of dependent loads across the whole sweep).
    TAPEFLOW_ALWAYS_INLINE record_header peek_short() const noexcept { return layout::short_header_before(at_); }
    /// Steps to the record before the current one, a short record of K pairs.
    template <std::uint32_t K>
    TAPEFLOW_ALWAYS_INLINE void step() noexcept {
        static_assert(K >= 1 && K < layout::long_count, "step<K>() is for short records");
        at_ -= layout::size(K);
    }
    /// The entry index of the external record just stepped to (count 0);
    /// steps over its index word.
    std::uint32_t take_external() noexcept {
        at_ -= layout::external_size - layout::size(0);
        return layout::external_index(at_);
    }
    /// Start of the current record (its first pair, or an external's index word).
    const std::byte* record() const noexcept { return at_; }
    /// Pair i of the current record.
    TAPEFLOW_ALWAYS_INLINE Scalar partial(std::size_t i) const noexcept { return layout::partial(at_, i); }
    TAPEFLOW_ALWAYS_INLINE identifier id(std::size_t i) const noexcept { return layout::id(at_, i); }

private:
    const std::byte* at_;
    const std::byte* stop_;
};

}  // namespace tapeflow
