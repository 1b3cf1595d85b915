// tapeflow/checkpoint/checkpointed_loop.hpp - a time loop taped as ONE entry
// that keeps snapshots of the state instead of the tape of every step, and
// records each step again when the reverse sweep needs it.
//
//   tapeflow::checkpointed_loop(steps, state, step, snapshots);
//   tapeflow::checkpointed_loop(steps, state, passive, step, snapshots);
//
// `state` is a std::vector<basic_real<S>> (the loop's state and, if needed,
// parameters carried along unchanged); `step(state)` advances it by one step.
// `passive` holds plain values that the step reads and advances besides the
// state, such as the time or a step counter (any copyable type: a double, a
// struct); `step(state, passive)` advances both. A snapshot keeps both parts:
//
//   snapshot k:  [ values of state k: width x S | copy of passive k ]
//
// Memory: `snapshots` snapshots + the tape of one step, whatever the number
// of steps. Time: the steps are run once forward without taping, and during
// the reverse sweep each step is taped once and some are re-run, as few as
// the binomial schedule allows (checkpoint/binomial.hpp):
//
//   forward (recording):  0 -> m1 -> m2 -> ... -> n-1 -> n     snapshots at 0, m1, m2, ...
//   reverse (sweep):      tape n-1 from the state kept at n-1, sweep it;
//                         [m_k, n-1) from snapshot m_k, ..., [0, m1) from 0,
//                         each interval split again at its own best point.
//
// The gradient is that of plain taping up to rounding (the same operations
// in the same order per step: in practice bit-for-bit).
//
// Rules for `step`, which runs several times per step, from snapshots:
//  - It is kept until the sweep and called there: what it captures by
//    reference must outlive the sweep. Inside the function given to a
//    driver (tapeflow::gradient(f, x)) the sweep runs after f returned, so
//    a step capturing f's locals by reference (`[&]`) reads dead memory:
//    capture those by value.
//  - Everything it reads that changes from step to step is in `state` or in
//    `passive`. A time or a counter kept outside and advanced by the step
//    ("hidden state") is seen by a run from a snapshot where the last run
//    left it: the sweep differentiates other steps than the forward ran.
//  - Every active input it reads is in `state` (a parameter to
//    differentiate is an element of `state` that the step leaves unchanged);
//    it must not capture active variables of the enclosing recording (their
//    derivatives would be lost). Values (x.value()) are fine: constants.
//  - It keeps the size of the state.
// It runs on plain values during the forward and the runs again, and on a
// private tape of the loop during the sweep. If it can also be called with
// a std::vector<S>& (a generic lambda or a template), those untaped runs
// call it on plain numbers, which is several times faster; it must then
// compute the same values as with Real (it does when it is the same
// template, up to the compiler contracting a*b+c into FMAs differently in
// the two instantiations: then the gradient equals plain taping's to
// rounding instead of bit for bit). An exception it throws during the sweep
// reaches the caller of sweep(); reset() the tape afterwards.
//
// Checks (usage_error, the message says what to change):
//  - every build, while recording: a step on Reals runs in the forward with
//    the private tape recording and nothing registered (capture_check in
//    state_function.hpp); a captured active variable leaves a record there.
//    One comparison per step. (A template step runs on plain numbers in the
//    forward, where it cannot use Reals.)
//  - TAPEFLOW_DEBUG_CHECKS: the forward notes a fingerprint of the values
//    each step computed (a weighted sum, 8 bytes a step); every later run
//    of the step, untaped or taped, is compared with it:
//    exactly when the run uses the same instantiation as the forward, to
//    sqrt(epsilon) of the magnitude when a taped Real run follows a forward
//    on plain numbers. A difference means hidden state.
//
// **Example**:
//   std::vector<tapeflow::Real> u = initial;     // registered inputs
//   double t = 0;                                // the time: passive
//   auto stats = tapeflow::checkpointed_loop(10000, u, t, [&](auto& s, double& time) {
//       heat_step(s, time, dt);
//       time += dt;
//   }, 30);
//   tapeflow::Real loss = ...u...;               // taping goes on
//   ... sweep; stats->steps_recomputed tells what the memory saving cost
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../expr/std_math.hpp"
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

/// The passive part of a loop that has none.
struct no_passive {};

