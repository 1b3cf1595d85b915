// bench/harness/timing.hpp - CPU time of the calling thread, and the median
// time of one call of a function (for the primal reference of a ratio).
#pragma once

#include <ctime>

#include <algorithm>
#include <vector>

namespace bench {

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
    std::nth_element(t.begin(), t.begin() + runs / 2, t.end());
    return t[runs / 2];
}

}  // namespace bench
