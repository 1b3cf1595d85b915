// tapeflow/stream/tile_stream.hpp - where the tiles of a tape live.
//
// Tiles are numbered in recording order. Tile count() is the one being
// written ("open"); tiles before it are finished and live in memory or in
// the spill file. The tape's options choose one of two stores, and this
// class hands each call to it:
//
//   direct_store.hpp     no scratchpad, no budget: every tile in memory, the
//                        open one too; the sweep reads tiles in place
//   streaming_store.hpp  a scratchpad or a finite memory budget: a
//                        double-buffered arena, tiles in memory up to the
//                        budget, the spill file past it, the prefetch thread
//
// What both share (the table of finished tiles, counters, the observer):
// tile_store.hpp.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>

#include "direct_store.hpp"
#include "streaming_store.hpp"

namespace tapeflow {

class tile_stream {
    // (first: the members below deduce their return types from these)
    std::optional<direct_store> direct_;        // the one of the two that the options chose
    std::optional<streaming_store> streaming_;

    // Calls f with the store the options chose; returns what f returns.
    template <class F>
    decltype(auto) with_store(F&& f) {
        if (direct_) return f(*direct_);
        return f(*streaming_);
    }
    template <class F>
    decltype(auto) with_store(F&& f) const {
        if (direct_) return f(*direct_);
        return f(*streaming_);
    }

public:
    explicit tile_stream(const tape_options& options) {
        if (options.scratchpad || options.memory_budget_bytes != std::numeric_limits<std::size_t>::max())
            streaming_.emplace(options);
        else
            direct_.emplace(options);
    }

    tile_stream(const tile_stream&) = delete;
    tile_stream& operator=(const tile_stream&) = delete;

    bool streaming() const noexcept { return streaming_.has_value(); }
    /// Finished tiles; the open tile (if any) has this index.
    std::size_t count() const noexcept { return with_store([](const auto& s) { return s.count(); }); }

    // ---- recording ----------------------------------------------------------

    /// Opens tile count() for writing; returns its buffer (tile_bytes long).
    std::byte* open_tile() {
        return with_store([](auto& s) { return s.open_tile(); });
    }

    /// Finishes the open tile with `used` bytes and moves it out. If it
    /// throws, the tiles, counters and file are as they were and the tile is
    /// still open, so a retry registers it once.
    void close_tile(std::size_t used) {
        with_store([used](auto& s) { s.close_tile(used); });
    }

    /// The open tile (with `used` bytes) is finished as it is, or dropped
    /// when empty, and every move completes. Returns whether a tile was added.
    bool seal(std::size_t used) {
        return with_store([used](auto& s) { return s.seal(used); });
    }

    // ---- reverse reading ----------------------------------------------------

    /// Calls f(data, begin, end, done, tile) for the byte ranges of tiles
    /// `from_tile` down to `to_tile`: [0 or to_offset, from_offset or used)
    /// of each tile, last tile first; `done` is the share of the tiles read
    /// so far, `tile` the index of the tile. In direct mode the open tile (index count()) is read in
    /// place; in streaming mode the caller seals it first.
    template <class F>
    void read_reverse(std::size_t from_tile, std::size_t from_offset, std::size_t to_tile,
                      std::size_t to_offset, F&& f) {
        with_store([&](auto& s) { s.read_reverse(from_tile, from_offset, to_tile, to_offset, f); });
    }

    /// read_reverse for a reader that is not a sweep (reset(position)
    /// reading the records it drops): the observer is not told of layers.
    template <class F>
    void walk_reverse(std::size_t from_tile, std::size_t from_offset, std::size_t to_tile,
                      std::size_t to_offset, F&& f) {
        with_store([&](auto& s) {
            struct quiet {  // layers told again however the read ends
                decltype(s)& store;
                ~quiet() { store.tell_layers(true); }
            } scope{s};
            s.tell_layers(false);
            s.read_reverse(from_tile, from_offset, to_tile, to_offset, f);
        });
    }

    // ---- truncation ---------------------------------------------------------

    /// Makes tile `t` the open tile again, holding its first `offset` bytes;
    /// tiles after it are forgotten. Returns its buffer.
    std::byte* reopen(std::size_t t, std::size_t offset) {
        return with_store([&](auto& s) { return s.reopen(t, offset); });
    }

    /// Calls f(begin, end) with the records of tiles 0 to `tile`, of that one
    /// its first `offset` bytes, while every tile is in memory (direct mode).
    /// Not a sweep: the observer is not told.
    template <class F>
    void visit_in_memory(std::size_t tile, std::size_t offset, F&& f) const {
        with_store([&](const auto& s) { s.visit_in_memory(tile, offset, f); });
    }

    /// Forgets every tile (memory is kept) and any error of the prefetcher.
    void clear() {
        with_store([](auto& s) { s.clear(); });
    }

    // ---- information --------------------------------------------------------

    std::size_t allocated_bytes() const noexcept {
        return with_store([](const auto& s) { return s.allocated_bytes(); });
    }
    stream_statistics statistics() const {
        return with_store([](const auto& s) { return s.statistics(); });
    }
    bool thread_started() const noexcept { return streaming_ && streaming_->thread_started(); }
    /// On-chip bytes of the scratchpad (two tiles), 0 in direct mode.
    std::size_t scratchpad_bytes() const noexcept { return streaming_ ? streaming_->scratchpad_bytes() : 0; }

    /// Calls f(observer) when the tape has an observer (observer.hpp).
    template <class F>
    void tell(F&& f) {
        with_store([&](auto& s) { s.tell(f); });
    }
};

}  // namespace tapeflow
