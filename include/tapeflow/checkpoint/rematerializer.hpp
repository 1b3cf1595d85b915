// tapeflow/checkpoint/rematerializer.hpp - recomputable regions whose tapes
// are dropped when they exceed a memory budget and recorded again when the
// sweep needs them (budget-driven rematerialization).
//
//   tapeflow::rematerializer remat(64 << 20);          // budget for the regions' tapes
//   for (...) remat.region(state, [&](std::vector<Real>& s) { layer(s); });
//
// Each region is taped on a private tape of its own and put on the main tape
// as ONE entry (custom_adjoint.hpp) that also keeps a snapshot of the region's
// input values. While the regions' tapes together hold more than the budget,
// the one with the lowest score
//
//     score = recording time / (tape bytes x staleness)
//
// loses its tape (in the spirit of dynamic tensor rematerialization: cheap to
// redo, big, and not touched for long goes first; staleness counts the
// regions recorded or swept since it was last used). When the sweep reaches
// a region without a tape, it records the region again from its snapshot,
// then sweeps it. Gradients are those of plain taping, bit for bit.
//
// The same rules as for checkpointed_loop's step apply to the region's
// function: active inputs only through `state`, the same result for the same
// state, exceptions reach the caller (reset() the tape afterwards).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "../custom_adjoint.hpp"
#include "../error.hpp"
#include "../real.hpp"

namespace tapeflow {

/// What a rematerializer did.
struct rematerialization_statistics {
    std::uint64_t regions = 0;           ///< regions recorded
    std::uint64_t evictions = 0;         ///< region tapes dropped to meet the budget
    std::uint64_t rerecorded = 0;        ///< regions recorded again by sweeps
    std::size_t held_bytes = 0;          ///< memory of the region tapes held now
    std::size_t peak_held_bytes = 0;     ///< most held at once
    std::size_t snapshot_bytes = 0;      ///< memory of the input snapshots
    double record_seconds = 0;           ///< recording regions (first time)
    double rerecord_seconds = 0;         ///< recording them again in sweeps
};

template <class Scalar>
class basic_rematerializer {
public:
    using real_type = basic_real<Scalar>;
    using function = std::function<void(std::vector<real_type>&)>;

    /// `budget_bytes`: the most memory the regions' tapes may hold together
    /// (0: keep none, record every region again in the sweep).
    explicit basic_rematerializer(std::size_t budget_bytes) : state_(std::make_shared<shared>()) {
        state_->budget = budget_bytes;
    }

    /// Runs `fn(state)` as a recomputable region: taped on its own tape, one
    /// entry on the active tape. The rematerializer may be destroyed before
    /// the sweep (the entries keep what they need).
    void region(std::vector<real_type>& state, function fn) {
        auto& tape = basic_tape<Scalar>::active();
        auto r = std::make_shared<region_tape>();
        r->fn = std::move(fn);
        r->input.resize(state.size());
        for (std::size_t i = 0; i < state.size(); ++i) r->input[i] = state[i].value();
        {
            // record on the region's tape (the main tape's recording pauses)
            struct resume {
                basic_tape<Scalar>& tape;
                bool on;
                ~resume() {
                    if (on) tape.start_recording();
                }
            } guard{tape, tape.is_recording()};
            if (guard.on) tape.stop_recording();
            record(*r, state_->stats.record_seconds);
        }
        std::vector<Scalar> output(state.size());
        for (std::size_t i = 0; i < state.size(); ++i) output[i] = r->outputs[i].value();
        ++state_->stats.regions;
        state_->stats.snapshot_bytes += r->input.size() * sizeof(Scalar);
        state_->regions.push_back(r);
        state_->touch(*r);
        state_->hold(*r);

        basic_custom_adjoint<Scalar> op(tape);
        op.reserve(state.size(), state.size());
        for (const auto& x : state) op.add_input(x);
        for (std::size_t i = 0; i < state.size(); ++i) op.add_output(state[i], output[i]);
        op.assume_distinct_outputs();
        op.record([r, s = state_](const Scalar* y_bar, Scalar* x_bar) { s->reverse(*r, y_bar, x_bar); },
                  r->input.size() * sizeof(Scalar));
    }

