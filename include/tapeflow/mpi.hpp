// tapeflow/mpi.hpp - MPI communication of tapeflow::Real buffers, with
// adjoints: gradients of programs that run on several processes.
//
// Opt-in: include it (it is not in tapeflow/tapeflow.hpp) and link MPI
// (CMake: find_package(MPI COMPONENTS CXX), target_link_libraries(... MPI::MPI_CXX)).
//
// Each rank records on its own tape. A call below made while the rank's tape
// records sends the VALUES (doubles or floats; identifiers never leave the
// rank) and puts one entry on the tape (a custom adjoint, custom_adjoint.hpp,
// so it streams, spills and re-executes like any entry). The reverse sweep
// runs the adjoint communication of each entry, in reverse order:
//
//   forward                          reverse (in the sweep)
//   send(x) to q                     receive x_bar from q, add to x_bar
//   recv(y) from p                   send y_bar to p (nonblocking), y_bar = 0
//   isend(x) ... wait                (wait) post receive of x_bar ... (isend) complete it, add
//   irecv(y) ... wait(y arrives)     (wait) send y_bar (nonblocking) ... (irecv) complete it
//   sendrecv(x -> q, y <- p)         sendrecv(y_bar -> p, x_bar <- q)
//   bcast(x from root)               reduce(sum) of the copies' adjoints to root
//   reduce / allreduce (sum)         bcast / allreduce(sum) of y_bar, add to x_bar
//   reduce / allreduce (min, max)    the same, to the rank that held the extreme only
//                                    (ties: the lowest such rank)
//   reduce / allreduce (prod)        the same, times the product of the other ranks' x
//   gather(x -> y at root)           scatter y_bar from root, add to x_bar
//   scatter(x at root -> y)          gather y_bar to root, add to x_bar
//   allgather(x -> y)                reduce_scatter(sum) of y_bar, add to x_bar
//
// Rules for the program, besides MPI's own:
// - Every rank records, and sweeps, the same communication: the sweep is
//   itself a communicating program, in the reverse order of the recording.
//   Every entry communicates in every sweep, even where this rank's adjoints
//   are 0 (its partner waits for the message). The drivers of drivers.hpp
//   (gradient, jacobian, ...) can be called on every rank as they are;
//   jacobian with the same number of outputs on every rank (it sweeps once
//   per group of outputs).
// - A loss that every rank holds after an allreduce is ONE value: seed it on
//   one rank only. With tapeflow::gradient on every rank, return the result
//   of a reduce to root instead (on the other ranks it is a passive 0), else
//   the gradient counts the loss once per rank.
// - Adjoint messages reuse the tag and communicator of the forward message;
//   a recv from MPI_ANY_SOURCE / MPI_ANY_TAG answers the rank and tag that
//   sent. Such a wildcard receive could also match the adjoint message of a
//   rank that already sweeps: end the recording with MPI_Barrier(comm) (a
//   plain call) so that no rank sweeps before all have recorded, and keep
//   wildcard receives out of checkpointed steps (re-run during sweeps).
// - The communicator must outlive the tape's entries (a reset drops them),
//   and adjoint sends may still be open after a sweep: reset (or destroy)
//   the tapes before MPI_Finalize.
// - The buffer of an irecv must stay alive until its wait returns (isend
//   copies its values). A request is waited for in the recording that
//   posted it.
// - A checkpointed loop (checkpoint/) may contain these calls when every rank
//   runs it with the same steps and snapshots: its forward sends untaped,
//   its sweep re-runs steps, messages included. A rematerializer region that
//   communicates keeps its tape whatever the budget.
// - The adjoint of a recv is sent without blocking, so a program that only
//   works because MPI buffers small sends (send then recv on both sides) does
//   not deadlock in the reverse sweep either. Such a send completes in a
//   later MPI call or when the tape drops the entry (reset, destruction).
// Without a recording tape every call is plain MPI on the values, and the
// outputs are passive.
//
// **Example** (a halo exchange and a global loss; the full program is
// examples/mpi_heat.cpp):
//   tapeflow::mpi::sendrecv(&u[n], 1, right, 0, &u[0], 1, left, 0, comm);
//   ...
//   tapeflow::Real total;
//   tapeflow::mpi::reduce(&local, &total, 1, tapeflow::mpi::op::sum, 0, comm);
//   return total;   // the global loss on rank 0, a passive 0 elsewhere
#pragma once