template <class T>
struct holds_real : is_real<T> {};
template <class S, class A>
struct holds_real<std::vector<basic_real<S>, A>> : std::true_type {};

// One state of the loop: the values of its active part and a copy of its
// passive part.
template <class Scalar, class Passive>
struct loop_state {
    std::vector<Scalar> values;
    Passive passive;
};

// The loop's entry: snapshots, the step function and its private tape.
template <class Scalar, class Passive, class Step>
class checkpointed_loop_entry {
public:
    using real_type = basic_real<Scalar>;
    using values = std::vector<Scalar>;
    using state = loop_state<Scalar, Passive>;
    using clock = std::chrono::steady_clock;

    static constexpr bool has_passive = !std::is_same_v<Passive, no_passive>;
    // A step that also takes plain numbers (a template): the untaped runs use them.
    static constexpr bool plain_step = has_passive ? std::is_invocable_v<Step&, values&, Passive&>
                                                   : std::is_invocable_v<Step&, values&>;

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

    // Runs the loop forward from `initial` (plain values) and `passive`, and
    // keeps the snapshots of the schedule's first descent; returns the final
    // values and leaves the final passive part in `passive`. With
    // `recording`, a step on Reals runs under a capture_check.
    values forward(values initial, Passive& passive, bool recording) {
        const auto start = clock::now();
        begin(initial.size());
        if (steps_ == 0) return initial;
        std::optional<capture_check<Scalar>> probe;
        if constexpr (!plain_step)
            if (recording) probe.emplace(step_tape_.tape(), step_who_.c_str());
        if constexpr (debug_checks) trace_.assign(steps_, 0.0);
        store(state{std::move(initial), passive});
        descend(state(snapshot_[0]), probe ? &*probe : nullptr, true);
        state last = transient_;
        advance(last, steps_ - 1, 1, probe ? &*probe : nullptr, true);  // its result is the loop's output
        passive = std::move(last.passive);
        stats_->forward_seconds += seconds_since(start);
        descended_ = true;
        return std::move(last.values);
    }

    // Runs `while (keep_going(state)) step(state);` forward from `initial`,
    // the number of steps unknown in advance: snapshots at every d-th step,
    // and when the slots are full every other one is dropped and d doubles
    // (the kept snapshots stay evenly spaced). Returns the final values and
    // leaves the final passive part in `passive`.
    template <class KeepGoing>
    values forward_online(values initial, Passive& passive, KeepGoing& keep_going, bool recording) {
        const auto start = clock::now();
        begin(initial.size());
        std::optional<capture_check<Scalar>> probe;
        if constexpr (!plain_step)
            if (recording) probe.emplace(step_tape_.tape(), step_who_.c_str());
        segments_.clear();
        if constexpr (debug_checks) trace_.clear();
        state s{std::move(initial), passive};
        store(s);
        segments_.push_back(0);
        // what keep_going sees; for a step on Reals, the state itself
        std::vector<real_type> x(s.values.begin(), s.values.end());
        std::uint64_t n = 0, spacing = 1;
        while (call_keep_going(keep_going, x, s.passive, probe ? &*probe : nullptr)) {
            if constexpr (plain_step) {  // on plain numbers, as the runs again will be
                call_step(s.values, s.passive);
                check_width(s.values.size());
                for (std::size_t i = 0; i < width_; ++i) x[i] = s.values[i];
            } else {
                call_step(x, s.passive);
                check_width(x.size());
                if (probe) probe->check();
            }
            if constexpr (debug_checks) trace_.push_back(fingerprint_of(x).sum);
            ++n;
            if (n % spacing != 0) continue;
            if (snapshot_.size() == slots_) {  // full: keep every other snapshot
                if (slots_ == 1) continue;
                std::size_t kept = 0;
                for (std::size_t j = 0; j < snapshot_.size(); ++j)
                    if (segments_[j] % (2 * spacing) == 0) {
                        if (kept != j) {  // (a vector moved onto itself may come out empty)
                            snapshot_[kept] = std::move(snapshot_[j]);
                            segments_[kept] = segments_[j];
                        }
                        ++kept;
                    }
                release_from(kept);
                segments_.resize(kept);
                spacing *= 2;
                if (n % spacing != 0) continue;
            }
            if constexpr (!plain_step) read_values(x, s.values);
            store(s);
            segments_.push_back(n);
        }
        if (segments_.back() == n && n > 0) {  // a snapshot of the final state is of no use
            segments_.pop_back();
            snapshot_.pop_back();
        }
        steps_ = n;
        stats_->steps = n;
        if constexpr (!plain_step) read_values(x, s.values);
        passive = std::move(s.passive);
        stats_->forward_seconds += seconds_since(start);
        online_ = true;
        descended_ = true;
        return std::move(s.values);
    }

