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
#pragma once

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

    explicit prefetcher(bool enabled) : enabled_(enabled) {}
    prefetcher(const prefetcher&) = delete;
    prefetcher& operator=(const prefetcher&) = delete;

    ~prefetcher() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        work_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

    /// Queues `job`; returns its ticket. Rethrows a pending error first.
    ticket submit(std::function<void()> job) {
        if (!enabled_) {
            rethrow_pending();
            try {
                job();
            } catch (...) {
                error_ = std::current_exception();
                rethrow_pending();
            }
            return done_ = ++submitted_;
        }
        std::unique_lock<std::mutex> lock(mutex_);
        rethrow_pending();
        if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
        jobs_.push_back(std::move(job));
        const ticket t = ++submitted_;
        lock.unlock();
        work_.notify_one();
        return t;
    }

    /// Blocks until job `t` has run; rethrows the error of any failed job.
    /// Returns the seconds spent waiting.
    double wait(ticket t) {
        std::unique_lock<std::mutex> lock(mutex_);
        if (done_ >= t || error_) {
            rethrow_pending();
            return 0.0;
        }
        const auto start = std::chrono::steady_clock::now();
        finished_.wait(lock, [&] { return done_ >= t || error_; });
        rethrow_pending();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }

    /// Waits for every job submitted so far.
    double drain() { return wait(submitted_); }

    /// Forgets a pending error (after the tape was reset). Waits for queued jobs first.
    void clear_error() {
        std::unique_lock<std::mutex> lock(mutex_);
        finished_.wait(lock, [&] { return done_ >= submitted_ || error_; });
        jobs_.clear();
        done_ = submitted_;
        error_ = nullptr;
    }

    bool thread_started() const noexcept { return thread_.joinable(); }

private:
    void run() {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            work_.wait(lock, [&] { return stopping_ || (!jobs_.empty() && !error_); });
            if (stopping_ && (jobs_.empty() || error_)) return;
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
            } else {
                ++done_;
            }
            finished_.notify_all();
        }
    }

    // Callers hold mutex_ when the thread runs (error_ is shared with it).
    void rethrow_pending() {
        if (error_) std::rethrow_exception(error_);
    }

    bool enabled_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable work_;
    std::condition_variable finished_;
    std::deque<std::function<void()>> jobs_;
    ticket submitted_ = 0;
    ticket done_ = 0;
    bool stopping_ = false;
    std::exception_ptr error_;
};

}  // namespace tapeflow
