// tapeflow/checkpoint/checkpointed_loop.hpp - a time loop taped as ONE entry
// that keeps snapshots of the state instead of the tape of every step, and
// records each step again when the reverse sweep needs it.
//
//   tapeflow::checkpointed_loop(steps, state, step, snapshots);
//
// `state` is a std::vector<basic_real<S>> (the loop's state and, if needed,
// parameters carried along unchanged); `step(state)` advances it by one step.
// Memory: `snapshots` copies of the state (values only) + the tape of one
// step, whatever the number of steps. Time: the steps are run once forward
// without taping, and during the reverse sweep each step is taped once and
// some are re-run, as few as the binomial schedule allows
// (checkpoint/binomial.hpp):
//
//   forward (recording):  0 -> m1 -> m2 -> ... -> n-1 -> n     snapshots at 0, m1, m2, ...
//   reverse (sweep):      tape n-1 from the state kept at n-1, sweep it;
//                         [m_k, n-1) from snapshot m_k, ..., [0, m1) from 0,
//                         each interval split again at its own best point.
//
// The gradient is that of plain taping up to rounding (the same operations
// in the same order per step: in practice bit-for-bit).
//
// Rules for `step`: every active input it reads must be in `state` (a
// parameter to differentiate is an element of `state` that the step leaves
// unchanged); it must not capture active variables of the enclosing recording
// (their derivatives would be lost: while recording, the forward runs a step
// on Reals with its private tape recording and nothing registered, so such a
// variable leaves a record there, and checkpointed_loop throws usage_error;
// a template step runs on plain numbers then, where it cannot use them). It runs on plain values during the
// forward, and on a private tape of the loop during the sweep, so it must
// compute the same thing whenever it is called with the same state. If it
// can also be called with a std::vector<S>& (a generic lambda or a template),
// the untaped runs call it on plain numbers, which is several times faster;
// it must then compute the same values as with Real (it does when it is the
// same template, up to the compiler contracting a*b+c into FMAs differently
// in the two instantiations: then the gradient equals plain taping's to
// rounding instead of bit for bit). An
// exception it throws during the sweep reaches the caller of sweep(); reset()
// the tape afterwards.
//
// **Example**:
//   std::vector<tapeflow::Real> u = initial;     // registered inputs
//   auto stats = tapeflow::checkpointed_loop(10000, u, heat_step, 30);
//   tapeflow::Real loss = ...u...;               // taping goes on
//   ... sweep; stats->steps_recomputed tells what the memory saving cost
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../real.hpp"
#include "binomial.hpp"
#include "state_function.hpp"

namespace tapeflow {

/// What a checkpointed loop did; updated by each sweep through it.
struct checkpoint_statistics {
    std::uint64_t steps = 0;             ///< steps of the loop
    std::uint64_t snapshots = 0;         ///< snapshot slots (the initial state's included)
    std::uint64_t snapshots_taken = 0;   ///< states copied into a slot, forward and in sweeps
    std::uint64_t peak_snapshots = 0;    ///< most slots in use at once
    std::uint64_t steps_recomputed = 0;  ///< steps re-run untaped by sweeps
    std::uint64_t steps_taped = 0;       ///< steps recorded by sweeps (each once per sweep)
    std::size_t state_bytes = 0;         ///< bytes of one snapshot
    std::size_t peak_step_tape_bytes = 0;  ///< largest tape of one step
    double forward_seconds = 0;          ///< the loop run forward while recording
    double recompute_seconds = 0;        ///< re-running steps in sweeps
    double record_seconds = 0;           ///< taping steps in sweeps
    double sweep_seconds = 0;            ///< sweeping the steps' tapes
};

namespace detail {

// The loop's entry: snapshots, the step function and its private tape.
template <class Scalar, class Step>
class checkpointed_loop_entry {
public:
    using real_type = basic_real<Scalar>;
    using values = std::vector<Scalar>;
    using clock = std::chrono::steady_clock;

    // A step that also takes plain numbers (a template): the untaped runs use them.
    static constexpr bool plain_step = std::is_invocable_v<Step&, values&>;

    checkpointed_loop_entry(const char* who, std::uint64_t steps, std::uint64_t snapshots, Step step,
                            std::shared_ptr<checkpoint_statistics> stats)
        : who_(who),
          step_who_(std::string(who) + ": the step"),
          steps_(steps),
          slots_(snapshots),
          step_(std::move(step)),
          stats_(std::move(stats)) {
        stats_->steps = steps;
        stats_->snapshots = snapshots;
    }

