// tapeflow/tape/tape.hpp - the tape: records in tiles, identifiers, adjoints.
//
// A thread records on its ACTIVE tape: basic_tape<S>::active(), which is the
// thread's default tape (created on first use) unless the thread activated
// another one. A tape belongs to the thread that created it: calling it from
// another thread throws usage_error, and it must be destroyed on that thread.
//
// Tiles live in a tile_stream (stream/tile_stream.hpp): straight in memory by
// default; with the scratchpad or a memory budget, recorded into a
// double-buffered scratchpad and moved by a prefetch thread to memory or, past
// the budget, to a private spill file, and staged back during the sweep.
//
//   recording:  tile 0 [r r r r ...] tile 1 [r r r ...] ... cursor_ ->
//   sweep:      reads records from cursor_ back to the start (or a position),
//               adjoint[lhs] -> adjoint[id_i] += partial_i * adjoint[lhs]
//
// basic_tape is the public face; each job is a part of its own:
//
//   basic_tape ─┬─ basic_recorder   records into tiles, identifiers (recorder.hpp)
//               ├─ tile_stream      where tiles live (stream/tile_stream.hpp)
//               ├─ sweep_records    the reverse sweep of a run of records (sweeper.hpp)
//               ├─ adjoint_store    adjoints by identifier (adjoint_store.hpp)
//               ├─ external_table   custom adjoints' entries (external.hpp)
//               ├─ region_table     regions (region_table.hpp)
//               └─ position_epochs  which positions are valid (position.hpp)
//   active_tape / active_tape_scope: the thread's active tape (active_tape.hpp)
//
// The tape keeps the checks (owner thread, recording or sweeping, foreign
// variables, positions), the options, the observer and the statistics.
//
// **Example**:
//   auto& tape = tapeflow::tape::active();
//   tape.start_recording();
//   tapeflow::Real x = 3.0;
//   tape.register_input(x);
//   tapeflow::Real y = x * sin(x);
//   tape.register_output(y);
//   tape.stop_recording();
//   tape.set_adjoint(y, 1.0);
//   tape.sweep();
//   double dy_dx = tape.adjoint(x);   // sin(3) + 3 cos(3)
//   tape.reset();
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "../stream/observer.hpp"
#include "../stream/options.hpp"
#include "../stream/tile.hpp"
#include "../stream/tile_stream.hpp"
#include "active_tape.hpp"
#include "adjoint_store.hpp"
#include "buffer_pool.hpp"
#include "external.hpp"
#include "identifier_pool.hpp"
#include "lane_adjoints.hpp"
#include "position.hpp"
#include "record.hpp"
#include "recorder.hpp"
#include "region_table.hpp"
#include "reset_boundary.hpp"
#include "scalar.hpp"
#include "statistics.hpp"
#include "sweep_team.hpp"
#include "sweeper.hpp"
#include "tape_registry.hpp"

namespace tapeflow {

namespace detail {
inline std::uint32_t next_tape_serial() noexcept {
    static std::atomic<std::uint32_t> counter{0};
    std::uint32_t s = ++counter;
    if (s == 0) s = ++counter;  // 0 marks "no tape"; skip it on wrap-around
    return s;
}
}  // namespace detail

template <class Scalar>
class basic_custom_adjoint;
template <class Scalar>
class basic_parallel_region;
namespace detail {
template <class Scalar>
class region_entry;
}

template <class Scalar>
class basic_tape {
public:
    using scalar_type = Scalar;
    using real_type = basic_real<Scalar>;
    using layout = record_layout<Scalar>;

    /// \throws usage_error when options.tile_bytes < min_tile_bytes.
    explicit basic_tape(const tape_options& options = {})
        : options_(checked(options)),
          owner_(std::this_thread::get_id()),
          stream_(options_),
          recorder_(detail::next_tape_serial(), stream_, options_),
          position_tag_(serial()) {
        detail::tape_registry::instance().add(serial(), &foreign_writes_);
        detail::thread_identifier_pools::add(serial(), &recorder_.identifiers());
    }

    basic_tape(const basic_tape&) = delete;
    basic_tape& operator=(const basic_tape&) = delete;

    ~basic_tape() {
        if (active_slot() == this) active_slot() = nullptr;
        if (segment_) return;  // a part of a parallel region: registered as nothing
        if (recording_) detail::tape_registry::instance().recording_stopped();
        detail::tape_registry::instance().remove(serial());
        detail::thread_identifier_pools::remove(serial());
    }

    // ---- which tape records -------------------------------------------------

    /// The calling thread's default tape (created on first use); it is the
    /// active tape unless another one was activated. thread_default().activate()
    /// switches back to it.
    static basic_tape& thread_default() {
        static thread_local basic_tape tape;
        if (!active_slot()) active_slot() = &tape;
        return tape;
    }

    /// The calling thread's active tape (created on first use).
    static basic_tape& active() {
        basic_tape* t = active_slot();
        return t ? *t : thread_default();
    }
    /// The calling thread's active tape, or nullptr if it has none (no tape
    /// was activated and the default one was never asked for). Creates nothing.
    static basic_tape* active_if_any() noexcept { return detail::active_tape<basic_tape>::get(); }

    /// Makes this tape the calling thread's active tape.
    /// \throws usage_error if another tape is recording on this thread, or
    /// this tape belongs to another thread.
    void activate() {
        check_owner("activate");
        basic_tape* current = active_slot();
        if (current && current != this && current->recording_)
            throw usage_error("another tape is recording on this thread; call stop_recording() "
                              "on it before activating a second tape");
        active_slot() = this;
    }

    bool is_active() const noexcept { return active_slot() == this; }

    // ---- recording ----------------------------------------------------------

