// tapeflow/custom_adjoint.hpp - put a block of work on the tape as ONE entry
// with a reverse rule you write (an "external function").
//
// Use it where taping every scalar operation is wasteful or impossible: a
// library call on doubles, an iterative solver whose adjoint is a single
// solve, a matrix product whose reverse is two matrix products.
//
// Two ways in:
//
//   external_function(x, m, forward, reverse)   vector in, vector out:
//       forward(const S* x, S* y)                computes the m outputs
//       reverse(const S* x, const S* y, const S* y_bar, S* x_bar)
//                                                adds d(y_bar . y)/dx to x_bar
//   The entry keeps copies of x and y for the reverse rule.
//
//   basic_custom_adjoint<S> (custom_adjoint for double), for inputs and
//   outputs scattered over your data structures:
//       custom_adjoint op;
//       op.add_input(a); op.add_input(b);        // any number, any order
//       op.add_output(c, value_of_c);            // values computed by you
//       op.record([captured...](const double* out_bar, double* in_bar) {...});
//   For the elements of a matrix, add_inputs(count, at) and
//   add_outputs(count, at, value) declare a column in one pass.
//
// The reverse rule runs during tape.sweep(), on the sweeping thread, in the
// reverse order of recording like every record. `in_bar` is zero when it is
// called, with one slot per add_input in the order of the calls; add to it.
// Adjoints of passive inputs are discarded. The rule is not called when every
// output adjoint is 0 (unless op.run_in_every_sweep() said so: for rules that
// communicate, tapeflow/mpi.hpp). It works on plain numbers: do not record on the tape
// from inside it. An exception it throws leaves the sweep and reaches the
// caller of sweep(); reset() the tape afterwards.
//
// In a vector sweep (lane_adjoints, tape/lane_adjoints.hpp) such a rule is
// called once per lane whose output adjoints are not all 0. A rule that
// serves all lanes at once takes a third argument:
//   op.record([...](const double* out_bar, double* in_bar, std::size_t lanes) {...});
// with the adjoint of output i in lane l at out_bar[i * lanes + l] (in_bar
// likewise); a scalar sweep calls it with lanes = 1.
//
// The tape owns the entry and what the rule captured (move big data in); it
// is freed when a reset drops the entry. The entry's identifier lists go
// back to buffer pools the tape keeps for the next recording
// (tape/buffer_pool.hpp); a rule can capture pooled_buffers of its own
// (op.tape().scalar_buffers()). It is not counted in the memory
// budget: the budget bounds the record stream (tape_statistics::external_bytes
// reports what entries hold).
//
// **Example**:
//   // y = (x0 * x1, x0 + x1) with a hand-written reverse rule
//   std::vector<tapeflow::Real> y = tapeflow::external_function(
//       x, 2,
//       [](const double* x, double* y) { y[0] = x[0] * x[1]; y[1] = x[0] + x[1]; },
//       [](const double* x, const double*, const double* yb, double* xb) {
//           xb[0] += yb[0] * x[1] + yb[1];
//           xb[1] += yb[0] * x[0] + yb[1];
//       });
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "error.hpp"
#include "real.hpp"
#include "tape/external.hpp"

namespace tapeflow {

namespace detail {

/// Calls on this thread of code with effects outside the process (the
/// messages of tapeflow/mpi.hpp), taped or not: a checkpointed loop whose
/// step made any tapes its reverse to run in every sweep
/// (checkpoint/state_function.hpp).
inline std::size_t& outside_effects() noexcept {
    static thread_local std::size_t count = 0;
    return count;
}

// The entry that basic_custom_adjoint puts on the tape.
template <class Scalar, class Reverse>
class custom_entry final : public external_entry<Scalar> {
public:
    custom_entry(pooled_buffer<identifier> inputs, pooled_buffer<identifier> outputs, Reverse reverse,
                 std::size_t captured_bytes, bool every_sweep, bool updates_in_place)
        : inputs_(std::move(inputs)),
          outputs_(std::move(outputs)),
          reverse_(std::move(reverse)),
          captured_bytes_(captured_bytes),
          every_sweep_(every_sweep),
          updates_in_place_(updates_in_place) {}

    // A rule that takes lanes: rule(y_bar, x_bar, lanes) with lane l of
    // output i at y_bar[i * lanes + l] (x_bar likewise).
    static constexpr bool takes_lanes = std::is_invocable_v<Reverse&, const Scalar*, Scalar*, std::size_t>;
    static constexpr bool takes_one_lane = std::is_invocable_v<Reverse&, const Scalar*, Scalar*>;