    // The reverse rule: output adjoints in, input adjoints added.
    void reverse(const Scalar* y_bar, Scalar* x_bar) {
        if (online_) {
            reverse_online(y_bar, x_bar);
            return;
        }
        if (steps_ == 0) {
            for (std::size_t i = 0; i < width_; ++i) x_bar[i] += y_bar[i];
            return;
        }
        if (!descended_) {  // an earlier sweep used the slots: descend again (0 -> n-1)
            const auto start = clock::now();
            release_from(1);
            descend(state(snapshot_[0]), nullptr, false);
            stats_->steps_recomputed += steps_ - 1;
            stats_->recompute_seconds += seconds_since(start);
        }
        descended_ = false;
        values adjoint(y_bar, y_bar + width_);
        reverse_interval(0, steps_, slots_ - 1, true, adjoint, 0);
        for (std::size_t i = 0; i < width_; ++i) x_bar[i] += adjoint[i];
    }

    std::size_t bytes() const noexcept {
        std::size_t b = (slots_ + 1) * stats_->state_bytes;
        if constexpr (debug_checks) b += trace_.capacity() * sizeof(double);
        return b;
    }

private:
    // The values after a step, in short (debug checks): a weighted sum, and
    // its magnitude for the tolerance of a comparison.
    struct fingerprint {
        double sum = 0;
        double magnitude = 0;
    };

    void begin(std::size_t width) {
        width_ = width;
        stats_->state_bytes = width_ * sizeof(Scalar) + (has_passive ? sizeof(Passive) : 0);
        snapshot_.clear();
        snapshot_.reserve(slots_);
    }

    template <class X>
    void call_step(X& x, Passive& p) {
        if constexpr (has_passive)
            step_(x, p);
        else
            step_(x);
    }

    // keep_going decides on values, outside the capture check: its
    // derivatives do not matter.
    template <class KeepGoing>
    bool call_keep_going(KeepGoing& keep_going, const std::vector<real_type>& x, const Passive& p,
                         capture_check<Scalar>* probe) {
        if (probe) probe->pause();
        bool go;
        if constexpr (has_passive)
            go = keep_going(x, p);
        else
            go = keep_going(x);
        if (probe) probe->resume();
        return go;
    }

    static void read_values(const std::vector<real_type>& x, values& v) {
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = x[i].value();
    }

    // Online: the segments between the snapshots of the forward, last one
    // first, each reversed with the binomial schedule in the slots above it.
    void reverse_online(const Scalar* y_bar, Scalar* x_bar) {
        values adjoint(y_bar, y_bar + width_);
        if (steps_ > 0) {
            if (!descended_) {  // an earlier sweep used the slots: take the snapshots again
                release_from(1);
                for (std::size_t j = 1; j < segments_.size(); ++j)
                    store(recompute(j - 1, segments_[j - 1], segments_[j] - segments_[j - 1]));
            }
            descended_ = false;
            for (std::size_t j = segments_.size(); j-- > 0;) {
                const std::uint64_t a = segments_[j];
                const std::uint64_t b = j + 1 < segments_.size() ? segments_[j + 1] : steps_;
                release_from(j + 1);
                reverse_interval(a, b, slots_ - (j + 1), false, adjoint, j);
            }
        }
        for (std::size_t i = 0; i < width_; ++i) x_bar[i] += adjoint[i];
    }

    static double seconds_since(clock::time_point start) {
        return std::chrono::duration<double>(clock::now() - start).count();
    }

    // The first descent of the schedule from state 0 (held in slot 0): keeps
    // a snapshot at each split point, and state n-1 in transient_.
    void descend(state s, capture_check<Scalar>* probe, bool first_run) {
        std::uint64_t a = 0, b = steps_, free = slots_ - 1;
        while (b - a > 1) {
            const std::uint64_t m = a + checkpoint::best_split(b - a, free + 1);
            advance(s, a, m - a, probe, first_run);
            if (m == b - 1) break;
            store(s);
            a = m;
            --free;
        }
        transient_ = std::move(s);
    }