    /// Starts recording; also makes this tape the thread's active tape.
    /// \throws usage_error if already recording or while this tape sweeps.
    /// \throws usage_error, too, when the tape holds a recording that was
    /// swept: recording on would add to it with the sweep's adjoints left in
    /// place. Call reset() first (or reset(position) to keep a part).
    void start_recording() {
        check_owner("start_recording");
        check_not_segment("start_recording");
        check_not_sweeping("start_recording");
        activate();
        if (recording_)
            throw usage_error("start_recording() called while already recording");
        if (swept_)
            throw usage_error("start_recording() on a tape whose recording was swept (by sweep() or a "
                              "driver such as tapeflow::gradient); call reset() first to start a new "
                              "recording, or reset(position) to record on from a point of it");
        foreign_writes_.store(false, std::memory_order_relaxed);
        detail::tape_registry::instance().recording_started();
        recording_ = true;
    }
    /// Stops recording. Calling it when not recording does nothing.
    /// \throws usage_error (after stopping) if a variable of this tape was
    /// assigned or died on another thread while it recorded: a loop of the
    /// recording run on several threads, whose statements are missing.
    void stop_recording() {
        check_owner("stop_recording");
        check_not_segment("stop_recording");
        if (!recording_) return;
        check_no_region("stop_recording");
        recording_ = false;
        detail::tape_registry::instance().recording_stopped();
        if (!parallel_error_.empty()) {
            std::string message;
            message.swap(parallel_error_);
            throw usage_error("stop_recording(): " + message);
        }
        if (foreign_writes_.exchange(false, std::memory_order_relaxed))
            throw usage_error(
                "stop_recording(): variables of this recording were assigned or destroyed on another "
                "thread while it recorded (an OpenMP or std::thread loop inside the recording?): those "
                "statements are not on this tape and the gradient would be wrong. Run such loops on the "
                "recording thread, or take independent gradients with one tape per thread "
                "(docs/parallel.md)");
    }
    bool is_recording() const noexcept { return recording_; }
    /// Whether the recording only probes for captured variables (a
    /// checkpointed loop's forward, checkpoint/state_function.hpp, sets it):
    /// code with effects outside the process (tapeflow/mpi.hpp) runs untaped then.
    bool is_probing() const noexcept { return probing_; }
    void set_probing(bool on) noexcept { probing_ = on; }
    /// Whether a sweep of this tape is running (true inside reverse rules and
    /// progress callbacks called by the sweep).
    bool is_sweeping() const noexcept { return sweeping_; }

    /// Gives `x` an identifier that no record assigns: it becomes an
    /// independent variable.
    /// \requires the tape is recording.
    void register_input(real_type& x) {
        check_can_register("register_input");
        make_input(x, holds_nothing(), serial());
    }

    /// register_input on every variable of [first, last), checked once: for
    /// the elements of a vector or a matrix column (tapeflow/eigen.hpp has
    /// tapeflow::register_inputs for a whole matrix).
    template <class ForwardIt>
    void register_inputs(ForwardIt first, ForwardIt last) {
        check_can_register("register_inputs");
        const bool fresh = holds_nothing();
        const std::uint32_t tag = serial();
        if constexpr (std::is_base_of_v<std::random_access_iterator_tag,
                                        typename std::iterator_traits<ForwardIt>::iterator_category>)
            make_inputs(first, std::size_t(last - first), fresh, tag);
        else
            for (; first != last; ++first) make_input(*first, fresh, tag);
    }

    /// `x = value; register_input(x);` in one call. An `x` that is already
    /// active on this tape keeps its identifier when the tape holds no
    /// record and every adjoint is 0 (a loop of gradients: reset(), then the
    /// new input values), where the two calls would release it and take one
    /// again.
    /// \requires the tape is recording.
    void register_input(real_type& x, Scalar value) {
        check_can_register("register_input");
        x.value_ = value;
        make_input(x, holds_nothing(), serial());
    }
    /// register_input(x, value) on every variable x of [first, last), the
    /// values read from `values` in order, checked once; returns the end of
    /// the values read. The fast way to set new inputs for every gradient
    /// of a loop (bench/harness/tools.hpp).
    /// \requires the tape is recording.
    template <class ForwardIt, class InputIt>
    InputIt register_inputs(ForwardIt first, ForwardIt last, InputIt values) {
        check_can_register("register_inputs");
        const std::uint32_t tag = serial();
        // `fresh` a constant in each copy of the loop (a test per element
        // otherwise: 2 of the 10 instructions an input takes)
        const auto each = [&](auto fresh) {
            for (; first != last; ++first, ++values) {
                real_type& x = *first;
                x.value_ = static_cast<Scalar>(*values);
                make_input(x, fresh, tag);
            }
        };
        if (holds_nothing())
            each(std::true_type{});
        else
            each(std::false_type{});
        return values;
    }

    /// Marks `y` as an output so that its adjoint can be seeded. A passive
    /// `y` (computed from constants only) gets an identifier; its gradient is 0.
    /// \throws usage_error if `y` belongs to another tape, or while this tape sweeps.
    void register_output(real_type& y) {
        check_owner("register_output");
        check_not_segment("register_output");
        check_no_region("register_output");
        check_not_sweeping("register_output");
        check_ours(y, "register_output");
        if (y.id_ == 0) {
            y.id_ = recorder_.identifiers().acquire_unused();
            y.tag_ = serial();
        }
    }

    /// The point after the last record.
    position get_position() const noexcept {
        position p;
        recorder_.locate(p);
        p.externals = externals_.size();
        // every record is k pairs + a 4-byte header (8 for long records and
        // external entries, which count as statements): the pair count
        // follows from the bytes
        p.arguments = (p.bytes - 4 * p.statements - 4 * p.long_records - 4 * p.externals) /
                      layout::pair_bytes;
        p.regions = regions_.size();
        p.epoch = epochs_.current();
        p.tape = position_tag_;
        return p;
    }

    // ---- regions ------------------------------------------------------------

    /// Opens a region at the current position; returns its index.
    /// Prefer the RAII tapeflow::Region.
    std::size_t begin_region(std::string_view label = {}) {
        check_owner("begin_region");
        return regions_.open(label, get_position());
    }
    /// Closes region `index` and any region opened inside it.
    void end_region(std::size_t index) {
        check_owner("end_region");
        regions_.close(index, get_position());
    }
    /// The regions of the current recording, in the order they were opened.
    const region_table& regions() const noexcept {
        const_cast<region_table&>(regions_).touch_open(get_position());
        return regions_;
    }

    // ---- adjoints -----------------------------------------------------------

