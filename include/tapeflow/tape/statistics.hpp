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
    std::size_t peak_identifiers = 0;    ///< highest identifier handed out (adjoint vector length), >= most held at once
    std::size_t adjoint_bytes = 0;       ///< size of the adjoint vector
    std::size_t externals = 0;           ///< external entries (custom adjoints), counted in statements
    std::size_t external_bytes = 0;      ///< memory they hold (identifiers, captured data)
    std::size_t spare_external_bytes = 0;  ///< buffers of dropped entries kept for reuse (tape/buffer_pool.hpp)

    // Streaming (with a scratchpad or a memory budget; see tape_options):
    std::uint64_t tiles_written = 0;     ///< tiles finished since the tape was made
    std::uint64_t tiles_spilled = 0;     ///< of which went to the spill file
    std::uint64_t tiles_read_back = 0;   ///< tiles read back from the spill file by sweeps
    std::uint64_t bytes_spilled = 0;     ///< bytes written to the spill file (with checksums)
    std::uint64_t bytes_read_back = 0;   ///< bytes read back from it
    std::uint64_t tiles_flushed = 0;     ///< scratchpad halves the prefetch thread flushed from the caches
    std::size_t peak_resident_bytes = 0; ///< most tape memory held at once (tiles + scratchpad)
    double sweep_wait_seconds = 0;       ///< time sweeps waited for the prefetch thread
    double record_wait_seconds = 0;      ///< time recording waited for a free scratchpad half

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
               << " peak " << s.peak_identifiers << ", peak resident " << s.peak_resident_bytes
               << " bytes, spilled " << s.tiles_spilled << " tiles (" << s.bytes_spilled << " bytes)"
               << ", external entries " << s.externals << " (" << s.external_bytes << " bytes, "
               << s.spare_external_bytes << " spare)";
}

}  // namespace tapeflow