// Only MPI's C interface is used: skip the deprecated C++ bindings that
// Open MPI and MPICH include from <mpi.h> otherwise (compile time, warnings).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "custom_adjoint.hpp"
#include "error.hpp"
#include "real.hpp"

namespace tapeflow::mpi {

/// The reduction of reduce() and allreduce().
enum class op { sum, prod, min, max };

namespace detail {

template <class S>
MPI_Datatype datatype() {
    static_assert(std::is_same_v<S, double> || std::is_same_v<S, float>,
                  "tapeflow::mpi communicates basic_real<double> and basic_real<float> only");
    return std::is_same_v<S, double> ? MPI_DOUBLE : MPI_FLOAT;
}
// (value, rank) pairs for MPI_MINLOC / MPI_MAXLOC
template <class S>
struct located {
    S value;
    int rank;
};
template <class S>
MPI_Datatype located_datatype() {
    return std::is_same_v<S, double> ? MPI_DOUBLE_INT : MPI_FLOAT_INT;
}

inline void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw error(std::string("tapeflow::mpi: ") + what + " failed: " + std::string(text, std::size_t(length)));
}

inline bool finalized() noexcept {
    int done = 0;
    MPI_Finalized(&done);
    return done != 0;
}

inline int rank_of(MPI_Comm comm) {
    int r = 0;
    check(MPI_Comm_rank(comm, &r), "MPI_Comm_rank");
    return r;
}
inline int size_of(MPI_Comm comm) {
    int p = 0;
    check(MPI_Comm_size(comm, &p), "MPI_Comm_size");
    return p;
}

/// The tag that answers a receive: the sender's (MPI_ANY_TAG resolved); a
/// receive from MPI_PROC_NULL reports MPI_ANY_TAG, where any valid tag does.
inline int answer_tag(const MPI_Status& status, int requested) noexcept {
    if (status.MPI_SOURCE != MPI_PROC_NULL) return status.MPI_TAG;
    return requested == MPI_ANY_TAG ? 0 : requested;
}

inline std::size_t checked_count(int count, const void* buffer, const char* what) {
    if (count < 0) throw usage_error(std::string("tapeflow::mpi::") + what + ": count is negative");
    if (count > 0 && buffer == nullptr)
        throw usage_error(std::string("tapeflow::mpi::") + what + ": a null buffer of " + std::to_string(count) +
                          " elements");
    return std::size_t(count);
}

/// A message count for MPI (an int).
inline int mpi_count(std::size_t count) {
    if (count > std::size_t(std::numeric_limits<int>::max()))
        throw error("tapeflow::mpi: a message of " + std::to_string(count) +
                    " values (elements x lanes of a vector sweep) is more than MPI's int count holds; "
                    "send fewer elements per call or sweep with fewer lanes");
    return int(count);
}

/// A nonblocking message (an isend or irecv, or an adjoint one): its buffer
/// lives as long as its request. A send still open when it is dropped is
/// completed then (its partner posts the matching receive, in its own sweep
/// for an adjoint); a receive still open (never waited for, or a sweep that
/// ended early, by an exception) is cancelled.
template <class S>
struct message {
    std::vector<S> buffer;
    MPI_Request request = MPI_REQUEST_NULL;
    bool receiving = false;