    /// Sets the adjoint of `y` (usually 1 for the output being differentiated).
    /// \throws usage_error if `y` is passive or belongs to another tape, or
    /// while this tape sweeps.
    void set_adjoint(const real_type& y, Scalar value) {
        check_owner("set_adjoint");
        check_not_sweeping("set_adjoint");
        check_ours(y, "set_adjoint");
        if (y.id_ == 0)
            throw usage_error("set_adjoint() on a passive variable; call register_output() "
                              "on it first");
        grow_adjoints();
        adjoints_.set(y.id_, value);
    }
    /// Adds to the adjoint of `y`.
    void add_adjoint(const real_type& y, Scalar value) {
        set_adjoint(y, adjoint(y) + value);
    }
    /// The adjoint of `x`; 0 for a passive variable (a constant).
    /// \throws usage_error if `x` belongs to another tape.
    Scalar adjoint(const real_type& x) const {
        check_owner("adjoint");
        check_ours(x, "adjoint");
        return adjoints_.get(x.id_);
    }
    /// adjoint(x) of every variable x of [first, last), written to `out`;
    /// returns the end of the output. Checked once for the owner thread.
    /// \throws usage_error if one of them belongs to another tape.
    template <class InputIt, class OutputIt>
    OutputIt adjoints(InputIt first, InputIt last, OutputIt out) const {
        check_owner("adjoints");
        // the serial and the vector read once, not per element (they would
        // be: `out` may point anywhere)
        const std::uint32_t tag = serial();
        const Scalar* const a = adjoints_.data();
        const std::size_t n = adjoints_.size();
        for (; first != last; ++first, ++out) {
            const real_type& x = *first;
            check_ours(x, "adjoints", tag);
            *out = x.id_ < n ? a[x.id_] : Scalar(0);
        }
        return out;
    }
    /// The adjoint of identifier `id` (as returned by Real::id()).
    Scalar adjoint(identifier id) const {
        check_owner("adjoint");
        if (id >= recorder_.identifiers().capacity())
            throw usage_error("adjoint(): identifier " + std::to_string(id) +
                              " was never handed out by this tape");
        return adjoints_.get(id);
    }
    /// Sets every adjoint to 0 (keeps the memory). Costs what was written
    /// since the last time they were all 0, not the length of the adjoint
    /// vector (tape/adjoint_store.hpp).
    void clear_adjoints() noexcept { zero_written_adjoints(); }

    // ---- reverse sweep ------------------------------------------------------

    /// Propagates adjoints from the end of the tape to its start.
    void sweep() { sweep(get_position(), position{}); }
    /// Propagates adjoints from the end of the tape back to `to`.
    void sweep(const position& to) { sweep(get_position(), to); }
    /// Propagates adjoints through the records between `to` and `from` (to <= from).
    /// \throws usage_error while recording, for positions not on the tape, or
    /// when called while this tape sweeps (from a reverse rule or a progress
    /// callback; reset() and start_recording() throw there too).
    void sweep(const position& from, const position& to) {
        check_owner("sweep");
        run_sweep(
            from, to, 1, [this] { grow_adjoints(); },
            [this](const std::byte* begin, const std::byte* end) {
                detail::sweep_records(begin, end, adjoints_.sweep_data(), externals_);
            },
            [this](detail::reset_boundary<Scalar>& b) {
                b.pass(b.kept.empty() ? adjoints_.sweep_data() : adjoints_.untraced_data());
            });
    }

    /// Vector reverse sweep: propagates the Lanes adjoints per identifier of
    /// `bar` (tape/lane_adjoints.hpp) from the end of the tape to its start,
    /// all lanes in one pass over the records. Lane l ends as a scalar sweep
    /// seeded with lane l's seeds would end. External entries whose rule
    /// does not take lanes run once per lane. The tape's own (scalar)
    /// adjoints are not touched.
    /// \throws usage_error if `bar` was made for another tape, and as sweep().
    ///
    /// **Example**:
    ///   tapeflow::lane_adjoints<double, 4> bar(tape);
    ///   for (std::size_t l = 0; l < 4; ++l) bar.set(y[l], l, 1.0);
    ///   tape.sweep(bar);                 // bar.get(x, l): row l of the Jacobian
    template <std::size_t Lanes>
    void sweep(lane_adjoints<Scalar, Lanes>& bar) { sweep(bar, get_position(), position{}); }
    /// The same from the end back to `to`.
    template <std::size_t Lanes>
    void sweep(lane_adjoints<Scalar, Lanes>& bar, const position& to) { sweep(bar, get_position(), to); }
    /// The same through the records between `to` and `from` (to <= from).
    template <std::size_t Lanes>
    void sweep(lane_adjoints<Scalar, Lanes>& bar, const position& from, const position& to) {
        check_owner("sweep");
        if (&bar.tape() != this)
            throw usage_error("sweep(lane_adjoints): the lane adjoints were made for another tape; make "
                              "them with the tape being swept (tapeflow::lane_adjoints<S, N> bar(tape);)");
        // Rows left by a sweep before a reset belong to identifiers that
        // variables may have given back since and new ones taken: a sweep
        // would read them as the new variables' (the tape cannot clear
        // lane adjoints it does not own).
        if (bar.swept_epoch_ != 0 && bar.swept_epoch_ != epochs_.current())
            throw usage_error("a vector sweep (lane_adjoints) with lane adjoints already swept before the tape's "
                              "last reset: their rows may hold values at identifiers that new variables took "
                              "since; clear() them after reading them (or make new ones), then seed again");
        for (const auto& b : boundaries_)
            if (b.lanes_kept && to <= b.at && b.at <= from)
                throw usage_error("a vector sweep (lane_adjoints) passes a position the tape was reset to "
                                  "after a vector sweep had stopped above the start: the tape cannot set the "
                                  "lane adjoints kept then aside from the new records; sweep the lanes to the "
                                  "start before reset(position) (sweep(bar, to, position{})), or sweep with "
                                  "scalar adjoints");
        run_sweep(
            from, to, Lanes, [this, &bar] { bar.grow(recorder_.identifiers().capacity()); },
            [this, &bar](const std::byte* begin, const std::byte* end) {
                detail::sweep_lane_records<Lanes>(begin, end, bar.data(), externals_);
            },
            [&bar](const detail::reset_boundary<Scalar>& b) { b.pass_lanes(bar.data(), Lanes); });
        // lane adjoints kept above the start, that a reset(position) could
        // not set aside (the last vector sweep decides)
        lanes_stopped_ = to.statements != 0;
        bar.swept_epoch_ = epochs_.current();
    }

