// tapeflow/checkpoint/state_function.hpp - what checkpointed_loop and the
// rematerializer share: a function of a state vector recorded on a private
// tape and swept on demand, and the taping of such work as ONE entry.
//
//   main tape:     ... [entry: state -> state] ...      (custom_adjoint.hpp)
//                            |
//   reverse rule:  taped_function: record fn from input values on a
//                  private tape, sweep it with the output adjoints
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../custom_adjoint.hpp"
#include "../error.hpp"
#include "../real.hpp"

namespace tapeflow::detail {

// While alive, `tape` is the active tape and records, with no input
// registered: work on passive values records nothing then, unless it reads
// an active variable of another recording (one a step captured instead of
// finding it in its state), whose derivatives the step's own tape would
// lose. check() throws when that happened: one comparison, run after each
// step. pause() and resume() leave out work that may read such variables
// (checkpointed_while's condition).
template <class Scalar>
class capture_check {
public:
    capture_check(basic_tape<Scalar>& tape, const char* who) : tape_(tape), scope_(tape), who_(who) {
        tape_.reset();
        tape_.start_recording();
        tape_.set_probing(true);
    }
    ~capture_check() {
        tape_.set_probing(false);
        tape_.stop_recording();
        tape_.reset();
    }
    capture_check(const capture_check&) = delete;
    capture_check& operator=(const capture_check&) = delete;

    void pause() { tape_.stop_recording(); }
    void resume() { tape_.start_recording(); }

    /// \throws usage_error if anything was recorded since the start.
    void check() const {
        if (TAPEFLOW_UNLIKELY(tape_.get_position().statements != 0))
            throw usage_error(std::string(who_) +
                              " used an active variable that is not in the state (captured from the "
                              "enclosing recording): its derivatives would be lost. Put it into the state "
                              "(an element the step leaves unchanged), or use its value() if no derivative "
                              "should flow through it");
    }

private:
    basic_tape<Scalar>& tape_;
    active_tape_scope<basic_tape<Scalar>> scope_;
    const char* who_;
};

// fn(state) recorded on a tape of its own from plain input values.
template <class Scalar>
class taped_function {
public:
    using real_type = basic_real<Scalar>;

    taped_function() = default;
    // No clear(): it activates the tape, which throws while another tape
    // records (a main tape reset while recording drops its entries). The
    // outputs give their identifiers to the active tape, which keeps only
    // its own: nothing to give back to a tape that goes with them.
    ~taped_function() = default;
    taped_function(const taped_function&) = delete;
    taped_function& operator=(const taped_function&) = delete;

    /// Records fn(x) with x = `input` as registered inputs. On an exception
    /// nothing is kept. `who` starts the error message ("checkpointed_loop: the step").
    /// \throws usage_error if fn changes the size of x.
    template <class F>
    void record(const std::vector<Scalar>& input, F& fn, const char* who) {
        clear();
        active_tape_scope<basic_tape<Scalar>> scope(tape_);
        struct on_failure {
            basic_tape<Scalar>& tape;
            bool done = false;
            ~on_failure() {
                if (!done) {
                    tape.stop_recording();
                    tape.reset();
                }
            }
        } failure{tape_};
        tape_.start_recording();
        std::vector<real_type> x(input.begin(), input.end());
        inputs_.resize(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            tape_.register_input(x[i]);
            inputs_[i] = x[i].id();
        }
        fn(x);
        if (x.size() != input.size())
            throw usage_error(std::string(who) + " changed the size of the state; keep it fixed");
        for (auto& xi : x) tape_.register_output(xi);
        tape_.stop_recording();
        outputs_ = std::move(x);
        failure.done = true;
    }

    /// Sweeps the recording with the output adjoints `y_bar` and writes the
    /// input adjoints to `x_bar` (which may be `y_bar`).
    void sweep(const Scalar* y_bar, Scalar* x_bar) {
        tape_.clear_adjoints();
        for (std::size_t i = 0; i < outputs_.size(); ++i) tape_.set_adjoint(outputs_[i], y_bar[i]);
        tape_.sweep();
        for (std::size_t i = 0; i < inputs_.size(); ++i) x_bar[i] = tape_.adjoint(inputs_[i]);
    }

    /// Forgets the recording (its memory is kept for the next one).
    void clear() {
        {
            active_tape_scope<basic_tape<Scalar>> scope(tape_);  // the outputs give their identifiers back
            outputs_.clear();
        }
        tape_.reset();
    }

    /// The private tape, for a capture_check between two recordings.
    basic_tape<Scalar>& tape() noexcept { return tape_; }

    const std::vector<real_type>& outputs() const noexcept { return outputs_; }
    std::size_t record_bytes() const noexcept { return std::size_t(tape_.get_position().bytes); }
    std::size_t allocated_bytes() const { return tape_.statistics().allocated_bytes; }

private:
    basic_tape<Scalar> tape_;
    std::vector<identifier> inputs_;  // identifiers of the inputs on tape_
    std::vector<real_type> outputs_;  // variables of tape_
};

// Tapes work on `state` as one entry: `forward(*entry, values, recording)`
// runs it with the recording paused (resumed also on exceptions) and returns
// the final values (`recording`: whether the active tape was recording);
// `entry->reverse(y_bar, x_bar)` is the reverse rule and `entry->bytes()`
// what the entry holds.
template <class Scalar, class Entry, class Forward>
void tape_state_entry(std::vector<basic_real<Scalar>>& state, std::shared_ptr<Entry> entry, Forward forward) {
    auto& tape = basic_tape<Scalar>::active();
    std::vector<Scalar> initial(state.size());
    for (std::size_t i = 0; i < state.size(); ++i) initial[i] = state[i].value();
    std::vector<Scalar> final_state;
    const std::size_t effects = outside_effects();
    {
        struct resume {
            basic_tape<Scalar>& tape;
            bool on;
            ~resume() {
                if (on) tape.start_recording();
            }
        } resume_guard{tape, tape.is_recording()};
        if (resume_guard.on) tape.stop_recording();
        final_state = forward(*entry, std::move(initial), resume_guard.on);
    }
    basic_custom_adjoint<Scalar> op(tape);
    op.reserve(state.size(), state.size());
    for (const auto& x : state) op.add_input(x);
    for (std::size_t i = 0; i < state.size(); ++i) op.add_output(state[i], final_state[i]);
    op.assume_distinct_outputs();
    // a step that communicates (tapeflow/mpi.hpp) must be re-run and swept in
    // every sweep, also where this process's adjoints are 0: its partners wait
    if (outside_effects() != effects) op.run_in_every_sweep();
    const std::size_t captured = entry->bytes();
    op.record([entry](const Scalar* y_bar, Scalar* x_bar) { entry->reverse(y_bar, x_bar); }, captured);
}

}  // namespace tapeflow::detail
