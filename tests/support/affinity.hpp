// tests/support/affinity.hpp - CPU affinity for the tests that place threads
// on CPUs (Linux only): pin() sets a thread's CPUs, and a guard restores the
// calling thread's affinity however the test leaves (a failed REQUIRE would
// leave the later test cases of the process on one CPU) and tells the CPUs
// it saved.
#pragma once

#if defined(__linux__)
#include <sched.h>
#include <sys/types.h>

#include <initializer_list>
#include <vector>

namespace tapeflow_test {

/// Lets thread `tid` (0: the calling thread) run on `cpus` only.
inline bool pin(pid_t tid, std::initializer_list<int> cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    return ::sched_setaffinity(tid, sizeof set, &set) == 0;
}

class affinity_guard {
public:
    affinity_guard() { saved_ = ::sched_getaffinity(0, sizeof mask_, &mask_) == 0; }
    ~affinity_guard() {
        if (saved_) ::sched_setaffinity(0, sizeof mask_, &mask_);
    }
    affinity_guard(const affinity_guard&) = delete;
    affinity_guard& operator=(const affinity_guard&) = delete;
    bool saved() const noexcept { return saved_; }
    /// The CPUs the calling thread could run on when the guard was made.
    std::vector<int> cpus() const {
        std::vector<int> v;
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &mask_)) v.push_back(c);
        return v;
    }

private:
    cpu_set_t mask_;
    bool saved_ = false;
};

}  // namespace tapeflow_test
#endif