    message() = default;
    message(const message&) = delete;
    message& operator=(const message&) = delete;
    ~message() {
        if (request == MPI_REQUEST_NULL || finalized()) return;
        if (receiving) MPI_Cancel(&request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    void wait(MPI_Status* status = MPI_STATUS_IGNORE) {
        if (request != MPI_REQUEST_NULL) check(MPI_Wait(&request, status), "MPI_Wait");
    }
    /// Sends `buffer` without blocking.
    void send_buffer(int to, int tag, MPI_Comm comm) {
        receiving = false;
        check(MPI_Isend(buffer.data(), mpi_count(buffer.size()), datatype<S>(), to, tag, comm, &request),
              "MPI_Isend");
    }
    /// Sends `count` values from `from` without blocking (after the last send completed).
    void send(const S* from, std::size_t count, int to, int tag, MPI_Comm comm) {
        wait();
        buffer.assign(from, from + count);
        send_buffer(to, tag, comm);
    }
    /// Posts a receive of `count` values.
    void receive(std::size_t count, int from, int tag, MPI_Comm comm) {
        wait();
        buffer.assign(count, S(0));
        receiving = true;
        check(MPI_Irecv(buffer.data(), mpi_count(count), datatype<S>(), from, tag, comm, &request), "MPI_Irecv");
    }
};

// Whether the calls tape entries: the active tape records, and not only to
// probe for captured variables (a checkpointed loop's forward, which runs
// the step's messages untaped and re-runs them taped in the sweep).
// custom_adjoint's record() would not tape an every-sweep entry on a probe
// either; deciding here skips building one, and the note of a request.
template <class S>
bool recording() noexcept {
    basic_tape<S>* t = basic_tape<S>::active_if_any();
    return t != nullptr && t->is_recording() && !t->is_probing();
}

template <class S>
std::vector<S> values_of(const basic_real<S>* x, std::size_t n) {
    std::vector<S> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = x[i].value();
    return v;
}

template <class S>
void assign_passive(basic_real<S>* y, const S* values, std::size_t m) {
    for (std::size_t i = 0; i < m; ++i) y[i] = values[i];
}

/// Tapes one entry: inputs x[0, n), outputs y[0, m) that get `values`, and
/// `rule(const S* y_bar, S* x_bar, std::size_t lanes)`, run in every sweep.
/// Without a recording tape, the outputs get the values, passive.
template <class S, class Rule>
void tape_entry(const basic_real<S>* x, std::size_t n, basic_real<S>* y, const S* values, std::size_t m,
                Rule rule, std::size_t captured_bytes) {
    ++tapeflow::detail::outside_effects();  // a checkpointed loop around this call must know
    if (!recording<S>()) {
        assign_passive(y, values, m);
        return;
    }
    basic_custom_adjoint<S> op;
    op.reserve(n, m);
    if (n != 0) op.add_inputs(n, [x](std::size_t k) -> const basic_real<S>& { return x[k]; });
    if (m != 0)
        op.add_outputs(
            m, [y](std::size_t k) -> basic_real<S>& { return y[k]; }, [values](std::size_t k) { return values[k]; });
    op.run_in_every_sweep();
    op.record(std::move(rule), captured_bytes);
}

template <class S>
void add(S* to, const S* from, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) to[i] += from[i];
}

}  // namespace detail

// ---- point to point -----------------------------------------------------------

/// Sends the values of x[0, count) to rank `dest` (MPI_Send).
template <class S>
void send(const basic_real<S>* x, int count, int dest, int tag, MPI_Comm comm) {
    const std::size_t n = detail::checked_count(count, x, "send");
    const std::vector<S> v = detail::values_of(x, n);
    detail::check(MPI_Send(v.data(), count, detail::datatype<S>(), dest, tag, comm), "MPI_Send");
    detail::tape_entry<S>(
        x, n, nullptr, nullptr, 0,
        [n, dest, tag, comm](const S*, S* x_bar, std::size_t lanes) {
            // x_bar is 0: receive the adjoints straight into it
            detail::check(MPI_Recv(x_bar, detail::mpi_count(n * lanes), detail::datatype<S>(), dest, tag, comm, MPI_STATUS_IGNORE),
                          "MPI_Recv (adjoint of send)");
        },
        0);
}

/// Receives into y[0, count) from rank `source` (MPI_Recv; MPI_ANY_SOURCE and
/// MPI_ANY_TAG allowed). The elements received become new variables of the
/// recording; a shorter message sets only its first elements.
template <class S>
void recv(basic_real<S>* y, int count, int source, int tag, MPI_Comm comm, MPI_Status* status = MPI_STATUS_IGNORE) {
    const std::size_t n = detail::checked_count(count, y, "recv");
    std::vector<S> v(n);
    MPI_Status got_status;
    detail::check(MPI_Recv(v.data(), count, detail::datatype<S>(), source, tag, comm, &got_status), "MPI_Recv");
    int got = 0;
    detail::check(MPI_Get_count(&got_status, detail::datatype<S>(), &got), "MPI_Get_count");
    if (status != MPI_STATUS_IGNORE) *status = got_status;
    const std::size_t m = std::size_t(got);
    const int from = got_status.MPI_SOURCE, from_tag = detail::answer_tag(got_status, tag);
    auto adjoint = std::make_shared<detail::message<S>>();
    detail::tape_entry<S>(
        nullptr, 0, y, v.data(), m,
        [adjoint, m, from, from_tag, comm](const S* y_bar, S*, std::size_t lanes) {
            adjoint->send(y_bar, m * lanes, from, from_tag, comm);
        },
        m * sizeof(S));
}

/// MPI_Sendrecv: x[0, send_count) to `dest`, y[0, recv_count) from `source`
/// (MPI_PROC_NULL on either side allowed, as at the ends of a halo exchange).
template <class S>
void sendrecv(const basic_real<S>* x, int send_count, int dest, int send_tag, basic_real<S>* y, int recv_count,
              int source, int recv_tag, MPI_Comm comm, MPI_Status* status = MPI_STATUS_IGNORE) {
    const std::size_t n = detail::checked_count(send_count, x, "sendrecv");
    const std::size_t r = detail::checked_count(recv_count, y, "sendrecv");
    const std::vector<S> v = detail::values_of(x, n);
    std::vector<S> w(r);
    MPI_Status got_status;
    detail::check(MPI_Sendrecv(v.data(), send_count, detail::datatype<S>(), dest, send_tag, w.data(), recv_count,
                               detail::datatype<S>(), source, recv_tag, comm, &got_status),
                  "MPI_Sendrecv");
    int got = 0;
    detail::check(MPI_Get_count(&got_status, detail::datatype<S>(), &got), "MPI_Get_count");
    if (status != MPI_STATUS_IGNORE) *status = got_status;
    const std::size_t m = std::size_t(got);
    const int from = got_status.MPI_SOURCE, from_tag = detail::answer_tag(got_status, recv_tag);
    detail::tape_entry<S>(
        x, n, y, w.data(), m,
        [n, m, dest, send_tag, from, from_tag, comm](const S* y_bar, S* x_bar, std::size_t lanes) {
            detail::check(MPI_Sendrecv(y_bar, detail::mpi_count(m * lanes), detail::datatype<S>(), from, from_tag, x_bar,
                                       detail::mpi_count(n * lanes), detail::datatype<S>(), dest, send_tag, comm,
                                       MPI_STATUS_IGNORE),
                          "MPI_Sendrecv (adjoint)");
        },
        0);
}

namespace detail {
template <class S>
struct request_state;
// The recording a request is posted in: wait() must happen in the same one.
template <class S>
void note_recording(request_state<S>& s) {
    s.taped = recording<S>();
    if (s.taped) {
        const basic_tape<S>& t = *basic_tape<S>::active_if_any();
        s.tape_serial = t.serial();
        s.tape_epoch = t.get_position().epoch;
    }
}
template <class S>
bool same_recording(const request_state<S>& s) {
    if (!s.taped) return !recording<S>();
    if (!recording<S>()) return false;
    const basic_tape<S>& t = *basic_tape<S>::active_if_any();
    return t.serial() == s.tape_serial && t.get_position().epoch == s.tape_epoch;
}

template <class S>
struct request_state {
    message<S> forward;    // the isend's values, or the irecv's (forward.receiving)
    message<S> adjoint;    // its adjoint in the sweep, the other way
    bool taped = false;    // posted while recording
    bool done = false;     // waited for
    std::uint32_t tape_serial = 0;  // the recording that posted it: tape and epoch
    std::uint64_t tape_epoch = 0;
    basic_real<S>* y = nullptr;  // irecv: where the values go at wait()
    int peer = 0, tag = 0;
    MPI_Comm comm = MPI_COMM_NULL;
};
}  // namespace detail

/// A nonblocking send or receive of Real values, completed by wait().
template <class S>
class basic_request {
public:
    basic_request() = default;
    /// Whether it is a request that wait() has not completed yet.
    bool pending() const noexcept { return state_ && !state_->done; }

private:
    explicit basic_request(std::shared_ptr<detail::request_state<S>> s) : state_(std::move(s)) {}
    std::shared_ptr<detail::request_state<S>> state_;