    void reverse(Scalar* adjoint, std::vector<Scalar>& scratch) override {
        const std::vector<identifier>& outputs = *outputs_;
        const std::vector<identifier>& inputs = *inputs_;
        const std::size_t m = outputs.size(), n = inputs.size();
        scratch.resize(m + n);
        std::fill(scratch.begin() + std::ptrdiff_t(m), scratch.end(), Scalar(0));  // the outputs' part is written below
        bool any = false;
        // read and zero every output adjoint BEFORE adding to the inputs: an
        // output may reuse the identifier of an input (y = f(y))
        for (std::size_t i = 0; i < m; ++i) {
            Scalar& a = adjoint[outputs[i]];
            scratch[i] = a;
            any |= !detail::is_zero(a);
            a = Scalar(0);
        }
        if (!any && !every_sweep_) return;
        if constexpr (takes_one_lane)
            reverse_(static_cast<const Scalar*>(scratch.data()), scratch.data() + m);
        else
            reverse_(static_cast<const Scalar*>(scratch.data()), scratch.data() + m, std::size_t(1));
        for (std::size_t j = 0; j < n; ++j)
            if (inputs[j] != 0) adjoint[inputs[j]] += scratch[m + j];
    }

    // The same for a vector sweep: a rule that takes lanes runs once for all
    // of them; a rule of one lane runs once per lane whose output adjoints
    // are not all 0, exactly as in a scalar sweep seeded like that lane.
    void reverse_lanes(Scalar* adjoint, std::size_t lanes, std::vector<Scalar>& scratch) override {
        const std::vector<identifier>& outputs = *outputs_;
        const std::vector<identifier>& inputs = *inputs_;
        const std::size_t m = outputs.size(), n = inputs.size();
        // [ outputs x lanes | inputs x lanes ] (one lane's y_bar and x_bar follow for a one-lane rule)
        scratch.resize((m + n) * lanes + (takes_lanes ? 0 : m + n));
        Scalar* const y_bar = scratch.data();
        Scalar* const x_bar = y_bar + m * lanes;
        bool any = false;
        for (std::size_t i = 0; i < m; ++i)  // all read and zeroed first, as in reverse()
            for (std::size_t l = 0; l < lanes; ++l) {
                Scalar& a = adjoint[std::size_t(outputs[i]) * lanes + l];
                y_bar[i * lanes + l] = a;
                any |= !detail::is_zero(a);
                a = Scalar(0);
            }
        if (!any && !every_sweep_) return;
        if constexpr (takes_lanes) {
            std::fill(x_bar, x_bar + n * lanes, Scalar(0));
            reverse_(static_cast<const Scalar*>(y_bar), x_bar, lanes);
            for (std::size_t j = 0; j < n; ++j)
                if (inputs[j] != 0)
                    for (std::size_t l = 0; l < lanes; ++l)
                        adjoint[std::size_t(inputs[j]) * lanes + l] += x_bar[j * lanes + l];
        } else {
            Scalar* const y_one = x_bar + n * lanes;
            Scalar* const x_one = y_one + m;
            for (std::size_t l = 0; l < lanes; ++l) {
                bool lane_any = false;
                for (std::size_t i = 0; i < m; ++i) {
                    y_one[i] = y_bar[i * lanes + l];
                    lane_any |= !detail::is_zero(y_one[i]);
                }
                if (!lane_any && !every_sweep_) continue;
                std::fill(x_one, x_one + n, Scalar(0));
                reverse_(static_cast<const Scalar*>(y_one), x_one);
                for (std::size_t j = 0; j < n; ++j)
                    if (inputs[j] != 0) adjoint[std::size_t(inputs[j]) * lanes + l] += x_one[j];
            }
        }
    }

    const std::vector<identifier>& output_identifiers() const noexcept { return *outputs_; }

    // Every output, but for an entry that updates in place
    // (basic_custom_adjoint::updates_in_place) not the outputs that are also
    // inputs: like `s += e`, they keep what they were (reset(position)).
    bool assigned_identifiers(std::vector<identifier>& out) const override {
        if (!updates_in_place_) {
            out.insert(out.end(), outputs_->begin(), outputs_->end());
            return true;
        }
        std::vector<identifier> inputs(inputs_->begin(), inputs_->end());
        std::sort(inputs.begin(), inputs.end());
        for (const identifier id : *outputs_)
            if (!std::binary_search(inputs.begin(), inputs.end(), id)) out.push_back(id);
        return true;
    }

