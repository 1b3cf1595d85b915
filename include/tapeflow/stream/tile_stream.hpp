// tapeflow/stream/tile_stream.hpp - where the tiles of a tape live.
//
// Tiles are numbered in recording order. Tile count() is the one being
// written ("open"); tiles before it are finished and live in memory or in
// the spill file. Two modes:
//
// direct (no scratchpad, no budget): the open tile IS a tile in memory;
//   finishing it only records its size. The sweep reads tiles in place.
//
// streaming (scratchpad or a finite memory budget):
//
//   recording                         arena (2 tiles, cache-resident)
//   records --> [ half A: open tile ]  [ half B: moving out ]
//                                          |  prefetch thread
//                 memory tiles (up to the budget) <-- non-temporal copy
//                 spill file (past the budget)    <-- write + checksum
//
//   sweep (last tile first)
//     memory tiles: read in place (or staged through the arena when the
//                   scratchpad copy is on)
//     file tiles:   the thread reads tile t-1 into one half while the sweep
//                   works on tile t in the other
//
// Before a streaming sweep the open tile is sealed (finished as it is), so
// both halves are free to stage tiles. Resident tape memory = arena + tiles
// in memory (in use or spare) never exceeds the budget.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "cache_eviction.hpp"
#include "observer.hpp"
#include "options.hpp"
#include "prefetcher.hpp"
#include "spill_file.hpp"
#include "tile.hpp"

namespace tapeflow {

/// Counters of the tile traffic of one tape.
struct stream_statistics {
    std::uint64_t tiles_written = 0;      ///< tiles finished (to memory or file)
    std::uint64_t tiles_spilled = 0;      ///< of which to the spill file
    std::uint64_t tiles_read_back = 0;    ///< tiles loaded from the spill file by sweeps
    std::uint64_t bytes_spilled = 0;      ///< bytes written to the spill file (with checksums)
    std::uint64_t bytes_read_back = 0;    ///< bytes read from it
    std::size_t peak_resident_bytes = 0;  ///< most tape memory held at once
    double sweep_wait_seconds = 0;        ///< time sweeps waited for the prefetcher
    double record_wait_seconds = 0;       ///< time recording waited for a free arena half
};

class tile_stream {
public:
    explicit tile_stream(const tape_options& options)
        : tile_bytes_(options.tile_bytes),
          streaming_(options.scratchpad ||
                     options.memory_budget_bytes != std::numeric_limits<std::size_t>::max()),
          copy_through_(options.scratchpad),
          memory_(options.tile_bytes),
          spill_(options.io ? options.io : default_spill_io(), directory(options), codec(options),
                 options.tile_bytes),
          observer_(hardware_model_hook ? options.observer : nullptr),
          prefetcher_(options.prefetch && streaming_) {
        detail::check_tile_bytes(tile_bytes_);  // basic_tape resolves tile_bytes == 0 before it gets here
        if (streaming_) {
            const std::size_t fixed = 2 * tile_bytes_ + spill_.buffer_bytes();
            if (options.memory_budget_bytes < fixed)
                throw usage_error("tape_options::memory_budget_bytes = " +
                                  std::to_string(options.memory_budget_bytes) + " is below " +
                                  std::to_string(fixed) +
                                  " bytes (two tiles of scratchpad, and the codec's buffer); raise it "
                                  "or lower tile_bytes");
            memory_.set_limit((options.memory_budget_bytes - fixed) / tile_bytes_);
        }
    }

    tile_stream(const tile_stream&) = delete;
    tile_stream& operator=(const tile_stream&) = delete;

    bool streaming() const noexcept { return streaming_; }
    /// Finished tiles; the open tile (if any) has this index.
    std::size_t count() const noexcept { return entries_.size(); }

    // ---- recording ----------------------------------------------------------

    /// Opens tile count() for writing; returns its buffer (tile_bytes long).
    std::byte* open_tile() {
        if (!streaming_) {
            open_ = memory_.push().data();
            note_resident();
            return open_;
        }
        allocate_arena();
        half_ = 1 - half_;
        stats_.record_wait_seconds += prefetcher_.wait(moving_[half_]);
        return open_ = arena_[half_]->data();
    }