    template <class T>
    friend basic_request<T> isend(const basic_real<T>*, int, int, int, MPI_Comm);
    template <class T>
    friend basic_request<T> irecv(basic_real<T>*, int, int, int, MPI_Comm);
    template <class T>
    friend void wait(basic_request<T>&, MPI_Status*);
};
using request = basic_request<double>;

/// MPI_Isend of the values of x[0, count) (copied: x may change at once).
template <class S>
basic_request<S> isend(const basic_real<S>* x, int count, int dest, int tag, MPI_Comm comm) {
    const std::size_t n = detail::checked_count(count, x, "isend");
    auto s = std::make_shared<detail::request_state<S>>();
    s->forward.buffer = detail::values_of(x, n);
    s->peer = dest;
    s->tag = tag;
    s->comm = comm;
    s->forward.send_buffer(dest, tag, comm);
    detail::note_recording(*s);
    // reverse: the receive of the adjoints, posted by the wait's entry, completes here
    detail::tape_entry<S>(
        x, n, nullptr, nullptr, 0,
        [s, n](const S*, S* x_bar, std::size_t lanes) {
            s->adjoint.wait();
            detail::add(x_bar, s->adjoint.buffer.data(), std::min(n * lanes, s->adjoint.buffer.size()));
        },
        0);
    return basic_request<S>(std::move(s));
}

/// MPI_Irecv into y[0, count): y receives the values (and becomes active)
/// when wait() returns; it must stay alive until then.
template <class S>
basic_request<S> irecv(basic_real<S>* y, int count, int source, int tag, MPI_Comm comm) {
    const std::size_t n = detail::checked_count(count, y, "irecv");
    auto s = std::make_shared<detail::request_state<S>>();
    s->y = y;
    s->tag = tag;
    s->comm = comm;
    s->forward.receive(n, source, tag, comm);
    detail::note_recording(*s);
    // reverse: the adjoint send posted by the wait's entry completes here
    detail::tape_entry<S>(
        nullptr, 0, nullptr, nullptr, 0, [s](const S*, S*, std::size_t) { s->adjoint.wait(); }, 0);
    return basic_request<S>(std::move(s));
}

/// Completes an isend or irecv (MPI_Wait). After an irecv, the received
/// elements of its buffer hold the values.
template <class S>
void wait(basic_request<S>& r, MPI_Status* status = MPI_STATUS_IGNORE) {
    if (!r.state_) throw usage_error("tapeflow::mpi::wait: the request was not made by isend or irecv");
    detail::request_state<S>& s = *r.state_;
    if (s.done) throw usage_error("tapeflow::mpi::wait: the request was already waited for");
    if (!detail::same_recording(s))
        throw usage_error(s.taped ? "tapeflow::mpi::wait: the request was posted in another recording (or "
                                    "on another tape) than the one recording now; wait for it before "
                                    "stop_recording() or reset(), on the tape that posted it"
                                  : "tapeflow::mpi::wait: the request was posted before the recording "
                                    "started; wait for it first");
    MPI_Status got_status;
    s.forward.wait(&got_status);
    s.done = true;
    if (status != MPI_STATUS_IGNORE) *status = got_status;
    auto shared = r.state_;
    const std::vector<S>& values = s.forward.buffer;
    if (!s.forward.receiving) {
        // reverse: post the receive of x_bar that the isend's entry completes
        detail::tape_entry<S>(
            nullptr, 0, nullptr, nullptr, 0,
            [shared](const S*, S*, std::size_t lanes) {
                shared->adjoint.receive(shared->forward.buffer.size() * lanes, shared->peer, shared->tag,
                                        shared->comm);
            },
            values.size() * sizeof(S));
        return;
    }
    int got = 0;
    detail::check(MPI_Get_count(&got_status, detail::datatype<S>(), &got), "MPI_Get_count");
    const std::size_t m = std::size_t(got);
    s.peer = got_status.MPI_SOURCE;
    s.tag = detail::answer_tag(got_status, s.tag);
    // reverse: send y_bar back without blocking; the irecv's entry completes it
    detail::tape_entry<S>(
        nullptr, 0, s.y, values.data(), m,
        [shared, m](const S* y_bar, S*, std::size_t lanes) {
            shared->adjoint.send(y_bar, m * lanes, shared->peer, shared->tag, shared->comm);
        },
        values.size() * sizeof(S));
}

/// Completes every request of `requests`, in order.
template <class S>
void wait_all(std::vector<basic_request<S>>& requests) {
    for (basic_request<S>& r : requests) wait(r);
}

// ---- collectives ----------------------------------------------------------------

/// MPI_Bcast: the values of x[0, count) at `root` go to x on every rank
/// (where they become new variables; root's x stays as it is).
template <class S>
void bcast(basic_real<S>* x, int count, int root, MPI_Comm comm) {
    const std::size_t n = detail::checked_count(count, x, "bcast");
    const bool is_root = detail::rank_of(comm) == root;
    std::vector<S> v = is_root ? detail::values_of(x, n) : std::vector<S>(n);
    detail::check(MPI_Bcast(v.data(), count, detail::datatype<S>(), root, comm), "MPI_Bcast");
    if (is_root) {
        // reverse: root's x_bar gets the sum of the copies' adjoints
        detail::tape_entry<S>(
            x, n, nullptr, nullptr, 0,
            [n, root, comm](const S*, S* x_bar, std::size_t lanes) {
                detail::check(MPI_Reduce(MPI_IN_PLACE, x_bar, detail::mpi_count(n * lanes), detail::datatype<S>(), MPI_SUM, root,
                                         comm),
                              "MPI_Reduce (adjoint of bcast)");
            },
            0);
    } else {
        detail::tape_entry<S>(
            nullptr, 0, x, v.data(), n,
            [n, root, comm](const S* y_bar, S*, std::size_t lanes) {
                detail::check(
                    MPI_Reduce(y_bar, nullptr, detail::mpi_count(n * lanes), detail::datatype<S>(), MPI_SUM, root, comm),
                    "MPI_Reduce (adjoint of bcast)");
            },
            0);
    }
}

namespace detail {

// The reductions of reduce() (to_all false: y at root only) and allreduce().
template <class S>
void reduction(const basic_real<S>* x, basic_real<S>* y, int count, op o, int root, MPI_Comm comm, bool to_all,
               const char* what) {
    const std::size_t n = checked_count(count, x, what);
    const int me = rank_of(comm);
    const bool gets = to_all || me == root;  // this rank receives y
    if (gets) checked_count(count, y, what);
    const std::vector<S> v = values_of(x, n);
    std::vector<S> result(gets ? n : 0);
    // the reverse: y_bar summed over the ranks that hold y, then scaled by
    // d y / d x_i of this rank (scale: 1 for sum; for min/max 1 where this
    // rank holds the extreme, else 0; for prod the other ranks' product)
    std::vector<S> scale;
    if (o == op::sum) {
        const MPI_Datatype t = datatype<S>();
        check(to_all ? MPI_Allreduce(v.data(), result.data(), count, t, MPI_SUM, comm)
                     : MPI_Reduce(v.data(), result.data(), count, t, MPI_SUM, root, comm),
              "MPI_Reduce / MPI_Allreduce");
    } else if (o == op::min || o == op::max) {
        std::vector<located<S>> mine(n), all(n);
        for (std::size_t i = 0; i < n; ++i) mine[i] = {v[i], me};
        check(MPI_Allreduce(mine.data(), all.data(), count, located_datatype<S>(),
                            o == op::min ? MPI_MINLOC : MPI_MAXLOC, comm),
              "MPI_Allreduce (MINLOC / MAXLOC)");
        scale.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            scale[i] = all[i].rank == me ? S(1) : S(0);
            if (gets) result[i] = all[i].value;
        }
    } else {  // prod: every rank gathers every x, multiplied in rank order
        const int p = size_of(comm);
        std::vector<S> all(n * std::size_t(p));
        check(MPI_Allgather(v.data(), count, datatype<S>(), all.data(), count, datatype<S>(), comm),
              "MPI_Allgather (prod)");
        scale.assign(n, S(1));
        for (std::size_t i = 0; i < n; ++i) {
            S product(1);
            for (int r = 0; r < p; ++r) {
                product *= all[std::size_t(r) * n + i];
                if (r != me) scale[i] *= all[std::size_t(r) * n + i];
            }
            if (gets) result[i] = product;
        }
    }
    const std::size_t m = gets ? n : 0;
    const std::size_t captured = scale.size() * sizeof(S);  // before scale moves into the rule
    tape_entry<S>(
        x, n, y, result.data(), m,
        [n, to_all, gets, root, comm, scale = std::move(scale)](const S* y_bar, S* x_bar, std::size_t lanes) {
            const int all = detail::mpi_count(n * lanes);
            if (to_all) {
                check(MPI_Allreduce(y_bar, x_bar, all, datatype<S>(), MPI_SUM, comm),
                      "MPI_Allreduce (adjoint of allreduce)");
            } else {
                if (gets) std::copy(y_bar, y_bar + n * lanes, x_bar);
                check(MPI_Bcast(x_bar, all, datatype<S>(), root, comm), "MPI_Bcast (adjoint of reduce)");
            }
            if (!scale.empty())
                for (std::size_t i = 0; i < n; ++i)
                    for (std::size_t l = 0; l < lanes; ++l) x_bar[i * lanes + l] *= scale[i];
        },
        captured);
}

}  // namespace detail

