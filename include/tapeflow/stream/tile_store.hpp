// tapeflow/stream/tile_store.hpp - what the two stores of tiles share.
//
// A tape's tiles live in one of two stores (tile_stream.hpp picks one):
// direct_store.hpp (every tile in memory, the open one too) or
// streaming_store.hpp (a scratchpad, tiles in memory up to a budget, the
// spill file past it). Both keep here the table of finished tiles, the
// counters and the observer, and read tiles that are in memory where they
// are:
//
//   entries_[t]  = { in_file, slot in memory_ | offset in the file, used }
//   tile count() = the open one (open_), when a tile is open
//
// A read hands each tile's byte range to the caller through deliver(), the
// one place that tells the observer which records a sweep reads, and from
// which level.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "observer.hpp"
#include "options.hpp"
#include "tile.hpp"

namespace tapeflow {

/// Counters of the tile traffic of one tape.
struct stream_statistics {
    std::uint64_t tiles_written = 0;      ///< tiles finished (to memory or file)
    std::uint64_t tiles_spilled = 0;      ///< of which to the spill file
    std::uint64_t tiles_read_back = 0;    ///< tiles loaded from the spill file by sweeps (and reset(position))
    std::uint64_t bytes_spilled = 0;      ///< bytes written to the spill file (with checksums)
    std::uint64_t bytes_read_back = 0;    ///< bytes read from it
    std::uint64_t tiles_flushed = 0;      ///< scratchpad halves flushed from the caches after a move (cache_eviction.hpp)
    std::size_t peak_resident_bytes = 0;  ///< most tape memory held at once
    double sweep_wait_seconds = 0;        ///< time sweeps waited for the prefetcher
    double record_wait_seconds = 0;       ///< time recording waited for a free arena half
};

class tile_store {
public:
    tile_store(const tile_store&) = delete;
    tile_store& operator=(const tile_store&) = delete;

    /// Finished tiles; the open tile (if any) has this index.
    std::size_t count() const noexcept { return entries_.size(); }

    /// Calls f(begin, end) with the records of tiles 0 to `tile`, of that
    /// one its first `offset` bytes, while every tile is in memory (the
    /// direct store always). Not a sweep: the observer is not told (the tape
    /// zeroing the adjoints its records name, tape.hpp).
    template <class F>
    void visit_in_memory(std::size_t tile, std::size_t offset, F&& f) const {
        for (std::size_t t = 0; t <= tile; ++t) {
            const auto [data, used] = in_memory(t, offset);
            if (data) f(data, data + (t == tile ? offset : used));
        }
    }

    /// Whether reverse reads tell the observer of the layers they deliver:
    /// not while reset(position) reads the records it drops (not a sweep;
    /// the tile moves it causes are told).
    void tell_layers(bool on) noexcept { tell_layers_ = on; }

    /// Calls f(observer) when the tape has an observer (observer.hpp).
    template <class F>
    void tell(F&& f) {
        if constexpr (hardware_model_hook)
            if (observer_) f(*observer_);
    }

protected:
    explicit tile_store(const tape_options& options)
        : tile_bytes_(options.tile_bytes),
          memory_(options.tile_bytes),
          observer_(hardware_model_hook ? options.observer : nullptr) {
        detail::check_tile_bytes(tile_bytes_);  // basic_tape resolves tile_bytes == 0 before it gets here
    }
    ~tile_store() = default;

    struct entry {
        bool in_file;
        std::size_t slot;       // index in memory_ when in memory
        std::uint64_t offset;   // offset in the spill file when in the file
        std::size_t used;       // record bytes in the tile
    };

    // The tiles a reverse read walks, and the byte range it reads of each.
    struct reading {
        std::size_t from_tile, from_offset, to_tile, to_offset;
        std::pair<std::size_t, std::size_t> range(std::size_t t, std::size_t used) const {
            return {t == to_tile ? to_offset : 0, t == from_tile ? from_offset : used};
        }
        double done(std::size_t t) const { return double(from_tile + 1 - t) / double(from_tile + 1 - to_tile); }
    };

    // Hands tile t's range to f; the observer learns of it here, and only here.
    template <class F>
    void deliver(const reading& r, std::size_t t, const std::byte* data, std::size_t used, memory_level level,
                 F& f) {
        const std::pair<std::size_t, std::size_t> range = r.range(t, used);
        const std::size_t begin = range.first, end = range.second;  // lambdas cannot capture bindings in C++17
        if (tell_layers_) tell([&](tape_observer& o) { o.layer(t, data, begin, end, level); });
        f(data, begin, end, r.done(t), t);
    }

    // Tile t where it is, when every tile is in memory: its data and record
    // bytes, the open tile's being `open_used`; {nullptr, 0} past the last tile.
    std::pair<const std::byte*, std::size_t> in_memory(std::size_t t, std::size_t open_used) const {
        if (t < entries_.size()) return {memory_[entries_[t].slot].data(), entries_[t].used};
        if (t == entries_.size() && open_ != nullptr) return {open_, open_used};
        return {nullptr, 0};
    }

    // Every tile read where it is, the open one included (the direct store,
    // and a streaming one with no finished tile).
    template <class F>
    void read_in_place(const reading& r, F& f) {
        for (std::size_t t = r.from_tile + 1; t-- > r.to_tile;) {
            const auto [data, used] = in_memory(t, r.from_offset);
            if (data) deliver(r, t, data, used, memory_level::dram, f);
        }
    }

    // The open tile (with `used` bytes) finished as it is by store.close_tile,
    // or dropped when empty; whether a tile was added (seal() of both stores).
    template <class Store>
    static bool finish_open(Store& store, std::size_t used) {
        if (store.open_ == nullptr) return false;
        if (used == 0) {
            store.open_ = nullptr;
            return false;
        }
        store.close_tile(used);
        return true;
    }

    // Forgets every tile; the memory of the tiles is kept (clear() of both).
    void forget_tiles() {
        tell([](tape_observer& o) { o.cleared(); });
        entries_.clear();
        memory_.truncate(0);
        open_ = nullptr;
    }

    // Makes room for one more entry, so that pushing it cannot throw (a
    // store prepares a tile's move, then commits it).
    void reserve_entry() {
        const std::size_t t = entries_.size();
        if (t == entries_.capacity()) entries_.reserve(2 * t + 16);
    }

    void note_resident(std::size_t allocated_bytes) noexcept {
        stats_.peak_resident_bytes = std::max(stats_.peak_resident_bytes, allocated_bytes);
    }

    std::size_t tile_bytes_;
    std::vector<entry> entries_;  // finished tiles
    tile_list memory_;            // tiles in memory
    std::byte* open_ = nullptr;   // the open tile's buffer (nullptr: none open)
    stream_statistics stats_;
    std::shared_ptr<tape_observer> observer_;  // tape_options::observer (may be empty)
    bool tell_layers_ = true;                  // see tell_layers()
};

}  // namespace tapeflow
