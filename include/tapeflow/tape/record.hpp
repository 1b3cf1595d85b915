// tapeflow/tape/record.hpp - the statement record: one per assignment.
//
// A statement  y = f(x_1, ..., x_k)  becomes ONE contiguous record of k
// (partial, identifier) pairs followed by a 4-byte header. The partials
// df/dx_i are computed when the statement is recorded, so the reverse sweep
// only multiplies and adds:
//
//   offset 0          P           2P               kP          kP+4
//   +-----------+----+-----------+----+- ... -+-------------------+
//   | partial_1 |id_1| partial_2 |id_2|       | lhs << 5  |  k    |
//   +-----------+----+-----------+----+- ... -+-------------------+
//    pair 1 (P = sizeof(S) + 4 bytes)           header: 27 + 5 bits
//
//   size(k) = k * (sizeof(S) + 4) + 4       double: 1 arg 16 B, 2: 28 B, 3: 40 B
//
// A record with k >= 31 stores 31 in the header's k field and the real k in
// a 4-byte word just before the header (size k * P + 8); such statements
// (31 or more distinct operands) are rare. Identifiers fit in 27 bits.
//
// A record with k = 0 is an EXTERNAL entry (a custom adjoint, see
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
// padding is spent on alignment. Pair i sits at i*P whatever k is, so the
// recorder can store all candidate pairs at fixed offsets and only then
// decide k (after merging repeated operands: x*x records one pair).
//
// The header sits at the END because the tape is read backwards: the sweep
// reads the 4 bytes before its cursor, learns k, and steps back size(k).
// Identifier 0 means "passive" and never appears in a record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../config.hpp"

namespace tapeflow {

/// Identifier of an active variable; 0 is the passive identifier.
using identifier = std::uint32_t;

/// The header of a record, decoded.
struct record_header {
    identifier lhs;       ///< identifier the statement assigns
    std::uint32_t count;  ///< k, the number of (partial, identifier) pairs
};

/// Size and field offsets of a record holding `Scalar` partials.
template <class Scalar>
struct record_layout {
    static_assert(sizeof(Scalar) % 4 == 0, "records are packed at 4-byte granularity");
    static constexpr std::size_t pair_bytes = sizeof(Scalar) + sizeof(identifier);
    static constexpr unsigned count_bits = 5;
    /// k field value meaning "the count is in the word before the header".
    static constexpr std::uint32_t long_count = (1u << count_bits) - 1;
    /// Largest identifier a header can hold.
    static constexpr identifier max_identifier = (identifier(1) << (32 - count_bits)) - 1;

    /// Bytes of a record with k pairs. For k = 0 it is the header alone: an
    /// external record is external_size bytes (the sweep steps over its
    /// index word only when it meets one, keeping this on the hot path cheap).
    static constexpr std::size_t size(std::size_t k) noexcept {
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
    static void write_pair(std::byte* at, std::size_t i, Scalar partial, identifier id) noexcept {
        std::memcpy(at + i * pair_bytes, &partial, sizeof(Scalar));
        std::memcpy(at + i * pair_bytes + sizeof(Scalar), &id, sizeof(identifier));
    }
    /// Stores the header of a record of k pairs starting at `at`.
    static void write_header(std::byte* at, identifier lhs, std::uint32_t k) noexcept {
        std::byte* h = at + k * pair_bytes;
        if (k >= long_count) {
            std::memcpy(h, &k, 4);
            h += 4;
        }
        const std::uint32_t word = (lhs << count_bits) | (k < long_count ? k : long_count);
        std::memcpy(h, &word, 4);
    }
    /// Writes a whole record at `at` (which must have size(k) bytes); returns its size.
    static std::size_t write(std::byte* at, identifier lhs, std::uint32_t k,
                             const Scalar* partials, const identifier* ids) noexcept {
        for (std::uint32_t i = 0; i < k; ++i) write_pair(at, i, partials[i], ids[i]);
        write_header(at, lhs, k);
        return size(k);
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

    /// Adds `value` to the partial of pair i.
    static void add_partial(std::byte* at, std::size_t i, Scalar value) noexcept {
        Scalar p;
        std::memcpy(&p, at + i * pair_bytes, sizeof(Scalar));
        p += value;
        std::memcpy(at + i * pair_bytes, &p, sizeof(Scalar));
    }

    static Scalar partial(const std::byte* at, std::size_t i) noexcept {
        Scalar p;
        std::memcpy(&p, at + i * pair_bytes, sizeof(Scalar));
        return p;
    }
    static identifier id(const std::byte* at, std::size_t i) noexcept {
        identifier id;
        std::memcpy(&id, at + i * pair_bytes + sizeof(Scalar), sizeof(identifier));
        return id;
    }

    /// Reads the header of the record that ends at `end`.
    static record_header header_before(const std::byte* end) noexcept {
        std::uint32_t word;
        std::memcpy(&word, end - 4, 4);
        record_header h{word >> count_bits, word & long_count};
        if (TAPEFLOW_UNLIKELY(h.count == long_count)) std::memcpy(&h.count, end - 8, 4);
        return h;
    }
};

}  // namespace tapeflow