    // Reverses steps [a, b). State a is in slot `slot`; with `pre` the first
    // descent was done already (its snapshots are in the slots and state b-1
    // is in transient_). `adjoint` holds the adjoint of state b and becomes
    // that of state a.
    void reverse_interval(std::uint64_t a, std::uint64_t b, std::uint64_t free, bool pre, values& adjoint,
                          std::size_t slot) {
        while (b > a) {
            if (b - a == 1) {
                tape_step(pre ? transient_ : snapshot_[slot], a, adjoint);
                return;
            }
            const std::uint64_t m = a + checkpoint::best_split(b - a, free + 1);
            if (m == b - 1) {  // no snapshot: advance to b-1 and tape the last step
                if (pre) {
                    tape_step(transient_, m, adjoint);
                } else {
                    const state s = recompute(slot, a, m - a);
                    tape_step(s, m, adjoint);
                }
                --b;
                pre = false;
                continue;
            }
            std::size_t next = slot + 1;
            if (!pre) {
                store(recompute(slot, a, m - a));
                next = snapshot_.size() - 1;
            }
            reverse_interval(m, b, free - 1, pre, adjoint, next);
            release_from(next);  // the slot of state m
            b = m;
            pre = false;
        }
    }

    // State first + count recomputed, untaped, from the slot holding state first.
    state recompute(std::size_t slot, std::uint64_t first, std::uint64_t count) {
        const auto start = clock::now();
        state s = snapshot_[slot];
        advance(s, first, count, nullptr, false);
        stats_->steps_recomputed += count;
        stats_->recompute_seconds += seconds_since(start);
        return s;
    }

    void store(state s) {
        snapshot_.push_back(std::move(s));
        ++stats_->snapshots_taken;
        if (snapshot_.size() > stats_->peak_snapshots) stats_->peak_snapshots = snapshot_.size();
    }

    // Frees the slots from `slot` on.
    void release_from(std::size_t slot) {
        snapshot_.erase(snapshot_.begin() + std::ptrdiff_t(slot), snapshot_.end());
    }

    // Steps first, ..., first + count - 1 on `s`, untaped (no tape records,
    // unless a capture check watches the forward); the debug checks note
    // their values in the forward (`first_run`) and compare them afterwards.
    void advance(state& s, std::uint64_t first, std::uint64_t count, capture_check<Scalar>* probe,
                 bool first_run) {
        if (count == 0) return;
        if constexpr (plain_step) {  // a template step: run it on plain numbers
            for (std::uint64_t i = 0; i < count; ++i) {
                call_step(s.values, s.passive);
                check_width(s.values.size());
                if constexpr (debug_checks) trace(first + i, fingerprint_of(s.values), first_run, true);
            }
        } else {
            std::vector<real_type> x(s.values.begin(), s.values.end());
            for (std::uint64_t i = 0; i < count; ++i) {
                call_step(x, s.passive);
                check_width(x.size());
                if (probe) probe->check();
                if constexpr (debug_checks) trace(first + i, fingerprint_of(x), first_run, true);
            }
            read_values(x, s.values);
        }
    }

    // Tapes step `index` from `s` on the private tape, sweeps it with the
    // adjoint of its output, and leaves the adjoint of its input in `adjoint`.
    void tape_step(const state& s, std::uint64_t index, values& adjoint) {
        auto start = clock::now();
        Passive p = s.passive;
        auto run = [this, &p](std::vector<real_type>& x) { call_step(x, p); };
        step_tape_.record(s.values, run, step_who_.c_str());
        stats_->record_seconds += seconds_since(start);
        start = clock::now();
        fingerprint taped;
        if constexpr (debug_checks) taped = fingerprint_of(step_tape_.outputs());
        if (step_tape_.record_bytes() > stats_->peak_step_tape_bytes)
            stats_->peak_step_tape_bytes = step_tape_.record_bytes();
        step_tape_.sweep(adjoint.data(), adjoint.data());
        step_tape_.clear();
        ++stats_->steps_taped;
        stats_->sweep_seconds += seconds_since(start);
        // a template step ran on plain numbers in the forward: Real may round
        // differently (FMA contraction), from the same input
        if constexpr (debug_checks) trace(index, taped, false, !plain_step);
    }

