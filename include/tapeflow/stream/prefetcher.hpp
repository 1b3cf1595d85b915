// tapeflow/stream/prefetcher.hpp - the background thread of a streaming tape.
//
// Runs tile jobs (copy a full tile out, write it to the spill file, read a
// tile back) in submission order on one thread, so that recording and the
// reverse sweep go on while tiles move. Each job gets a ticket; wait(t)
// blocks until job t is done. A job that throws stops the queue: the
// exception is kept and rethrown by the next wait() or submit(), so an I/O
// error reaches the caller at its next tape operation and nothing hangs.
// fail() makes pending in the same way an error that the caller found in a
// job's result (a tile read back that does not match its checksum).
//
//   recording thread            prefetch thread
//   submit(write tile 7) ---->  [ write 7 ][ load 12 ] ...
//   ... records tile 8 ...
//   wait(ticket of 7)    <----  done
//
// The thread starts on the first submit and is joined by the destructor.
// With `enabled == false` jobs run synchronously inside submit().
//
// fork() copies the prefetcher but not its thread: in the child, submit(),
// a wait() that is not already satisfied and clear_error() throw
// tapeflow::error instead of waiting forever for jobs that no thread will
// run, and the destructor lets the thread object go without joining it.
//
// When wait() finds its job still queued and the thread not running any
// job, the caller runs the queued jobs itself, in order, up to its own
// (still one job at a time: a job never overlaps another). The thread
// exists to work while the caller does something else; once the caller
// has nothing else to do, waiting for a thread that the scheduler has not
// run yet (one core, or the other core busy) only adds its wake-up and
// time slice to the caller's. Measured on a heat gradient with 769 MiB of
// tape and a 256 MiB budget, pinned to one core: spilling took 1.80x the
// in-memory time when the caller waited, 1.35x when it takes over
// (docs/streaming.md, "When the thread gets no core").
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
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "../config.hpp"
#include "../error.hpp"

