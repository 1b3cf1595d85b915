// tapeflow/tape/statistics.hpp - what a tape holds, for reports and tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>

namespace tapeflow {

/// Snapshot returned by tape.statistics().
struct tape_statistics {
    std::uint64_t statements = 0;        ///< records on the tape
    std::uint64_t arguments = 0;         ///< (identifier, partial) pairs in them
    std::uint64_t record_bytes = 0;      ///< bytes of the records (without tile tails)
    std::size_t tiles = 0;               ///< tiles in use
    std::size_t tile_bytes = 0;          ///< size of one tile
    std::size_t allocated_bytes = 0;     ///< tile memory held, in use or spare
    std::size_t regions = 0;             ///< regions opened (not counting the implicit one)
    std::size_t live_identifiers = 0;    ///< identifiers held by variables now
    std::size_t peak_identifiers = 0;    ///< most identifiers held at once
    std::size_t adjoint_bytes = 0;       ///< size of the adjoint vector

    /// Average record size; 0 for an empty tape.
    double bytes_per_statement() const noexcept {
        return statements ? double(record_bytes) / double(statements) : 0.0;
    }
};

inline std::ostream& operator<<(std::ostream& out, const tape_statistics& s) {
    return out << "statements " << s.statements << ", arguments " << s.arguments
               << ", record bytes " << s.record_bytes << " (" << s.bytes_per_statement()
               << " per statement), tiles " << s.tiles << " x " << s.tile_bytes
               << " bytes, regions " << s.regions << ", identifiers live " << s.live_identifiers
               << " peak " << s.peak_identifiers;
}

}  // namespace tapeflow
