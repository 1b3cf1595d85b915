// tapeflow/tape/parallel_region.hpp - a parallel loop inside one recording:
// each thread records its iterations onto a segment of the tape, and the
// sweep runs the segments' records as one entry of the tape.
//
//   tape (recording thread)  ... [stmt] [stmt] [region entry] [stmt] ...
//                                                 |
//   segment 0 (thread 0)      ... [r r r r r] <---+ from..to of each segment
//   segment 1 (thread 1)      ... [r r r r]   <---+
//
// The region opens on the recording thread, before the parallel loop; each
// thread of the loop enters it as a worker (its active tape is then its
// segment); close() (or the destructor) puts one external entry on the tape
// (tape/external.hpp) that holds the segments' records of this region. The
// sweep meets the entry where the loop was, and sweeps the segments:
//
// - region_sweep::serial (the default): one segment after the other on the
//   sweeping thread. Right in any order: a thread's statements write
//   variables no other thread touches (the loop has no data race), so no
//   segment reads an adjoint another one writes, only adds to the adjoints
//   of shared operands (the neighbour cells at a chunk's edge, a shared
//   coefficient). The recording is what runs in parallel.
// - region_sweep::parallel: the segments at once, one thread each (a team
//   the tape keeps, tape/sweep_team.hpp). Segment 0 adds into the tape's
//   adjoints, the others into adjoint vectors of their own, summed into the
//   tape's when all are done (no atomics). Measured slower than serial on
//   the 2-core machine of docs/parallel.md (so is an atomic add per
//   operand, which was tried and dropped); a region whose segments hold
//   external entries (custom adjoints, Eigen products) is swept serially,
//   their rules add without atomics.
//
// The rule that makes any order right: one parallel loop per region, each
// thread assigning only variables no other thread of the region reads or
// assigns (no barrier, single, critical section or reduction on Reals in a
// region). The debug checks verify it at close() (check_independent).
//
// Identifiers: every pool of the tape mints from one shared_identifiers
// while the region is open (tape/identifier_pool.hpp): the tape's free
// identifiers, then fresh ones, a block per thread at a time, so variables
// created by the threads get identifiers no other thread has; at close the
// tape takes back the threads' free identifiers. Segments and their tiles
// are kept for the next regions (a time loop opens one per step) and
// emptied by reset().
//
// **Example** (OpenMP; std::thread works the same way):
//   tapeflow::parallel_region region(tape, omp_get_max_threads());
//   #pragma omp parallel num_threads(region.threads())
//   {
//       tapeflow::parallel_region::worker w(region, omp_get_thread_num());
//       #pragma omp for
//       for (long i = 1; i < n - 1; ++i) next[i] = u[i] + c * (u[i - 1] - 2 * u[i] + u[i + 1]);
//   }
//   region.close();
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "external.hpp"
#include "identifier_pool.hpp"
#include "position.hpp"
#include "record.hpp"
#include "sweep_team.hpp"
#include "sweeper.hpp"
#include "tape.hpp"

namespace tapeflow {

/// How the sweep runs a parallel region's segments (docs/parallel.md has
/// what each cost).
enum class region_sweep {
    serial,    ///< one segment after the other on the sweeping thread (the default)
    parallel,  ///< one thread per segment, adding into thread-private adjoints, summed after
};

namespace detail {

/// The tape entry of one closed parallel region: which records of which
/// segment belong to it.
template <class Scalar>
class region_entry final : public external_entry<Scalar> {
public:
    struct part {
        basic_tape<Scalar>* segment;
        position from, to;  // the region's records: [from, to) of the segment
    };

    region_entry(std::vector<part> parts, region_sweep mode, basic_tape<Scalar>& tape)
        : parts_(std::move(parts)), mode_(mode), tape_(tape) {
        for (const part& p : parts_) externals_ |= p.to.externals != p.from.externals;
    }