    // ---- reset --------------------------------------------------------------

    /// Empties the tape and zeroes the adjoints, keeping all memory for the
    /// next recording. Live variables keep their identifiers; what they were
    /// computed from is forgotten (they act as constants in the next recording).
    void reset() {
        check_owner("reset");
        check_not_segment("reset");
        check_not_sweeping("reset");
        check_no_region("reset");
        zero_written_adjoints();  // first: it may walk the records
        forget_records();
    }
    /// Drops the records after `to`; adjoints are kept (for checkpointing:
    /// sweep back to `to`, reset to it, record again). Variables that the
    /// dropped records assigned and that are still alive become constants;
    /// the adjoints are set aside at `to` until a sweep passes it (then
    /// they join the adjoints of the records before it), so that the new
    /// records neither read them nor see them from adjoint() meanwhile
    /// (tape/reset_boundary.hpp). The dropped records are read once to
    /// find those variables (from the spill file, for spilled tiles).
    /// \throws usage_error if an external entry of your own among the
    /// dropped records cannot tell which identifiers it assigns
    /// (external_entry::assigned_identifiers).
    void reset(const position& to) {
        check_owner("reset");
        check_not_segment("reset");
        check_not_sweeping("reset");
        check_no_region("reset");
        check_position(to, "reset");
        const position end = get_position();
        if (end < to)
            throw usage_error("reset(position) to a position beyond the end of the tape");
        const bool staged = to < end || !adjoints_.all_zero();
        detail::reset_boundary<Scalar> boundary;
        if (staged) boundary = stage_boundary(to, end);  // first: it may throw
        adjoints_.records_dropped();
        if (to.statements == 0) {  // every record goes, but `to` (the start) stays on the tape
            forget_records(/*keep_start=*/true);
            if (staged) commit_boundary(std::move(boundary));
            return;
        }
        epochs_.records_dropped_after(to.statements);
        swept_ = false;
        tell_recorded();
        recorder_.truncate(to);
        if (observed_bytes_ > to.bytes) observed_bytes_ = to.bytes;
        regions_.truncate(to);
        externals_.truncate(std::size_t(to.externals));
        if (staged) commit_boundary(std::move(boundary));  // last: the records are gone now
    }

    // ---- information --------------------------------------------------------

    tape_statistics statistics() const {
        tape_statistics s;
        const position end = get_position();
        s.statements = end.statements;
        s.arguments = end.arguments;
        s.record_bytes = end.bytes;
        s.tiles = stream_.count() + (recorder_.has_open_tile() ? 1 : 0);
        s.tile_bytes = options_.tile_bytes;
        s.allocated_bytes = stream_.allocated_bytes();
        s.regions = regions_.size();
        s.live_identifiers = recorder_.identifiers().live();
        s.peak_identifiers = recorder_.identifiers().highest();
        s.adjoint_bytes = adjoints_.bytes();
        s.externals = externals_.size();
        s.external_bytes = externals_.entry_bytes();
        s.spare_external_bytes = externals_.spare_bytes();
        const stream_statistics t = stream_.statistics();
        s.tiles_written = t.tiles_written;
        s.tiles_spilled = t.tiles_spilled;
        s.tiles_read_back = t.tiles_read_back;
        s.bytes_spilled = t.bytes_spilled;
        s.bytes_read_back = t.bytes_read_back;
        s.tiles_flushed = t.tiles_flushed;
        s.peak_resident_bytes = t.peak_resident_bytes;
        s.sweep_wait_seconds = t.sweep_wait_seconds;
        s.record_wait_seconds = t.record_wait_seconds;
        return s;
    }
    const tape_options& options() const noexcept { return options_; }

    /// Number that tags the variables of this tape (unique per process run).
    std::uint32_t serial() const noexcept { return recorder_.serial(); }

    // ---- used by custom adjoints (custom_adjoint.hpp) --------------------------

    /// A fresh identifier that a record may assign (give it back by
    /// assigning or destroying the variable that holds it).
    identifier acquire_identifier() { return recorder_.identifiers().acquire(); }
    /// acquire_identifier() `count` times, into out[0 .. count); if it
    /// throws, none is taken.
    void acquire_identifiers(std::size_t count, identifier* out) { recorder_.identifiers().acquire(count, out); }
    /// `count` consecutive identifiers for the outputs of an entry that
    /// zeroes their adjoints when swept (a matrix variable's); returns the
    /// first. Give them back with release_range.
    identifier acquire_identifier_range(std::size_t count) {
        check_owner("acquire_identifier_range");
        return recorder_.identifiers().acquire_range(count);
    }
    /// `count` consecutive identifiers that become independent variables,
    /// as register_input gives one; returns the first.
    /// \throws usage_error as register_input.
    identifier register_input_range(std::size_t count) {
        check_can_register("register_input");
        identifier_pool& ids = recorder_.identifiers();
        return holds_nothing() ? ids.acquire_range(count) : ids.acquire_unused_range(count);
    }
    /// Gives back a range of the tape whose serial is `tag` (this one, or
    /// another tape of the calling thread).
    void release_range(identifier first, std::size_t count, std::uint32_t tag) noexcept {
        recorder_.release_range(first, count, tag);
    }
    /// The same when no tape is at hand.
    static void release_range_to_owner(identifier first, std::size_t count, std::uint32_t tag) noexcept {
        basic_recorder<Scalar>::release_range_to_owner(first, count, tag);
    }
    /// Copies the adjoints of identifiers first .. first + count - 1 to `out`
    /// (0 for those the adjoint vector has not grown to).
    void adjoint_range(identifier first, std::size_t count, Scalar* out) const {
        check_owner("adjoint_range");
        const Scalar* a = adjoints_.data();
        const std::size_t n = adjoints_.size();
        for (std::size_t k = 0; k < count; ++k) out[k] = first + k < n ? a[first + k] : Scalar(0);
    }
    /// Sets the adjoints of identifiers first .. first + count - 1 (handed
    /// out by this tape) to values[0 .. count): seeds of a matrix variable.
    void set_adjoint_range(identifier first, std::size_t count, const Scalar* values) {
        check_owner("set_adjoint_range");
        check_not_sweeping("set_adjoint_range");
        if (count == 0) return;
        if (first == 0 || first + count > recorder_.identifiers().capacity())
            throw usage_error("set_adjoint_range(): identifiers " + std::to_string(first) + " .. " +
                              std::to_string(first + count - 1) + " were not handed out by this tape");
        grow_adjoints();
        std::copy(values, values + count, adjoints_.untraced_data() + first);
    }
    /// Appends an external entry and its record; the tape owns the entry
    /// until a reset drops it. If this throws, `entry` still owns it.
    void push_external(std::unique_ptr<external_entry<Scalar>>&& entry) {
        check_owner("push_external");
        // Room first: opening a tile may call the progress callback, which
        // must see the tape as it is. Then neither step below can fail
        // after the other succeeded.
        recorder_.make_room(layout::external_size);
        recorder_.record_external(externals_.push(std::move(entry)));
    }

