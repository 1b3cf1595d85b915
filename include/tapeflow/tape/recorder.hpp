// tapeflow/tape/recorder.hpp - writes statement records into tiles, and
// hands out the identifiers their left-hand sides take.
//
// The hot path of the library: every assignment of a basic_real while its
// tape records ends in record(), every `+=` and `-=` of an active one in
// record_update(); both write(), which pushes the expression's operands
// into slots (detail::arg_buffer, below), writes the pairs and the header
// at the cursor (tape/record.hpp) and steps the cursor on:
//
//   tile (tile_begin_)                            cursor_          tile_end_
//   +--------+--------+-------+---- ... ----------+----- free -------+
//   | record | record | record|                   |                  |
//   +--------+--------+-------+---- ... ----------+------------------+
//
// A record never straddles two tiles: when the largest record the statement
// can make does not fit, the tile is closed and the next one opened from the
// tile_stream (stream/tile_stream.hpp), which keeps it in memory or moves it
// to the spill file. Everything here but next_tile() is inlined into the
// assignment; the state it touches sits in this one object, next to the
// identifier pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "../config.hpp"
#include "../error.hpp"
#include "../stream/options.hpp"
#include "../stream/tile_stream.hpp"
#include "active_tape.hpp"
#include "identifier_pool.hpp"
#include "position.hpp"
#include "record.hpp"
#include "tape_registry.hpp"

namespace tapeflow {

namespace detail {
/// Calls options.progress (which must be set) with where the tape stands.
inline void report_progress(const tape_options& options, const tile_stream& stream, std::uint64_t statements,
                            tape_progress::phase stage, double done) {
    tape_progress p;
    p.stage = stage;
    p.statements = statements;
    const auto st = stream.statistics();
    p.tiles = std::size_t(st.tiles_written);
    p.tiles_spilled = std::size_t(st.tiles_spilled);
    p.sweep_fraction = done;
    options.progress(p);
}

/// Where a statement's (identifier, partial) pairs are collected, on the
/// stack: one slot per active leaf of the expression, in tree order, passive
/// leaves (identifier 0) included so that every slot index is a constant.
/// The sink an expression's push() walks into (expr/expression.hpp): the
/// tape defines it, so that the tape needs nothing from expr/.
template <class S, std::size_t N>
struct arg_buffer {
    TAPEFLOW_ALWAYS_INLINE arg_buffer() noexcept {}  // inlined also for Dual partials (their constructor)
    S partials[N];
    identifier ids[N];
    std::uint32_t size = 0;
    std::uint32_t foreign_tag = 0;  // a tag that is not the recording tape's (debug checks)
    std::uint32_t expected_tag = 0;
    const identifier_pool* pool = nullptr;  // the recording tape's (debug checks)
    identifier gone = 0;                     // a leaf whose identifier went to another variable (debug checks)

    TAPEFLOW_ALWAYS_INLINE void add(identifier id, S partial) noexcept {
        ids[size] = id;
        partials[size] = partial;
        ++size;
    }
    void check_tag(std::uint32_t tag) noexcept {
        if (tag != expected_tag) foreign_tag = tag;
    }
    void check_generation(identifier id, std::uint32_t generation) noexcept {
        if (generation != no_generation && pool && pool->generation(id) != generation) gone = id;
    }
};
}  // namespace detail

template <class Scalar>
class basic_recorder {
public:
    using layout = record_layout<Scalar>;

    /// Records into tiles of `stream`, of options.tile_bytes each, for the
    /// tape with serial `serial`. `stream` and `options` must outlive it.
    basic_recorder(std::uint32_t serial, tile_stream& stream, const tape_options& options)
        : serial_(serial), stream_(stream), options_(options) {}
    basic_recorder(const basic_recorder&) = delete;
    basic_recorder& operator=(const basic_recorder&) = delete;

    /// Records `lhs = e` (`lhs = -e` when Negate): one record with the
    /// distinct active operands of `e`; `lhs` and `tag` are the variable's
    /// identifier and tape serial.
    template <bool Negate = false, class E>
    TAPEFLOW_ALWAYS_INLINE void record(identifier& lhs, std::uint32_t& tag, const E& e) {
        write<false, Negate>(lhs, tag, e);
    }

    /// Records `lhs += e` (`lhs -= e` when Subtract) for a variable `lhs`
    /// of this tape (active, its tag this serial): an update record of the
    /// active operands of `e` alone (tape/record.hpp), their partials
    /// negated for Subtract. `lhs` keeps its identifier; nothing is recorded
    /// when `e` has no active operand.
    template <bool Subtract, class E>
    TAPEFLOW_ALWAYS_INLINE void record_update(identifier lhs, const E& e) {
        std::uint32_t tag = serial_;
        write<true, Subtract>(lhs, tag, e);
    }

