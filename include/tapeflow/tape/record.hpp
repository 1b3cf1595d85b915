// tapeflow/tape/record.hpp - the statement record: one per assignment.
//
// A statement  y = f(x_1, ..., x_k)  becomes ONE contiguous record of k
// (partial, identifier) pairs followed by a header. The partials df/dx_i are
// computed when the statement is recorded, so the reverse sweep only
// multiplies and adds:
//
//   offset 0          P           2P               kP        kP+4     kP+8
//   +-----------+----+-----------+----+- ... -+----------+----------+
//   | partial_1 |id_1| partial_2 |id_2|       |  lhs u32 |  k u32   |
//   +-----------+----+-----------+----+- ... -+----------+----------+
//    pair 1 (P = sizeof(S) + 4 bytes)           header: the last 8 bytes
//
//   size(k) = k * (sizeof(S) + 4) + 8      double: 1 arg 20 B, 2: 32 B, 3: 44 B
//
// Records are packed at 4-byte granularity and read with memcpy, so no
// padding is spent on alignment. Pair i sits at i*P whatever k is, so the
// recorder can store all candidate pairs at fixed offsets and only then
// decide k (after merging repeated operands: x*x records one pair).
//
// The header sits at the END because the tape is read backwards: the sweep
// reads the 8 bytes before its cursor, learns k, and steps back size(k).
// Identifier 0 means "passive" and never appears in a record. Values of k
// with the top bit set are reserved for special records (custom adjoints).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tapeflow {

/// Identifier of an active variable; 0 is the passive identifier.
using identifier = std::uint32_t;

/// The last 8 bytes of every record.
struct record_header {
    identifier lhs;       ///< identifier the statement assigns
    std::uint32_t count;  ///< k, the number of (partial, identifier) pairs
};
static_assert(sizeof(record_header) == 8, "record header must be 8 bytes");

/// Size and field offsets of a record holding `Scalar` partials.
template <class Scalar>
struct record_layout {
    static_assert(sizeof(Scalar) % 4 == 0, "records are packed at 4-byte granularity");
    static constexpr std::size_t pair_bytes = sizeof(Scalar) + sizeof(identifier);

    /// Bytes of a record with k pairs.
    static constexpr std::size_t size(std::size_t k) noexcept {
        return k * pair_bytes + sizeof(record_header);
    }
    /// Number of pairs of a record of `bytes` bytes.
    static constexpr std::size_t count(std::size_t bytes) noexcept {
        return (bytes - sizeof(record_header)) / pair_bytes;
    }

    /// Stores pair i of the record starting at `at`.
    static void write_pair(std::byte* at, std::size_t i, Scalar partial, identifier id) noexcept {
        std::memcpy(at + i * pair_bytes, &partial, sizeof(Scalar));
        std::memcpy(at + i * pair_bytes + sizeof(Scalar), &id, sizeof(identifier));
    }
    /// Stores the header of a record of k pairs starting at `at`.
    static void write_header(std::byte* at, identifier lhs, std::uint32_t k) noexcept {
        const record_header h{lhs, k};
        std::memcpy(at + k * pair_bytes, &h, sizeof h);
    }
    /// Writes a whole record at `at` (which must have size(k) bytes); returns its size.
    static std::size_t write(std::byte* at, identifier lhs, std::uint32_t k,
                             const Scalar* partials, const identifier* ids) noexcept {
        for (std::uint32_t i = 0; i < k; ++i) write_pair(at, i, partials[i], ids[i]);
        write_header(at, lhs, k);
        return size(k);
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
        record_header h;
        std::memcpy(&h, end - sizeof(record_header), sizeof h);
        return h;
    }
};

}  // namespace tapeflow
