// tapeflow/tape/record.hpp - the statement record: one per assignment.
//
// A statement  y = f(x_1, ..., x_k)  becomes ONE contiguous record. The k
// partials df/dx_i are computed when the statement is recorded, so the
// reverse sweep only multiplies and adds:
//
//   offset 0                 S*k            S*k + 4*k         size-8   size
//   +-----------------------+---------------+-----+----------+--------+
//   | partial_1 ... partial_k| id_1 ... id_k | pad | lhs (u32) | k (u32)|
//   +-----------------------+---------------+-----+----------+--------+
//    S = sizeof(Scalar)       4 bytes each          header: the last 8 bytes
//
//   size = align_up(S*k + 4*k + 8, alignment),  alignment = max(8, alignof(S))
//
// The header sits at the END of the record because the tape is read
// backwards: the sweep reads the 8 bytes before its cursor, learns k, and
// steps back by size(k). For double: 1 argument = 24 bytes, 2 = 32 (+pad),
// 3 = 48, 7 = 96. Repeated operands are merged before writing
// (x*x records one argument), so k counts distinct identifiers.
//
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
    std::uint32_t count;  ///< k, the number of (identifier, partial) pairs
};
static_assert(sizeof(record_header) == 8, "record header must be 8 bytes");

/// Size and field offsets of a record holding `Scalar` partials.
template <class Scalar>
struct record_layout {
    static constexpr std::size_t alignment = alignof(Scalar) > 8 ? alignof(Scalar) : 8;
    static constexpr std::size_t pair_bytes = sizeof(Scalar) + sizeof(identifier);

    /// Bytes of a record with k arguments.
    static constexpr std::size_t size(std::size_t k) noexcept {
        return (k * pair_bytes + sizeof(record_header) + alignment - 1) & ~(alignment - 1);
    }
    /// Offset of id_1 from the start of the record.
    static constexpr std::size_t ids_offset(std::size_t k) noexcept { return k * sizeof(Scalar); }

    /// Writes a record at `at` (which must have size(k) bytes); returns its size.
    static std::size_t write(std::byte* at, identifier lhs, std::uint32_t k,
                             const Scalar* partials, const identifier* ids) noexcept {
        const std::size_t bytes = size(k);
        std::memcpy(at, partials, k * sizeof(Scalar));
        std::memcpy(at + ids_offset(k), ids, k * sizeof(identifier));
        const record_header h{lhs, k};
        std::memcpy(at + bytes - sizeof(record_header), &h, sizeof h);
        return bytes;
    }

    /// Reads the header of the record that ends at `end`.
    static record_header header_before(const std::byte* end) noexcept {
        record_header h;
        std::memcpy(&h, end - sizeof(record_header), sizeof h);
        return h;
    }
};

}  // namespace tapeflow
