// tapeflow/stream/options.hpp - the options of one tape, fixed at construction.
//
// Every option says how the tape's tiles are held and moved (sizes, the
// scratchpad, the memory budget, the spill file, the prefetch thread and the
// observer of their movements), so they live with the stream, which the tape
// is built on (tape/options.hpp includes this header).
//
// **Example**: a tape that keeps at most 256 MiB of tape in memory and
// spills the rest to a private file in /scratch, with a progress bar:
//   tapeflow::tape_options options;
//   options.memory_budget_bytes = 256u << 20;
//   options.spill_directory = "/scratch";
//   options.progress = [](const tapeflow::tape_progress& p) { show(p); };
//   tapeflow::tape tape(options);
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "../config.hpp"
#include "../error.hpp"

namespace tapeflow {

class spill_io;
class tile_codec;
class tape_observer;

/// What a progress callback is told (on the recording thread, once per tile).
struct tape_progress {
    enum class phase { recording, sweeping };
    phase stage = phase::recording;
    std::uint64_t statements = 0;     ///< recorded so far
    std::size_t tiles = 0;            ///< tiles finished so far
    std::size_t tiles_spilled = 0;    ///< of which went to the spill file
    double sweep_fraction = 0.0;      ///< share of the sweep done (phase sweeping)
};

struct tape_options {
    /// Bytes per tile; a record never straddles two tiles. At least
    /// min_tile_bytes; rounded up to a multiple of 64. 0 (the default): the
    /// tape chooses, default_streaming_tile_bytes (2 MiB) for a tape with a
    /// finite memory budget, but at most an eighth of the budget, else
    /// default_tile_bytes (128 KiB), also with the scratchpad alone.
    /// tape::statistics().tile_bytes says what was chosen.
    std::size_t tile_bytes = 0;
    /// Record into a cache-resident scratchpad of two tiles (double buffered)
    /// and move each full tile out with non-temporal stores (true), or write
    /// records straight into tiles in memory (false, the fastest measured when
    /// the whole tape fits in memory).
    bool scratchpad = false;
    /// Most bytes of tape held in memory (scratchpad + tiles in memory + tiles
    /// in flight). Past it, tiles go to the spill file. At least two tiles.
    /// A finite budget implies the scratchpad.
    std::size_t memory_budget_bytes = std::numeric_limits<std::size_t>::max();
    /// Directory of the spill file (created on the first spill, mode 0600,
    /// unlinked at once). Empty: $TMPDIR, else /tmp.
    std::string spill_directory;
    /// Move tiles on a background thread, one tile ahead of recording and of
    /// the sweep (true), or synchronously in the operation that needs them
    /// (false). Only a streaming tape has the thread. On by default: with
    /// streaming-sized tiles it hid most of the spill file's I/O on the
    /// 2-core machine of docs/performance.md. Turn it off where no core is
    /// free for it.
    bool prefetch = true;
    /// Called once per finished tile while recording and once per tile
    /// while sweeping. Empty: no callback. It may throw to cancel (what the
    /// tape is left with: docs/streaming.md, "Progress").
    std::function<void(const tape_progress&)> progress;
    /// The file layer of the spill file (stream/spill_io.hpp; tests inject
    /// faults through it). Empty: default_spill_io(), POSIX pread/pwrite
    /// where they exist, else portable_spill_io (the C library alone).
    std::shared_ptr<spill_io> io;
    /// Compression of spilled tiles, e.g. std::make_shared<zstd_codec>()
    /// from tapeflow/stream/zstd_codec.hpp (opt-in, needs libzstd). Empty:
    /// tiles are spilled as they are. A prototype: each tape compresses with
    /// its own clone() (a tape without scratchpad or budget never spills and
    /// takes none), so these options (and this codec) may be shared by
    /// tapes on any threads. Its buffer counts toward the budget.
    std::shared_ptr<const tile_codec> codec;
    /// Told of every movement of tape data (stream/observer.hpp), e.g. a
    /// tapeflow::hardware_model (hw/hardware_model.hpp) that counts bytes
    /// and energy per memory level. Empty: nothing is told (no cost).
    std::shared_ptr<tape_observer> observer;
};

namespace detail {
/// Throws usage_error when tiles of `tile_bytes` (after 0 was resolved) are
/// too small to hold a record.
inline void check_tile_bytes(std::size_t tile_bytes) {
    if (tile_bytes < min_tile_bytes)
        throw usage_error("tape_options::tile_bytes = " + std::to_string(tile_bytes) + " is below the minimum of " +
                          std::to_string(min_tile_bytes));
    if (tile_bytes > max_tile_bytes)
        throw usage_error("tape_options::tile_bytes = " + std::to_string(tile_bytes) + " is above the maximum of " +
                          std::to_string(max_tile_bytes) + "; tiles of 128 KiB to a few MiB are the fast ones");
}
}  // namespace detail

}  // namespace tapeflow
