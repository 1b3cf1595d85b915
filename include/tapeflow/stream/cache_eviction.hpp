// tapeflow/stream/cache_eviction.hpp - takes a scratchpad tile out of every
// cache once the prefetch thread has moved it.
//
// Why: the recording thread writes a scratchpad half, the prefetch thread
// (on the other core) reads it to move it out, and the recording thread
// writes the same half again two tiles later. After the read, the half's
// lines are in both cores' caches, so every line the recorder writes again
// first has to be taken back from the other core (an invalidation across
// cores per 64 bytes, which the hardware does not stream like misses to
// memory): on two cores a spilling gradient was slower than on one.
// Flushed after the move, on the prefetch thread, the lines are in memory
// only and the recorder's writes are ordinary misses.
//
// That pays only where a flush is cheap. A tape that flushes while the
// process has no verdict yet times its first three flushes of at least 32
// KiB (eviction_policy) and, when even the fastest took more than 25 ns a
// line, stops flushing: where every clflush waits for its line's
// write-back the prefetch thread spends more on the flush than the
// recorder saves. The first tape to finish its three gives the process's
// verdict (eviction_verdict): tapes made after it follow that without
// timing anything.
// Measurements and limits (hyperthreads, systems without CPU numbers):
// docs/streaming.md, "Two cores, one scratchpad".
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

namespace tapeflow::detail {

#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#define TAPEFLOW_CLFLUSH 1
#else
#define TAPEFLOW_CLFLUSH 0
#endif

/// Whether evict_from_caches flushes anything here (x86 with GCC or Clang).
inline constexpr bool can_flush = TAPEFLOW_CLFLUSH != 0;

/// Writes back and drops the cache lines of [data, data + bytes) from every
/// cache (the bytes stay as they are). A no-op where there is no cache-line
/// flush instruction to reach (non-x86 targets).
inline void evict_from_caches(const std::byte* data, std::size_t bytes) noexcept {
#if TAPEFLOW_CLFLUSH
    // clflush comes with SSE2 (every x86-64); clflushopt (not ordered among
    // flushes) measured the same here. The builtin, not <emmintrin.h>,
    // keeps the intrinsic headers out of every translation unit.
    if (bytes == 0) return;
    constexpr std::uintptr_t line = 64;
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(data) & ~(line - 1);
    const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(data) + bytes;
    for (std::uintptr_t p = first; p < end; p += line) __builtin_ia32_clflush(reinterpret_cast<const void*>(p));
#else
    static_cast<void>(data);
    static_cast<void>(bytes);
#endif
}

/// What the tapes of a process found about flushing: the fastest of the
/// timed flushes of the first tape that decided, in ns per line (0 until
/// one has). The machine's caches are what the figure measures, not the
/// tape, so one tape's decision holds for the others: without it every new
/// tape paid its three slow flushes (about 10 ms on the Intel machine
/// below), a program that makes a tape per gradient each time.
class eviction_verdict {
public:
    /// The figure, 0 while no tape has decided.
    double ns_per_line() const noexcept { return ns_.load(std::memory_order_relaxed); }
    /// Records a tape's decision, unless another tape's came first.
    void publish(double ns_per_line) noexcept {
        double none = 0;
        if (ns_per_line > 0) ns_.compare_exchange_strong(none, ns_per_line, std::memory_order_relaxed);
    }

private:
    std::atomic<double> ns_{0};
};

/// The verdict that tapes share by default (eviction_policy's constructor).
inline eviction_verdict& process_eviction_verdict() noexcept {
    static eviction_verdict verdict;
    return verdict;
}

/// Whether a tape flushes the halves its prefetch thread moved: it flushes
/// until the fastest of its first `samples` timed flushes shows a line
/// taking longer than `max_ns_per_line`, then never again. A tape that
/// finds the process's verdict (eviction_verdict) already given times
/// nothing and follows it; one that decides first gives it.
///
/// Measured on the long heat run (100 000 cells x 1 000 steps, 256 MiB
/// budget, docs/streaming.md): on AMD EPYC (Zen 3) the flush took the
/// gradient from 2.48 to 1.71 s, at no more than 8 ns a line (what the
/// prefetch thread's CPU time leaves for it); on an Intel Xeon (Sapphire
/// Rapids class, under KVM) a line took 56-94 ns and the flush took the
/// gradient from 1.75 to 6.6 s: the prefetch thread, flushing 3.5 ms per 2
/// MiB tile, held the recorder up. 25 ns lies between the two by a factor
/// of about 3 each way.
///
/// Jobs run one at a time (on the prefetch thread, or on a waiter that took
/// one over, which flushes only when it is not the recorder's thread), so
/// one thread at a time reports flushes; the atomics keep a reader on
/// another thread well defined. Where there is nothing to flush with
/// (can_flush false: not x86 with GCC or Clang) nothing is timed either.
class eviction_policy {
public:
    static constexpr int samples = 3;                // decided on the fastest of these
    static constexpr std::size_t sample_lines = 512;  // shorter flushes (under 32 KiB) are not timed
    static constexpr double max_ns_per_line = 25;