    // Runs the loop forward from `initial` (plain values) and keeps the
    // snapshots of the schedule's first descent; returns the final state.
    // With `recording`, a step on Reals runs under a capture_check.
    values forward(values initial, bool recording) {
        const auto start = clock::now();
        width_ = initial.size();
        stats_->state_bytes = width_ * sizeof(Scalar);
        if (steps_ == 0) return initial;
        std::optional<capture_check<Scalar>> probe;
        if constexpr (!plain_step)
            if (recording) probe.emplace(step_tape_.tape(), step_who_.c_str());
        snapshot_.assign(slots_, values());
        used_ = 0;
        store(initial);
        descend(std::move(initial), probe ? &*probe : nullptr);
        values state = transient_;
        advance(state, 1, probe ? &*probe : nullptr);  // the last step: its result is the loop's output
        stats_->forward_seconds += seconds_since(start);
        descended_ = true;
        return state;
    }

    // Runs `while (keep_going(state)) step(state);` forward from `initial`,
    // the number of steps unknown in advance: snapshots at every d-th step,
    // and when the slots are full every other one is dropped and d doubles
    // (the kept snapshots stay evenly spaced). Returns the final state.
    template <class KeepGoing>
    values forward_online(values initial, KeepGoing& keep_going, bool recording) {
        const auto start = clock::now();
        std::optional<capture_check<Scalar>> probe;
        if (recording) probe.emplace(step_tape_.tape(), step_who_.c_str());
        width_ = initial.size();
        stats_->state_bytes = width_ * sizeof(Scalar);
        snapshot_.assign(slots_, values());
        segments_.clear();
        used_ = 0;
        store(initial);
        segments_.push_back(0);
        std::vector<real_type> x(initial.begin(), initial.end());
        std::uint64_t n = 0, spacing = 1;
        while (call_keep_going(keep_going, x, probe ? &*probe : nullptr)) {
            step_(x);
            check_width(x.size());
            if (probe) probe->check();
            ++n;
            if (n % spacing != 0) continue;
            if (used_ == slots_) {  // full: keep every other snapshot
                if (slots_ == 1) continue;
                std::size_t kept = 0;
                for (std::size_t j = 0; j < used_; ++j)
                    if (segments_[j] % (2 * spacing) == 0) {
                        if (kept != j) {  // (a vector moved onto itself may come out empty)
                            snapshot_[kept] = std::move(snapshot_[j]);
                            segments_[kept] = segments_[j];
                        }
                        ++kept;
                    }
                used_ = kept;
                segments_.resize(kept);
                spacing *= 2;
                if (n % spacing != 0) continue;
            }
            values v(width_);
            for (std::size_t i = 0; i < width_; ++i) v[i] = x[i].value();
            store(std::move(v));
            segments_.push_back(n);
        }
        if (segments_.back() == n && n > 0) {  // a snapshot of the final state is of no use
            segments_.pop_back();
            --used_;
        }
        steps_ = n;
        stats_->steps = n;
        values final_state(width_);
        for (std::size_t i = 0; i < width_; ++i) final_state[i] = x[i].value();
        stats_->forward_seconds += seconds_since(start);
        online_ = true;
        descended_ = true;
        return final_state;
    }

    // The reverse rule: output adjoints in, input adjoints added.
    void reverse(const Scalar* y_bar, Scalar* x_bar) {
        if (online_) {
            reverse_online(y_bar, x_bar);
            return;
        }
        if (steps_ == 0) {
            for (std::size_t i = 0; i < width(); ++i) x_bar[i] += y_bar[i];
            return;
        }
        if (!descended_) {  // an earlier sweep used the slots: descend again (0 -> n-1)
            const auto start = clock::now();
            used_ = 1;
            descend(snapshot_[0], nullptr);
            stats_->steps_recomputed += steps_ - 1;
            stats_->recompute_seconds += seconds_since(start);
        }
        descended_ = false;
        values adjoint(y_bar, y_bar + width());
        reverse_interval(0, steps_, slots_ - 1, true, adjoint, 0);
        for (std::size_t i = 0; i < width(); ++i) x_bar[i] += adjoint[i];
    }

    std::size_t bytes() const noexcept {
        return (slots_ + 1) * stats_->state_bytes;
    }

private:
    std::size_t width() const noexcept { return width_; }

