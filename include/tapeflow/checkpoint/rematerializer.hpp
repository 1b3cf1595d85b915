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
// then sweeps it. Gradients are those of plain taping, bit for bit. A
// region whose function communicates (tapeflow/mpi.hpp) keeps its tape
// whatever the budget: each process decides alone which tapes to drop, and
// a region recorded again would send messages nobody expects.
//
// The same rules as for checkpointed_loop's step apply to the region's
// function: active inputs only through `state`, the same result for the same
// state, captures by reference only of what outlives the sweep (it is
// called there), exceptions reach the caller (reset() the tape afterwards). Unlike
// checkpointed_loop, nothing checks the first two in a release build (an
// active variable from outside throws with TAPEFLOW_DEBUG_CHECKS only).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "../real.hpp"
#include "state_function.hpp"

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
        auto r = std::make_shared<region_tape>();
        r->fn = std::move(fn);
        r->shared_state = state_;
        detail::tape_state_entry(state, r, [this, r](region_tape& rt, std::vector<Scalar> input, bool) {
            rt.input = std::move(input);
            state_->record(rt, state_->stats.record_seconds);
            std::vector<Scalar> output(rt.input.size());
            for (std::size_t i = 0; i < output.size(); ++i) output[i] = rt.tape->outputs()[i].value();
            ++state_->stats.regions;
            state_->stats.snapshot_bytes += rt.input.size() * sizeof(Scalar);
            state_->regions.push_back(r);
            state_->touch(rt);
            state_->hold(rt);
            return output;
        });
    }

    const rematerialization_statistics& statistics() const noexcept { return state_->stats; }

private:
    struct shared;

    // One region: its function, the snapshot of its input values and, while
    // held, its tape. The entry on the main tape owns it.
    struct region_tape {
        function fn;
        std::vector<Scalar> input;                            // snapshot of the input values
        std::unique_ptr<detail::taped_function<Scalar>> tape;  // nullptr: dropped
        std::size_t tape_bytes = 0;
        double cost = 0;  // seconds to record
        bool communicates = false;  // its function made MPI calls: never dropped
        int sweeping = 0;           // its tape is being swept: never dropped then
        bool counted = false;       // its tape_bytes are in held_bytes
        std::uint64_t last_used = 0;
        std::shared_ptr<shared> shared_state;

        void reverse(const Scalar* y_bar, Scalar* x_bar) { shared_state->reverse(*this, y_bar, x_bar); }
        // Destroyed with its entry (a reset, or an outer region's tape
        // dropped): its tape leaves held_bytes.
        ~region_tape() {
            if (counted && shared_state) shared_state->stats.held_bytes -= tape_bytes;
        }
        std::size_t bytes() const noexcept { return input.size() * sizeof(Scalar); }  // held by the entry
    };

    struct shared {
        std::size_t budget = 0;
        std::uint64_t clock = 0;
        std::vector<std::weak_ptr<region_tape>> regions;  // expired ones are pruned by hold()
        rematerialization_statistics stats;

        void touch(region_tape& r) { r.last_used = ++clock; }

        // Records r.fn from r.input on a fresh tape of r's own.
        static void record(region_tape& r, double& seconds) {
            const auto start = std::chrono::steady_clock::now();
            auto taped = std::make_unique<detail::taped_function<Scalar>>();
            const std::size_t effects = detail::outside_effects();
            taped->record(r.input, r.fn, "rematerializer: the region");
            r.communicates = detail::outside_effects() != effects;
            r.tape_bytes = taped->allocated_bytes();
            r.tape = std::move(taped);
            r.cost = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            seconds += r.cost;
        }

        // Counts r's tape and drops the lowest-scoring tapes over the budget.
        void hold(region_tape& r) {
            stats.held_bytes += r.tape_bytes;
            r.counted = true;
            while (stats.held_bytes > budget) {
                region_tape* victim = nullptr;
                double lowest = 0;
                regions.erase(std::remove_if(regions.begin(), regions.end(),
                                             [](const std::weak_ptr<region_tape>& w) { return w.expired(); }),
                              regions.end());
                for (const auto& w : regions) {
                    auto p = w.lock();
                    // a region that communicates (tapeflow/mpi.hpp) keeps its tape:
                    // recording it again in the sweep would send messages that the
                    // other processes, which kept theirs, do not expect
                    // nor does a region whose tape is being swept: a region
                    // inside it, recorded again, must not free that tape
                    // under the sweep (nor uncount one not yet counted)
                    if (!p || !p->tape || p->communicates || p->sweeping != 0) continue;
                    const double staleness = double(clock - p->last_used + 1);
                    const double score = p->cost / (double(p->tape_bytes) * staleness);
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
            r.tape.reset();
            if (r.counted) stats.held_bytes -= r.tape_bytes;
            r.counted = false;
            r.tape_bytes = 0;
        }

        // A region without a tape is recorded again, swept, and only then
        // counted against the budget (it may drop itself right away): the
        // region being swept may exceed the budget for its sweep.
        void reverse(region_tape& r, const Scalar* y_bar, Scalar* x_bar) {
            touch(r);
            const bool held = r.tape != nullptr;
            if (!held) {
                record(r, stats.rerecord_seconds);
                ++stats.rerecorded;
            }
            {
                struct sweep_mark {  // also when the sweep throws
                    region_tape& region;
                    explicit sweep_mark(region_tape& x) : region(x) { ++region.sweeping; }
                    ~sweep_mark() { --region.sweeping; }
                } mark(r);
                r.tape->sweep(y_bar, x_bar);
            }
            if (!held) hold(r);
        }
    };

    std::shared_ptr<shared> state_;
};

using rematerializer = basic_rematerializer<double>;

}  // namespace tapeflow