    void reverse(Scalar* adjoint, std::vector<Scalar>&) override {
        if (mode_ == region_sweep::parallel && parts_.size() > 1 && !externals_) {
            // part 0 adds into the tape's adjoints (no other part touches
            // them: the others add into their own), parts 1.. into theirs
            auto& mine = tape_.private_adjoints(parts_.size() - 1);
            // adds the other parts' adjoints into the tape's (or drops them
            // after a failure), leaving them 0 for the next sweep
            const auto sum = [&](bool add) noexcept {
                for (std::size_t i = 0; i + 1 < parts_.size(); ++i) {
                    Scalar* m = mine[i].adjoints.data();
                    for (const identifier id : mine[i].touched) {
                        if (add) adjoint[id] += m[id];
                        m[id] = Scalar(0);
                    }
                    mine[i].touched.clear();
                }
            };
            try {
                tape_.team(parts_.size() - 1).run(parts_.size(), [&](std::size_t i) {
                    const part& p = parts_[i];
                    p.segment->sweep_segment(p.to, p.from, [&](const std::byte* begin, const std::byte* end) {
                        if (i == 0)
                            sweep_records(begin, end, adjoint, p.segment->externals_);
                        else
                            sweep_records_private(begin, end, adjoint, mine[i - 1].adjoints.data(),
                                                  mine[i - 1].touched);
                    });
                });
            } catch (...) {
                sum(false);
                throw;
            }
            sum(true);
            return;
        }
        // serial: the segments in reverse order (any order is right: no
        // segment reads what another writes)
        for (std::size_t i = parts_.size(); i-- > 0;) {
            const part& p = parts_[i];
            p.segment->sweep_segment(p.to, p.from, [&](const std::byte* begin, const std::byte* end) {
                sweep_records(begin, end, adjoint, p.segment->externals_);
            });
        }
    }

    void reverse_lanes(Scalar* adjoint, std::size_t lanes, std::vector<Scalar>&) override {
        for (std::size_t i = parts_.size(); i-- > 0;) {
            const part& p = parts_[i];
            p.segment->sweep_segment(p.to, p.from, [&](const std::byte* begin, const std::byte* end) {
                sweep_lane_records_n(begin, end, adjoint, lanes, p.segment->externals_);
            });
        }
    }

    // the lhs of the region's records in every segment (and what their entries assign)
    bool assigned_identifiers(std::vector<identifier>& out) const override {
        bool told = true;
        for (const part& p : parts_)
            p.segment->sweep_segment(p.to, p.from, [&](const std::byte* begin, const std::byte* end) {
                told = tapeflow::detail::assigned_identifiers<Scalar>(begin, end, p.segment->externals_, out) && told;
            });
        return told;
    }

    std::size_t bytes() const noexcept override { return sizeof(*this) + parts_.capacity() * sizeof(part); }

private:
    std::vector<part> parts_;
    region_sweep mode_;
    bool externals_ = false;  // some segment holds external entries in this region
    basic_tape<Scalar>& tape_;
};

}  // namespace detail

/// A parallel loop inside a recording (see the top of this header). Open
/// it on the recording thread while the tape records, enter it once per
/// thread with a worker, and close it after the loop; nothing may be
/// recorded on the tape itself in between.
template <class Scalar>
class basic_parallel_region {
public:
    using tape_type = basic_tape<Scalar>;

    /// Most threads a region takes.
    static constexpr std::size_t max_threads = 1024;

    /// Opens a region of `threads` workers (indices 0 to threads - 1) on
    /// `tape`, which must be recording on the calling thread.
    /// \throws usage_error if it is not, if a region of it is open, or
    /// threads is 0 or above max_threads.
    basic_parallel_region(tape_type& tape, std::size_t threads, region_sweep mode = region_sweep::serial)
        : tape_(tape), mode_(mode) {
        tape.check_owner("parallel_region");
        tape.check_not_segment("parallel_region");
        tape.check_not_sweeping("parallel_region");
        if (!tape.recording_)
            throw usage_error("parallel_region: the tape is not recording; open the region between "
                              "start_recording() and stop_recording(), on the recording thread");
        if (tape.region_open_)
            throw usage_error("parallel_region: a parallel region of this tape is open already (regions do "
                              "not nest); close it first");
        if (threads == 0 || threads > max_threads)
            throw usage_error("parallel_region: " + std::to_string(threads) + " threads; give 1 to " +
                              std::to_string(max_threads) + " (omp_get_max_threads(), or your thread count)");
        // what can throw first; then nothing that can
        from_.resize(threads);
        held_.reset(new std::atomic<bool>[threads]());
        while (tape.segments_.size() < threads)
            tape.segments_.push_back(
                std::unique_ptr<tape_type>(new tape_type(typename tape_type::segment_tag{}, tape)));
        tape.recorder_.identifiers().share(shared_);
        region_index_ = tape.begin_region("parallel");  // the region of the tape that holds the loop's entry
        start_statements_ = tape.get_position().statements;
        tape.recorder_.identifiers().mint_from(&shared_);
        for (std::size_t i = 0; i < threads; ++i) {
            tape_type& s = *tape.segments_[i];
            s.recorder_.identifiers().mint_from(&shared_);
            from_[i] = s.get_position();
        }
        tape.region_open_ = true;
    }