    /// Buffers that external entries take and give back (tape/buffer_pool.hpp).
    buffer_pool<Scalar>& scalar_buffers() noexcept { return externals_.scalar_buffers(); }
    buffer_pool<identifier>& identifier_buffers() noexcept { return externals_.identifier_buffers(); }

private:
    static tape_options checked(tape_options o) {
        if (o.tile_bytes == 0) o.tile_bytes = automatic_tile_bytes(o);
        detail::check_tile_bytes(o.tile_bytes);
        o.tile_bytes = (o.tile_bytes + 63) & ~std::size_t(63);
        return o;
    }

    // tape_options::tile_bytes == 0: large tiles for a tape with a memory
    // budget (what the prefetch thread moves well), an eighth of a small
    // budget at most, so that the arena and a few tiles fit in it. A tape in
    // memory, and one that only asks for the scratchpad (which is meant to
    // stay in cache, and is what the hardware model prices as SRAM), keep
    // the small default.
    static std::size_t automatic_tile_bytes(const tape_options& o) {
        if (o.memory_budget_bytes == std::numeric_limits<std::size_t>::max()) return default_tile_bytes;
        return std::max(min_tile_bytes, std::min(default_streaming_tile_bytes, o.memory_budget_bytes / 8));
    }

    void check_owner(const char* what) const {
        if (std::this_thread::get_id() != owner_)
            throw usage_error(std::string(what) +
                              "() called from a thread that does not own this tape; each "
                              "thread records on its own tape (tapeflow::tape::active())");
    }
    // A reverse rule or a progress callback that sweeps, resets or records
    // on the tape being swept would free the entry that is running and
    // overwrite the tiles being read; one that registers an output or seeds
    // an adjoint could reallocate the adjoint vector under the sweep.
    void check_not_sweeping(const char* what) const {
        if (sweeping_)
            throw usage_error(std::string(what) +
                              "() called while this tape is sweeping (from a reverse rule or a "
                              "progress callback); record, sweep and reset it only after sweep() "
                              "returns, and differentiate inside a rule on a tape of its own");
    }
    // Sets the flag for the scope of a sweep, also when the sweep throws.
    class sweeping_scope {
    public:
        explicit sweeping_scope(bool& flag) noexcept : flag_(flag) { flag_ = true; }
        ~sweeping_scope() { flag_ = false; }
        sweeping_scope(const sweeping_scope&) = delete;
        sweeping_scope& operator=(const sweeping_scope&) = delete;

    private:
        bool& flag_;
    };
    // What registering inputs needs: the owner thread, the tape itself (not
    // a region's segment), no open region (its threads share the free
    // identifiers then), a recording.
    void check_can_register(const char* what) const {
        check_owner(what);
        check_not_segment(what);
        check_no_region(what);
        if (!recording_)
            throw usage_error(std::string(what) +
                              "() called while not recording; call start_recording() first");
    }
    // Whether the tape holds no record and every adjoint is 0 (not so after
    // reset(position) to the start, which keeps the adjoints).
    bool holds_nothing() const noexcept {
        return recorder_.statements() == 0 && adjoints_.all_zero() && boundaries_.empty();
    }
    // register_input / register_inputs, after their checks; `fresh` is
    // holds_nothing(). No record may assign an input's identifier
    // (identifier_pool.hpp). While the tape holds no record none does, so
    // with every adjoint 0 any identifier qualifies: an input of this tape
    // keeps its own (a loop of gradients that sets the inputs'
    // values with register_input(x, value)), and otherwise the recycled
    // identifiers go first: a loop that assigns its inputs (`x[i] = 1.5`)
    // and registers them again after reset() takes back the identifiers it
    // just released instead of minting as many again (an adjoint vector
    // twice as long, zeroed and swept over).
    // `tag` is serial(), read by the caller once for a range (read here, it
    // was read again for every element: black_scholes' 100 000 inputs, 14
    // -> 10 instructions each, docs/performance.md).
    TAPEFLOW_ALWAYS_INLINE void make_input(real_type& x, bool fresh, std::uint32_t tag) {
        if (fresh && x.id_ != 0 && x.tag_ == tag) return;
        release(x.id_, x.tag_);
        identifier_pool& ids = recorder_.identifiers();
        x.id_ = fresh ? ids.acquire() : ids.acquire_unused();
        x.tag_ = tag;
    }
    // make_input on the n variables at `first`, a chunk at a time: a chunk
    // of passive variables (as after `A = values.cast<Real>()`) takes its
    // identifiers from the pool in one call (identifier_pool::acquire).
    template <class RandomIt>
    void make_inputs(RandomIt first, std::size_t n, bool fresh, std::uint32_t tag) {
        constexpr std::size_t chunk = 256;
        identifier ids[chunk];
        identifier_pool& pool = recorder_.identifiers();
        while (n != 0) {
            const std::size_t c = std::min(n, chunk);
            bool passive = true;
            for (std::size_t k = 0; k < c; ++k) passive &= first[std::ptrdiff_t(k)].id_ == 0;
            if (passive) {
                if (fresh)
                    pool.acquire(c, ids);
                else
                    pool.acquire_unused(c, ids);
                for (std::size_t k = 0; k < c; ++k) {
                    real_type& x = first[std::ptrdiff_t(k)];
                    x.id_ = ids[k];
                    x.tag_ = tag;
                }
            } else {
                for (std::size_t k = 0; k < c; ++k) make_input(first[std::ptrdiff_t(k)], fresh, tag);
            }
            first += std::ptrdiff_t(c);
            n -= c;
        }
    }
    void check_ours(const real_type& x, const char* what) const { check_ours(x, what, serial()); }
    // the same with serial() read by the caller (once for a range)
    void check_ours(const real_type& x, const char* what, std::uint32_t tag) const {
        if (x.id_ != 0 && x.tag_ != tag)
            throw usage_error(std::string(what) +
                              "(): the variable belongs to another tape (or to a tape that "
                              "no longer exists); use the tape that recorded it");
    }
    void check_position(const position& p, const char* what) const {
        if (p.tape != 0 && p.tape != position_tag_)
            throw usage_error(std::string(what) +
                              "(position): the position was taken on another tape; take it with "
                              "get_position() of the tape you sweep or reset");
        if (!epochs_.valid(p))
            throw usage_error(std::string(what) +
                              "(position): the position is no longer on the tape (it was taken before a "
                              "reset(), or beyond the point of a later reset(position)); take positions "
                              "again after resetting");
    }