    /// Finishes the open tile with `used` bytes and moves it out. Prepare,
    /// then commit: if it throws (the job that moves the tile cannot be
    /// queued, an earlier job's error is rethrown, or the observer throws),
    /// the tiles, counters and file are as they were and the tile is still
    /// open, so a retry registers it once. (The observer is told first, as
    /// the tile is handed over: after a failed close it may have counted a
    /// tile that a retry closes again.)
    void close_tile(std::size_t used) {
        const std::size_t t = entries_.size();
        if (t == entries_.capacity()) entries_.reserve(2 * t + 16);  // the commit below does not throw
        const bool to_memory = streaming_ && memory_.size() < memory_.limit();
        tell([&](tape_observer& o) {
            o.tile_finished(t, used);
            if (streaming_)
                o.tile_moved(t, used, memory_level::sram, to_memory ? memory_level::dram : memory_level::file);
        });
        entry e{false, 0, 0, used};
        prefetcher::ticket job = 0;
        if (!streaming_) {
            e.slot = memory_.size() - 1;  // the open tile is that memory tile
        } else if (to_memory) {
            std::byte* to = memory_.push().data();
            const std::byte* from = open_;
            const detail::running_place recorder;
            try {
                job = prefetcher_.submit([to, from, used, recorder] {
                    stream_copy(to, from, used);
                    moved_out(from, used, recorder);
                });
            } catch (...) {
                memory_.truncate(memory_.size() - 1);
                throw;
            }
            e.slot = memory_.size() - 1;
            note_resident();
        } else {
            const std::byte* from = open_;
            const std::uint64_t at = file_end_;
            const detail::running_place recorder;
            job = prefetcher_.submit([this, from, used, at, recorder] {
                spill_.write(from, used, at);
                moved_out(from, used, recorder);
            });
            e.in_file = true;
            e.offset = at;
            file_end_ += spill_.reserved_bytes(used);
            ++stats_.tiles_spilled;
        }
        // commit
        entries_.push_back(e);
        if (streaming_) moving_[half_] = job;
        open_ = nullptr;
        ++stats_.tiles_written;
    }

    /// Streaming mode: the open tile (with `used` bytes) is finished as it is,
    /// or dropped when empty, and every move completes. Returns whether a
    /// tile was added.
    bool seal(std::size_t used) {
        bool added = false;
        if (open_ != nullptr) {
            if (used > 0) {
                close_tile(used);
                added = true;
            } else {
                open_ = nullptr;
            }
        }
        stats_.record_wait_seconds += prefetcher_.drain();
        return added;
    }

    // ---- reverse reading ----------------------------------------------------

    /// Calls f(data, begin, end, done) for the byte ranges of tiles
    /// `from_tile` down to `to_tile`: [0 or to_offset, from_offset or used)
    /// of each tile, last tile first; `done` is the share of the tiles read
    /// so far. In direct mode the open tile (index count()) is read in
    /// place; in streaming mode the caller seals it first.
    template <class F>
    void read_reverse(std::size_t from_tile, std::size_t from_offset, std::size_t to_tile,
                      std::size_t to_offset, F&& f) {
        const reading r{from_tile, from_offset, to_tile, to_offset};
        if (!streaming_ || entries_.empty())
            read_in_place(r, f);
        else
            read_staged(r, f);
    }

    // ---- truncation ---------------------------------------------------------

    /// Makes tile `t` the open tile again, holding its first `offset` bytes;
    /// tiles after it are forgotten. Returns its buffer.
    std::byte* reopen(std::size_t t, std::size_t offset) {
        prefetcher_.drain();
        tell([&](tape_observer& o) { o.tile_reopened(t); });
        const entry e = entries_[t];
        if (!streaming_) {
            memory_.truncate(e.slot + 1);
            entries_.resize(t);
            return open_ = memory_[e.slot].data();
        }
        allocate_arena();
        half_ = 0;
        std::byte* to = arena_[0]->data();
        if (e.in_file) {
            tell([&](tape_observer& o) { o.tile_moved(t, e.used, memory_level::file, memory_level::sram); });
            prefetcher_.wait(prefetcher_.submit([this, to, e] { spill_.read(to, e.used, e.offset); }));
            file_end_ = e.offset;
        } else {
            tell([&](tape_observer& o) { o.tile_moved(t, offset, memory_level::dram, memory_level::sram); });
            std::memcpy(to, memory_[e.slot].data(), offset);
            memory_.truncate(e.slot);
        }
        // drop file tiles after t and memory tiles after t; the file is
        // written again from the end of the last file tile kept (0 when t is
        // a memory tile: file tiles all come after the memory tiles)
        std::size_t keep_memory = 0;
        std::uint64_t keep_file = 0;
        for (std::size_t i = 0; i < t; ++i) {
            if (!entries_[i].in_file)
                keep_memory = entries_[i].slot + 1;
            else
                keep_file = entries_[i].offset + spill_.reserved_bytes(entries_[i].used);
        }
        memory_.truncate(keep_memory);
        file_end_ = keep_file;
        entries_.resize(t);
        return open_ = to;
    }