    std::size_t bytes() const noexcept override {
        return sizeof(*this) + (inputs_->capacity() + outputs_->capacity()) * sizeof(identifier) +
               captured_bytes_;
    }

private:
    pooled_buffer<identifier> inputs_;  // from the tape's pool, given back with the entry
    pooled_buffer<identifier> outputs_;
    Reverse reverse_;
    std::size_t captured_bytes_;
    bool every_sweep_;  // run the rule even when every output adjoint is 0
    bool updates_in_place_;  // an output that is an input is updated, not assigned
};

}  // namespace detail

/// Builds one external entry: declare inputs and outputs, then record() it.
/// One object makes one entry.
template <class Scalar>
class basic_custom_adjoint {
public:
    using real_type = basic_real<Scalar>;
    using tape_type = basic_tape<Scalar>;

    /// An entry for the calling thread's active tape.
    basic_custom_adjoint() : basic_custom_adjoint(tape_type::active()) {}
    /// An entry for `tape` (which must be the tape that records the operands).
    explicit basic_custom_adjoint(tape_type& tape)
        : tape_(tape), inputs_(tape.identifier_buffers(), 0), values_(tape.scalar_buffers(), 0) {}

    basic_custom_adjoint(const basic_custom_adjoint&) = delete;
    basic_custom_adjoint& operator=(const basic_custom_adjoint&) = delete;

    /// Declares `x` an input; returns its slot in the input adjoints.
    /// \throws usage_error if `x` belongs to another tape.
    std::size_t add_input(const real_type& x) {
        return add_inputs(1, [&x](std::size_t) -> const real_type& { return x; });
    }
    /// Declares `count` inputs at once: at(0), ..., at(count - 1), each a
    /// `const real_type&`, in that order. The same as add_input on each, in
    /// one pass (for the columns of a matrix). Returns the slot of the first.
    /// \throws usage_error if one belongs to another tape; none is added then
    /// (nor when `at` throws).
    template <class At>
    std::size_t add_inputs(std::size_t count, At&& at) {
        // a Real returned by value would die, and free its identifier, right here
        static_assert(std::is_lvalue_reference_v<decltype(at(std::size_t{}))>,
                      "add_inputs: at(k) must return a reference to a variable that outlives the entry");
        std::vector<identifier>& ids = *inputs_;
        const std::size_t first = ids.size();
        ids.resize(first + count);
        identifier* out = ids.data() + first;
        const std::uint32_t serial = tape_.serial();
        identifier active = 0;
        bool foreign = false;
        try {
            for (std::size_t k = 0; k < count; ++k) {
                const real_type& x = at(k);
                out[k] = x.id_;
                active |= x.id_;
                foreign |= (x.id_ != 0) & (x.tag_ != serial);
            }
        } catch (...) {
            ids.resize(first);
            throw;
        }
        if (foreign) {
            ids.resize(first);
            throw usage_error("custom adjoint: an input belongs to another tape (or to a tape that "
                              "no longer exists); use the tape that recorded it");
        }
        any_active_ |= active != 0;
        return first;
    }
    /// Declares `y` an output; record() gives it `value`. Returns its slot in
    /// the output adjoints. `y` must stay alive until record() returns.
    std::size_t add_output(real_type& y, Scalar value) {
        return add_outputs(1, [&y](std::size_t) -> real_type& { return y; }, [value](std::size_t) { return value; });
    }

    /// Declares `count` outputs at once: at(k) (a `real_type&`) gets the
    /// value value(k), for k = 0 ... count - 1 in that order. The same as
    /// add_output on each, in one pass. Returns the slot of the first.
    template <class At, class Value>
    std::size_t add_outputs(std::size_t count, At&& at, Value&& value) {
        static_assert(std::is_lvalue_reference_v<decltype(at(std::size_t{}))>,
                      "add_outputs: at(k) must return a reference to the output variable");
        const std::size_t first = outputs_.size();
        outputs_.resize(first + count);
        values_->resize(first + count);
        real_type** out = outputs_.data() + first;
        Scalar* values = values_->data() + first;
        try {
            for (std::size_t k = 0; k < count; ++k) {
                real_type& y = at(k);
                out[k] = &y;
                values[k] = value(k);
            }
        } catch (...) {  // no null output left behind for record()
            outputs_.resize(first);
            values_->resize(first);
            throw;
        }
        return first;
    }

