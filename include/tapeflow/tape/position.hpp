// tapeflow/tape/position.hpp - a point on the tape.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tapeflow {

/// A point between two records, as returned by tape.get_position(). Positions
/// of one recording are ordered by `statements`. Sweeping or resetting to a
/// position is valid while the records before it are still on the tape: not
/// after a reset(), nor after a reset(position) to a point before it (the
/// tape checks, and throws usage_error).
struct position {
    std::size_t tile = 0;          ///< index of the tile
    std::size_t offset = 0;        ///< byte offset inside that tile
    std::uint64_t statements = 0;  ///< statements recorded before this point
    std::uint64_t arguments = 0;   ///< (partial, identifier) pairs before this point
    std::uint64_t bytes = 0;       ///< record bytes before this point
    std::size_t regions = 0;       ///< regions opened before this point
    std::uint64_t long_records = 0;  ///< records with 31 or more pairs before this point
    std::uint64_t externals = 0;     ///< external entries (custom adjoints) before this point
    /// Which records the position was taken among: the tape counts up at
    /// every reset, so that a position taken before a reset() (or beyond the
    /// point of a reset(position)) is refused instead of read as garbage.
    /// 0 (a default position: the start) is valid on any recording.
    std::uint64_t epoch = 0;

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

}  // namespace tapeflow
