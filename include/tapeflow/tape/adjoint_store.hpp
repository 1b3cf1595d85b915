// tapeflow/tape/adjoint_store.hpp - the adjoints of a tape, by identifier.
//
// One adjoint per identifier the tape ever handed out (identifier 0, the
// passive one, included: its adjoint stays 0):
//
//   adjoint:  | id 0 | id 1 | id 2 | ... | id highest |
//
// The vector grows only between sweeps (a sweep indexes it by raw pointer);
// a vector sweep keeps its lanes apart (tape/lane_adjoints.hpp).
//
// Zeroing what was written, not the whole vector. The vector is as long as
// the most identifiers the tape ever held, so after one large recording
// zeroing all of it costs every later gradient the same, however small: a
// 3-statement gradient went from 0.25 to 30-65 us after a 200 000-statement
// one (a memset per reset). The store therefore keeps track of what may be
// non-zero:
//
//   all zero     nothing written since the last clear: nothing to do;
//   traceable    what was written is the seeds (set(), up to max_seeds) and
//                what the sweeps wrote, which is the identifiers named by
//                the records swept: the tape zeroes those by walking its
//                records (clear_traced) while they are still on it;
//   otherwise    (records dropped since, too many seeds) the whole vector.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "record.hpp"
#include "scalar.hpp"

namespace tapeflow {

template <class Scalar>
class adjoint_store {
public:
    /// Seeds remembered by identifier; more make the next clear a full one.
    static constexpr std::size_t max_seeds = 16;

    /// Grows to `count` adjoints (new ones 0); never shrinks.
    void grow(std::size_t count) {
        if (adjoints_.size() < count) adjoints_.resize(count, Scalar(0));
    }
    /// Sets every adjoint to 0 (keeps the memory).
    void clear() noexcept {
        for (Scalar& a : adjoints_) a = Scalar(0);
        forget_writes();
    }
    /// clear() from inside a sweep (a reverse rule or a progress callback):
    /// the sweep writes on through the pointer it holds, so the adjoints do
    /// not stay all 0.
    void clear_while_swept() noexcept {
        clear();
        all_zero_ = false;
    }
    /// The adjoint of `id`; 0 for one the store has not grown to.
    Scalar get(identifier id) const noexcept { return id < adjoints_.size() ? adjoints_[id] : Scalar(0); }
    /// Sets the adjoint of `id`, which must be below size() (a seed).
    void set(identifier id, Scalar value) noexcept {
        adjoints_[id] = value;
        all_zero_ = false;
        if (seeds_ < max_seeds)
            seed_ids_[seeds_++] = id;
        else
            traceable_ = false;
    }
    /// The vector, for a sweep to write: only adjoints of identifiers that
    /// the swept records name (or external entries, see traceable()).
    Scalar* sweep_data() noexcept {
        all_zero_ = false;
        return adjoints_.data();
    }
    /// The vector, to write adjoints that no record names (what
    /// reset(position) set aside, added back): the next clear is a full one.
    Scalar* untraced_data() noexcept {
        all_zero_ = false;
        traceable_ = false;
        return adjoints_.data();
    }
    std::size_t size() const noexcept { return adjoints_.size(); }
    /// Calls f(id, adjoint) for every adjoint that is not 0 (none when all_zero()).
    template <class F>
    void for_each_nonzero(F&& f) const {
        if (all_zero_) return;
        for (std::size_t i = 1; i < adjoints_.size(); ++i)
            if (!detail::is_zero(adjoints_[i])) f(identifier(i), adjoints_[i]);
    }
    /// The vector, to read (size() adjoints).
    const Scalar* data() const noexcept { return adjoints_.data(); }
    /// Memory held.
    std::size_t bytes() const noexcept { return adjoints_.capacity() * sizeof(Scalar); }

    // ---- what was written since the last clear ------------------------------

    /// Nothing was written since the last clear: every adjoint is 0.
    bool all_zero() const noexcept { return all_zero_; }
    /// Records were dropped from the tape (reset(position)): what a sweep
    /// wrote through them can no longer be traced.
    void records_dropped() noexcept {
        if (!all_zero_) traceable_ = false;
    }
    /// Whether clear_traced() can zero everything written: no records were
    /// dropped and every seed was remembered. (The tape also needs the
    /// records in memory, and no external entry, whose rules write adjoints
    /// the records do not name.)
    bool traceable() const noexcept { return traceable_; }
    /// For a traceable() store: zeroes the seeds, then calls
    /// `for_each_record(zero)`, which must call `zero(id)` for every
    /// identifier whose adjoint a sweep of the records on the tape can have
    /// written (detail::swept_identifiers).
    template <class ForEachRecord>
    void clear_traced(ForEachRecord&& for_each_record) {
        for (std::size_t i = 0; i < seeds_; ++i) adjoints_[seed_ids_[i]] = Scalar(0);
        Scalar* a = adjoints_.data();
        const std::size_t n = adjoints_.size();
        for_each_record([a, n](identifier id) {
            if (id < n) a[id] = Scalar(0);
        });
        forget_writes();
    }

private:
    void forget_writes() noexcept {
        all_zero_ = true;
        traceable_ = true;
        seeds_ = 0;
    }

    std::vector<Scalar> adjoints_;
    bool all_zero_ = true;
    bool traceable_ = true;
    std::size_t seeds_ = 0;  // seeds remembered in seed_ids_ since the last clear
    std::array<identifier, max_seeds> seed_ids_{};
};

}  // namespace tapeflow
