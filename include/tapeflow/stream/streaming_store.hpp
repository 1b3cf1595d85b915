// tapeflow/stream/streaming_store.hpp - the tiles of a tape with a
// scratchpad or a memory budget.
//
//   recording                         arena (2 tiles, cache-resident)
//   records --> [ half A: open tile ]  [ half B: moving out ]
//                                          |  prefetch thread
//                 memory tiles (up to the budget) <-- non-temporal copy
//                 spill file (past the budget)    <-- write (checksum: recorder)
//
//   sweep (last tile first)
//     memory tiles: read in place (or staged through the arena when the
//                   scratchpad copy is on)
//     file tiles:   the thread reads tile t-1 into one half while the sweep
//                   works on tile t in the other; the sweep, done with t,
//                   reads the parts of t-1 still left, then checks t-1
//
// Before a sweep the open tile is sealed (finished as it is), so both halves
// are free to stage tiles. Resident tape memory = arena + tiles in memory
// (in use or spare) never exceeds the budget.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "../error.hpp"
#include "cache_eviction.hpp"
#include "prefetcher.hpp"
#include "spill_file.hpp"
#include "tile_store.hpp"

namespace tapeflow {

class streaming_store : public tile_store {
public:
    /// A sweep reads a spilled tile in parts of this many bytes, which the
    /// prefetch thread and the sweeping thread share (without a codec, and
    /// where the spill_io allows it: spill_io::concurrent_reads()).
    static constexpr std::size_t read_part_bytes = std::size_t(256) << 10;

    explicit streaming_store(const tape_options& options)
        : tile_store(options),
          copy_through_(options.scratchpad),
          spill_(options.io ? options.io : default_spill_io(), directory(options), codec(options),
                 options.tile_bytes),
          reads_in_parts_(spill_.reads_in_parts() && (!options.io || options.io->concurrent_reads())),
          prefetcher_(options.prefetch) {
        const std::size_t fixed = 2 * tile_bytes_ + spill_.buffer_bytes();
        if (options.memory_budget_bytes < fixed)
            throw usage_error("tape_options::memory_budget_bytes = " + std::to_string(options.memory_budget_bytes) +
                              " is below " + std::to_string(fixed) +
                              " bytes (two tiles of scratchpad, and the codec's buffer); raise it "
                              "or lower tile_bytes");
        memory_.set_limit((options.memory_budget_bytes - fixed) / tile_bytes_);
    }

    /// Opens tile count() in the arena half that is free (waiting for the
    /// job moving it out, if any); returns its buffer.
    std::byte* open_tile() {
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
        reserve_entry();  // the commit below does not throw
        const bool to_memory = memory_.size() < memory_.limit();
        tell([&](tape_observer& o) {
            o.tile_finished(t, used);
            o.tile_moved(t, used, memory_level::sram, to_memory ? memory_level::dram : memory_level::file);
        });
        entry e{false, 0, 0, used};
        prefetcher::ticket job = 0;
        if (to_memory) {
            std::byte* to = memory_.push().data();
            const std::byte* from = open_;
            const detail::running_place recorder;
            try {
                job = prefetcher_.submit([this, to, from, used, recorder] {
                    stream_copy(to, from, used);
                    moved_out(from, used, recorder);
                });
            } catch (...) {
                memory_.truncate(memory_.size() - 1);
                throw;
            }
            e.slot = memory_.size() - 1;
            note_resident(allocated_bytes());
        } else {
            const std::byte* from = open_;
            const std::uint64_t at = file_end_;
            const detail::running_place recorder;
            // the checksum here, where the tile was just written: the
            // thread spends its time on the write (docs/streaming.md)
            const std::uint32_t checksum = tile_checksum(from, used);
            job = prefetcher_.submit([this, from, used, at, checksum, recorder] {
                spill_.write(from, used, at, checksum);
                moved_out(from, used, recorder);
            });
            e.in_file = true;
            e.offset = at;
            file_end_ += spill_.reserved_bytes(used);
            ++stats_.tiles_spilled;
        }
        // commit
        entries_.push_back(e);
        moving_[half_] = job;
        open_ = nullptr;
        ++stats_.tiles_written;
    }

