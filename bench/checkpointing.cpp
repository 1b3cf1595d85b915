// bench/checkpointing.cpp - a time loop far too long to tape, differentiated
// with checkpointed_loop under a memory limit.
//
//   tapeflow_checkpoint_bench --mode=MODE [--cells=N] [--steps=N]
//                             [--memory-mib=M | --snapshots=S]
//
//   primal        the heat kernel (bench/kernels/heat.hpp) on doubles
//   in_memory     its gradient with every step taped (plain tape in memory)
//   checkpointed  its gradient through tapeflow::checkpointed_loop with S
//                 snapshots, or as many as fit in M MiB beside one step's tape
//   check         small sizes: checkpointed == in_memory to 1e-12, and both
//                 equal the hand-written adjoint to 1e-10 (exit code 1 if not);
//                 then prints checkpointed_while's re-runs against the
//                 offline optimum for a 100-step loop
//   planning      the schedule alone: every checkpoint::best_split call that
//                 checkpointed_loop makes for --steps=N (default 100000) and
//                 --snapshots=S (default: 100, 1000 and 3000, one line each),
//                 timed; with --scan, the exhaustive scan over split points
//                 that best_split was before its closed form. Then (without
//                 --scan) the whole checkpointed_loop on a one-element state.
//
// Prints one line of key=value pairs: seconds, peak_rss_mib (getrusage: run
// one mode per process), and the loop's statistics. bench/run_checkpointing
// runs the modes and writes the table in docs/performance.md.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <tapeflow/checkpoint/checkpointed_loop.hpp>
#include <tapeflow/tapeflow.hpp>

#include "kernels/heat.hpp"

namespace {

using tapeflow::Real;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t) {
    return std::chrono::duration<double>(clock_type::now() - t).count();
}

double peak_rss_mib() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_maxrss) / 1024.0;
}

// One step of the kernel on a state vector: the boundary cells carry over.
struct heat_step {
    const bench::heat* kernel;
    template <class T>
    void operator()(std::vector<T>& u) const {
        std::vector<T> next(u.size());
        next.front() = u.front();
        next.back() = u.back();
        kernel->step(u, next);
        u.swap(next);
    }
};

double primal(const bench::heat& k, const std::vector<double>& x) {
    std::vector<double> u = x;
    heat_step step{&k};
    for (std::size_t s = 0; s < k.steps; ++s) step(u);
    return k.loss(u);
}

std::vector<double> gradient_in_memory(const bench::heat& k, const std::vector<double>& x) {
    return tapeflow::gradient(
        [&](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            heat_step step{&k};
            for (std::size_t s = 0; s < k.steps; ++s) step(u);
            return k.loss(u);
        },
        x);
}

std::vector<double> gradient_checkpointed(const bench::heat& k, const std::vector<double>& x, std::size_t snapshots,
                                          std::shared_ptr<const tapeflow::checkpoint_statistics>& stats) {
    return tapeflow::gradient(
        [&](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            stats = tapeflow::checkpointed_loop(k.steps, u, heat_step{&k}, snapshots);
            return k.loss(u);
        },
        x);
}

// ---- planning: the schedule of checkpointed_loop alone ---------------------

using split_function = std::uint64_t (*)(std::uint64_t, std::uint64_t);

// best_split before the closed form: every split point tried (O(l) a call).
std::uint64_t scan_split(std::uint64_t l, std::uint64_t c) {
    if (c <= 1 || l <= 2) return l - 1;
    std::uint64_t best = l - 1;
    std::uint64_t best_cost = (l - 1) + tapeflow::checkpoint::minimal_advances(l - 1, c);
    for (std::uint64_t m = 1; m + 1 < l; ++m) {
        const std::uint64_t cost = m + tapeflow::checkpoint::minimal_advances(l - m, c - 1) +
                                   tapeflow::checkpoint::minimal_advances(m, c);
        if (cost < best_cost) {
            best_cost = cost;
            best = m;
        }
    }
    return best;
}

// Walks the schedule of checkpointed_loop (the forward's descent, then one
// sweep; include/tapeflow/checkpoint/checkpointed_loop.hpp) without running
// steps: counts the splits and the untaped steps they imply.
struct schedule_walk {
    split_function split;
    std::uint64_t splits = 0;
    std::uint64_t advances = 0;  // untaped steps, forward and sweep: T(n, c) if optimal