    /// Closes the region (if close() was not called) without throwing: an
    /// error close() would have thrown is thrown by the tape's
    /// stop_recording() instead. A worker must not outlive its region.
    ~basic_parallel_region() {
        if (closed_) return;
        try {
            close();
        } catch (const std::exception& e) {
            if (tape_.parallel_error_.empty()) tape_.parallel_error_ = e.what();
        } catch (...) {
            if (tape_.parallel_error_.empty()) tape_.parallel_error_ = "a parallel region failed to close";
        }
        if (!closed_) detach();  // a worker still active: the region's identifiers go with it
    }
    basic_parallel_region(const basic_parallel_region&) = delete;
    basic_parallel_region& operator=(const basic_parallel_region&) = delete;

    /// Number of workers (indices 0 to threads() - 1).
    std::size_t threads() const noexcept { return from_.size(); }

    /// One thread's part of the region: while it lives, the thread's active
    /// tape is segment `index` of the region's tape, recording. Make it the
    /// first thing in the parallel block: Reals of the block declared
    /// before it would die after it (docs/parallel.md, the rules).
    class worker {
    public:
        /// \throws usage_error if `index` >= region.threads(), the region is
        /// closed, or another worker holds that index.
        worker(basic_parallel_region& region, std::size_t index)
            : segment_(region.segment(index)), held_(region.held_[index]) {
            previous_ = tape_type::active_slot();
            segment_.owner_ = std::this_thread::get_id();
            segment_.recording_ = true;
            tape_type::active_slot() = &segment_;
        }
        ~worker() {
            segment_.recording_ = false;
            tape_type::active_slot() = previous_;
            held_.store(false, std::memory_order_release);
        }
        worker(const worker&) = delete;
        worker& operator=(const worker&) = delete;

    private:
        tape_type& segment_;
        std::atomic<bool>& held_;  // the region's mark that this index is taken
        tape_type* previous_ = nullptr;
    };

    /// Puts the region on the tape (one entry holding every segment's
    /// records of the region) and hands the threads' free identifiers back
    /// to the tape. Call it after the parallel loop, on the thread that
    /// opened the region. Calling it again does nothing.
    /// \throws usage_error if a worker is still active, or if statements
    /// were recorded on the tape itself while the region was open (they
    /// would be swept in the wrong order): in both cases the recording
    /// cannot give a right gradient; reset the tape.
    void close() {
        if (closed_) return;
        tape_.check_owner("parallel_region::close");
        for (std::size_t i = 0; i < threads(); ++i)
            if (held_[i].load(std::memory_order_acquire))
                throw usage_error("parallel_region::close(): worker " + std::to_string(i) +
                                  " of the region is still active; close the region after the parallel "
                                  "loop, when every worker has gone");
        detach();
        identifier_pool& ids = tape_.recorder_.identifiers();
        std::vector<typename detail::region_entry<Scalar>::part> parts;
        for (std::size_t i = 0; i < threads(); ++i) {
            tape_type& s = *tape_.segments_[i];
            ids.take_free_of(s.recorder_.identifiers(), shared_.highest);
            const position to = s.get_position();
            if (to.statements != from_[i].statements) parts.push_back({&s, from_[i], to});
        }
        if (tape_.get_position().statements != start_statements_)
            throw usage_error("parallel_region: statements were recorded on the tape itself while its "
                              "parallel region was open (outside the region's workers, e.g. on the "
                              "thread that opened it before entering as worker 0); they would be swept "
                              "in the wrong order. Record them before the region or after close(); "
                              "reset the tape");
        if constexpr (debug_checks) check_independent(parts);
        if (!parts.empty())
            tape_.push_external(std::make_unique<detail::region_entry<Scalar>>(std::move(parts), mode_, tape_));
        tape_.end_region(region_index_);
    }

private:
    tape_type& segment(std::size_t index) {
        if (closed_)
            throw usage_error("parallel_region::worker: the region is closed; enter it between its "
                              "construction and close()");
        if (index >= threads())
            throw usage_error("parallel_region::worker: index " + std::to_string(index) + " of a region of " +
                              std::to_string(threads()) + " threads; give each thread an index below " +
                              std::to_string(threads()) + " (omp_get_thread_num())");
        if (held_[index].exchange(true, std::memory_order_acq_rel))
            throw usage_error("parallel_region::worker: index " + std::to_string(index) +
                              " is held by another worker; give each thread its own index");
        return *tape_.segments_[index];
    }

