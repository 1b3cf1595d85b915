// tapeflow/tape/tape_registry.hpp - the tapes of all threads, by serial.
//
// A tape belongs to one thread, and so do its variables. When a variable of
// a tape is assigned or dies on another thread (the body of an OpenMP or
// std::thread loop inside a recording), the statement is not recorded on
// that tape: its derivative is lost. The other thread cannot tell the tape
// through a pointer (it has none: variables hold the tape's serial only),
// so it looks the serial up here and raises the tape's flag; the tape's
// stop_recording() then throws instead of letting a wrong gradient through
// (docs/parallel.md).
//
// Only that rare path and the construction and destruction of tapes take
// the lock; recording never does, and while no tape records anywhere the
// rare path is one atomic load (variables that outlive their tape die by
// the million after a run: a lock each made that 5-10x slower).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace tapeflow {
namespace detail {

class tape_registry {
public:
    /// The process's registry (never destroyed: tapes of threads that exit
    /// after main() returns still unregister).
    static tape_registry& instance() {
        static tape_registry* registry = new tape_registry;
        return *registry;
    }

    void add(std::uint32_t serial, std::atomic<bool>* foreign_writes) {
        const std::lock_guard<std::mutex> lock(mutex_);
        tapes_.emplace_back(serial, foreign_writes);
    }
    void remove(std::uint32_t serial) noexcept {
        try {
            const std::lock_guard<std::mutex> lock(mutex_);
            for (auto& t : tapes_)
                if (t.first == serial) {
                    t = tapes_.back();
                    tapes_.pop_back();
                    return;
                }
        } catch (...) {  // the lock failed: the tape stays listed, which only wastes an entry
        }
    }
    /// Tapes recording, in all threads (basic_tape's start and stop).
    void recording_started() noexcept { recording_.fetch_add(1, std::memory_order_relaxed); }
    void recording_stopped() noexcept { recording_.fetch_sub(1, std::memory_order_relaxed); }

    /// A variable of tape `serial` was assigned or died on a thread that
    /// does not own it. Only a recording tape needs to know.
    void mark_foreign_write(std::uint32_t serial) noexcept {
        if (recording_.load(std::memory_order_relaxed) == 0) return;
        try {
            const std::lock_guard<std::mutex> lock(mutex_);
            for (auto& t : tapes_)
                if (t.first == serial) {
                    t.second->store(true, std::memory_order_relaxed);
                    return;
                }
        } catch (...) {
        }
    }

private:
    std::mutex mutex_;
    std::vector<std::pair<std::uint32_t, std::atomic<bool>*>> tapes_;
    std::atomic<int> recording_{0};
};

}  // namespace detail
}  // namespace tapeflow
