// tapeflow/tape/sweep_team.hpp - threads that sweep the parts of a parallel
// region at once (tape/parallel_region.hpp).
//
// A tape that sweeps parallel regions in parallel keeps a team of helper
// threads for the rest of its life. run(n, f) calls f(0) on the calling
// thread and f(1) .. f(n - 1) on helpers, and returns when all are done;
// the first exception any of them threw is rethrown there.
//
//   caller:   run(n, f) ── f(0) ──────────── wait for the helpers ── return
//   helper i:      wake ── f(i) ── done ──┘
//
// A sweep meets its regions one after the other (a time loop: one per
// step), a few microseconds apart. Waking a sleeping thread through a
// condition variable took about 25 us per run on the 2-core machine of
// docs/parallel.md, more than a region's work; so a helper first spins on
// the job counter for about spin_microseconds after each job, and only then
// sleeps on the condition variable. The caller spins while it waits for
// the helpers (their parts are about as long as its own).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tapeflow::detail {

class sweep_team {
public:
    /// How long a helper waits for the next job before it sleeps.
    static constexpr int spin_microseconds = 200;

    /// A team with `helpers` threads (started at once).
    explicit sweep_team(std::size_t helpers) {
        threads_.reserve(helpers);
        try {
            for (std::size_t i = 0; i < helpers; ++i) threads_.emplace_back([this, i] { serve(i + 1); });
        } catch (...) {
            stop();
            throw;
        }
    }
    ~sweep_team() { stop(); }
    sweep_team(const sweep_team&) = delete;
    sweep_team& operator=(const sweep_team&) = delete;

    /// Threads beside the caller.
    std::size_t helpers() const noexcept { return threads_.size(); }

    /// Calls f(i) for every i < n, f(0) on this thread, the others on the
    /// helpers (n - 1 <= helpers()); returns when every call returned, and
    /// rethrows the first exception thrown by any of them.
    void run(std::size_t n, const std::function<void(std::size_t)>& f) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job_ = &f;
            jobs_ = n;
            error_ = nullptr;
            pending_.store(n > 0 ? n - 1 : 0, std::memory_order_relaxed);
            generation_.fetch_add(1, std::memory_order_release);
            if (sleeping_ != 0) wake_.notify_all();
        }
        std::exception_ptr mine;
        if (n > 0) {
            try {
                f(0);
            } catch (...) {
                mine = std::current_exception();
            }
        }
        for (unsigned spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins)
            if (spins > 1000) std::this_thread::yield();  // a helper was descheduled
        std::lock_guard<std::mutex> lock(mutex_);
        job_ = nullptr;
        if (mine) std::rethrow_exception(mine);
        if (error_) std::rethrow_exception(error_);
    }

private:
    void serve(std::size_t index) {
        std::uint64_t seen = 0;
        for (;;) {
            if (!next_job(seen)) return;
            std::size_t jobs;
            const std::function<void(std::size_t)>* job;
            {
                // the job of the latest run: an earlier one that did not
                // need this helper may have been replaced (a run that needs
                // it waits for it, so none that needs it is skipped)
                std::lock_guard<std::mutex> lock(mutex_);
                seen = generation_.load(std::memory_order_relaxed);
                jobs = jobs_;
                job = job_;
            }
            if (index >= jobs) continue;  // not needed this time
            try {
                (*job)(index);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mutex_);
                if (!error_) error_ = std::current_exception();
            }
            pending_.fetch_sub(1, std::memory_order_acq_rel);
        }
    }
    // Waits until the generation differs from `seen` (returns true, `seen`
    // updated) or the team stops (false): spinning first, then asleep.
    bool next_job(std::uint64_t& seen) {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_microseconds);
        for (unsigned spins = 0;; ++spins) {
            const std::uint64_t g = generation_.load(std::memory_order_acquire);
            if (g != seen) {
                seen = g;
                return true;
            }
            if (stopping_.load(std::memory_order_acquire)) return false;
            if ((spins & 63) == 63 && std::chrono::steady_clock::now() > give_up) break;
        }
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleeping_;
        wake_.wait(lock, [&] {
            return stopping_.load(std::memory_order_relaxed) || generation_.load(std::memory_order_relaxed) != seen;
        });
        --sleeping_;
        if (stopping_.load(std::memory_order_relaxed)) return false;
        seen = generation_.load(std::memory_order_relaxed);
        return true;
    }
    void stop() noexcept {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_.store(true, std::memory_order_release);
            wake_.notify_all();
        }
        for (std::thread& t : threads_)
            if (t.joinable()) t.join();
    }

    std::mutex mutex_;              // job_, jobs_, error_, sleeping_; the generation's increments
    std::condition_variable wake_;  // a new job, or stop, for sleeping helpers
    const std::function<void(std::size_t)>* job_ = nullptr;
    std::size_t jobs_ = 0;
    std::size_t sleeping_ = 0;
    std::atomic<std::uint64_t> generation_{0};  // one more per run()
    std::atomic<std::size_t> pending_{0};       // helpers' calls of this run not finished
    std::atomic<bool> stopping_{false};
    std::exception_ptr error_;
    std::vector<std::thread> threads_;
};

}  // namespace tapeflow::detail