    /// Direct mode (not streaming()): calls f(begin, end) with the records of
    /// tiles 0 to `tile`, of that one its first `offset` bytes (the tape's
    /// position). Not a sweep: the observer is not told (the tape zeroing the
    /// adjoints its records name, tape.hpp).
    template <class F>
    void visit_in_memory(std::size_t tile, std::size_t offset, F&& f) const {
        for (std::size_t t = 0; t <= tile; ++t) {
            const auto [data, used] = in_memory(t, offset);
            if (data) f(data, data + (t == tile ? offset : used));
        }
    }

    /// Forgets every tile (memory is kept) and any error of the prefetcher.
    void clear() {
        tell([](tape_observer& o) { o.cleared(); });
        prefetcher_.clear_error();
        entries_.clear();
        memory_.truncate(0);
        file_end_ = 0;
        open_ = nullptr;
        moving_[0] = moving_[1] = 0;
    }

    // ---- information --------------------------------------------------------

    std::size_t allocated_bytes() const noexcept {
        return (memory_.allocated() + (arena_[0] ? 2 : 0)) * tile_bytes_ +
               (arena_[0] ? spill_.buffer_bytes() : 0);
    }
    stream_statistics statistics() const {
        stream_statistics s = stats_;
        s.bytes_spilled = spill_.bytes_written();
        s.bytes_read_back = spill_.bytes_read();
        return s;
    }
    bool thread_started() const noexcept { return prefetcher_.thread_started(); }
    /// On-chip bytes of the scratchpad (two tiles), 0 in direct mode.
    std::size_t scratchpad_bytes() const noexcept { return streaming_ ? 2 * tile_bytes_ : 0; }

    /// Calls f(observer) when the tape has an observer (observer.hpp).
    template <class F>
    void tell(F&& f) {
        if constexpr (hardware_model_hook)
            if (observer_) f(*observer_);
    }

private:
    struct entry {
        bool in_file;
        std::size_t slot;       // index in memory_ when in memory
        std::uint64_t offset;   // offset in the spill file when in the file
        std::size_t used;       // record bytes in the tile
    };

    /// The tape's own codec: a clone of the options' one, which other tapes
    /// built from the same options share.
    static std::unique_ptr<tile_codec> codec(const tape_options& o) {
        if (!o.codec) return nullptr;
        std::unique_ptr<tile_codec> own = o.codec->clone();
        if (!own)
            throw usage_error(std::string("tape_options::codec: clone() of the codec ") + o.codec->name() +
                              " returned nothing; it must return a new codec with the same settings");
        return own;
    }
    static std::string directory(const tape_options& o) {
        if (!o.spill_directory.empty()) return o.spill_directory;
        const char* tmp = std::getenv("TMPDIR");
        return tmp && *tmp ? tmp : "/tmp";
    }

    // The tiles a read_reverse walks, and the byte range it reads of each.
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
        tell([&](tape_observer& o) { o.layer(t, data, begin, end, level); });
        f(data, begin, end, r.done(t));
    }

    // Tile t where it is, when every tile is in memory (direct mode, or a
    // streaming tape with no finished tile): its data and record bytes, the
    // open tile's being `open_used`; {nullptr, 0} past the last tile.
    std::pair<const std::byte*, std::size_t> in_memory(std::size_t t, std::size_t open_used) const {
        if (t < entries_.size()) return {memory_[entries_[t].slot].data(), entries_[t].used};
        if (t == entries_.size() && open_ != nullptr) return {open_, open_used};
        return {nullptr, 0};
    }

    // Direct mode (and a streaming tape with no finished tile): every tile
    // is read where it is, the open one included.
    template <class F>
    void read_in_place(const reading& r, F& f) {
        for (std::size_t t = r.from_tile + 1; t-- > r.to_tile;) {
            const auto [data, used] = in_memory(t, r.from_offset);
            if (data) deliver(r, t, data, used, memory_level::dram, f);
        }
    }