    // Empties the tape (memory kept); adjoints are left as they are, and
    // what reset(position) set aside goes (reset(position) at the start
    // sets it aside again, reset() has zeroed it). Every position taken so
    // far is off the tape, but with `keep_start` (reset(position) to the
    // start) those at the start of this recording stay valid.
    void forget_records(bool keep_start = false) {
        tell_recorded();
        if (keep_start)
            epochs_.records_dropped_after(0);
        else
            epochs_.records_dropped();
        swept_ = false;
        boundaries_.clear();
        lanes_stopped_ = false;
        observed_bytes_ = 0;
        regions_.clear();
        externals_.clear();
        parallel_error_.clear();
        for (auto& part : segments_) part->forget_records();
        recorder_.clear();  // last: it may allocate (the identifier pool), the rest cannot throw
    }

    // reset(to)'s first step, before anything changes (it may throw; it
    // only seals a streaming tape's open tile): the boundary to leave at
    // `to` (tape/reset_boundary.hpp).
    //   fenced: what the records from `to` to `end` assigned (and what the
    //           boundaries after `to`, which go, fenced) that variables
    //           still hold, but those the boundary at `to` fences already;
    //   kept:   every adjoint that is not 0, and what the boundaries after
    //           `to` still keep; at the start (no record before it) only
    //           those of identifiers that variables hold: the others have
    //           no record to reach, and would be read by whoever takes them.
    // Room is reserved, so that commit_boundary() cannot fail.
    detail::reset_boundary<Scalar> stage_boundary(const position& to, const position& end) {
        const bool start = to.statements == 0;
        std::vector<identifier> assigned;
        if (!start && to < end) {
            bool told = true;
            if (stream_.streaming()) recorder_.seal();  // its records read back like a sweep's
            stream_.walk_reverse(
                end.tile, end.offset, to.tile, to.offset,
                [&](const std::byte* data, std::size_t begin, std::size_t stop, double, std::size_t) {
                    told = detail::assigned_identifiers<Scalar>(data + begin, data + stop, externals_, assigned) &&
                           told;
                });
            if (!told)
                throw usage_error("reset(position) drops an external entry of your own that cannot tell which "
                                  "identifiers it assigns; override external_entry::assigned_identifiers (its "
                                  "outputs), or reset() the whole tape");
        }
        std::size_t kept_from = boundaries_.size();  // the boundaries at `to` and after it
        while (kept_from > 0 && to <= boundaries_[kept_from - 1].at) --kept_from;
        const bool merge = kept_from < boundaries_.size() && boundaries_[kept_from].at == to;
        const std::size_t dropped = merge ? kept_from + 1 : kept_from;  // the first one after `to`

        detail::reset_boundary<Scalar> b;
        b.at = to;
        b.lanes_kept = lanes_stopped_;
        const identifier_pool& ids = recorder_.identifiers();
        const std::size_t n = ids.capacity();
        constexpr unsigned char held = 1, listed = 2;
        std::vector<unsigned char> state(n, held);
        ids.for_each_free([&](identifier id) {
            if (id < n) state[id] = 0;
        });
        state[0] = 0;
        if (!start) {
            const auto fence = [&](identifier id) {
                if (id < n && state[id] == held) {
                    b.fenced.push_back(id);
                    state[id] |= listed;
                }
            };
            if (merge)
                for (const identifier id : boundaries_[kept_from].fenced)
                    if (id < n) state[id] |= listed;
            for (const identifier id : assigned) fence(id);
            for (std::size_t i = dropped; i < boundaries_.size(); ++i)
                for (const identifier id : boundaries_[i].fenced) fence(id);
        }
        const auto keep = [&](identifier id, Scalar value) {
            if (!start || (id < n && (state[id] & held))) b.kept.emplace_back(id, value);
        };
        adjoints_.for_each_nonzero(keep);
        for (std::size_t i = dropped; i < boundaries_.size(); ++i)
            for (const auto& [id, value] : boundaries_[i].kept) keep(id, value);
        if (merge) {
            auto& there = boundaries_[kept_from];
            there.fenced.reserve(there.fenced.size() + b.fenced.size());
            there.at_pass.reserve(there.fenced.size() + b.fenced.size());
            there.kept.reserve(there.kept.size() + b.kept.size());
        } else {
            b.at_pass.reserve(b.fenced.size());
            boundaries_.reserve(kept_from + 1);
        }
        return b;
    }
    // reset(to)'s last step: the adjoints set aside in `b` leave the vector,
    // the boundaries after `to` go, and `b` joins the one at `to` (or is
    // added). Cannot fail: stage_boundary() reserved the room.
    void commit_boundary(detail::reset_boundary<Scalar>&& b) noexcept {
        if (!adjoints_.all_zero()) adjoints_.clear();
        while (!boundaries_.empty() && b.at < boundaries_.back().at) boundaries_.pop_back();
        if (!boundaries_.empty() && boundaries_.back().at == b.at) {
            auto& there = boundaries_.back();
            there.fenced.insert(there.fenced.end(), b.fenced.begin(), b.fenced.end());
            there.kept.insert(there.kept.end(), b.kept.begin(), b.kept.end());
            there.lanes_kept = there.lanes_kept || b.lanes_kept;
            there.passed = false;
        } else if (!b.fenced.empty() || !b.kept.empty() || b.lanes_kept) {
            boundaries_.push_back(std::move(b));
        }
    }

