// tapeflow/tape/reset_boundary.hpp - what reset(position) leaves at the
// position for the sweeps that pass it.
//
// Identifiers are recycled, so after reset(to) two things can share one:
//
//   - a variable assigned after `to` and alive after the reset, and the lhs
//     of an older record (before `to`) whose variable had died: used as an
//     operand, the variable's adjoint would flow into that old record;
//   - an adjoint kept by the reset (a sweep had come down to `to`), meant
//     for the records before `to`, and the lhs of a new record after `to`
//     that takes the identifier (or a variable assigned again): the new
//     record would read it as its own.
//
// So the boundary at `to` holds the identifiers of the variables the dropped
// records assigned that are still alive (`fenced`: their values came from
// records no longer on the tape, so they are constants now) and the kept
// adjoints, set aside from the adjoint vector (`kept`). A sweep passing `to`
// (tape.hpp, run_sweep) first zeroes the fenced adjoints, then adds the kept
// ones back, once:
//
//   records:  ... R1 (lhs a) ... | to |  new records (v, holding a, as operand)
//   sweep <-                      ^ adjoint[a] = 0, then adjoint[i] += kept_i
//
// A vector sweep (lane_adjoints) zeroes the fenced rows; its own adjoints
// are the caller's, which the tape cannot set aside, so a boundary made
// when the last vector sweep had stopped above the start refuses vector
// sweeps (basic_tape::sweep(lane_adjoints&, ...)).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "position.hpp"
#include "record.hpp"
#include "scalar.hpp"

namespace tapeflow::detail {

template <class Scalar>
struct reset_boundary {
    position at;                                      // the position reset to
    std::vector<identifier> fenced;                   // alive, assigned by dropped records
    std::vector<std::pair<identifier, Scalar>> kept;  // adjoints set aside, until passed once
    bool lanes_kept = false;  // a vector sweep had stopped above the start before the reset
    // A scalar sweep passed it and no clear_adjoints() came since; then
    // `at_pass` holds the fenced adjoints as that pass left them (room for
    // them is reserved with `fenced`).
    bool passed = false;
    std::vector<Scalar> at_pass;

    /// What a scalar sweep does at `at` (the adjoint vector holds every
    /// identifier named here). The first time: zero the fenced adjoints
    /// (what the new records gave the constants), add the kept ones back.
    /// Again (a sweep that starts at `at` after one that ended there): the
    /// fenced adjoints as the first pass left them, whatever was seeded on
    /// those constants in between.
    void pass(Scalar* adjoint) noexcept {
        if (passed) {
            for (std::size_t i = 0; i < fenced.size(); ++i) adjoint[fenced[i]] = at_pass[i];
            return;
        }
        for (const identifier id : fenced) adjoint[id] = Scalar(0);
        for (const auto& [id, value] : kept) adjoint[id] += value;
        kept.clear();
        at_pass.clear();
        for (const identifier id : fenced) at_pass.push_back(adjoint[id]);  // within the room reserved
        passed = true;
    }
    /// What a vector sweep of `lanes` adjoints per identifier does at `at`
    /// (the tape refuses the sweep first when lanes_kept).
    void pass_lanes(Scalar* adjoint, std::size_t lanes) const noexcept {
        for (const identifier id : fenced)
            for (std::size_t l = 0; l < lanes; ++l) adjoint[std::size_t(id) * lanes + l] = Scalar(0);
    }
};

}  // namespace tapeflow::detail
