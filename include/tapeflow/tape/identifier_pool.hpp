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
// passes the new record), but not for an input or an output, which get no
// record: the sweep would carry their adjoint into the old statement. So the
// pool keeps two free lists:
//
//   used_   freed since the tape was last emptied: only for statement lhs
//   unused_ not the lhs of any record on the tape: for inputs and outputs
//
//   acquire():        used_ ? pop : unused_ ? pop : ++highest
//   acquire_unused(): unused_ ? pop : ++highest
//   release(i):       push on used_
//   tape_emptied():   used_ moves to unused_
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "record.hpp"

namespace tapeflow {

class identifier_pool {
public:
    /// An identifier for the lhs of a new record (never 0).
    identifier acquire() {
        if (!used_.empty()) return take(used_);
        return acquire_unused();
    }

    /// An identifier that no record on the tape assigns (for inputs and outputs).
    /// \throws tapeflow::error when 2^32-1 variables are alive at once.
    identifier acquire_unused() {
        if (!unused_.empty()) return take(unused_);
        if (TAPEFLOW_UNLIKELY(highest_ == std::numeric_limits<identifier>::max()))
            throw error("more than 4294967295 active variables are alive at once; "
                        "let temporaries go out of scope or use several tapes");
        ++highest_;
        // Keep room for every identifier in both free lists, so that releases
        // and resets never allocate once the tape has grown (amortized here).
        if (TAPEFLOW_UNLIKELY(unused_.capacity() < highest_)) {
            unused_.reserve(2 * std::size_t(highest_));
            used_.reserve(2 * std::size_t(highest_));
        }
        return highest_;
    }

    /// Gives `id` back; the caller must own it.
    void release(identifier id) { used_.push_back(id); }

    /// The tape no longer holds records: every free identifier is unused.
    void tape_emptied() {
        unused_.insert(unused_.end(), used_.begin(), used_.end());
        used_.clear();
    }

    /// One past the largest identifier ever handed out: the adjoint vector size.
    std::size_t capacity() const noexcept { return std::size_t(highest_) + 1; }
    /// Identifiers currently held by variables.
    std::size_t live() const noexcept { return highest_ - used_.size() - unused_.size(); }
    /// Most identifiers held at once. A new identifier is minted only when
    /// none is free, i.e. when all are held, so this is the highest one.
    std::size_t peak_live() const noexcept { return highest_; }

private:
    static identifier take(std::vector<identifier>& list) noexcept {
        const identifier id = list.back();
        list.pop_back();
        return id;
    }

    std::vector<identifier> used_;
    std::vector<identifier> unused_;
    identifier highest_ = 0;
};

}  // namespace tapeflow
