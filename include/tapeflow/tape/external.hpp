// tapeflow/tape/external.hpp - external entries: a block of work taped as one
// entry with a reverse rule of its own (custom adjoints, Eigen products and
// solves).
//
// The tape keeps the entries in a table it owns; the record stream holds an
// 8-byte external record with the entry's index (tape/record.hpp), so entries
// go through tiles, the scratchpad and the spill file like any record, while
// the entry itself (identifiers, captured values, the reverse function) stays
// in memory until the tape is reset past it:
//
//   records:  ... [stmt] [stmt] [external #0] [stmt] ... [external #1] ...
//                                     |                        |
//   table:    entries_[0] <-----------+       entries_[1] <----+
//             { input ids, output ids, captured data, reverse }
//
// When the sweep meets entry i it calls entries_[i]->reverse(adjoint, scratch):
// the entry reads the adjoints of its outputs and sets them to 0 (as an
// ordinary record does with its lhs), then adds to the adjoints of its inputs.
// A vector sweep (tape/lane_adjoints.hpp) calls reverse_lanes instead, with
// `lanes` adjoints per identifier:
//
//   adjoint:  | id 0: lane 0 .. lanes-1 | id 1: lane 0 .. lanes-1 | ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "buffer_pool.hpp"
#include "record.hpp"

namespace tapeflow {

/// One external entry on a tape. Implementations: custom_adjoint.hpp.
template <class Scalar>
class external_entry {
public:
    virtual ~external_entry() = default;

    /// Reverse rule. `adjoint` is the tape's adjoint vector (indexed by
    /// identifier); `scratch` is a buffer the tape lends for temporaries.
    /// \effects reads and zeroes the adjoints of the outputs, then adds the
    /// contributions to the adjoints of the inputs.
    virtual void reverse(Scalar* adjoint, std::vector<Scalar>& scratch) = 0;

    /// Reverse rule of a vector sweep: `adjoint[id * lanes + l]` is the
    /// adjoint of identifier `id` in lane l. The same effects as reverse(),
    /// on every lane. (custom_adjoint.hpp implements it, calling a rule that
    /// takes one lane once per lane.)
    virtual void reverse_lanes(Scalar* /*adjoint*/, std::size_t /*lanes*/, std::vector<Scalar>& /*scratch*/) {
        throw usage_error("a vector sweep (lane_adjoints) met an external entry that has no reverse rule "
                          "for lanes; implement external_entry::reverse_lanes, or sweep with scalar adjoints");
    }

    /// Appends to `out` every identifier the entry assigns (its outputs:
    /// those whose adjoints reverse() reads and zeroes). reset(position)
    /// asks the entries it drops, to make the variables they assigned
    /// constants (tape/reset_boundary.hpp). Returns false when the entry
    /// cannot tell (the default): reset(position) past it then throws.
    virtual bool assigned_identifiers(std::vector<identifier>& /*out*/) const { return false; }

    /// Memory held by the entry (identifiers and captured data), for statistics.
    virtual std::size_t bytes() const noexcept = 0;
};

/// A tape's table of external entries, with what they borrow from it: the
/// pools their buffers come from and go back to (tape/buffer_pool.hpp), and
/// the scratch vector lent to their reverse rules.
template <class Scalar>
class external_table {
public:
    /// Most entries a tape holds (an external record stores a 32-bit index).
    static constexpr std::size_t max_entries = std::size_t(UINT32_MAX);

    external_table() {
        scalar_buffers_.prepare();
        identifier_buffers_.prepare();
    }
    external_table(const external_table&) = delete;
    external_table& operator=(const external_table&) = delete;

    /// Appends `entry` and returns its index. If this throws, `entry` still owns it.
    std::uint32_t push(std::unique_ptr<external_entry<Scalar>>&& entry) {
        if (entries_.size() >= max_entries)
            throw error("a tape holds at most " + std::to_string(max_entries) +
                        " external entries (custom adjoints); reset the tape or use fewer, "
                        "larger entries");
        entries_.push_back(std::move(entry));
        return std::uint32_t(entries_.size() - 1);
    }
    std::size_t size() const noexcept { return entries_.size(); }
    /// Drops the entries from index `count` on.
    void truncate(std::size_t count) {
        if (count < entries_.size()) entries_.erase(entries_.begin() + std::ptrdiff_t(count), entries_.end());
    }
    void clear() noexcept { entries_.clear(); }

    /// Runs entry `index`'s reverse rule (the sweep meets it rarely).
    TAPEFLOW_COLD void reverse(std::uint32_t index, Scalar* adjoint) { entries_[index]->reverse(adjoint, scratch_); }
    /// The same in a vector sweep of `lanes` adjoints per identifier.
    TAPEFLOW_COLD void reverse_lanes(std::uint32_t index, Scalar* adjoint, std::size_t lanes) {
        entries_[index]->reverse_lanes(adjoint, lanes, scratch_);
    }

    /// Entry `index`'s assigned_identifiers(out).
    bool assigned_identifiers(std::uint32_t index, std::vector<identifier>& out) const {
        return entries_[index]->assigned_identifiers(out);
    }

    buffer_pool<Scalar>& scalar_buffers() noexcept { return scalar_buffers_; }
    buffer_pool<identifier>& identifier_buffers() noexcept { return identifier_buffers_; }
    /// Memory held by the entries.
    std::size_t entry_bytes() const noexcept {
        std::size_t bytes = 0;
        for (const auto& e : entries_) bytes += e->bytes();
        return bytes;
    }
    /// Memory kept in the pools for the next entries.
    std::size_t spare_bytes() const noexcept { return scalar_buffers_.bytes() + identifier_buffers_.bytes(); }

private:
    // Declared before entries_: the entries give their buffers back when
    // destroyed, so the pools must outlive them.
    buffer_pool<Scalar> scalar_buffers_;
    buffer_pool<identifier> identifier_buffers_;
    std::vector<std::unique_ptr<external_entry<Scalar>>> entries_;
    std::vector<Scalar> scratch_;
};

}  // namespace tapeflow