    // keep_going decides on values, outside the capture check: its
    // derivatives do not matter.
    template <class KeepGoing>
    static bool call_keep_going(KeepGoing& keep_going, const std::vector<real_type>& x,
                                capture_check<Scalar>* probe) {
        if (probe) probe->pause();
        const bool go = keep_going(x);
        if (probe) probe->resume();
        return go;
    }

    // Online: the segments between the snapshots of the forward, last one
    // first, each reversed with the binomial schedule in the slots above it.
    void reverse_online(const Scalar* y_bar, Scalar* x_bar) {
        values adjoint(y_bar, y_bar + width());
        if (steps_ > 0) {
            if (!descended_) {  // an earlier sweep used the slots: take the snapshots again
                used_ = 1;
                for (std::size_t j = 1; j < segments_.size(); ++j)
                    store(recompute(j - 1, segments_[j] - segments_[j - 1]));
            }
            descended_ = false;
            for (std::size_t j = segments_.size(); j-- > 0;) {
                const std::uint64_t a = segments_[j];
                const std::uint64_t b = j + 1 < segments_.size() ? segments_[j + 1] : steps_;
                used_ = j + 1;
                reverse_interval(a, b, slots_ - used_, false, adjoint, j);
            }
        }
        for (std::size_t i = 0; i < width(); ++i) x_bar[i] += adjoint[i];
    }

    static double seconds_since(clock::time_point start) {
        return std::chrono::duration<double>(clock::now() - start).count();
    }

    // The first descent of the schedule from state 0 (held in slot 0): keeps
    // a snapshot at each split point, and state n-1 in transient_.
    void descend(values state, capture_check<Scalar>* probe) {
        std::uint64_t a = 0, b = steps_, free = slots_ - 1;
        while (b - a > 1) {
            const std::uint64_t m = a + checkpoint::best_split(b - a, free + 1);
            advance(state, m - a, probe);
            if (m == b - 1) break;
            store(state);
            a = m;
            --free;
        }
        transient_ = std::move(state);
    }

    // Reverses steps [a, b). State a is in the last used slot; with `pre`
    // the first descent was done already (its snapshots are in the slots and
    // state b-1 is in transient_). `adjoint` holds the adjoint of state b and
    // becomes that of state a.
    void reverse_interval(std::uint64_t a, std::uint64_t b, std::uint64_t free, bool pre, values& adjoint,
                          std::size_t slot) {
        while (b > a) {
            if (b - a == 1) {
                tape_step(pre ? transient_ : snapshot_[slot], adjoint);
                return;
            }
            const std::uint64_t m = a + checkpoint::best_split(b - a, free + 1);
            if (m == b - 1) {  // no snapshot: advance to b-1 and tape the last step
                if (pre) {
                    tape_step(transient_, adjoint);
                } else {
                    values state = recompute(slot, m - a);
                    tape_step(state, adjoint);
                }
                --b;
                pre = false;
                continue;
            }
            std::size_t next = slot + 1;
            if (!pre) {
                values state = recompute(slot, m - a);
                store(std::move(state));
                next = used_ - 1;
            }
            reverse_interval(m, b, free - 1, pre, adjoint, next);
            used_ = next;  // release the slot of state m
            b = m;
            pre = false;
        }
    }

    // State (slot's position + count) recomputed from a slot, untaped.
    values recompute(std::size_t slot, std::uint64_t count) {
        const auto start = clock::now();
        values state = snapshot_[slot];
        advance(state, count, nullptr);
        stats_->steps_recomputed += count;
        stats_->recompute_seconds += seconds_since(start);
        return state;
    }

    void store(values state) {
        snapshot_[used_] = std::move(state);
        ++used_;
        ++stats_->snapshots_taken;
        if (used_ > stats_->peak_snapshots) stats_->peak_snapshots = used_;
    }

    // `count` steps on plain values (no tape records, unless a capture
    // check watches the forward).
    void advance(values& state, std::uint64_t count, capture_check<Scalar>* probe) {
        if (count == 0) return;
        if constexpr (plain_step) {  // a template step: run it on plain numbers
            for (std::uint64_t i = 0; i < count; ++i) step_(state);
            check_width(state.size());
        } else {
            std::vector<real_type> x(state.begin(), state.end());
            for (std::uint64_t i = 0; i < count; ++i) {
                step_(x);
                if (probe) probe->check();
            }
            check_width(x.size());
            for (std::size_t i = 0; i < state.size(); ++i) state[i] = x[i].value();
        }
    }