    // The one staging job in flight during a streaming sweep: it writes an
    // arena half, so it must be done before that half is read, written
    // again or freed. The destructor waits for it when the sweep is left
    // early (f threw); the job's own error, if any, is not lost there: it
    // stays pending in the prefetcher, which rethrows it at the next wait()
    // or submit() until clear().
    class staging {
    public:
        explicit staging(prefetcher& p) noexcept : prefetcher_(p) {}
        staging(const staging&) = delete;
        staging& operator=(const staging&) = delete;
        ~staging() {
            if (pending_) {
                try {
                    prefetcher_.wait(ticket_);
                } catch (...) {  // pending in the prefetcher (see above)
                }
            }
        }
        void started(prefetcher::ticket t) noexcept {
            ticket_ = t;
            pending_ = true;
        }
        /// Waits for the job; returns the seconds waited.
        double finish() {
            pending_ = false;
            return prefetcher_.wait(ticket_);
        }
        bool pending() const noexcept { return pending_; }

    private:
        prefetcher& prefetcher_;
        prefetcher::ticket ticket_ = 0;
        bool pending_ = false;
    };

    // Streaming: tiles in the file (and, with the scratchpad copy, memory
    // tiles too) are staged into the two arena halves, one tile ahead of
    // the sweep; the other memory tiles are read in place.
    template <class F>
    void read_staged(const reading& r, F& f) {
        allocate_arena();
        const std::size_t last = std::min(r.from_tile, entries_.size() - 1);
        auto staged = [&](std::size_t t) { return entries_[t].in_file || copy_through_; };
        staging job(prefetcher_);
        int half = 0;
        // starts staging the first tile below `below` that needs it into `half`
        auto stage_next = [&](std::size_t below) {
            while (below-- > r.to_tile)
                if (staged(below)) {
                    const entry e = entries_[below];
                    std::byte* to = arena_[half]->data();
                    tell([&](tape_observer& o) {
                        o.tile_moved(below, e.used, e.in_file ? memory_level::file : memory_level::dram,
                                     memory_level::sram);
                    });
                    if (e.in_file) {
                        ++stats_.tiles_read_back;
                        job.started(prefetcher_.submit([this, to, e] { spill_.read(to, e.used, e.offset); }));
                    } else {
                        const std::byte* from = memory_[e.slot].data();
                        job.started(prefetcher_.submit([to, from, e] { std::memcpy(to, from, e.used); }));
                    }
                    return;
                }
        };
        stage_next(last + 1);
        for (std::size_t t = last + 1; t-- > r.to_tile;) {
            if (staged(t)) {
                // t was staged into `half`; stage the next one into the other
                stats_.sweep_wait_seconds += job.finish();
                const std::byte* data = arena_[half]->data();
                half = 1 - half;
                stage_next(t);
                deliver(r, t, data, entries_[t].used, memory_level::sram, f);
            } else {
                deliver(r, t, memory_[entries_[t].slot].data(), entries_[t].used, memory_level::dram, f);
            }
        }
        if (job.pending()) job.finish();
    }

    // A scratchpad half has been moved out by a job: when it ran on another
    // core than the recorder's (the prefetch thread, on the other core), the
    // half's lines leave the caches, so that the recorder writing the half
    // again does not take each line back from that core
    // (stream/cache_eviction.hpp). When the job ran on the recorder's core
    // (prefetch off, the recorder took the job over, or both threads on one
    // CPU), the lines stay.
    static void moved_out(const std::byte* half, std::size_t used, const detail::running_place& recorder) noexcept {
        if (detail::running_place().other_cpu_than(recorder)) detail::evict_from_caches(half, used);
    }

    void allocate_arena() {
        if (arena_[0]) return;
        arena_[0] = std::make_unique<tile>(tile_bytes_);
        arena_[1] = std::make_unique<tile>(tile_bytes_);
        note_resident();
    }
    void note_resident() noexcept {
        stats_.peak_resident_bytes = std::max(stats_.peak_resident_bytes, allocated_bytes());
    }

    std::size_t tile_bytes_;
    bool streaming_;
    bool copy_through_;

    std::vector<entry> entries_;  // finished tiles
    tile_list memory_;            // tiles in memory (the open one too, in direct mode)
    std::unique_ptr<tile> arena_[2];
    int half_ = 1;                // arena half of the open tile
    prefetcher::ticket moving_[2] = {0, 0};  // job moving each half out
    std::byte* open_ = nullptr;
    std::uint64_t file_end_ = 0;
    spill_file spill_;
    stream_statistics stats_;
    std::shared_ptr<tape_observer> observer_;  // tape_options::observer (may be empty)
    prefetcher prefetcher_;       // last: its thread stops before the buffers go
};

}  // namespace tapeflow