    // The observer (stream/observer.hpp) learns of the records written since it
    // was last told: before a sweep, and before a reset drops records.
    void tell_recorded() {
        stream_.tell([&](tape_observer& o) {
            const std::uint64_t bytes = get_position().bytes;
            const memory_level level = stream_.streaming() ? memory_level::sram : memory_level::dram;
            if (bytes > observed_bytes_) o.recorded(bytes - observed_bytes_, level);
            observed_bytes_ = bytes;
        });
    }
    void tell_sweep_begins(tape_observer& o, const position& end, std::size_t lanes) {
        tell_recorded();
        sweep_context c;
        c.regions = &regions_;
        c.record_bytes = end.bytes;
        c.adjoint_bytes = sizeof(Scalar);
        c.lanes = lanes;
        c.adjoint_count = lanes == 1 ? adjoints_.size() : std::size_t(recorder_.identifiers().capacity());
        c.scratchpad_bytes = stream_.scratchpad_bytes();
        c.tile_bytes = options_.tile_bytes;
        o.sweep_begins(c);
    }

    void grow_adjoints() { adjoints_.grow(recorder_.identifiers().capacity()); }

    // Zeroes every adjoint written since they were last all 0: by walking
    // the records on the tape and zeroing the identifiers they name, when
    // that is known to be enough (adjoint_store.hpp) and cheaper than
    // zeroing the whole vector, else the whole vector. Not by walking on a
    // streaming tape (its records are in the spill file) or with external
    // entries on the tape (their rules write adjoints no record names).
    void zero_written_adjoints() noexcept {
        for (auto& b : boundaries_) {  // what reset(position) set aside, too
            b.kept.clear();
            b.passed = false;
        }
        if (sweeping_) {  // clear_adjoints() from a reverse rule or a progress callback
            adjoints_.clear_while_swept();
            return;
        }
        // (not while sweeping: the sweep holds pointers to them)
        boundaries_.erase(std::remove_if(boundaries_.begin(), boundaries_.end(),
                                         [](const auto& b) { return b.fenced.empty() && !b.lanes_kept; }),
                          boundaries_.end());
        if (adjoints_.all_zero()) return;
        const position end = get_position();
        // a walk reads about 12 record bytes per operand it zeroes, at random
        // places; zeroing the vector writes 8 bytes per adjoint in order
        const bool walk_cheaper = end.bytes < adjoints_.size() * sizeof(Scalar) / 4;
        if (!walk_cheaper || !adjoints_.traceable() || stream_.streaming() || externals_.size() != 0) {
            adjoints_.clear();
            return;
        }
        adjoints_.clear_traced([&](auto zero) {
            stream_.visit_in_memory(end.tile, end.offset, [&](const std::byte* begin, const std::byte* stop) {
                detail::swept_identifiers<Scalar>(begin, stop, zero);
            });
        });
    }

    void report(tape_progress::phase stage, double done) const {
        detail::report_progress(options_, stream_, recorder_.statements(), stage, done);
    }

    // ---- for basic_real (the hot path; no checks here) ------------------------

    // the only writer of the thread's active tape (activate(), the destructor)
    static basic_tape*& active_slot() noexcept { return detail::active_tape<basic_tape>::slot(); }

    /// Records `lhs = e` (`lhs = -e` when Negate; tape/recorder.hpp).
    template <bool Negate = false, class E>
    TAPEFLOW_ALWAYS_INLINE void record(identifier& lhs, std::uint32_t& tag, const E& e) {
        recorder_.template record<Negate>(lhs, tag, e);
    }
    /// Records `lhs += e` (`-=` when Subtract) for a variable of this tape.
    template <bool Subtract, class E>
    TAPEFLOW_ALWAYS_INLINE void record_update(identifier lhs, const E& e) {
        recorder_.template record_update<Subtract>(lhs, e);
    }
    /// Gives identifier `id` back to the tape whose serial is `tag`; sets it to 0.
    TAPEFLOW_ALWAYS_INLINE void release(identifier& id, std::uint32_t tag) noexcept { recorder_.release(id, tag); }
    /// (debug checks) How often identifier `id` was handed out (identifier_pool.hpp).
    std::uint32_t identifier_generation(identifier id) const noexcept {
        return recorder_.identifiers().generation(id);
    }
    /// The same when no tape is at hand.
    static void release_to_owner(identifier id, std::uint32_t tag) noexcept {
        basic_recorder<Scalar>::release_to_owner(id, tag);
    }