#if defined(__linux__)
#include <sched.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

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
        if (forked()) {
            // The thread lives in the parent only, and the mutex may be
            // held by it forever here: touch neither. The std::thread
            // object is leaked (destroying a joinable one terminates).
            static_cast<void>(new std::thread(std::move(thread_)));
            static_cast<void>(sync_.release());
            return;
        }
        {
            std::lock_guard<std::mutex> lock(sync_->mutex);
            stopping_.store(true, std::memory_order_release);
        }
        sync_->work.notify_all();
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
        check_not_forked();
        std::unique_lock<std::mutex> lock(sync_->mutex);
        rethrow_pending();
        if (!thread_.joinable()) {
            owner_ = current_process();
            thread_ = std::thread([this] { run(); });
        }
        jobs_.push_back(std::move(job));
        submitted_.store(t, std::memory_order_release);
        const bool asleep = worker_asleep_;
        lock.unlock();
        if (asleep) sync_->work.notify_one();
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
                std::lock_guard<std::mutex> lock(sync_->mutex);
                rethrow_pending();
            }
            return 0.0;
        }
        check_not_forked();
        const auto start = std::chrono::steady_clock::now();
        const auto idle = [&] { return !running_.load(std::memory_order_acquire); };
        std::unique_lock<std::mutex> lock(sync_->mutex);
        while (!ready()) {
            if (idle() && !jobs_.empty()) {
                run_front(lock);  // the thread is not on it: take it over
                continue;
            }
            // A job runs on the thread: it ends soon (spin), or the thread
            // lost its core (block until it is done or idle again).
            lock.unlock();
            spin_until([&] { return ready() || idle(); });
            lock.lock();
            if (!ready() && !idle()) block_until(lock, [&] { return ready() || idle(); });
        }
        rethrow_pending();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }

    /// Waits for every job submitted so far.
    double drain() { return wait(submitted_.load(std::memory_order_relaxed)); }

    /// Makes `failure` pending as if a job had thrown it: the next wait()
    /// or submit() rethrows it, until clear_error(). For a job's result
    /// found wrong after the job (a tile read back whose checksum the
    /// sweeping thread verifies): what follows depends on it as on the job.
    void fail(std::exception_ptr failure) {
        check_not_forked();
        std::unique_lock<std::mutex> lock(sync_->mutex);
        // a job still running ends first: once failed, wait() returns at once
        block_until(lock, [&] { return !running_.load(std::memory_order_relaxed); });
        if (error_) return;  // the first error stays
        error_ = std::move(failure);
        jobs_.clear();
        failed_.store(true, std::memory_order_release);
    }

    /// Forgets a pending error (after the tape was reset). Waits for queued jobs first.
    void clear_error() {
        // No thread, no error: nothing is queued and nothing to clear, so no
        // lock to take (a tape in memory resets here before every gradient).
        if (!thread_.joinable() && !error_) return;
        check_not_forked();
        std::unique_lock<std::mutex> lock(sync_->mutex);
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
            std::unique_lock<std::mutex> lock(sync_->mutex);
            worker_asleep_ = true;
            sync_->work.wait(lock, [&] {
                return stopping_.load(std::memory_order_relaxed) ||
                       (!jobs_.empty() && !running_.load(std::memory_order_relaxed) && !error_);
            });
            worker_asleep_ = false;
            if (stopping_.load(std::memory_order_relaxed) &&
                (jobs_.empty() || running_.load(std::memory_order_relaxed) || error_))
                return;
            run_front(lock);
        }
    }

    /// Runs the job at the front of the queue on the calling thread (the
    /// prefetch thread, or a waiter taking over); `lock` holds sync_->mutex and
    /// holds it again on return. running_ keeps every other thread from
    /// starting a job meanwhile, so jobs run one at a time, in order.
    void run_front(std::unique_lock<std::mutex>& lock) {
        std::function<void()> job = std::move(jobs_.front());
        jobs_.pop_front();
        running_.store(true, std::memory_order_relaxed);
        lock.unlock();
        std::exception_ptr failure;
        try {
            job();
        } catch (...) {
            failure = std::current_exception();
        }
        lock.lock();
        running_.store(false, std::memory_order_release);
        if (failure) {
            error_ = failure;
            jobs_.clear();  // later jobs depend on this one
            failed_.store(true, std::memory_order_release);
        } else {
            done_.store(done_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
        }
        if (waiters_asleep_ > 0) sync_->finished.notify_all();
        if (worker_asleep_ && !jobs_.empty()) sync_->work.notify_one();
    }

    /// Spins until `ready()` or spin_time has passed; returns `ready()`.
    /// With one usable core, spinning would only keep the other thread off it.
    template <class Ready>
    static bool spin_until(Ready ready) {
        static const bool spare_core = usable_cores() >= 2;
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

    /// An identifier of the calling process (0 where there is no fork()).
    static long current_process() noexcept {
#if defined(__unix__) || defined(__APPLE__)
        return long(::getpid());
#else
        return 0;
#endif
    }
    /// This is a copy made by fork() of a prefetcher whose thread had started.
    bool forked() const noexcept { return thread_.joinable() && owner_ != current_process(); }
    void check_not_forked() const {
        if (TAPEFLOW_UNLIKELY(forked()))
            throw error("a streaming tape was used in a child process after fork(): its prefetch thread "
                        "exists only in the parent. Create a new tape in the child, or give the tape "
                        "tape_options::prefetch = false if it must cross a fork()");
    }

    /// Cores this process may run on: its CPU affinity (taskset, cgroups
    /// cpusets) where the system tells it, else all of the machine's.
    static unsigned usable_cores() {
#if defined(__linux__)
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0) return unsigned(CPU_COUNT(&set));
#endif
        return std::thread::hardware_concurrency();
    }

    /// Sleeps on sync_->finished until `ready()`; `lock` holds sync_->mutex.
    template <class Ready>
    void block_until(std::unique_lock<std::mutex>& lock, Ready ready) {
        ++waiters_asleep_;
        sync_->finished.wait(lock, ready);
        --waiters_asleep_;
    }

    // Callers hold sync_->mutex when the thread runs (error_ is shared with it).
    void rethrow_pending() {
        if (error_) std::rethrow_exception(error_);
    }

    bool enabled_;
    std::thread thread_;
    long owner_ = 0;  // current_process() when the thread started
    // On the heap so that a child of fork() can leave them undestroyed: the
    // copies may be locked, or count waiters, that exist only in the parent
    // (destroying such a condition variable blocks in glibc).
    struct sync_objects {
        std::mutex mutex;
        std::condition_variable work;      // the thread sleeps here when out of work
        std::condition_variable finished;  // wait() sleeps here
    };
    std::unique_ptr<sync_objects> sync_ = std::make_unique<sync_objects>();
    std::deque<std::function<void()>> jobs_;
    // Written under sync_->mutex, read without it by the spinning side.
    std::atomic<ticket> submitted_{0};
    std::atomic<ticket> done_{0};
    std::atomic<bool> failed_{false};    // error_ is set
    std::atomic<bool> stopping_{false};
    bool worker_asleep_ = false;         // guarded by sync_->mutex
    std::atomic<bool> running_{false};   // a job runs (on any thread); written under sync_->mutex
    int waiters_asleep_ = 0;             // guarded by sync_->mutex
    std::exception_ptr error_;
};

}  // namespace tapeflow