    void check_width(std::size_t size) const {
        if (size != width_)
            throw usage_error(std::string(who_) + ": the step changed the size of the state; keep it fixed");
    }

    // ---- debug checks: the step computes the same whenever it runs from the same state

    template <class V>
    static fingerprint fingerprint_of(const V& v) {
        fingerprint f;
        for (std::size_t i = 0; i < v.size(); ++i) {
            // the number inside a Real of Duals too (a checkpointed loop on a
            // second-order tape)
            const double term = (1.0 + double(i % 8) / 8) * double(detail::innermost_value(v[i]));
            f.sum += term;
            f.magnitude += std::fabs(term);
        }
        return f;
    }

    // Whether `now` reproduces the forward's `recorded` sum: bit for bit, or
    // (`exact` false) to sqrt(epsilon) of its magnitude.
    static bool same(double recorded, const fingerprint& now, bool exact) {
        if (recorded == now.sum || (std::isnan(recorded) && std::isnan(now.sum))) return true;
        if (exact) return false;
        const double tolerance =
            std::sqrt(double(std::numeric_limits<decltype(detail::innermost_value(Scalar()))>::epsilon())) *
            now.magnitude;
        return std::fabs(recorded - now.sum) <= tolerance;
    }

    // In the forward, notes what step `index` computed; later, compares.
    void trace(std::uint64_t index, const fingerprint& f, bool first_run, bool exact) {
        if (first_run) {
            trace_[index] = f.sum;
        } else if (!same(trace_[index], f, exact)) {
            throw usage_error(std::string(who_) + ": step " + std::to_string(index) +
                              " (from 0) computed other values when run again from a snapshot than in the "
                              "forward run: the step has hidden state, a variable outside the state that it "
                              "reads and changes (a time, a counter). Carry such values in the passive part "
                              "of the state: " + who_ +
                              (online_ ? "(state, passive, keep_going, step, snapshots)"
                                       : "(steps, state, passive, step, snapshots)") +
                              ", see docs/checkpointing.md (checked in builds with TAPEFLOW_DEBUG_CHECKS)");
        }
    }

    const char* who_;         // "checkpointed_loop" or "checkpointed_while"
    std::string step_who_;    // "...: the step"
    std::uint64_t steps_;
    std::uint64_t slots_;
    Step step_;
    std::shared_ptr<checkpoint_statistics> stats_;
    std::vector<state> snapshot_;            // the slots in use, a stack
    std::size_t width_ = 0;                  // size of the state
    std::vector<std::uint64_t> segments_;    // online: the steps the forward kept snapshots of
    bool online_ = false;
    state transient_;                        // state n-1 after a descent
    bool descended_ = false;
    std::vector<double> trace_;              // debug checks: fingerprint sums of the forward's steps
    taped_function<Scalar> step_tape_;       // one step at a time
};

template <class Scalar, class Passive, class Step>
std::shared_ptr<const checkpoint_statistics> run_checkpointed_loop(std::size_t steps,
                                                                    std::vector<basic_real<Scalar>>& state,
                                                                    Passive& passive, Step step,
                                                                    std::size_t snapshots) {
    if (snapshots == 0)
        throw usage_error("checkpointed_loop: needs at least one snapshot (the initial state)");
    auto stats = std::make_shared<checkpoint_statistics>();
    const std::uint64_t slots = std::max<std::uint64_t>(1, std::min<std::uint64_t>(snapshots, steps));
    using entry_type = checkpointed_loop_entry<Scalar, Passive, Step>;
    tape_state_entry(state, std::make_shared<entry_type>("checkpointed_loop", steps, slots, std::move(step), stats),
                     [&passive](entry_type& e, std::vector<Scalar> initial, bool recording) {
                         return e.forward(std::move(initial), passive, recording);
                     });
    return stats;
}

