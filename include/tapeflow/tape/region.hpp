// tapeflow/tape/region.hpp - tapeflow::Region, an RAII scope of records.
//
// **Example**:
//   for (int step = 0; step < steps; ++step) {
//       tapeflow::Region region("time step");   // records of this step form one region
//       advance(u);
//   }                                            // closed here
//   for (const auto& r : tapeflow::tape::active().regions())
//       std::cout << r.label << ": " << r.statements() << " statements\n";
//
// In code templated on the number type, tapeflow::region_for<T> is a Region
// for T = Real and a scope that does nothing for T = double.
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
        // if the entry at index_ is still the one this scope opened (== compares
        // the point only; the epoch tells one opened there after a reset apart).
        const auto& regions = tape_->regions();
        if (index_ >= regions.size()) return;
        const position& begin = regions[index_].begin;
        if (begin == begin_ && begin.epoch == begin_.epoch) tape_->end_region(index_);
    }

    /// Index of this region in tape.regions().
    std::size_t index() const noexcept { return index_; }

private:
    basic_tape<Scalar>* tape_;
    std::size_t index_;
    position begin_;
};

template <class Scalar>
class basic_real;

/// A region scope that does nothing: what region_for<T> is for a T that
/// is not an active type (double, float, a forward-mode type, ...).
class no_region {
public:
    explicit no_region(std::string_view = {}) noexcept {}
    no_region(const no_region&) = delete;
    no_region& operator=(const no_region&) = delete;
};

namespace detail {
template <class T>
struct region_for {
    using type = no_region;
};
template <class S>
struct region_for<basic_real<S>> {
    using type = basic_region<S>;
};
}  // namespace detail

/// The region scope for code templated on its number type T: a
/// basic_region on the active tape when T is basic_real<S>, a no_region
/// that does nothing otherwise, so one template serves doubles and Reals.
///
/// **Example**:
///   template <class T>
///   void advance(std::vector<T>& u) {
///       tapeflow::region_for<T> step("time step");   // a Region for Real, nothing for double
///       ...
///   }
template <class T>
using region_for = typename detail::region_for<T>::type;

}  // namespace tapeflow
