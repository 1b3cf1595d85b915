// tapeflow/tape/external.hpp - external entries: a block of work taped as one
// entry with a reverse rule of its own (custom adjoints, Eigen products and
// solves).
//
// The tape keeps the entries in a table it owns; the record stream holds an
// 8-byte external record with the entry's index (tape/record.hpp), so entries
// go through tiles, the scratchpad and the spill file like any record, while
// the entry itself (identifiers, captured values, the reverse function) stays
// in memory until the tape is reset past it:
//
//   records:  ... [stmt] [stmt] [external #0] [stmt] ... [external #1] ...
//                                     |                        |
//   table:    entries_[0] <-----------+       entries_[1] <----+
//             { input ids, output ids, captured data, reverse }
//
// When the sweep meets entry i it calls entries_[i]->reverse(adjoint, scratch):
// the entry reads the adjoints of its outputs and sets them to 0 (as an
// ordinary record does with its lhs), then adds to the adjoints of its inputs.
#pragma once

#include <cstddef>
#include <vector>

#include "record.hpp"

namespace tapeflow {

/// One external entry on a tape. Implementations: custom_adjoint.hpp.
template <class Scalar>
class external_entry {
public:
    virtual ~external_entry() = default;

    /// Reverse rule. `adjoint` is the tape's adjoint vector (indexed by
    /// identifier); `scratch` is a buffer the tape lends for temporaries.
    /// \effects reads and zeroes the adjoints of the outputs, then adds the
    /// contributions to the adjoints of the inputs.
    virtual void reverse(Scalar* adjoint, std::vector<Scalar>& scratch) = 0;

    /// Memory held by the entry (identifiers and captured data), for statistics.
    virtual std::size_t bytes() const noexcept = 0;
};

}  // namespace tapeflow
