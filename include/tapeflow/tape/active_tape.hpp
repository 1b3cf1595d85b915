// tapeflow/tape/active_tape.hpp - which tape a thread records on.
//
// Each thread has, per tape type, one ACTIVE tape: the one a basic_real
// records on and gives identifiers back to. It is the thread's default tape
// unless the thread activated another one (tape.activate(), or an
// active_tape_scope for a scope). The thread also keeps a list of its tapes
// alive, so that a variable of tape A that dies while tape B is active gives
// its identifier back to A.
//
//   thread_local:  active --> tape B     pools: [serial 3: A's, serial 7: B's]
//                  a Real tagged 3 dies  -->  A's identifier pool
//
// Only basic_tape writes the slot (through activate() and its checks) and
// the list (its constructor and destructor); everything else reads.
#pragma once

#include <cstdint>
#include <vector>

#include "identifier_pool.hpp"

namespace tapeflow {

template <class Tape>
class active_tape_scope;

namespace detail {

/// The calling thread's active tape of type Tape, or nullptr if it has none
/// yet. The hot path of every basic_real assignment reads it; only Tape
/// writes it (activate(), the destructor), after its checks.
template <class Tape>
class active_tape {
public:
    static Tape* get() noexcept { return slot(); }

private:
    friend Tape;
    template <class>
    friend class tapeflow::active_tape_scope;
    static Tape*& slot() noexcept {
        static thread_local Tape* active = nullptr;
        return active;
    }
};

/// The identifier pools of the calling thread's tapes (of every scalar
/// type), by tape serial: where the identifier of a variable whose tape is
/// not the active one goes back. A tape adds its pool when it is made and
/// removes it when destroyed.
class thread_identifier_pools {
public:
    /// The pool of this thread's tape `serial`, or nullptr (another
    /// thread's tape, or one that no longer exists).
    static identifier_pool* find(std::uint32_t serial) noexcept {
        if (auto* pools = list())
            for (const entry& p : *pools)
                if (p.serial == serial) return p.pool;
        return nullptr;
    }
    static void add(std::uint32_t serial, identifier_pool* pool) {
        if (auto* pools = list()) pools->push_back({serial, pool});
    }
    static void remove(std::uint32_t serial) noexcept {
        if (auto* pools = list())
            for (entry& p : *pools)
                if (p.serial == serial) {
                    p = pools->back();
                    pools->pop_back();
                    return;
                }
    }

private:
    struct entry {
        std::uint32_t serial;
        identifier_pool* pool;
    };
    // nullptr once the list is destroyed at thread exit (a tape with static
    // storage is destroyed after the main thread's thread_locals).
    static std::vector<entry>* list() noexcept {
        static thread_local bool gone = false;  // trivially destructible: readable to the end
        struct holder {
            std::vector<entry> pools;
            ~holder() { gone = true; }
        };
        if (gone) return nullptr;
        static thread_local holder mine;
        return &mine.pools;
    }
};

}  // namespace detail

/// Makes `tape` the calling thread's active tape for a scope, through
/// tape.activate() and its checks (it refuses while another tape records),
/// and the tape active before it active again at the end, also when the
/// scope is left by an exception. Whoever records on `tape` inside the scope
/// stops recording before the scope ends; if an exception leaves the scope
/// while `tape` still records, the tape before it is made active anyway
/// (`tape` keeps recording until its stop_recording()).
///
/// **Example**:
///   tapeflow::tape inner;
///   {
///       tapeflow::active_tape_scope scope(inner);
///       inner.start_recording();  ...  inner.stop_recording();
///   }   // the tape that was active before is active again
template <class Tape>
class active_tape_scope {
public:
    explicit active_tape_scope(Tape& tape) : previous_(Tape::active()) { tape.activate(); }
    // No check on the way back: `previous_` was active when the scope
    // began, and activate() could only object to the scoped tape still
    // recording, which an exception leaving the scope may leave it doing.
    ~active_tape_scope() { detail::active_tape<Tape>::slot() = &previous_; }
    active_tape_scope(const active_tape_scope&) = delete;
    active_tape_scope& operator=(const active_tape_scope&) = delete;

private:
    Tape& previous_;
};

}  // namespace tapeflow
