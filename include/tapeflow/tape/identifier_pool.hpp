// tapeflow/tape/identifier_pool.hpp - identifiers of live active variables.
//
// Every active variable holds a small integer identifier that indexes the
// adjoint vector. When a variable dies its identifier goes back to the pool
// and the next new variable takes it (last in, first out, so the adjoint of
// a recycled identifier is likely still in cache). The adjoint vector is
// therefore as long as the peak number of live variables, not the number
// of statements.
//
// A recycled identifier may be the lhs of records already on the tape. That
// is harmless for a new statement (the sweep zeroes the lhs adjoint when it
// passes the new record, an assignment: an update record, which does not,
// comes after the lhs's assignment, or has an lhs that no record assigns),
// but not for an input or an output, which get no
// record: the sweep would carry their adjoint into the old statement. So the
// pool keeps two free lists:
//
//   used_   freed since the tape was last emptied: only for statement lhs
//           (and for inputs while the tape holds no record, when no record
//           assigns any identifier: basic_tape::make_input)
//   unused_ not the lhs of any record on the tape: for inputs and outputs
//
//   acquire():        used_ ? pop : unused_ ? pop : mint ++highest
//   acquire_unused(): unused_ ? pop : mint ++highest
//   release(i):       push on used_ (never allocates: room for every identifier)
//   tape_emptied():   used_ moves to unused_
//
// In a parallel region (tape/parallel_region.hpp) each thread records with a
// pool of its own. While the region is open every pool of the tape takes
// what it mints from one shared_identifiers, a block at a time, under its
// mutex: first free identifiers of the tape's pool, then fresh ones above
// the highest; so no identifier is handed out twice, and a time loop that
// opens a region per step reuses identifiers as a serial one does:
//
//   share(shared):        (the tape's pool, at the opening) lends its free
//                         lists and its highest identifier to `shared`
//   mint_from(&shared):   mint pops from this pool's block; an empty block
//                         takes the next `block` identifiers of `shared`
//   take_free_of(other):  (the tape's pool, at the end) takes back a
//                         thread's free identifiers and the rest of its block
//
// Ranges. A matrix variable (tapeflow/eigen/matrix_variable.hpp) holds
// `count` consecutive identifiers, so that its adjoints are one slice of the
// adjoint vector. Ranges have free lists of their own, with the same used /
// unused rule, and never mix with the single identifiers (a range split into
// singles could not be put together again):
//
//   acquire_range(count):        the shortest free range (used or unused)
//                                that holds count, its front if longer, else
//                                minted above the highest identifier
//   acquire_unused_range(count): the same without used ranges
//   release_range(first, count): onto used_ranges_
//   tape_emptied():              used ranges move to the unused ones, and
//                                neighbours join (a gradient's A, B and C
//                                become one range the next gradient splits)
#pragma once

#include <algorithm>
#include <mutex>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "record.hpp"

namespace tapeflow {

class identifier_pool;

/// What the identifier pools of a tape mint from while a parallel region is
/// open (see the top of this header): free identifiers of `owner` (the
/// tape's pool), then fresh ones above `highest`.
struct shared_identifiers {
    std::mutex mutex;
    identifier_pool* owner = nullptr;
    identifier highest = 0;  // the highest identifier handed out by any pool
};

class identifier_pool {
public:
    /// Largest identifier handed out (identifiers fit a record header).
    static constexpr identifier max_identifier = max_record_identifier;

    identifier_pool() = default;
    identifier_pool(const identifier_pool&) = delete;
    identifier_pool& operator=(const identifier_pool&) = delete;

    /// An identifier for the lhs of a new record (never 0).
    TAPEFLOW_ALWAYS_INLINE identifier acquire() {
        if (used_size_ != 0) return handed_out(used_[--used_size_]);
        return acquire_unused();
    }

    /// An identifier that no record on the tape assigns (for inputs and outputs).
    /// \throws tapeflow::error when 2^27-1 variables are alive at once.
    TAPEFLOW_ALWAYS_INLINE identifier acquire_unused() {
        if (TAPEFLOW_LIKELY(!unused_.empty())) {
            const identifier id = unused_.back();
            unused_.pop_back();
            return handed_out(id);
        }
        return handed_out(mint());
    }

