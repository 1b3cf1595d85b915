// tapeflow/stream/prefetcher.hpp - the background thread of a streaming tape.
//
// Runs tile jobs (copy a full tile out, write it to the spill file, read a
// tile back) in submission order on one thread, so that recording and the
// reverse sweep go on while tiles move. Each job gets a ticket; wait(t)
// blocks until job t is done. A job that throws stops the queue: the
// exception is kept and rethrown by the next wait() or submit(), so an I/O
// error reaches the caller at its next tape operation and nothing hangs.
//
//   recording thread            prefetch thread
//   submit(write tile 7) ---->  [ write 7 ][ load 12 ] ...
//   ... records tile 8 ...
//   wait(ticket of 7)    <----  done
//
// The thread starts on the first submit and is joined by the destructor.
// With `enabled == false` jobs run synchronously inside submit().
//
// Hand-offs spin before they sleep. A tile job takes tens of microseconds,
// and waking a thread that sleeps on a condition variable took about as
// long on the machines we measured (8-96 us on a 2-core VM): with one tile
// in flight (double buffering), two such wake-ups per tile cost more than
// the prefetch thread hid. So the thread, out of work, watches for the next
// job for up to spin_time before it sleeps, and wait() watches for its job
// for up to spin_time before it blocks; notify is only called for a thread
// that sleeps.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace tapeflow {

class prefetcher {
public:
    using ticket = std::uint64_t;

    /// How long a thread with nothing to do spins before it sleeps.
    static constexpr std::chrono::microseconds spin_time{200};

    explicit prefetcher(bool enabled) : enabled_(enabled) {}
    prefetcher(const prefetcher&) = delete;
    prefetcher& operator=(const prefetcher&) = delete;

    ~prefetcher() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_.store(true, std::memory_order_release);
        }
        work_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

    /// Queues `job`; returns its ticket. Rethrows a pending error first.
    ticket submit(std::function<void()> job) {
        const ticket t = submitted_.load(std::memory_order_relaxed) + 1;
        if (!enabled_) {
            rethrow_pending();
            try {
                job();
            } catch (...) {
                error_ = std::current_exception();
                failed_.store(true, std::memory_order_relaxed);
                rethrow_pending();
            }
            submitted_.store(t, std::memory_order_relaxed);
            done_.store(t, std::memory_order_relaxed);
            return t;
        }
        std::unique_lock<std::mutex> lock(mutex_);
        rethrow_pending();
        if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
        jobs_.push_back(std::move(job));
        submitted_.store(t, std::memory_order_release);
        const bool asleep = worker_asleep_;
        lock.unlock();
        if (asleep) work_.notify_one();
        return t;
    }

    /// Blocks until job `t` has run; rethrows the error of any failed job.
    /// Returns the seconds spent waiting.
    double wait(ticket t) {
        auto ready = [&] {
            return done_.load(std::memory_order_acquire) >= t || failed_.load(std::memory_order_acquire);
        };
        if (ready()) {
            if (failed_.load(std::memory_order_acquire)) {  // error_ is read under the lock
                std::lock_guard<std::mutex> lock(mutex_);
                rethrow_pending();
            }
            return 0.0;
        }
        const auto start = std::chrono::steady_clock::now();
        spin_until(ready);
        std::unique_lock<std::mutex> lock(mutex_);
        block_until(lock, ready);
        rethrow_pending();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }

    /// Waits for every job submitted so far.
    double drain() { return wait(submitted_.load(std::memory_order_relaxed)); }

    /// Forgets a pending error (after the tape was reset). Waits for queued jobs first.
    void clear_error() {
        std::unique_lock<std::mutex> lock(mutex_);
        block_until(lock, [&] {
            return done_.load(std::memory_order_relaxed) >= submitted_.load(std::memory_order_relaxed) || error_;
        });
        jobs_.clear();
        done_.store(submitted_.load(std::memory_order_relaxed), std::memory_order_release);
        error_ = nullptr;
        failed_.store(false, std::memory_order_release);
    }

    bool thread_started() const noexcept { return thread_.joinable(); }

private:
    void run() {
        for (;;) {
            // Out of work: the next tile usually comes within microseconds.
            spin_until([&] {
                return submitted_.load(std::memory_order_acquire) > done_.load(std::memory_order_relaxed) ||
                       stopping_.load(std::memory_order_acquire);
            });
            std::unique_lock<std::mutex> lock(mutex_);
            worker_asleep_ = true;
            work_.wait(lock, [&] { return stopping_.load(std::memory_order_relaxed) || (!jobs_.empty() && !error_); });
            worker_asleep_ = false;
            if (stopping_.load(std::memory_order_relaxed) && (jobs_.empty() || error_)) return;
            std::function<void()> job = std::move(jobs_.front());
            jobs_.pop_front();
            lock.unlock();
            std::exception_ptr failure;
            try {
                job();
            } catch (...) {
                failure = std::current_exception();
            }
            lock.lock();
            if (failure) {
                error_ = failure;
                jobs_.clear();  // later jobs depend on this one
                failed_.store(true, std::memory_order_release);
            } else {
                done_.store(done_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
            }
            if (waiters_asleep_ > 0) finished_.notify_all();
        }
    }

    /// Spins until `ready()` or spin_time has passed; returns `ready()`.
    /// With one core, spinning would only keep the other thread off it.
    template <class Ready>
    static bool spin_until(Ready ready) {
        static const bool spare_core = std::thread::hardware_concurrency() >= 2;
        if (!spare_core) return ready();
        const auto limit = std::chrono::steady_clock::now() + spin_time;
        for (unsigned i = 1;; ++i) {
            if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#else
            std::this_thread::yield();
#endif
            if (i % 64 == 0 && std::chrono::steady_clock::now() > limit) return ready();
        }
    }

    /// Sleeps on finished_ until `ready()`; `lock` holds mutex_.
    template <class Ready>
    void block_until(std::unique_lock<std::mutex>& lock, Ready ready) {
        ++waiters_asleep_;
        finished_.wait(lock, ready);
        --waiters_asleep_;
    }

    // Callers hold mutex_ when the thread runs (error_ is shared with it).
    void rethrow_pending() {
        if (error_) std::rethrow_exception(error_);
    }

    bool enabled_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable work_;      // the thread sleeps here when out of work
    std::condition_variable finished_;  // wait() sleeps here
    std::deque<std::function<void()>> jobs_;
    // Written under mutex_, read without it by the spinning side.
    std::atomic<ticket> submitted_{0};
    std::atomic<ticket> done_{0};
    std::atomic<bool> failed_{false};    // error_ is set
    std::atomic<bool> stopping_{false};
    bool worker_asleep_ = false;         // guarded by mutex_
    int waiters_asleep_ = 0;             // guarded by mutex_
    std::exception_ptr error_;
};

}  // namespace tapeflow
