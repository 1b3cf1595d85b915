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
// only and the recorder's writes are ordinary misses. Measurements and
// limits (hyperthreads, systems without CPU numbers): docs/streaming.md,
// "Two cores, one scratchpad".
#pragma once

#include <cstddef>
#include <cstdint>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

namespace tapeflow::detail {

/// Writes back and drops the cache lines of [data, data + bytes) from every
/// cache (the bytes stay as they are). A no-op where there is no cache-line
/// flush instruction to reach (non-x86 targets).
inline void evict_from_caches(const std::byte* data, std::size_t bytes) noexcept {
#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
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