    /// Makes sure the open tile has `bytes` free (opens the next one if not).
    TAPEFLOW_ALWAYS_INLINE void make_room(std::size_t bytes) {
        if (TAPEFLOW_UNLIKELY(std::size_t(tile_end_ - cursor_) < bytes)) next_tile(bytes);
    }
    /// Appends an external record for entry `index` (tape/external.hpp).
    /// Call make_room(layout::external_size) first; then this cannot fail.
    void record_external(std::uint32_t index) noexcept {
        constexpr std::size_t bytes = layout::external_size;
        layout::write_external(cursor_, index);
        cursor_ += bytes;
        ++statements_;
    }

    /// Gives identifier `id` back to the tape whose serial is `tag` (this
    /// one, or another tape of the calling thread); sets it to 0.
    TAPEFLOW_ALWAYS_INLINE void release(identifier& id, std::uint32_t tag) noexcept {
        if (id != 0) {
            if (TAPEFLOW_LIKELY(tag == serial_))
                ids_.release(id);
            else
                release_to_owner(id, tag);
        }
        id = 0;
    }

    /// The same when no tape is at hand (a variable dies while its thread
    /// has no active tape).
    static void release_to_owner(identifier id, std::uint32_t tag) noexcept {
        // A variable of tape A that dies (or is assigned) while tape B is
        // active: without this, A never got the identifier back, and a loop
        // doing that exhausted A's identifiers. Only the calling thread's
        // tapes are searched: a tape's pool is its owner thread's alone. A
        // tape of another thread, or one that no longer exists, keeps
        // nothing to give back to.
        if (identifier_pool* pool = detail::thread_identifier_pools::find(tag)) {
            pool->release(id);
            return;
        }
        // not a tape of this thread: tell its tape (tape_registry.hpp)
        detail::tape_registry::instance().mark_foreign_write(tag);
    }

    /// release() for the `count` consecutive identifiers of a range
    /// (identifier_pool::acquire_range) from `first`.
    void release_range(identifier first, std::size_t count, std::uint32_t tag) noexcept {
        if (tag == serial_)
            ids_.release_range(first, count);
        else
            release_range_to_owner(first, count, tag);
    }
    /// The same when no tape is at hand (as release_to_owner).
    static void release_range_to_owner(identifier first, std::size_t count, std::uint32_t tag) noexcept {
        if (first == 0) return;
        if (identifier_pool* pool = detail::thread_identifier_pools::find(tag))
            pool->release_range(first, count);
        else
            detail::tape_registry::instance().mark_foreign_write(tag);
    }

    identifier_pool& identifiers() noexcept { return ids_; }
    const identifier_pool& identifiers() const noexcept { return ids_; }
    std::uint32_t serial() const noexcept { return serial_; }

    /// Statements recorded (external entries included).
    std::uint64_t statements() const noexcept { return statements_; }
    /// Whether a tile is open for writing.
    bool has_open_tile() const noexcept { return cursor_ != nullptr; }

    /// Fills in where the next record goes: tile, offset, statements,
    /// long_records and bytes of `p`.
    void locate(position& p) const noexcept {
        p.tile = stream_.count();  // the open tile, or the next one when none is open
        p.offset = cursor_ != nullptr ? std::size_t(cursor_ - tile_begin_) : 0;
        p.statements = statements_;
        p.long_records = long_records_;
        p.bytes = bytes_before_tile_ + p.offset;
    }

    /// Finishes the open tile as it is (streaming sweeps need both halves).
    void seal() {
        const std::size_t used = cursor_ ? std::size_t(cursor_ - tile_begin_) : 0;
        if (stream_.seal(used)) bytes_before_tile_ += used;
        cursor_ = tile_end_ = tile_begin_ = nullptr;
    }

    /// Drops the records after `to` (a valid position of this recording).
    void truncate(const position& to) {
        if (to.tile < stream_.count()) {  // the position is in a finished tile: reopen it
            tile_begin_ = stream_.reopen(to.tile, to.offset);
            tile_end_ = tile_begin_ + options_.tile_bytes;
            cursor_ = tile_begin_ + to.offset;
        } else if (cursor_ != nullptr) {
            cursor_ = tile_begin_ + to.offset;
        }
        statements_ = to.statements;
        long_records_ = to.long_records;
        bytes_before_tile_ = to.bytes - to.offset;
    }

