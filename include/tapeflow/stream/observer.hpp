// tapeflow/stream/observer.hpp - the hook: what a tape tells a hardware model.
//
// It lives with the stream of tiles, which raises most of its events, so that
// the tape and the stream need nothing from hw/ (hw/hardware_model.hpp
// implements it; hw/observer.hpp includes this header).
//
// A tape with tape_options::observer set calls it at every movement of tape
// data, always on the tape's own thread:
//
//   recording   recorded(bytes, level)          records written since the
//               tile_finished(t, used)          last call (told before a
//                                               sweep); tile t is complete
//   streaming   tile_moved(t, bytes, sram, dram|file)    scratchpad -> FIFO
//               tile_moved(t, bytes, dram|file, sram)    staged for the sweep
//   sweep       sweep_begins(context)
//               layer(t, data, begin, end, level)  once per tile, last first:
//                                                  the records the sweep is
//                                                  about to run, and where
//                                                  it reads them from
//               sweep_ends()
//   truncation  tile_reopened(t) (reset to a position), cleared() (reset)
//
// Nothing is called per record: without an observer the cost is one
// pointer test per tile. Building with -DTAPEFLOW_HARDWARE_MODEL=0 removes
// even that (the benchmark compares the two builds).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tapeflow {

class region_table;

/// Where tape or adjoint bytes are: on chip (the scratchpad, or SRAM), in
/// memory (DRAM), or in the spill file.
enum class memory_level { sram = 0, dram = 1, file = 2 };
inline constexpr std::size_t memory_level_count = 3;

inline const char* name(memory_level level) noexcept {
    switch (level) {
        case memory_level::sram: return "SRAM";
        case memory_level::dram: return "DRAM";
        case memory_level::file: return "file";
    }
    return "?";
}

/// What the tape knows at the start of a sweep.
struct sweep_context {
    const region_table* regions = nullptr;  ///< the regions of the recording
    std::uint64_t record_bytes = 0;         ///< record bytes on the tape
    std::size_t adjoint_bytes = 0;          ///< bytes of one adjoint (sizeof(Scalar))
    std::size_t adjoint_count = 0;          ///< entries of the adjoint vector (identifiers)
    std::size_t lanes = 1;                  ///< adjoints per identifier (vector sweeps: lane_adjoints)
    std::size_t scratchpad_bytes = 0;       ///< on-chip bytes of the arena (0: no scratchpad)
    std::size_t tile_bytes = 0;
};

/// Receives the movements of a tape's data. Every function has an empty
/// default, so an observer overrides what it needs.
class tape_observer {
public:
    virtual ~tape_observer() = default;

    /// Recording wrote `bytes` of records at `level` (SRAM: into the
    /// scratchpad; DRAM: straight into tiles in memory).
    virtual void recorded(std::uint64_t /*bytes*/, memory_level /*level*/) {}
    /// Tile `tile` is finished and holds `used` record bytes.
    virtual void tile_finished(std::size_t /*tile*/, std::size_t /*used*/) {}
    /// `bytes` of tile `tile` moved from one level to another.
    virtual void tile_moved(std::size_t /*tile*/, std::size_t /*bytes*/, memory_level /*from*/,
                            memory_level /*to*/) {}
    virtual void sweep_begins(const sweep_context& /*context*/) {}
    /// The sweep is about to run the records in [begin, end) of tile `tile`,
    /// which it reads at `level`; `data` is the tile's first byte. The
    /// records are in the format of tape/record.hpp.
    virtual void layer(std::size_t /*tile*/, const std::byte* /*data*/, std::size_t /*begin*/,
                       std::size_t /*end*/, memory_level /*level*/) {}
    virtual void sweep_ends() {}
    /// Tile `tile` is being written again (reset to a position inside it);
    /// the tiles after it are gone.
    virtual void tile_reopened(std::size_t /*tile*/) {}
    /// The tape was emptied.
    virtual void cleared() {}
};

}  // namespace tapeflow