    std::uint64_t split_at(std::uint64_t a, std::uint64_t b, std::uint64_t free) {
        ++splits;
        return a + split(b - a, free + 1);
    }
    void run(std::uint64_t steps, std::uint64_t snapshots) {
        const std::uint64_t slots = std::max<std::uint64_t>(1, std::min(snapshots, steps));
        std::uint64_t a = 0, b = steps, free = slots - 1;
        while (b - a > 1) {  // the forward's descent
            const std::uint64_t m = split_at(a, b, free);
            advances += m - a;
            if (m == b - 1) break;
            a = m;
            --free;
        }
        reverse(0, steps, slots - 1, true);
    }
    void reverse(std::uint64_t a, std::uint64_t b, std::uint64_t free, bool pre) {
        while (b - a > 1) {
            const std::uint64_t m = split_at(a, b, free);
            if (!pre) advances += m - a;
            if (m == b - 1) {
                --b;
            } else {
                reverse(m, b, free - 1, pre);
                b = m;
            }
            pre = false;
        }
    }
};

int planning(long steps, long snapshots_option, bool scan) {
    std::vector<long> counts{100, 1000, 3000};
    if (snapshots_option > 0) counts = {snapshots_option};
    int bad = 0;
    for (long snapshots : counts) {
        schedule_walk walk{scan ? &scan_split : &tapeflow::checkpoint::best_split};
        const auto t = clock_type::now();
        walk.run(std::uint64_t(steps), std::uint64_t(snapshots));
        const double s = seconds_since(t);
        const std::uint64_t slots = std::min<std::uint64_t>(std::uint64_t(snapshots), std::uint64_t(steps));
        const std::uint64_t optimum = tapeflow::checkpoint::minimal_advances(std::uint64_t(steps), slots);
        std::printf("mode=planning split=%s steps=%ld snapshots=%ld seconds=%.6f splits=%llu "
                    "advances=%llu optimum=%llu %s\n",
                    scan ? "scan" : "closed_form", steps, snapshots, s, (unsigned long long)walk.splits,
                    (unsigned long long)walk.advances, (unsigned long long)optimum,
                    walk.advances == optimum ? "ok" : "NOT_OPTIMAL");
        bad += walk.advances != optimum;
        if (scan) continue;
        // the whole loop, planning included, on a one-element state (the
        // steps cost next to nothing: what is left is the bookkeeping)
        std::shared_ptr<const tapeflow::checkpoint_statistics> st;
        const auto t2 = clock_type::now();
        tapeflow::gradient(
            [&](const std::vector<Real>& v) {
                std::vector<Real> u = v;
                st = tapeflow::checkpointed_loop(
                    std::size_t(steps), u, [](auto& x) { x[0] = x[0] * 0.999999 + 1e-7; }, std::size_t(snapshots));
                return u[0];
            },
            std::vector<double>{1.0});
        std::printf("mode=planning_loop steps=%ld snapshots=%ld seconds=%.4f steps_recomputed=%llu steps_taped=%llu\n",
                    steps, snapshots, seconds_since(t2), (unsigned long long)st->steps_recomputed,
                    (unsigned long long)st->steps_taped);
    }
    return bad ? 1 : 0;
}

long option(int argc, char** argv, const char* name, long fallback) {
    const std::size_t n = std::strlen(name);
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') return std::atol(argv[i] + n + 1);
    return fallback;
}

std::string mode_of(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], "--mode=", 7) == 0) return argv[i] + 7;
    return "check";
}