    /// Reserves room for this many inputs and outputs (saves reallocations).
    void reserve(std::size_t inputs, std::size_t outputs) {
        inputs_.reserve(inputs);
        outputs_.reserve(outputs);
        values_.reserve(outputs);
    }

    /// The tape the entry goes on.
    tape_type& tape() const noexcept { return tape_; }

    std::size_t inputs() const noexcept { return inputs_->size(); }
    std::size_t outputs() const noexcept { return outputs_.size(); }

    /// Writes the output values and, when the tape is recording and some input
    /// is active (or run_in_every_sweep() was called), tapes one entry whose
    /// reverse rule is
    /// `reverse(const Scalar* output_adjoints, Scalar* input_adjoints)`.
    /// Otherwise the outputs become passive. `captured_bytes` (what `reverse`
    /// holds) only feeds tape_statistics::external_bytes.
    /// \throws usage_error if called twice, or if a variable is an output twice.
    template <class Reverse>
    void record(Reverse reverse, std::size_t captured_bytes = 0) {
        static_assert(std::is_invocable_v<Reverse&, const Scalar*, Scalar*> ||
                          std::is_invocable_v<Reverse&, const Scalar*, Scalar*, std::size_t>,
                      "custom adjoint: the reverse rule must be callable as rule(const S* output_adjoints, "
                      "S* input_adjoints), or, to serve every lane of a vector sweep at once, as "
                      "rule(const S* output_adjoints, S* input_adjoints, std::size_t lanes)");
        if (done_) throw usage_error("custom adjoint: record() called twice; make one object per entry");
        done_ = true;
        if (check_distinct_) check_distinct_outputs();
        // an entry that runs in every sweep is taped without an active input,
        // except on a tape that only probes for captured variables (a
        // checkpointed loop's forward): nothing is swept there
        const bool taped_anyway = every_sweep_ && !tape_.is_probing();
        if ((!any_active_ && !taped_anyway) || !tape_.is_recording()) {
            for (std::size_t i = 0; i < outputs_.size(); ++i) {
                real_type& y = *outputs_[i];
                tape_.release(y.id_, y.tag_);
                y.value_ = (*values_)[i];
            }
            return;
        }
        // Identifiers first, Reals last: if taping fails, no output changes.
        // An output gets a new identifier unless it already holds one of
        // this tape (y = f(y) keeps y's).
        const std::uint32_t serial = tape_.serial();
        auto fresh = [serial](const real_type& y) { return (y.id_ == 0) | (y.tag_ != serial); };
        const std::size_t m = outputs_.size();
        real_type* const* const ys = outputs_.data();
        pooled_buffer<identifier> ids(tape_.identifier_buffers(), m);
        std::unique_ptr<external_entry<Scalar>> entry;
        const std::vector<identifier>* output_ids = nullptr;  // in the entry, then on the tape
        try {
            ids->resize(m);  // 0 where nothing was acquired yet (see the catch below)
            identifier* const out = ids->data();
            bool all_fresh = true;
            for (std::size_t i = 0; i < m; ++i) all_fresh &= fresh(*ys[i]);
            if (all_fresh) {  // the elements of a new matrix: in one call
                tape_.acquire_identifiers(m, out);
            } else {
                for (std::size_t i = 0; i < m; ++i) out[i] = fresh(*ys[i]) ? tape_.acquire_identifier() : ys[i]->id_;
            }
            auto made = std::make_unique<detail::custom_entry<Scalar, Reverse>>(
                std::move(inputs_), std::move(ids), std::move(reverse), captured_bytes, every_sweep_,
                updates_in_place_);
            output_ids = &made->output_identifiers();
            entry = std::move(made);
            tape_.push_external(std::move(entry));
        } catch (...) {  // give back the identifiers acquired so far (release(0) does nothing)
            const std::vector<identifier>& acquired = output_ids != nullptr ? *output_ids : *ids;
            for (std::size_t i = 0; i < acquired.size(); ++i) {
                identifier id = acquired[i];
                if (fresh(*ys[i])) tape_.release(id, serial);
            }
            throw;
        }
        const identifier* const new_ids = output_ids->data();
        const Scalar* const values = values_->data();
        for (std::size_t i = 0; i < m; ++i) {
            real_type& y = *ys[i];
            if (fresh(y)) tape_.release(y.id_, y.tag_);  // another tape's identifier goes
            y.id_ = new_ids[i];
            y.tag_ = serial;
            y.value_ = values[i];
        }
    }