    // Every pool of the tape mints alone again; the region is closed.
    void detach() noexcept {
        closed_ = true;
        tape_.region_open_ = false;
        tape_.recorder_.identifiers().mint_from(nullptr);
        for (std::size_t i = 0; i < threads(); ++i) tape_.segments_[i]->recorder_.identifiers().mint_from(nullptr);
    }

    // Debug checks: no thread assigned a variable that another thread of the
    // region assigned or read (a barrier, `omp single`, a critical section
    // or a reduction on Reals inside the region): the segments would then
    // depend on each other, and no order of sweeping them is right.
    void check_independent(const std::vector<typename detail::region_entry<Scalar>::part>& parts) const {
        std::unordered_map<identifier, std::size_t> writer;
        const auto walk = [&](std::size_t j, auto&& on_record) {
            const auto& p = parts[j];
            p.segment->sweep_segment(p.to, p.from, [&](const std::byte* begin, const std::byte* end) {
                reverse_record_reader<Scalar> r(begin, end);
                while (r.more()) {
                    const record_header h = r.previous();
                    if (h.count == 0) {
                        r.take_external();
                        continue;
                    }
                    on_record(h, r);
                }
            });
        };
        const auto fail = [&](identifier id, std::size_t a, std::size_t b, const char* what) {
            throw usage_error("parallel_region (debug check): identifier " + std::to_string(id) + " was " + what +
                              " by the workers of two segments (" + std::to_string(a) + " and " +
                              std::to_string(b) + ") of one region: the threads depend on each other (a "
                              "barrier, omp single, a critical section or a reduction on Reals inside the "
                              "region?), which no sweep of the region can reverse. One parallel loop per "
                              "region, each thread writing only its own variables; add partial sums up "
                              "after close(). Reset the tape");
        };
        for (std::size_t j = 0; j < parts.size(); ++j)
            walk(j, [&](const record_header& h, const reverse_record_reader<Scalar>&) {
                const auto [at, fresh] = writer.emplace(h.lhs, j);
                if (!fresh && at->second != j) fail(h.lhs, at->second, j, "assigned");
            });
        for (std::size_t j = 0; j < parts.size(); ++j)
            walk(j, [&](const record_header& h, const reverse_record_reader<Scalar>& r) {
                for (std::uint32_t i = 0; i < h.count; ++i) {
                    const auto at = writer.find(r.id(i));
                    if (at != writer.end() && at->second != j) fail(r.id(i), at->second, j, "assigned and read");
                }
            });
    }

    tape_type& tape_;
    region_sweep mode_;
    bool closed_ = false;
    std::uint64_t start_statements_ = 0;  // statements on the tape at the opening
    std::vector<position> from_;          // each segment's position at the opening
    std::unique_ptr<std::atomic<bool>[]> held_;  // whether a worker holds index i
    shared_identifiers shared_;   // what the tape's pools mint from while the region is open
    std::size_t region_index_ = 0;  // the tape region ("parallel") around the loop's entry
};

/// A parallel region of the default tape type (double).
using parallel_region = basic_parallel_region<double>;

}  // namespace tapeflow
