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
// A vector sweep (tape/lane_adjoints.hpp) calls reverse_lanes instead, with
// `lanes` adjoints per identifier:
//
//   adjoint:  | id 0: lane 0 .. lanes-1 | id 1: lane 0 .. lanes-1 | ...
#pragma once

#include <cstddef>
#include <vector>

#include "../error.hpp"
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

    /// Reverse rule of a vector sweep: `adjoint[id * lanes + l]` is the
    /// adjoint of identifier `id` in lane l. The same effects as reverse(),
    /// on every lane. (custom_adjoint.hpp implements it, calling a rule that
    /// takes one lane once per lane.)
    virtual void reverse_lanes(Scalar* /*adjoint*/, std::size_t /*lanes*/, std::vector<Scalar>& /*scratch*/) {
        throw usage_error("a vector sweep (lane_adjoints) met an external entry that has no reverse rule "
                          "for lanes; implement external_entry::reverse_lanes, or sweep with scalar adjoints");
    }

    /// Memory held by the entry (identifiers and captured data), for statistics.
    virtual std::size_t bytes() const noexcept = 0;
};

}  // namespace tapeflow
