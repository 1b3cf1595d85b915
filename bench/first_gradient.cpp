// bench/first_gradient.cpp - what the first gradient of a process costs
// against the later ones (issue 19.5). Run by bench/run_first_gradient, one
// fresh process per kernel and run: the first tapeflow::gradient on the
// thread's tape writes fresh tape memory, the later ones reuse it.
//
// Usage: tapeflow_bench_first_gradient <kernel> [gradients]
// Prints one line: kernel, first gradient ms, its page faults, the median of
// the later ones in ms, their faults, and the tape size in MiB.
#include <tapeflow/tapeflow.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/timing.hpp"
#include "kernels/all.hpp"

namespace {

long minor_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

template <class K>
void measure(const K& k, int gradients) {
    const std::vector<double> x = k.inputs();
    const auto f = [&k](const std::vector<tapeflow::Real>& v) { return k(v); };
    std::vector<double> ms;
    long first_faults = 0, later_faults = 0;
    for (int i = 0; i < gradients; ++i) {
        const long faults = minor_faults();
        std::vector<double> g;
        ms.push_back(1e3 * bench::wall_seconds([&] { g = tapeflow::gradient(f, x); }));
        (i == 0 ? first_faults : later_faults) += minor_faults() - faults;
        if (g.size() != x.size()) std::abort();
    }
    const double later = bench::median(std::vector<double>(ms.begin() + 1, ms.end()));
    std::printf("%s %.3f %ld %.3f %ld %.1f\n", K::name, ms[0], first_faults, later,
                later_faults, double(tapeflow::tape::active().statistics().record_bytes) / (1 << 20));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <kernel> [gradients >= 2]\n", argv[0]);
        return 2;
    }
    const std::string which = argv[1];
    const int gradients = argc > 2 ? std::max(2, std::atoi(argv[2])) : 6;
    bool found = false;
    bench::for_each_kernel([&](const auto& k) {
        if (which == std::decay_t<decltype(k)>::name) {
            measure(k, gradients);
            found = true;
        }
        return true;
    });
    if (!found) {
        std::fprintf(stderr, "no kernel named %s\n", which.c_str());
        return 2;
    }
    return 0;
}