    /// acquire() `count` times, into out[0 .. count): the same identifiers
    /// in the same order. For the elements of a matrix: one by one, each
    /// identifier stores the free list's length and the next loads it again
    /// (a chain through memory); this copies from the list. If it throws
    /// (too many identifiers, or no memory), none is taken.
    void acquire(std::size_t count, identifier* out) {
        const std::size_t from_used = std::min(count, used_size_);
        for (std::size_t k = 0; k < from_used; ++k) out[k] = used_[used_size_ - 1 - k];
        used_size_ -= from_used;
        try {
            acquire_unused(count - from_used, out + from_used);
        } catch (...) {  // back where they were, in their order
            for (std::size_t k = from_used; k > 0; --k) used_[used_size_++] = out[k - 1];
            throw;
        }
        for (std::size_t k = 0; k < from_used; ++k) handed_out(out[k]);
    }
    /// acquire_unused() `count` times, into out[0 .. count). If it throws,
    /// none is taken.
    void acquire_unused(std::size_t count, identifier* out) {
        const std::size_t from_unused = std::min(count, unused_.size());
        const identifier* const top = unused_.data() + unused_.size();
        for (std::size_t k = 0; k < from_unused; ++k) out[k] = top[-1 - std::ptrdiff_t(k)];
        std::size_t minted = from_unused;
        try {
            for (; minted < count; ++minted) out[minted] = mint();
        } catch (...) {  // minted ones are free ones now (used: room for every identifier)
            for (std::size_t k = from_unused; k < minted; ++k) release(out[k]);
            throw;
        }
        unused_.resize(unused_.size() - from_unused);
        for (std::size_t k = 0; k < count; ++k) handed_out(out[k]);
    }

    /// `count` consecutive identifiers (the first is returned) that a record
    /// may assign: for the outputs of an entry that zeroes their adjoints
    /// when swept (a matrix variable's). If it throws, none is taken.
    /// \throws tapeflow::error when they would pass the identifier limit, or
    /// usage_error in a parallel region (its pools mint single identifiers).
    identifier acquire_range(std::size_t count) { return take_range(count, true); }
    /// The same with identifiers that no record on the tape assigns (inputs).
    identifier acquire_unused_range(std::size_t count) { return take_range(count, false); }
    /// Gives back the range acquire_range returned; the caller must own it.
    void release_range(identifier first, std::size_t count) noexcept {
        if (count == 0) return;
        try {
            used_ranges_.push_back({first, count});
        } catch (...) {  // no memory: the identifiers stay out of use, nothing breaks
        }
    }

    /// Gives `id` back; the caller must own it. Never allocates: the used
    /// list has room for every identifier ever minted. A release beyond that
    /// (an identifier given back twice) is ignored rather than written past
    /// the list: it costs one predictable branch.
    TAPEFLOW_ALWAYS_INLINE void release(identifier id) noexcept {
        if (TAPEFLOW_LIKELY(used_size_ < highest_)) used_[used_size_++] = id;
    }

    /// (debug checks; no_generation without them) How often `id` was handed
    /// out. An expression keeps the generation of each variable it holds and
    /// the recorder compares: a different one means that the variable died
    /// and its identifier went to another variable before the statement
    /// using it was recorded (expr/expression.hpp, checked_active_leaf). A
    /// variable that died but whose identifier is still free is let through:
    /// `return y * y;` of a local y, assigned at once, records the right
    /// gradient (the assignment takes the identifier back after reading).
    std::uint32_t generation(identifier id) const noexcept {
        if constexpr (debug_checks)
            return id < generations_.size() ? generations_[id] : 0;
        else
            return detail::no_generation;
    }

    /// The tape no longer holds records: every free identifier is unused.
    void tape_emptied() {
        unused_.insert(unused_.end(), used_.get(), used_.get() + used_size_);
        used_size_ = 0;
        if (!used_ranges_.empty()) {
            unused_ranges_.insert(unused_ranges_.end(), used_ranges_.begin(), used_ranges_.end());
            used_ranges_.clear();
            join_unused_ranges();
        }
    }

    /// Calls f(id) for every free identifier (held by no variable).
    template <class F>
    void for_each_free(F&& f) const {
        std::for_each(used_.get(), used_.get() + used_size_, f);
        std::for_each(unused_.begin(), unused_.end(), f);
        std::for_each(block_.begin(), block_.end(), f);
        for (const auto* list : {&used_ranges_, &unused_ranges_})
            for (const id_range& r : *list)
                for (std::size_t k = 0; k < r.count; ++k) f(identifier(r.first + k));
    }

