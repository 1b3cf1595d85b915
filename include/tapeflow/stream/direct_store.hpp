// tapeflow/stream/direct_store.hpp - the tiles of a tape held in memory.
//
// A tape without scratchpad and without memory budget (the default) keeps
// every tile in memory: the open tile IS the next tile of memory_, finishing
// it only records its size, and the sweep reads every tile in place.
//
//   memory_:  [ tile 0 ][ tile 1 ] ... [ tile count() (open) ]
//                 ^ entries_[t].slot == t
#pragma once

#include <cstddef>

#include "tile_store.hpp"

namespace tapeflow {

class direct_store : public tile_store {
public:
    explicit direct_store(const tape_options& options) : tile_store(options) {}

    /// Opens tile count() for writing; returns its buffer (tile_bytes long).
    std::byte* open_tile() {
        open_ = memory_.push().data();
        note_resident(allocated_bytes());
        return open_;
    }

    /// Finishes the open tile with `used` bytes. If the observer throws,
    /// nothing changed and the tile is still open.
    void close_tile(std::size_t used) {
        const std::size_t t = entries_.size();
        reserve_entry();
        tell([&](tape_observer& o) { o.tile_finished(t, used); });
        entries_.push_back(entry{false, memory_.size() - 1, 0, used});
        open_ = nullptr;
        ++stats_.tiles_written;
    }

    /// The open tile (with `used` bytes) is finished as it is, or dropped
    /// when empty. Returns whether a tile was added.
    bool seal(std::size_t used) { return finish_open(*this, used); }

    /// See tile_stream::read_reverse: every tile is read in place, the open
    /// one (index count()) included.
    template <class F>
    void read_reverse(std::size_t from_tile, std::size_t from_offset, std::size_t to_tile,
                      std::size_t to_offset, F& f) {
        read_in_place(reading{from_tile, from_offset, to_tile, to_offset}, f);
    }

    /// Makes tile `t` the open tile again; tiles after it are forgotten.
    std::byte* reopen(std::size_t t, std::size_t /* offset: the tile is written in place */) {
        tell([&](tape_observer& o) { o.tile_reopened(t); });
        const entry e = entries_[t];
        memory_.truncate(e.slot + 1);
        entries_.resize(t);
        return open_ = memory_[e.slot].data();
    }

    /// Forgets every tile (memory is kept).
    void clear() { forget_tiles(); }

    std::size_t allocated_bytes() const noexcept { return memory_.allocated() * tile_bytes_; }
    stream_statistics statistics() const { return stats_; }
};

}  // namespace tapeflow