int check() {
    bench::heat k;
    k.cells = 300;
    int bad = 0;
    for (std::size_t steps : {1, 7, 60, 200}) {
        k.steps = steps;
        const auto x = k.inputs();
        std::vector<double> hand;
        k.adjoint(x, hand);
        const auto plain = gradient_in_memory(k, x);
        for (std::size_t snapshots : {1, 3, 10}) {
            std::shared_ptr<const tapeflow::checkpoint_statistics> st;
            const auto g = gradient_checkpointed(k, x, snapshots, st);
            double worst = 0, worst_plain = 0;
            for (std::size_t i = 0; i < x.size(); ++i) {
                worst = std::fmax(worst, std::fabs(g[i] - hand[i]) / std::fmax(1e-300, std::fabs(hand[i])));
                worst_plain = std::fmax(worst_plain, std::fabs(g[i] - plain[i]) / std::fmax(1e-300, std::fabs(plain[i])));
            }
            // the untaped runs use the double instantiation of the step, which
            // the compiler may contract into FMAs differently from the Real
            // one (-march=native): equal to rounding, not always bit for bit
            const bool ok = worst_plain < 1e-12 && worst < 1e-10;
            std::printf("check steps=%zu snapshots=%zu max_rel_diff_in_memory=%.1e max_rel_diff_hand=%.1e %s\n",
                        steps, snapshots, worst_plain, worst, ok ? "ok" : "FAILED");
            bad += !ok;
        }
    }
    // checkpointed_while against the offline optimum: steps re-run by one
    // sweep of a 100-step loop whose length the forward did not know
    k.cells = 50;
    k.steps = 100;
    const auto x = k.inputs();
    for (std::size_t snapshots : {2, 3, 4, 7}) {
        std::shared_ptr<const tapeflow::checkpoint_statistics> st;
        tapeflow::gradient(
            [&](const std::vector<Real>& v) {
                std::vector<Real> u = v;
                std::size_t taken = 0;
                st = tapeflow::checkpointed_while(
                    u, [&](const std::vector<Real>&) { return taken++ < k.steps; }, heat_step{&k}, snapshots);
                return k.loss(u);
            },
            x);
        const auto optimum = tapeflow::checkpoint::minimal_advances(k.steps, snapshots) - (k.steps - 1);
        std::printf("online steps=%zu snapshots=%zu recomputed=%llu offline_optimum=%llu ratio=%.2f\n", k.steps,
                    snapshots, (unsigned long long)st->steps_recomputed, (unsigned long long)optimum,
                    double(st->steps_recomputed) / double(optimum));
    }
    return bad ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = mode_of(argc, argv);
    if (mode == "check") return check();
    if (mode == "planning") {
        bool scan = false;
        for (int i = 1; i < argc; ++i) scan |= std::strcmp(argv[i], "--scan") == 0;
        return planning(option(argc, argv, "--steps", 100000), option(argc, argv, "--snapshots", 0), scan);
    }

    bench::heat k;
    k.cells = std::size_t(option(argc, argv, "--cells", 100000));
    k.steps = std::size_t(option(argc, argv, "--steps", 10000));
    const auto x = k.inputs();
    const double state_mib = double(k.cells * sizeof(double)) / (1 << 20);

    if (mode == "primal") {
        const auto t = clock_type::now();
        const double f = primal(k, x);
        std::printf("mode=primal cells=%zu steps=%zu seconds=%.4f peak_rss_mib=%.1f f=%.17g\n", k.cells, k.steps,
                    seconds_since(t), peak_rss_mib(), f);
        return 0;
    }
    if (mode == "in_memory") {
        const auto t = clock_type::now();
        const auto g = gradient_in_memory(k, x);
        const double s = seconds_since(t);
        const auto st = tapeflow::tape::active().statistics();
        std::printf("mode=in_memory cells=%zu steps=%zu seconds=%.4f peak_rss_mib=%.1f tape_mib=%.1f g0=%.17g\n",
                    k.cells, k.steps, s, peak_rss_mib(), double(st.record_bytes) / (1 << 20), g[1]);
        return 0;
    }
    if (mode == "checkpointed") {
        // snapshots: as given, or as many as fit in the memory limit beside
        // the process's baseline, the tape of one step (~48 bytes a cell, as
        // the in-memory run measures), and its Real state vectors
        long snapshots = option(argc, argv, "--snapshots", 0);
        const long memory_mib = option(argc, argv, "--memory-mib", 1024);
        if (snapshots == 0) {
            const double per_cell_mib = double(k.cells) / (1 << 20);
            const double reserved = 64 + per_cell_mib * (48 + 4 * 16);
            snapshots = long((double(memory_mib) - reserved) / state_mib);
            if (snapshots < 1) snapshots = 1;
        }
        std::shared_ptr<const tapeflow::checkpoint_statistics> st;
        const auto t = clock_type::now();
        const auto g = gradient_checkpointed(k, x, std::size_t(snapshots), st);
        const double s = seconds_since(t);
        std::printf(
            "mode=checkpointed cells=%zu steps=%zu snapshots=%ld seconds=%.4f peak_rss_mib=%.1f "
            "forward_seconds=%.3f recompute_seconds=%.3f record_seconds=%.3f sweep_seconds=%.3f "
            "steps_recomputed=%llu steps_taped=%llu step_tape_mib=%.2f g0=%.17g\n",
            k.cells, k.steps, snapshots, s, peak_rss_mib(), st->forward_seconds, st->recompute_seconds,
            st->record_seconds, st->sweep_seconds, (unsigned long long)st->steps_recomputed,
            (unsigned long long)st->steps_taped, double(st->peak_step_tape_bytes) / (1 << 20), g[1]);
        return 0;
    }
    std::fprintf(stderr, "unknown --mode=%s (primal, in_memory, checkpointed, check, planning)\n", mode.c_str());
    return 2;
}