    /// Identifiers a pool takes from the shared ones at a time (mint_from).
    static constexpr identifier block = 256;

    /// Mints from `shared` (which must outlive the setting) instead of
    /// alone; nullptr: alone again (the rest of the block stays until
    /// take_free_of). Set it on every pool of a tape before any of them
    /// mints, with shared->highest at or above each pool's highest().
    void mint_from(shared_identifiers* shared) noexcept { shared_ = shared; }

    /// Lends this pool's free identifiers to `shared` (they are handed out
    /// from this pool's lists, under the mutex), and its highest().
    void share(shared_identifiers& shared) noexcept {
        shared.owner = this;
        shared.highest = highest_;
    }

    /// Takes the free identifiers of `other` (another pool of the tape)
    /// and the rest of its block onto this pool's used list (they may be
    /// the lhs of records), its free ranges onto the used ranges, and
    /// raises highest() to `highest`; `other` keeps none.
    void take_free_of(identifier_pool& other, identifier highest) {
        reserve(std::max(highest_, highest),
                used_size_ + other.used_size_ + other.unused_.size() + other.block_.size());
        const auto add = [&](identifier id) { used_[used_size_++] = id; };
        std::for_each(other.used_.get(), other.used_.get() + other.used_size_, add);
        std::for_each(other.unused_.begin(), other.unused_.end(), add);
        std::for_each(other.block_.begin(), other.block_.end(), add);
        other.used_size_ = 0;
        other.unused_.clear();
        other.block_.clear();
        // ranges a thread's variables gave back (a matrix variable whose
        // last copy died on a worker): without this they stayed with that
        // pool, where nothing takes them, and the adjoint vector grew by
        // their length every region
        for (auto* list : {&other.used_ranges_, &other.unused_ranges_}) {
            used_ranges_.insert(used_ranges_.end(), list->begin(), list->end());
            list->clear();
        }
    }
    /// One past the largest identifier ever handed out: the adjoint vector size.
    std::size_t capacity() const noexcept { return std::size_t(highest_) + 1; }
    /// Identifiers currently held by variables.
    std::size_t live() const noexcept {
        std::size_t free = used_size_ + unused_.size();
        for (const auto* list : {&used_ranges_, &unused_ranges_})
            for (const id_range& r : *list) free += r.count;
        return free < highest_ ? highest_ - free : 0;
    }
    /// The highest identifier handed out: the adjoint vector holds this many
    /// adjoints (plus the passive one). It is at least the most identifiers
    /// held at once, and more when inputs or outputs needed an identifier no
    /// record assigns while the only free ones were such lhs (acquire_unused
    /// mints then): 154 against 104 held at once in one measured program.
    std::size_t highest() const noexcept { return highest_; }

private:
    struct id_range {
        identifier first;
        std::size_t count;
    };

    // acquire_range / acquire_unused_range: the shortest free range that
    // holds `count` (unused ones first; of equal ones the last freed, its
    // adjoints likely in cache), its front if longer; else `count` minted
    identifier take_range(std::size_t count, bool used_too) {
        if (count == 0) return 0;
        if (shared_)
            throw usage_error("a matrix variable cannot be made inside a parallel region (its identifiers "
                              "must be consecutive); make it before the region opens or after it closes");
        std::vector<id_range>* list = &unused_ranges_;
        std::size_t at = best_fit(unused_ranges_, count);
        if (used_too && (at == unused_ranges_.size() || unused_ranges_[at].count != count)) {
            const std::size_t u = best_fit(used_ranges_, count);
            if (u != used_ranges_.size() &&
                (at == unused_ranges_.size() || used_ranges_[u].count < unused_ranges_[at].count)) {
                list = &used_ranges_;
                at = u;
            }
        }
        identifier first;
        if (at != list->size()) {
            id_range& r = (*list)[at];
            first = r.first;
            if (r.count == count) {
                list->erase(list->begin() + std::ptrdiff_t(at));
            } else {
                r.first = identifier(r.first + count);
                r.count -= count;
            }
        } else {
            if (TAPEFLOW_UNLIKELY(count > std::size_t(max_identifier - highest_))) too_many();
            first = identifier(highest_ + 1);
            reserve(identifier(highest_ + count), used_size_);
        }
        if constexpr (debug_checks)
            for (std::size_t k = 0; k < count; ++k) handed_out(identifier(first + k));
        return first;
    }
    // Index of the shortest range of `list` with room for `count`, the last
    // of equal ones; list.size() when none has room.
    static std::size_t best_fit(const std::vector<id_range>& list, std::size_t count) noexcept {
        std::size_t best = list.size();
        for (std::size_t i = list.size(); i-- > 0;) {
            const std::size_t c = list[i].count;
            if (c >= count && (best == list.size() || c < list[best].count)) {
                best = i;
                if (c == count) break;
            }
        }
        return best;
    }
    // unused_ranges_ by first identifier, neighbours joined
    void join_unused_ranges() {
        std::sort(unused_ranges_.begin(), unused_ranges_.end(),
                  [](const id_range& a, const id_range& b) { return a.first < b.first; });
        std::size_t out = 0;
        for (std::size_t i = 0; i < unused_ranges_.size(); ++i) {
            if (out != 0 && unused_ranges_[out - 1].first + unused_ranges_[out - 1].count == unused_ranges_[i].first)
                unused_ranges_[out - 1].count += unused_ranges_[i].count;
            else
                unused_ranges_[out++] = unused_ranges_[i];
        }
        unused_ranges_.resize(out);
    }

