// tapeflow/tape/region_table.hpp - the regions of one recording.
//
// A region is a contiguous run of records: a loop body, a time step, a
// user scope. Regions nest; each remembers its parent. Records outside
// every region belong to the implicit region, which is not listed.
//
//   records:  r0 r1 | r2 r3 r4 | r5 | r6 r7 | r8
//   regions:        [ "step" 0 ]    [ "step" 1 ]
//                     [inner]
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "position.hpp"

namespace tapeflow {

/// One region: its label, its place in the nesting, and its extent.
struct region_info {
    static constexpr std::size_t no_parent = static_cast<std::size_t>(-1);

    std::string label;                  ///< as given to tapeflow::Region (may be empty)
    std::size_t parent = no_parent;     ///< index of the enclosing region
    std::size_t depth = 0;              ///< 0 for a top-level region
    position begin;                     ///< first record
    position end;                       ///< one past the last record (== begin while open)
    bool open = true;                   ///< still recording into it

    std::uint64_t statements() const noexcept { return end.statements - begin.statements; }
    std::uint64_t arguments() const noexcept { return end.arguments - begin.arguments; }
    std::uint64_t bytes() const noexcept { return end.bytes - begin.bytes; }
};

/// Regions in the order they were opened. Clearing keeps the entries (and
/// their label strings' capacity) so that a new recording does not allocate.
class region_table {
public:
    std::size_t open(std::string_view label, const position& at) {
        const std::size_t parent = open_.empty() ? region_info::no_parent : open_.back();
        if (size_ == regions_.size()) regions_.emplace_back();
        region_info& r = regions_[size_];
        r.label.assign(label.data(), label.size());
        r.parent = parent;
        r.depth = open_.size();
        r.begin = r.end = at;
        r.open = true;
        open_.push_back(size_);
        return size_++;
    }

    /// Closes region `index` (and any region opened inside it and still open).
    /// Does nothing if `index` is not open.
    void close(std::size_t index, const position& at) {
        if (index >= size_ || !regions_[index].open) return;
        while (!open_.empty()) {
            const std::size_t top = open_.back();
            open_.pop_back();
            regions_[top].end = at;
            regions_[top].open = false;
            if (top == index) break;
        }
    }

    /// Forgets the regions opened after `at` was taken; cuts the others at `at`.
    void truncate(const position& at) {
        if (at.regions < size_) size_ = at.regions;
        for (std::size_t i = 0; i < size_; ++i)
            if (at < regions_[i].end) regions_[i].end = at;
        while (!open_.empty() && open_.back() >= size_) open_.pop_back();
    }

    void clear() noexcept {
        size_ = 0;
        open_.clear();
    }

    /// Updates the `end` of open regions to `at` (for statistics while recording).
    void touch_open(const position& at) noexcept {
        for (std::size_t i : open_) regions_[i].end = at;
    }

    std::size_t size() const noexcept { return size_; }
    std::size_t open_count() const noexcept { return open_.size(); }
    const region_info& operator[](std::size_t i) const noexcept { return regions_[i]; }
    const region_info* begin() const noexcept { return regions_.data(); }
    const region_info* end() const noexcept { return regions_.data() + size_; }

private:
    std::vector<region_info> regions_;
    std::vector<std::size_t> open_;
    std::size_t size_ = 0;
};

}  // namespace tapeflow