    // What every sweep does around its records: the checks, sealing the
    // open tile, the observer and progress, and the walk over the tiles from
    // `from` back to `to`; `grow` sizes the adjoints before the walk (nothing
    // may reallocate them during it) and `records(begin, end)` sweeps one
    // tile's run of records.
    // `pass(boundary)` does what the sweep does at a boundary of
    // reset(position).
    template <class Grow, class Records, class Boundary>
    void run_sweep(const position& from, const position& to, std::size_t lanes, Grow grow, Records records,
                   Boundary pass) {
        check_not_segment("sweep");
        check_not_sweeping("sweep");
        check_no_region("sweep");
        if (recording_)
            throw usage_error("sweep() called while recording; call stop_recording() first");
        const position current = get_position();
        check_position(from, "sweep");
        check_position(to, "sweep");
        if (current < from || from < to)
            throw usage_error("sweep(from, to) needs to <= from <= the current position; "
                              "positions taken before a reset are no longer valid");
        // the boundaries of reset(position) in [to, from], last first: each
        // is passed between the records before and after its offset, in the
        // same tile's delivery (one layer, one read per tile)
        std::vector<detail::reset_boundary<Scalar>*> ahead;
        for (auto b = boundaries_.rbegin(); b != boundaries_.rend() && to <= b->at; ++b)
            if (!(from < b->at)) ahead.push_back(&*b);
        if (from.statements == to.statements) {  // no record: only a boundary right here
            if (!ahead.empty()) grow();
            for (auto* b : ahead) pass(*b);
            return;
        }
        swept_ = true;
        grow();
        if (stream_.streaming()) recorder_.seal();  // both scratchpad halves stage tiles now
        const auto& progress = options_.progress;
        const sweeping_scope scope(sweeping_);
        stream_.tell([&](tape_observer& o) { tell_sweep_begins(o, current, lanes); });
        std::size_t next = 0;
        stream_.read_reverse(
            from.tile, from.offset, to.tile, to.offset,
            [&](const std::byte* data, std::size_t begin, std::size_t end, double done, std::size_t tile) {
                std::size_t top = end;
                for (; next < ahead.size(); ++next) {
                    const position& at = ahead[next]->at;
                    if (at.tile < tile || (at.tile == tile && at.offset < begin)) break;  // further down
                    const std::size_t cut = at.tile > tile ? end : std::min(at.offset, end);
                    if (cut < top) records(data + cut, data + top);
                    top = std::min(top, cut);
                    pass(*ahead[next]);
                }
                if (begin < top) records(data + begin, data + top);
                if (progress) report(tape_progress::phase::sweeping, done);
            });
        for (; next < ahead.size(); ++next) pass(*ahead[next]);  // at `to`, below the last record read
        stream_.tell([](tape_observer& o) { o.sweep_ends(); });
    }

    // ---- parallel regions (tape/parallel_region.hpp) ---------------------------

    struct segment_tag {};
    // A part of this tape for one thread of a parallel region: records in
    // memory under the parent's serial (its variables are the parent's), no
    // observer, progress or budget; not registered as a tape of its own.
    basic_tape(segment_tag, const basic_tape& parent)
        : options_(segment_options(parent.options_)),
          owner_(std::this_thread::get_id()),
          stream_(options_),
          recorder_(parent.serial(), stream_, options_),
          position_tag_(detail::next_tape_serial()),
          segment_(true) {}
    static tape_options segment_options(const tape_options& parent) {
        tape_options o;
        o.tile_bytes = parent.tile_bytes;
        return checked(o);
    }
    // Sweeps this segment's records from `from` back to `to` with
    // records(begin, end) (the parallel region's entry, during the parent's sweep).
    // The team that sweeps parallel regions' segments at once, with at least `helpers` threads.
    detail::sweep_team& team(std::size_t helpers) {
        if (!team_ || team_->helpers() < helpers) {
            team_.reset();
            team_ = std::make_unique<detail::sweep_team>(helpers);
        }
        return *team_;
    }
    // Thread-private adjoints of a parallel region's sweep: `parts` vectors
    // as long as the adjoint vector, all 0 (the sweep leaves them so).
    struct private_part {
        std::vector<Scalar> adjoints;
        std::vector<identifier> touched;  // where adjoints may be non-zero
    };
    std::vector<private_part>& private_adjoints(std::size_t parts) {
        if (private_.size() < parts) private_.resize(parts);
        const std::size_t n = recorder_.identifiers().capacity();
        for (private_part& p : private_)
            if (p.adjoints.size() < n) p.adjoints.resize(n, Scalar(0));
        return private_;
    }
    void check_not_segment(const char* what) const {
        if (segment_)
            throw usage_error(std::string(what) + "() on the tape of a parallel region's worker (while a "
                              "parallel_region::worker lives, its thread's active tape is a segment of the "
                              "region's tape, for statements only); call it on the tape itself, outside "
                              "the region");
    }
    void check_no_region(const char* what) const {
        if (region_open_)
            throw usage_error(std::string(what) + "() called while a parallel region of this tape is open; "
                              "close the region (parallel_region::close()) first");
    }
    template <class Records>
    void sweep_segment(const position& from, const position& to, Records records) {
        stream_.read_reverse(from.tile, from.offset, to.tile, to.offset,
                             [&](const std::byte* data, std::size_t begin, std::size_t end, double, std::size_t) {
                                 records(data + begin, data + end);
                             });
    }

    friend real_type;
    friend basic_custom_adjoint<Scalar>;
    friend basic_parallel_region<Scalar>;
    friend detail::region_entry<Scalar>;

    tape_options options_;
    std::thread::id owner_;
    bool recording_ = false;
    bool probing_ = false;
    // raised by another thread that assigned a variable of this tape (tape_registry.hpp)
    std::atomic<bool> foreign_writes_{false};
    bool sweeping_ = false;  // a sweep is running (see check_not_sweeping)
    bool swept_ = false;     // swept since the last reset (see start_recording)
    std::uint64_t observed_bytes_ = 0;  // record bytes the observer was told of

    tile_stream stream_;               // where the tiles live (memory, scratchpad, spill file)
    basic_recorder<Scalar> recorder_;  // writes records into stream_'s tiles; the identifiers
    // stamped on positions by get_position(), wanted by check_position():
    // serial(), but for a segment a serial of its own (it records under its
    // parent's, and its positions point into its own tiles)
    const std::uint32_t position_tag_;
    position_epochs epochs_;           // which positions are still on the tape
    adjoint_store<Scalar> adjoints_;
    region_table regions_;
    external_table<Scalar> externals_;  // custom adjoints (tape/external.hpp)
    // what reset(position) left for the sweeps passing its positions, by position
    std::vector<detail::reset_boundary<Scalar>> boundaries_;
    bool lanes_stopped_ = false;  // a vector sweep stopped above the start since the last reset()

    // parallel regions: one segment per thread (kept for the next regions),
    // the team that sweeps them at once, and what a region left to report
    bool segment_ = false;              // this tape is a segment of another
    bool region_open_ = false;          // a parallel region of this tape is open
    std::vector<std::unique_ptr<basic_tape>> segments_;
    std::unique_ptr<detail::sweep_team> team_;
    std::vector<private_part> private_;
    std::string parallel_error_;  // a region's failure found by its destructor (stop_recording throws it)
};

}  // namespace tapeflow