template <class Scalar, class Passive, class KeepGoing, class Step>
std::shared_ptr<const checkpoint_statistics> run_checkpointed_while(std::vector<basic_real<Scalar>>& state,
                                                                     Passive& passive, KeepGoing keep_going,
                                                                     Step step, std::size_t snapshots) {
    if (snapshots == 0)
        throw usage_error("checkpointed_while: needs at least one snapshot (the initial state)");
    auto stats = std::make_shared<checkpoint_statistics>();
    using entry_type = checkpointed_loop_entry<Scalar, Passive, Step>;
    tape_state_entry(state, std::make_shared<entry_type>("checkpointed_while", 0, snapshots, std::move(step), stats),
                     [&passive, &keep_going](entry_type& e, std::vector<Scalar> initial, bool recording) {
                         return e.forward_online(std::move(initial), passive, keep_going, recording);
                     });
    return stats;
}

}  // namespace detail

/// Runs `steps` steps of `step(state)` and tapes them as one entry that keeps
/// `snapshots` copies of the state (the initial one included) and re-records
/// steps during the sweep (binomial schedule). Returns the loop's statistics,
/// updated by every sweep through the entry.
/// \throws usage_error if snapshots == 0; while recording, if the step uses
/// an active variable that is not in the state; with TAPEFLOW_DEBUG_CHECKS,
/// from the sweep, if the step has hidden state (see the file comment).
template <class Scalar, class Step>
std::shared_ptr<const checkpoint_statistics> checkpointed_loop(std::size_t steps,
                                                                std::vector<basic_real<Scalar>>& state,
                                                                Step step, std::size_t snapshots) {
    detail::no_passive none;
    return detail::run_checkpointed_loop(steps, state, none, std::move(step), snapshots);
}

/// The same for a loop with a passive part: plain values the step reads and
/// advances besides the state, such as the time or a step counter.
/// `step(state, passive)` advances both; `passive` (any copyable type of
/// plain values) is snapshotted and restored with the state, and holds its
/// final value when checkpointed_loop returns.
///
/// **Example**:
///   double t = 0;                                  // the time: passive
///   tapeflow::checkpointed_loop(1000, u, t, [&](auto& s, double& time) {
///       advect(s, time, dt);
///       time += dt;
///   }, 30);
template <class Scalar, class Passive, class Step>
std::shared_ptr<const checkpoint_statistics> checkpointed_loop(std::size_t steps,
                                                                std::vector<basic_real<Scalar>>& state,
                                                                Passive& passive, Step step,
                                                                std::size_t snapshots) {
    static_assert(!detail::holds_real<Passive>::value,
                  "checkpointed_loop: the passive part holds plain values (a time, a counter); active "
                  "variables belong in the state");
    return detail::run_checkpointed_loop(steps, state, passive, std::move(step), snapshots);
}

/// `while (keep_going(state)) step(state);` for loops whose number of steps
/// is not known in advance, taped like checkpointed_loop with `snapshots`
/// slots: the forward keeps evenly spaced snapshots (thinned as the loop goes
/// on), and the sweep reverses each stretch between two of them with the
/// binomial schedule. `keep_going(const std::vector<basic_real<S>>&)` decides
/// on values; it is called only during the forward. A template step runs on
/// plain numbers there too (keep_going sees the values as passive Reals).
/// \throws usage_error as checkpointed_loop.
template <class Scalar, class KeepGoing, class Step>
std::shared_ptr<const checkpoint_statistics> checkpointed_while(std::vector<basic_real<Scalar>>& state,
                                                                 KeepGoing keep_going, Step step,
                                                                 std::size_t snapshots) {
    detail::no_passive none;
    return detail::run_checkpointed_while(state, none, std::move(keep_going), std::move(step), snapshots);
}

/// The same with a passive part (a time, a counter; see checkpointed_loop):
/// `keep_going(state, passive)` decides, `step(state, passive)` advances.
///
/// **Example**:
///   double t = 0;
///   tapeflow::checkpointed_while(
///       u, t, [&](const auto&, double time) { return time < t_end; },
///       [&](auto& s, double& time) { time += adaptive_step(s); }, 30);  // returns its dt
template <class Scalar, class Passive, class KeepGoing, class Step>
std::shared_ptr<const checkpoint_statistics> checkpointed_while(std::vector<basic_real<Scalar>>& state,
                                                                 Passive& passive, KeepGoing keep_going,
                                                                 Step step, std::size_t snapshots) {
    static_assert(!detail::holds_real<Passive>::value,
                  "checkpointed_while: the passive part holds plain values (a time, a counter); active "
                  "variables belong in the state");
    return detail::run_checkpointed_while(state, passive, std::move(keep_going), std::move(step), snapshots);
}

}  // namespace tapeflow
