// tapeflow/tape/identifier_pool.hpp - identifiers of live active variables.
//
// Every active variable holds a small integer identifier that indexes the
// adjoint vector. When a variable dies its identifier goes back to the pool
// and the next new variable takes it (last in, first out, so the adjoint of
// a recycled identifier is likely still in cache). The adjoint vector is
// therefore as long as the peak number of live variables, not the number
// of statements.
//
//   acquire():  free list non-empty ? pop it : ++highest
//   release(i): push i on the free list
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "../error.hpp"
#include "record.hpp"

namespace tapeflow {

class identifier_pool {
public:
    /// A fresh identifier (never 0).
    /// \throws tapeflow::error when 2^32-1 variables are alive at once.
    identifier acquire() {
        if (!free_.empty()) {
            const identifier id = free_.back();
            free_.pop_back();
            if (++live_ > peak_live_) peak_live_ = live_;
            return id;
        }
        if (highest_ == std::numeric_limits<identifier>::max())
            throw error("more than 4294967295 active variables are alive at once; "
                        "let temporaries go out of scope or use several tapes");
        ++live_;
        if (live_ > peak_live_) peak_live_ = live_;
        return ++highest_;
    }

    /// Gives `id` back; the caller must own it.
    void release(identifier id) {
        free_.push_back(id);
        --live_;
    }

    /// One past the largest identifier ever handed out: the adjoint vector size.
    std::size_t capacity() const noexcept { return std::size_t(highest_) + 1; }
    /// Identifiers currently held by variables.
    std::size_t live() const noexcept { return live_; }
    /// Most identifiers held at once since construction or reset_peak().
    std::size_t peak_live() const noexcept { return peak_live_; }
    void reset_peak() noexcept { peak_live_ = live_; }

private:
    std::vector<identifier> free_;
    identifier highest_ = 0;
    std::size_t live_ = 0;
    std::size_t peak_live_ = 0;
};

}  // namespace tapeflow
