// tapeflow/tape/position.hpp - a point on the tape.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tapeflow {

/// A point between two records, as returned by tape.get_position(). Positions
/// of one recording are ordered by `statements`. Sweeping or resetting to a
/// position is valid on the tape that gave it while the records before it
/// are still on the tape: not after a reset(), nor after a reset(position)
/// to a point before it, nor on another tape (the tape checks, and throws
/// usage_error).
struct position {
    std::size_t tile = 0;          ///< index of the tile
    std::size_t offset = 0;        ///< byte offset inside that tile
    std::uint64_t statements = 0;  ///< statements recorded before this point
    std::uint64_t arguments = 0;   ///< (partial, identifier) pairs before this point
    std::uint64_t bytes = 0;       ///< record bytes before this point
    std::size_t regions = 0;       ///< regions opened before this point
    std::uint64_t long_records = 0;  ///< records with 16 or more pairs (8-byte header) before this point
    std::uint64_t externals = 0;     ///< external entries (custom adjoints) before this point
    /// Which records the position was taken among: the tape counts up at
    /// every reset, so that a position taken before a reset() (or beyond the
    /// point of a reset(position)) is refused instead of read as garbage.
    /// 0 (a default position: the start) is valid on any recording.
    std::uint64_t epoch = 0;
    /// Serial of the tape the position was taken on (basic_tape::serial(); a
    /// parallel region's worker tape, which records under its parent's
    /// serial, has one of its own here); 0 for a default position. Epochs
    /// of two tapes count alike, so this is what refuses another tape's
    /// position (its tile and offset would point past this tape's tiles).
    std::uint32_t tape = 0;

    friend bool operator==(const position& a, const position& b) noexcept {
        return a.statements == b.statements && a.tile == b.tile && a.offset == b.offset;
    }
    friend bool operator!=(const position& a, const position& b) noexcept { return !(a == b); }
    friend bool operator<(const position& a, const position& b) noexcept {
        return a.statements < b.statements;
    }
    friend bool operator<=(const position& a, const position& b) noexcept { return !(b < a); }
    friend bool operator>(const position& a, const position& b) noexcept { return b < a; }
    friend bool operator>=(const position& a, const position& b) noexcept { return !(a < b); }
};

/// Which positions are still on a tape. The tape counts an epoch up at
/// every reset; a position carries the epoch it was taken in. A reset()
/// invalidates every earlier position; a reset(position) to point P leaves
/// the earlier positions valid up to P only:
///
///   epoch:        3          4 (after reset(P), P = 120 statements)     5
///   positions:   p(80) p(150) | q(130) ...                 | ...
///   valid:       p(80) yes, p(150) no (past P), q(130) yes until the next reset
class position_epochs {
public:
    /// The epoch of positions taken now.
    std::uint64_t current() const noexcept { return epoch_; }

    /// Every record was dropped: no position taken so far is valid.
    void records_dropped() {
        ++epoch_;
        recording_epoch_ = epoch_;
        truncations_.clear();
    }
    /// The records after `statements` were dropped (reset(position)).
    void records_dropped_after(std::uint64_t statements) {
        // positions taken from here on are of a new epoch; older ones stay
        // valid only up to `statements` (truncations_ keeps the lowest bound)
        while (!truncations_.empty() && truncations_.back().statements >= statements) truncations_.pop_back();
        truncations_.push_back({epoch_, statements});
        ++epoch_;
    }

    /// Whether `p` was taken on this recording and, when taken before some
    /// reset(position), not beyond the point of any of them.
    bool valid(const position& p) const noexcept {
        if (p.statements == 0 && p.epoch == 0) return true;  // position{}: the start
        bool ok = p.epoch >= recording_epoch_ && p.epoch <= epoch_;
        if (ok && p.epoch < epoch_) {
            // the first truncation at or after p's epoch bounds it (truncations_
            // rises in both epoch and statements)
            auto t = std::lower_bound(truncations_.begin(), truncations_.end(), p.epoch,
                                      [](const truncation& a, std::uint64_t e) { return a.epoch < e; });
            ok = t == truncations_.end() || p.statements <= t->statements;
        }
        return ok;
    }

private:
    struct truncation {
        std::uint64_t epoch;       // epoch in which the reset(position) was made
        std::uint64_t statements;  // the point it reset to
    };
    std::uint64_t epoch_ = 1;
    std::uint64_t recording_epoch_ = 1;  // the first epoch of the current recording
    std::vector<truncation> truncations_;
};

}  // namespace tapeflow