    const rematerialization_statistics& statistics() const noexcept { return state_->stats; }

private:
    struct region_tape {
        function fn;
        std::vector<Scalar> input;                // snapshot of the input values
        std::unique_ptr<basic_tape<Scalar>> tape;  // nullptr: dropped
        std::vector<identifier> inputs;           // identifiers on `tape`
        std::vector<real_type> outputs;           // variables of `tape`
        std::size_t bytes = 0;
        double cost = 0;                          // seconds to record
        std::uint64_t last_used = 0;
    };

    // Records r.fn from r.input on a fresh tape of r's own.
    static void record(region_tape& r, double& seconds) {
        const auto start = std::chrono::steady_clock::now();
        basic_tape<Scalar>* previous = basic_tape<Scalar>::active_slot();
        auto tape = std::make_unique<basic_tape<Scalar>>();
        struct restore {
            basic_tape<Scalar>* previous;
            ~restore() { basic_tape<Scalar>::active_slot() = previous; }
        } guard{previous};
        tape->start_recording();
        std::vector<real_type> x(r.input.begin(), r.input.end());
        r.inputs.resize(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            tape->register_input(x[i]);
            r.inputs[i] = x[i].id();
        }
        r.fn(x);
        if (x.size() != r.input.size())
            throw usage_error("rematerializer: the region changed the size of the state; keep it fixed");
        for (auto& xi : x) tape->register_output(xi);
        tape->stop_recording();
        r.outputs = std::move(x);
        r.bytes = tape->statistics().allocated_bytes;
        r.tape = std::move(tape);
        r.cost = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        seconds += r.cost;
    }

    struct shared {
        std::size_t budget = 0;
        std::uint64_t clock = 0;
        std::vector<std::weak_ptr<region_tape>> regions;
        rematerialization_statistics stats;

        void touch(region_tape& r) { r.last_used = ++clock; }

        // Counts r's tape and drops the lowest-scoring tapes over the budget.
        void hold(region_tape& r) {
            stats.held_bytes += r.bytes;
            while (stats.held_bytes > budget) {
                region_tape* victim = nullptr;
                double lowest = 0;
                for (const auto& w : regions) {
                    auto p = w.lock();
                    if (!p || !p->tape) continue;
                    const double staleness = double(clock - p->last_used + 1);
                    const double score = p->cost / (double(p->bytes) * staleness);
                    if (!victim || score < lowest) {
                        victim = p.get();
                        lowest = score;
                    }
                }
                if (!victim) break;
                drop(*victim);
                ++stats.evictions;
            }
            if (stats.held_bytes > stats.peak_held_bytes) stats.peak_held_bytes = stats.held_bytes;
        }

        void drop(region_tape& r) {
            r.outputs.clear();  // variables of r.tape: released while it is alive
            r.tape.reset();
            stats.held_bytes -= r.bytes;
            r.bytes = 0;
        }

        // A region without a tape is recorded again, swept, and only then
        // counted against the budget (it may drop itself right away): the
        // region being swept may exceed the budget for its sweep.
        void reverse(region_tape& r, const Scalar* y_bar, Scalar* x_bar) {
            touch(r);
            if (r.tape) {
                sweep(r, y_bar, x_bar);
                return;
            }
            record(r, stats.rerecord_seconds);
            ++stats.rerecorded;
            sweep(r, y_bar, x_bar);
            hold(r);
        }

        static void sweep(region_tape& r, const Scalar* y_bar, Scalar* x_bar) {
            basic_tape<Scalar>& tape = *r.tape;
            tape.clear_adjoints();
            for (std::size_t i = 0; i < r.outputs.size(); ++i) tape.set_adjoint(r.outputs[i], y_bar[i]);
            tape.sweep();
            for (std::size_t i = 0; i < r.inputs.size(); ++i) x_bar[i] += tape.adjoint(r.inputs[i]);
        }
    };

    std::shared_ptr<shared> state_;
};

using rematerializer = basic_rematerializer<double>;

}  // namespace tapeflow