    /// The open tile (with `used` bytes) is finished as it is, or dropped
    /// when empty, and every move completes. Returns whether a tile was added.
    bool seal(std::size_t used) {
        const bool added = finish_open(*this, used);
        stats_.record_wait_seconds += prefetcher_.drain();
        return added;
    }

    /// See tile_stream::read_reverse (the caller seals the open tile first).
    template <class F>
    void read_reverse(std::size_t from_tile, std::size_t from_offset, std::size_t to_tile,
                      std::size_t to_offset, F& f) {
        const reading r{from_tile, from_offset, to_tile, to_offset};
        if (entries_.empty())
            read_in_place(r, f);
        else
            read_staged(r, f);
    }

    /// Makes tile `t` the open tile again, holding its first `offset` bytes,
    /// in arena half 0; tiles after it are forgotten. Returns its buffer.
    std::byte* reopen(std::size_t t, std::size_t offset) {
        prefetcher_.drain();
        tell([&](tape_observer& o) { o.tile_reopened(t); });
        const entry e = entries_[t];
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

    /// Forgets every tile (memory is kept) and any error of the prefetcher.
    void clear() {
        forget_tiles();
        prefetcher_.clear_error();
        file_end_ = 0;
        moving_[0] = moving_[1] = 0;
    }

    std::size_t allocated_bytes() const noexcept {
        return (memory_.allocated() + (arena_[0] ? 2 : 0)) * tile_bytes_ + (arena_[0] ? spill_.buffer_bytes() : 0);
    }
    stream_statistics statistics() const {
        stream_statistics s = stats_;
        s.bytes_spilled = spill_.bytes_written();
        s.bytes_read_back = spill_.bytes_read();
        s.tiles_flushed = eviction_.flushed();
        return s;
    }
    bool thread_started() const noexcept { return prefetcher_.thread_started(); }
    /// On-chip bytes of the scratchpad (two tiles).
    std::size_t scratchpad_bytes() const noexcept { return 2 * tile_bytes_; }

private:
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

    // The one staging job in flight during a sweep: it writes an arena half,
    // so it must be done before that half is read, written again or freed.
    // The destructor waits for it when the sweep is left early (f threw);
    // the job's own error, if any, is not lost there: it stays pending in the
    // prefetcher, which rethrows it at the next wait() or submit() until
    // clear().
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

    // Tiles in the file (and, with the scratchpad copy, memory tiles too) are
    // staged into the two arena halves, one tile ahead of the sweep; the
    // other memory tiles are read in place.
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
                        part_read& read = reads_[half];
                        read.to = to;
                        read.tile = e;
                        read.parts = reads_in_parts_ ? (e.used + part_bytes - 1) / part_bytes : 0;
                        read.next.store(0, std::memory_order_relaxed);
                        job.started(prefetcher_.submit([this, &read] {
                            if (read.parts == 0) {
                                read.expected = spill_.read_unverified(read.to, read.tile.used, read.tile.offset);
                                return;
                            }
                            read.expected = spill_.read_checksum(read.tile.used, read.tile.offset);
                            read_parts(read);
                        }));
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
                if (entries_[t].in_file) help_read(reads_[half]);
                stats_.sweep_wait_seconds += job.finish();
                const std::byte* data = arena_[half]->data();
                const std::uint32_t expected = reads_[half].expected;
                half = 1 - half;
                stage_next(t);  // the thread reads on while this thread checks t
                if (entries_[t].in_file) verify_staged(entries_[t], data, expected);
                deliver(r, t, data, entries_[t].used, memory_level::sram, f);
            } else {
                deliver(r, t, memory_[entries_[t].slot].data(), entries_[t].used, memory_level::dram, f);
            }
        }
        if (job.pending()) job.finish();
    }

    // A file tile staged into an arena half in parts of part_bytes, which
    // the prefetch thread and the sweeping thread take in turn: the thread
    // starts on it while the sweep works on the tile before, and the sweep,
    // once done there, reads the parts still left instead of waiting (on
    // heat with a 256 MiB budget the reads took longer than the sweep).
    // The sweeping thread then verifies the whole tile (verify_staged).
    //
    //   half:  | part 0 | part 1 | part 2 | part 3 | ... |
    //            thread   thread   sweep    thread   (as each is free)
    static constexpr std::size_t part_bytes = read_part_bytes;
    struct part_read {
        std::byte* to = nullptr;
        entry tile{};
        std::size_t parts = 0;             // 0: one read by the job (a codec)
        std::atomic<std::size_t> next{0};  // the next part to take
        std::uint32_t expected = 0;        // the tile's checksum (written by the job)
    };

    // Reads parts of `read` until none is left (on either thread); after a
    // failed read, the other thread takes no further part.
    void read_parts(part_read& read) {
        for (std::size_t p; (p = read.next.fetch_add(1, std::memory_order_relaxed)) < read.parts;) {
            const std::size_t from = p * part_bytes;
            const std::size_t bytes = std::min(part_bytes, read.tile.used - from);
            try {
                spill_.read_part(read.to + from, bytes, read.tile.offset + from);
            } catch (...) {
                read.next.store(read.parts, std::memory_order_relaxed);
                throw;
            }
        }
    }
    // The sweeping thread's share of `read`; an error stays the prefetcher's
    // (verify_staged says why).
    void help_read(part_read& read) {
        try {
            read_parts(read);
        } catch (...) {
            prefetcher_.fail(std::current_exception());
            throw;
        }
    }

    // Checks a file tile staged into `data` against the checksum its read
    // returned; a damaged one stays an error of the prefetcher, as when the
    // job found it, so that nothing sweeps this recording before reset().
    void verify_staged(const entry& e, const std::byte* data, std::uint32_t expected) {
        try {
            spill_.verify(data, e.used, e.offset, expected);
        } catch (...) {
            prefetcher_.fail(std::current_exception());
            throw;
        }
    }

    // A scratchpad half has been moved out by a job: when it ran on another
    // core than the recorder's (the prefetch thread, on the other core), the
    // half's lines leave the caches, so that the recorder writing the half
    // again does not take each line back from that core, unless the tape,
    // or the process's verdict, has found flushing too slow on this machine
    // (eviction_policy, stream/cache_eviction.hpp). When the job ran on the
    // recorder's core (prefetch off, the recorder took the job over, or both
    // threads on one CPU), the lines stay.
    void moved_out(const std::byte* half, std::size_t used, const detail::running_place& recorder) noexcept {
        if (detail::running_place().other_cpu_than(recorder)) eviction_.evict(half, used);
    }

    void allocate_arena() {
        if (arena_[0]) return;
        arena_[0] = std::make_unique<tile>(tile_bytes_);
        arena_[1] = std::make_unique<tile>(tile_bytes_);
        note_resident(allocated_bytes());
    }

    bool copy_through_;
    std::unique_ptr<tile> arena_[2];
    int half_ = 1;                           // arena half of the open tile
    prefetcher::ticket moving_[2] = {0, 0};  // job moving each half out
    part_read reads_[2];                     // the file tile staged in each half (sweep)
    std::uint64_t file_end_ = 0;
    detail::eviction_policy eviction_;  // used by the jobs (on the prefetch thread)
    spill_file spill_;
    const bool reads_in_parts_;  // spilled tiles are read in parts, by both threads
    prefetcher prefetcher_;      // last: its thread stops before the buffers go
};

}  // namespace tapeflow