/// MPI_Reduce of x[0, count) over the ranks into y[0, count) at `root` (y is
/// not touched elsewhere and may be null there). y may be x (in place).
template <class S>
void reduce(const basic_real<S>* x, basic_real<S>* y, int count, op o, int root, MPI_Comm comm) {
    detail::reduction(x, y, count, o, root, comm, false, "reduce");
}

/// MPI_Allreduce of x[0, count) into y[0, count) on every rank. y may be x.
template <class S>
void allreduce(const basic_real<S>* x, basic_real<S>* y, int count, op o, MPI_Comm comm) {
    detail::reduction(x, y, count, o, 0, comm, true, "allreduce");
}

/// MPI_Gather: x[0, count) of rank r goes to y[r * count, (r + 1) * count) at
/// `root` (y: count * size elements there; not touched elsewhere).
template <class S>
void gather(const basic_real<S>* x, int count, basic_real<S>* y, int root, MPI_Comm comm) {
    const std::size_t n = detail::checked_count(count, x, "gather");
    const bool is_root = detail::rank_of(comm) == root;
    const std::size_t m = is_root ? n * std::size_t(detail::size_of(comm)) : 0;
    if (is_root) detail::checked_count(detail::mpi_count(m), y, "gather");
    const std::vector<S> v = detail::values_of(x, n);
    std::vector<S> w(m);
    detail::check(MPI_Gather(v.data(), count, detail::datatype<S>(), w.data(), count, detail::datatype<S>(), root,
                             comm),
                  "MPI_Gather");
    detail::tape_entry<S>(
        x, n, y, w.data(), m,
        [n, root, comm](const S* y_bar, S* x_bar, std::size_t lanes) {
            detail::check(MPI_Scatter(y_bar, detail::mpi_count(n * lanes), detail::datatype<S>(), x_bar, detail::mpi_count(n * lanes),
                                      detail::datatype<S>(), root, comm),
                          "MPI_Scatter (adjoint of gather)");
        },
        0);
}

