// tapeflow/tape/region.hpp - tapeflow::Region, an RAII scope of records.
//
// **Example**:
//   for (int step = 0; step < steps; ++step) {
//       tapeflow::Region region("time step");   // records of this step form one region
//       advance(u);
//   }                                            // closed here
//   for (const auto& r : tapeflow::tape::active().regions())
//       std::cout << r.label << ": " << r.statements() << " statements\n";
#pragma once

#include <cstddef>
#include <string_view>

#include "tape.hpp"

namespace tapeflow {

template <class Scalar>
class basic_region {
public:
    /// Opens a region on the calling thread's active tape.
    explicit basic_region(std::string_view label = {})
        : basic_region(basic_tape<Scalar>::active(), label) {}
    /// Opens a region on `tape`.
    basic_region(basic_tape<Scalar>& tape, std::string_view label = {})
        : tape_(&tape), index_(tape.begin_region(label)), begin_(tape.get_position()) {}

    basic_region(const basic_region&) = delete;
    basic_region& operator=(const basic_region&) = delete;

    ~basic_region() {
        // The tape may have been reset inside the scope: close the region only
        // if the entry at index_ is still the one this scope opened.
        const auto& regions = tape_->regions();
        if (index_ < regions.size() && regions[index_].begin == begin_) tape_->end_region(index_);
    }

    /// Index of this region in tape.regions().
    std::size_t index() const noexcept { return index_; }

private:
    basic_tape<Scalar>* tape_;
    std::size_t index_;
    position begin_;
};

}  // namespace tapeflow