    /// A policy that follows, and gives, `verdict` (tests pass their own).
    explicit eviction_policy(eviction_verdict& verdict = process_eviction_verdict()) noexcept
        : verdict_(verdict) {}
    eviction_policy(const eviction_policy&) = delete;
    eviction_policy& operator=(const eviction_policy&) = delete;

    /// Whether moved halves are still flushed: until the decision, and after
    /// it if the figure it rests on (this tape's fastest timed flush, or the
    /// verdict's) was fast enough.
    bool flushing() const noexcept { return !decided() || fastest_ns_per_line() <= max_ns_per_line; }

    /// Flushes [data, data + bytes) from the caches while flushing() holds,
    /// timing the flush while it is still a sample.
    void evict(const std::byte* data, std::size_t bytes) noexcept {
        if (!can_flush || !flushing()) return;
        flushed_.fetch_add(1, std::memory_order_relaxed);
        if (!sampled(bytes / 64)) {
            evict_from_caches(data, bytes);
            return;
        }
        const auto start = std::chrono::steady_clock::now();
        evict_from_caches(data, bytes);
        observe(bytes / 64, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }

    /// Counts one timed flush of `lines` cache lines that took `seconds`
    /// (evict() calls it; public for tests). Flushes shorter than
    /// sample_lines, and any after the decision, are left out. The last
    /// sample gives the verdict, unless another tape gave it first.
    void observe(std::size_t lines, double seconds) noexcept {
        if (!sampled(lines)) return;
        const double ns = seconds * 1e9 / static_cast<double>(lines);
        const int n = samples_.load(std::memory_order_relaxed);
        const double fastest = n == 0 ? ns : std::min(fastest_ns_.load(std::memory_order_relaxed), ns);
        fastest_ns_.store(fastest, std::memory_order_relaxed);
        samples_.store(n + 1, std::memory_order_relaxed);
        if (n + 1 == samples) verdict_.publish(fastest);
    }

    /// Whether this tape timed its first `samples` flushes, or follows a
    /// verdict given before it had.
    bool decided() const noexcept { return own_decision() || verdict_.ns_per_line() > 0; }

    /// What the decision rests on, in ns per line: this tape's fastest timed
    /// flush, the verdict's figure when this tape follows it, 0 before either.
    double fastest_ns_per_line() const noexcept {
        const double v = verdict_.ns_per_line();
        return own_decision() || v == 0 ? fastest_ns_.load(std::memory_order_relaxed) : v;  // 0 before a sample
    }

    /// Moved halves flushed so far (tape statistics: tiles_flushed).
    std::uint64_t flushed() const noexcept { return flushed_.load(std::memory_order_relaxed); }

private:
    bool own_decision() const noexcept { return samples_.load(std::memory_order_relaxed) >= samples; }
    // Whether a flush of `lines` lines is one of the samples.
    bool sampled(std::size_t lines) const noexcept { return !decided() && lines >= sample_lines; }

    eviction_verdict& verdict_;
    std::atomic<int> samples_{0};
    std::atomic<double> fastest_ns_{0};
    std::atomic<std::uint64_t> flushed_{0};
};

/// Where a thread runs: which thread, and on which CPU (-1 where unknown).
struct running_place {
    std::thread::id thread = std::this_thread::get_id();
#if defined(__linux__)
    int cpu = ::sched_getcpu();
#else
    int cpu = -1;
#endif
    /// Whether the calling thread runs on another CPU than the place's:
    /// another thread, on another CPU when the CPUs are known (Linux). On
    /// one CPU the lines a job read are in the cache the recorder writes
    /// anyway, and flushing them would only send its next writes to memory.
    /// Two hyperthreads of one core count as two CPUs here (not told apart).
    bool other_cpu_than(const running_place& recorder) const noexcept {
        return thread != recorder.thread && (cpu < 0 || recorder.cpu < 0 || cpu != recorder.cpu);
    }
};

}  // namespace tapeflow::detail