/// MPI_Scatter: x[r * count, (r + 1) * count) at `root` goes to y[0, count)
/// of rank r (x: count * size elements at root; not read elsewhere).
template <class S>
void scatter(const basic_real<S>* x, int count, basic_real<S>* y, int root, MPI_Comm comm) {
    const std::size_t m = detail::checked_count(count, y, "scatter");
    const bool is_root = detail::rank_of(comm) == root;
    const std::size_t n = is_root ? m * std::size_t(detail::size_of(comm)) : 0;
    if (is_root) detail::checked_count(detail::mpi_count(n), x, "scatter");
    const std::vector<S> v = detail::values_of(x, n);
    std::vector<S> w(m);
    detail::check(MPI_Scatter(v.data(), count, detail::datatype<S>(), w.data(), count, detail::datatype<S>(), root,
                              comm),
                  "MPI_Scatter");
    detail::tape_entry<S>(
        x, n, y, w.data(), m,
        [m, root, comm](const S* y_bar, S* x_bar, std::size_t lanes) {
            detail::check(MPI_Gather(y_bar, detail::mpi_count(m * lanes), detail::datatype<S>(), x_bar, detail::mpi_count(m * lanes),
                                     detail::datatype<S>(), root, comm),
                          "MPI_Gather (adjoint of scatter)");
        },
        0);
}

/// MPI_Allgather: x[0, count) of rank r goes to y[r * count, (r + 1) * count)
/// on every rank (y: count * size elements).
template <class S>
void allgather(const basic_real<S>* x, int count, basic_real<S>* y, MPI_Comm comm) {
    const std::size_t n = detail::checked_count(count, x, "allgather");
    const std::size_t m = n * std::size_t(detail::size_of(comm));
    detail::checked_count(detail::mpi_count(m), y, "allgather");
    const std::vector<S> v = detail::values_of(x, n);
    std::vector<S> w(m);
    detail::check(MPI_Allgather(v.data(), count, detail::datatype<S>(), w.data(), count, detail::datatype<S>(), comm),
                  "MPI_Allgather");
    detail::tape_entry<S>(
        x, n, y, w.data(), m,
        [n, comm](const S* y_bar, S* x_bar, std::size_t lanes) {
            detail::check(MPI_Reduce_scatter_block(y_bar, x_bar, detail::mpi_count(n * lanes), detail::datatype<S>(), MPI_SUM, comm),
                          "MPI_Reduce_scatter_block (adjoint of allgather)");
        },
        0);
}

}  // namespace tapeflow::mpi
