// bench/harness/timing.hpp - CPU time of the calling thread, wall time of a
// call, and medians (the median time of one call of a function is the
// primal reference of a ratio).
#pragma once

#include <ctime>

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace bench {

/// The median of the samples (the upper one of an even count).
inline double median(std::vector<double> samples) {
    std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
    return samples[samples.size() / 2];
}

/// Wall-clock seconds of one call of f (for work spread over threads, which
/// the calling thread's CPU time does not see).
template <class F>
double wall_seconds(F&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline double thread_cpu_seconds() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// Median CPU time of one call of f (the clock Google Benchmark's rate
// counters use), over `runs` samples of a batch of calls lasting >= 2 ms.
template <class F>
double median_seconds(F&& f, int runs) {
    long batch = 1;
    for (;;) {
        const double start = thread_cpu_seconds();
        for (long i = 0; i < batch; ++i) f();
        if (thread_cpu_seconds() - start >= 2e-3) break;
        batch *= 2;
    }
    std::vector<double> t;
    for (int r = 0; r < runs; ++r) {
        const double start = thread_cpu_seconds();
        for (long i = 0; i < batch; ++i) f();
        t.push_back((thread_cpu_seconds() - start) / double(batch));
    }
    return median(std::move(t));
}

}  // namespace bench