    // Tapes one step from `state` on the private tape, sweeps it with the
    // adjoint of its output, and leaves the adjoint of its input in `adjoint`.
    void tape_step(const values& state, values& adjoint) {
        auto start = clock::now();
        step_tape_.record(state, step_, step_who_.c_str());
        stats_->record_seconds += seconds_since(start);
        start = clock::now();
        if (step_tape_.record_bytes() > stats_->peak_step_tape_bytes)
            stats_->peak_step_tape_bytes = step_tape_.record_bytes();
        step_tape_.sweep(adjoint.data(), adjoint.data());
        step_tape_.clear();
        ++stats_->steps_taped;
        stats_->sweep_seconds += seconds_since(start);
    }

    void check_width(std::size_t size) const {
        if (size != width())
            throw usage_error(std::string(who_) + ": the step changed the size of the state; keep it fixed");
    }

    const char* who_;       // "checkpointed_loop" or "checkpointed_while"
    std::string step_who_;  // "...: the step"
    std::uint64_t steps_;
    std::uint64_t slots_;
    Step step_;
    std::shared_ptr<checkpoint_statistics> stats_;
    std::vector<values> snapshot_;           // slots, used as a stack
    std::size_t used_ = 0;
    std::size_t width_ = 0;                  // size of the state
    std::vector<std::uint64_t> segments_;    // online: the steps the forward kept snapshots of
    bool online_ = false;
    values transient_;                       // state n-1 after a descent
    bool descended_ = false;
    taped_function<Scalar> step_tape_;       // one step at a time
};

}  // namespace detail

/// Runs `steps` steps of `step(state)` and tapes them as one entry that keeps
/// `snapshots` copies of the state (the initial one included) and re-records
/// steps during the sweep (binomial schedule). Returns the loop's statistics,
/// updated by every sweep through the entry.
/// \throws usage_error if snapshots == 0; while recording, if the step uses
/// an active variable that is not in the state.
template <class Scalar, class Step>
std::shared_ptr<const checkpoint_statistics> checkpointed_loop(std::size_t steps,
                                                                std::vector<basic_real<Scalar>>& state,
                                                                Step step, std::size_t snapshots) {
    if (snapshots == 0)
        throw usage_error("checkpointed_loop: needs at least one snapshot (the initial state)");
    auto stats = std::make_shared<checkpoint_statistics>();
    const std::uint64_t slots = std::max<std::uint64_t>(1, std::min<std::uint64_t>(snapshots, steps));
    using entry_type = detail::checkpointed_loop_entry<Scalar, Step>;
    detail::tape_state_entry(state,
                             std::make_shared<entry_type>("checkpointed_loop", steps, slots, std::move(step), stats),
                             [](entry_type& e, std::vector<Scalar> initial, bool recording) {
                                 return e.forward(std::move(initial), recording);
                             });
    return stats;
}

/// `while (keep_going(state)) step(state);` for loops whose number of steps
/// is not known in advance, taped like checkpointed_loop with `snapshots`
/// slots: the forward keeps evenly spaced snapshots (thinned as the loop goes
/// on), and the sweep reverses each stretch between two of them with the
/// binomial schedule. `keep_going(const std::vector<basic_real<S>>&)` decides
/// on values; it is called only during the forward.
/// \throws usage_error as checkpointed_loop.
template <class Scalar, class KeepGoing, class Step>
std::shared_ptr<const checkpoint_statistics> checkpointed_while(std::vector<basic_real<Scalar>>& state,
                                                                 KeepGoing keep_going, Step step,
                                                                 std::size_t snapshots) {
    if (snapshots == 0)
        throw usage_error("checkpointed_while: needs at least one snapshot (the initial state)");
    auto stats = std::make_shared<checkpoint_statistics>();
    using entry_type = detail::checkpointed_loop_entry<Scalar, Step>;
    detail::tape_state_entry(state,
                             std::make_shared<entry_type>("checkpointed_while", 0, snapshots, std::move(step), stats),
                             [&keep_going](entry_type& e, std::vector<Scalar> initial, bool recording) {
                                 return e.forward_online(std::move(initial), keep_going, recording);
                             });
    return stats;
}

}  // namespace tapeflow