    /// For callers whose outputs are distinct by construction (the elements
    /// of one matrix): skips the O(m log m) duplicate check in record().
    void assume_distinct_outputs() noexcept { check_distinct_ = false; }

    /// For a rule with an effect outside this process that others wait for
    /// (the messages of tapeflow/mpi.hpp): the entry goes on the tape
    /// whenever the tape records, even when no input is active, and its rule
    /// runs in every sweep that passes it, even when every output adjoint is
    /// 0 (in a vector sweep, a one-lane rule runs for every lane).
    void run_in_every_sweep() noexcept { every_sweep_ = true; }

    /// For an entry that adds to its outputs in place, y += g(x): an output
    /// that is also an input (so it keeps its identifier) is its old value
    /// plus what the entry adds, and the rule passes its output adjoint to
    /// that input's slot unchanged (a partial of exactly 1). reset(position)
    /// then treats it as it treats s in `s += e` when it drops the entry: the
    /// records before the position still see it (docs/tape.md). Without
    /// this call an output in place is assigned, y = f(y): a constant after
    /// a reset(position) that drops the entry. The Eigen products call it
    /// for C += A * B.
    void updates_in_place() noexcept { updates_in_place_ = true; }

private:
    void check_distinct_outputs() const {
        std::vector<const real_type*> sorted(outputs_.begin(), outputs_.end());
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
            throw usage_error("custom adjoint: the same variable was added as an output twice; "
                              "each output must be a distinct variable");
    }

    tape_type& tape_;
    pooled_buffer<identifier> inputs_;  // from the tape's pools (tape/buffer_pool.hpp)
    std::vector<real_type*> outputs_;
    pooled_buffer<Scalar> values_;
    bool any_active_ = false;
    bool done_ = false;
    bool check_distinct_ = true;
    bool every_sweep_ = false;
    bool updates_in_place_ = false;
};

using custom_adjoint = basic_custom_adjoint<double>;

namespace detail {

/// One pass over a rows x cols operand at(i, j) (a basic_real<S> or an S):
/// its values into values(i, j) and, when `declare` is set, its elements as
/// inputs of op, column by column. The operands of the Eigen products, dot
/// and squared_norm (tapeflow/eigen/).
template <class S, class At, class Values>
void take_operand(basic_custom_adjoint<S>& op, bool declare, std::ptrdiff_t rows, std::ptrdiff_t cols,
                  const At& at, Values& values) {
    for (std::ptrdiff_t j = 0; j < cols; ++j) {
        if constexpr (is_real<std::decay_t<decltype(at(0, 0))>>::value)
            if (declare) {
                op.add_inputs(std::size_t(rows), [&](std::size_t i) -> decltype(auto) {
                    const auto& x = at(std::ptrdiff_t(i), j);
                    values(std::ptrdiff_t(i), j) = x.value();
                    return x;
                });
                continue;
            }
        for (std::ptrdiff_t i = 0; i < rows; ++i) values(i, j) = value_of(at(i, j));
    }
}

}  // namespace detail

/// Tapes y = f(x) as one entry: `forward(const S* x, S* y)` computes the m
/// outputs, `reverse(const S* x, const S* y, const S* y_bar, S* x_bar)` adds
/// the adjoints of x (x_bar is zero on entry). Returns the outputs.
template <class Scalar, class Forward, class Reverse>
std::vector<basic_real<Scalar>> external_function(const std::vector<basic_real<Scalar>>& x,
                                                  std::size_t m, Forward forward, Reverse reverse) {
    std::vector<Scalar> xv(x.size()), yv(m);
    for (std::size_t i = 0; i < x.size(); ++i) xv[i] = x[i].value();
    forward(static_cast<const Scalar*>(xv.data()), yv.data());
    std::vector<basic_real<Scalar>> y(m);
    basic_custom_adjoint<Scalar> op;
    for (const auto& xi : x) op.add_input(xi);
    for (std::size_t i = 0; i < m; ++i) op.add_output(y[i], yv[i]);
    op.assume_distinct_outputs();
    const std::size_t captured = (xv.size() + yv.size()) * sizeof(Scalar);
    op.record(
        [xv = std::move(xv), yv = std::move(yv), reverse = std::move(reverse)](
            const Scalar* y_bar, Scalar* x_bar) mutable { reverse(xv.data(), yv.data(), y_bar, x_bar); },
        captured);
    return y;
}

}  // namespace tapeflow