    TAPEFLOW_COLD identifier mint() {
        if (shared_) return mint_shared();
        if (TAPEFLOW_UNLIKELY(highest_ == max_identifier)) too_many();
        reserve(highest_ + 1, used_size_);
        return highest_;
    }
    // mint() in a parallel region: the next identifier of this pool's block
    TAPEFLOW_COLD identifier mint_shared() {
        if (block_.empty()) {
            std::lock_guard<std::mutex> lock(shared_->mutex);
            shared_->owner->lend_free(block_);
            if (block_.empty()) {
                if (TAPEFLOW_UNLIKELY(shared_->highest > max_identifier - block)) too_many();
                for (identifier i = block; i > 0; --i) block_.push_back(shared_->highest + i);
                shared_->highest += block;
            }
        }
        const identifier id = block_.back();
        block_.pop_back();
        reserve(std::max(highest_, id), used_size_);
        return id;
    }
    // Moves up to `block` free identifiers to `out` (used ones first: they
    // are the likelier in cache).
    void lend_free(std::vector<identifier>& out) {
        while (out.size() < block && used_size_ != 0) out.push_back(used_[--used_size_]);
        while (out.size() < block && !unused_.empty()) {
            out.push_back(unused_.back());
            unused_.pop_back();
        }
    }
    // (debug checks) counts a hand-out of `id` (generation())
    TAPEFLOW_ALWAYS_INLINE identifier handed_out(identifier id) noexcept {
        if constexpr (debug_checks)
            if (id < generations_.size()) ++generations_[id];
        return id;
    }
    [[noreturn]] static void too_many() {
        throw error("more than " + std::to_string(max_identifier) +
                    " active variables are alive at once (record headers hold 27-bit "
                    "identifiers); let temporaries go out of scope or use several tapes");
    }
    // highest_ = `highest`, with room on the used list for every identifier
    // up to it and for `used` entries (amortized: the room doubles)
    void reserve(identifier highest, std::size_t used) {
        highest_ = highest;
        if constexpr (debug_checks)
            if (generations_.size() <= highest_)
                generations_.resize(std::max<std::size_t>(2 * std::size_t(highest_), 64), 0);
        const std::size_t need = std::max<std::size_t>(highest_, used);
        if (TAPEFLOW_UNLIKELY(need > room_)) {
            room_ = 2 * need;
            auto grown = std::make_unique<identifier[]>(room_);
            std::copy(used_.get(), used_.get() + used_size_, grown.get());
            used_ = std::move(grown);
            unused_.reserve(room_);
        }
    }

    std::unique_ptr<identifier[]> used_;  // stack of used_size_ entries, room_ long
    std::size_t used_size_ = 0;
    std::size_t room_ = 0;
    std::vector<identifier> unused_;      // capacity >= room_, so resets never allocate
    identifier highest_ = 0;
    shared_identifiers* shared_ = nullptr;  // set in a parallel region (mint_from)
    std::vector<identifier> block_;         // what this pool mints from there
    std::vector<std::uint32_t> generations_;  // hand-outs per identifier (debug checks only)
    std::vector<id_range> used_ranges_;       // free ranges that records may assign
    std::vector<id_range> unused_ranges_;     // free ranges that no record assigns
};

}  // namespace tapeflow