    /// Drops every record (the stream keeps its memory); the free
    /// identifiers may now be inputs' and outputs' (identifier_pool.hpp).
    void clear() {
        stream_.clear();
        cursor_ = tile_end_ = tile_begin_ = nullptr;
        statements_ = 0;
        long_records_ = 0;
        bytes_before_tile_ = 0;
        ids_.tape_emptied();
    }

private:
    // The record of `e` (its partials negated when Negate): an assignment
    // to lhs, which then holds an identifier of this tape, or an update of
    // lhs, which has one (Update). It pushes the expression's operands into
    // slots, writes the pairs and the header at the cursor and steps the
    // cursor on; nothing when no operand is active (an assignment's lhs is
    // released then).
    template <bool Update, bool Negate, class E>
    TAPEFLOW_ALWAYS_INLINE void write(identifier& lhs, std::uint32_t& tag, const E& e) {
        constexpr std::size_t n = E::leaf_count;
        if constexpr (n == 0) {
            if constexpr (!Update) release(lhs, tag);
        } else {
            detail::arg_buffer<Scalar, n> args;
            if constexpr (debug_checks) {
                args.expected_tag = serial_;
                args.pool = &ids_;
            }
            e.push(args, Negate ? Scalar(-1) : Scalar(1));
            if constexpr (debug_checks) {
                if (args.foreign_tag != 0) throw_foreign();
                if (args.gone != 0) throw_gone();
            }
            make_room(layout::size(n));  // the most the record can take
            std::byte* const at = cursor_;
            if (TAPEFLOW_LIKELY(layout::template distinct_and_active<n>(args.ids))) {
                // Fast path: every slot becomes a pair, k = n is a constant.
#pragma GCC unroll 16
                for (std::size_t i = 0; i < n; ++i) layout::write_pair(at, i, args.partials[i], args.ids[i]);
                finish_record<Update, n>(lhs, tag, at, std::uint32_t(n));
                return;
            }
            const std::uint32_t k = layout::template merge_pairs<n>(at, args.ids, args.partials);
            if (TAPEFLOW_UNLIKELY(k == 0)) {  // every operand was passive
                if constexpr (!Update) release(lhs, tag);
                return;
            }
            finish_record<Update, n>(lhs, tag, at, k);
        }
    }

    template <bool Update, std::size_t N>
    TAPEFLOW_ALWAYS_INLINE void finish_record(identifier& lhs, std::uint32_t& tag, std::byte* at,
                                              std::uint32_t k) {
        if constexpr (!Update) {
            if (lhs == 0 || tag != serial_) {
                if (TAPEFLOW_UNLIKELY(lhs != 0)) release_to_owner(lhs, tag);  // another tape's variable
                lhs = ids_.acquire();
                tag = serial_;
            }
        }
        layout::write_header(at, lhs, k, Update);
        detail::prefetch_tape<true>(at, std::ptrdiff_t(tape_prefetch_bytes));  // config.hpp says why
        cursor_ = at + layout::size(k);
        ++statements_;
        if constexpr (N >= layout::long_count) long_records_ += k >= layout::long_count;
    }

    TAPEFLOW_COLD void next_tile(std::size_t bytes) {
        if (bytes > options_.tile_bytes) {
            const bool budget = options_.memory_budget_bytes != std::numeric_limits<std::size_t>::max();
            throw usage_error("a statement needs " + std::to_string(bytes) + " bytes but a tile holds " +
                              std::to_string(options_.tile_bytes) + "; raise tape_options::tile_bytes" +
                              (budget ? " (left at 0 with a memory budget, a tile is an eighth of "
                                        "memory_budget_bytes: raise the budget, or set tile_bytes to at least " +
                                            std::to_string(bytes) + ")"
                                      : std::string()));
        }
        if (cursor_ != nullptr) {  // finish the tile being written
            const std::size_t used = std::size_t(cursor_ - tile_begin_);
            stream_.close_tile(used);
            bytes_before_tile_ += used;
            // no tile is open until open_tile() returns: if the callback or
            // open_tile() throws, the next record opens a tile (never closes
            // this one twice)
            cursor_ = tile_end_ = tile_begin_ = nullptr;
            if (options_.progress)
                detail::report_progress(options_, stream_, statements_, tape_progress::phase::recording, 0.0);
        }
        tile_begin_ = stream_.open_tile();
        cursor_ = tile_begin_;
        tile_end_ = tile_begin_ + options_.tile_bytes;
    }

    [[noreturn]] TAPEFLOW_COLD void throw_gone() const {
        throw usage_error("an expression uses a variable that died, and whose identifier went to another "
                          "variable, before the statement using it was recorded (the gradient would be "
                          "wrong): a function that returns an expression built on a Real of its own? "
                          "Return a Real from it (docs/expressions.md, Pitfalls)");
    }
    [[noreturn]] TAPEFLOW_COLD void throw_foreign() const {
        throw usage_error("an expression mixes variables of two tapes (or uses a variable of a "
                          "tape that no longer exists); every operand must come from the tape "
                          "that is recording");
    }

    std::byte* cursor_ = nullptr;      // where the next record goes (nullptr: no tile yet)
    std::byte* tile_end_ = nullptr;    // end of the tile being written
    std::byte* tile_begin_ = nullptr;  // start of the tile being written
    std::uint64_t statements_ = 0;
    std::uint64_t long_records_ = 0;       // records with k >= 16 (8-byte header)
    std::uint64_t bytes_before_tile_ = 0;  // record bytes in the tiles before the current one
    const std::uint32_t serial_;
    identifier_pool ids_;
    tile_stream& stream_;
    const tape_options& options_;
};

}  // namespace tapeflow
