// bench/long_run.cpp - one long gradient (heat, 100 000 cells x 1 000 steps
// by default: 100 M statements) with one tool per process, for time and
// peak memory against the peers (issue 16's long-run target; run it with
// bench/run_long, which starts a process per tool and round).
//
//   tapeflow_bench_long --tool=NAME [--cells=N] [--steps=N] [--gradients=N]
//                       [--budget-mib=N] [--gradient-out=F] [--gradient-expect=F]
//
// Tools: primal (f with double), hand (the hand-written adjoint), tapeflow
// (whole tape in memory), tapeflow_budget (a memory budget of --budget-mib,
// 256 by default: the rest of the tape is spilled to a file), and the peers
// built in: codipack, codipack_index, adept, xad.
//
// The process computes one warm-up gradient, then --gradients timed ones
// (wall clock), and prints one line:
//
//   tool=NAME seconds=S1,S2,... statements=N tape_bytes=B max_rel_diff=D
//
// --gradient-out writes the last gradient (raw doubles); --gradient-expect
// compares the last gradient against such a file and exits with 1 when the
// largest difference, relative to the largest gradient entry, exceeds 1e-10
// (or is not a number). A tool not built in exits with 77, bad arguments
// with 2. Peak memory is the
// caller's to read (bench/run_long uses wait4's ru_maxrss, so each tool's
// figure is its own process's).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "harness/flags.hpp"
#include "harness/tools.hpp"
#include "kernels/heat.hpp"
#include "harness/peers.hpp"

namespace {

// Exit code of a tool that this binary does not have (bench/run_long leaves it out).
constexpr int not_built_in = 77;

struct settings {
    std::string tool;
    std::size_t cells = 100000;
    std::size_t steps = 1000;
    int gradients = 2;
    std::size_t budget_mib = 256;
    std::string gradient_out, gradient_expect;
};

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs `gradient(g)` once to warm up, then s.gradients times timed; checks
// and writes the last gradient; prints the result line. Returns the exit code.
template <class Gradient, class Stats>
int measure(const settings& s, std::size_t n, Gradient&& gradient, Stats&& stats) {
    std::vector<double> g(n);
    gradient(g);
    std::vector<double> seconds;
    for (int i = 0; i < s.gradients; ++i) {
        const double start = now();
        gradient(g);
        seconds.push_back(now() - start);
    }
    double max_rel_diff = -1;  // -1: nothing to compare against
    if (!s.gradient_expect.empty() && n > 0) {
        std::vector<double> expect(n);
        std::ifstream in(s.gradient_expect, std::ios::binary);
        if (!in.read(reinterpret_cast<char*>(expect.data()), std::streamsize(n * sizeof(double)))) {
            std::fprintf(stderr, "cannot read %zu doubles from %s\n", n, s.gradient_expect.c_str());
            return 2;
        }
        double scale = 0, diff = 0;
        for (std::size_t i = 0; i < n; ++i) {
            scale = std::max(scale, std::fabs(expect[i]));
            const double d = std::fabs(g[i] - expect[i]);
            if (!(d <= diff)) diff = d;  // a NaN (not finite gradient) sticks
        }
        max_rel_diff = scale > 0 ? diff / scale : diff;
    }
    if (!s.gradient_out.empty()) {
        std::ofstream out(s.gradient_out, std::ios::binary);
        out.write(reinterpret_cast<const char*>(g.data()), std::streamsize(n * sizeof(double)));
    }
    const bench::tool_stats st = stats();
    std::printf("tool=%s seconds=", s.tool.c_str());
    for (std::size_t i = 0; i < seconds.size(); ++i) std::printf("%s%.6f", i ? "," : "", seconds[i]);
    std::printf(" statements=%.0f tape_bytes=%.0f max_rel_diff=%.3g\n", st.statements, st.tape_bytes, max_rel_diff);
    if (!(max_rel_diff <= 1e-10)) {
        std::fprintf(stderr, "%s: gradient differs from %s by %.3g (relative to its largest entry)\n",
                     s.tool.c_str(), s.gradient_expect.c_str(), max_rel_diff);
        return 1;
    }
    return 0;
}

template <class Tool>
int run_tool(const settings& s, const bench::heat& kernel, std::unique_ptr<Tool> tool) {
    const std::vector<double> x = kernel.inputs();
    return measure(s, x.size(), [&](std::vector<double>& g) { tool->gradient(kernel, x, g); },
                   [&] { return tool->stats(); });
}

int run(const settings& s) {
    bench::heat kernel;
    kernel.cells = s.cells;
    kernel.steps = s.steps;
    if (s.tool == "primal") {
        const std::vector<double> x = kernel.inputs();
        volatile double sink = 0;  // keeps the primal from being optimized away
        return measure(s, 0, [&](std::vector<double>&) { sink = kernel(x); }, [] { return bench::tool_stats{}; });
    }
    if (s.tool == "hand") return run_tool(s, kernel, std::make_unique<bench::hand_tool>());
    if (s.tool == "tapeflow") return run_tool(s, kernel, std::make_unique<bench::tapeflow_tool>());
    if (s.tool == "tapeflow_budget") {
        tapeflow::tape_options options;
        options.memory_budget_bytes = s.budget_mib << 20;
        return run_tool(s, kernel, std::make_unique<bench::tapeflow_tool>(options));
    }
#ifdef TAPEFLOW_BENCH_CODIPACK
    if (s.tool == "codipack") return run_tool(s, kernel, std::make_unique<bench::codipack_tool>());
    if (s.tool == "codipack_index") return run_tool(s, kernel, std::make_unique<bench::codipack_index_tool>());
#endif
#ifdef TAPEFLOW_BENCH_ADEPT
    if (s.tool == "adept") return run_tool(s, kernel, std::make_unique<bench::adept_tool>());
#endif
#ifdef TAPEFLOW_BENCH_XAD
    if (s.tool == "xad") return run_tool(s, kernel, std::make_unique<bench::xad_tool>());
#endif
    std::fprintf(stderr, "unknown or not built in: --tool=%s (peers need their source tree given to CMake)\n",
                 s.tool.c_str());
    return not_built_in;
}

}  // namespace

int main(int argc, char** argv) {
    settings s;
    for (int i = 1; i < argc; ++i) {
        std::string v;
        if (bench::take_flag(argv[i], "--tool", v)) s.tool = v;
        else if (bench::take_flag(argv[i], "--cells", v)) s.cells = std::stoul(v);
        else if (bench::take_flag(argv[i], "--steps", v)) s.steps = std::stoul(v);
        else if (bench::take_flag(argv[i], "--gradients", v)) s.gradients = std::stoi(v);
        else if (bench::take_flag(argv[i], "--budget-mib", v)) s.budget_mib = std::stoul(v);
        else if (bench::take_flag(argv[i], "--gradient-out", v)) s.gradient_out = v;
        else if (bench::take_flag(argv[i], "--gradient-expect", v)) s.gradient_expect = v;
        else {
            std::fprintf(stderr, "unknown argument %s (see the comment at the top of bench/long_run.cpp)\n", argv[i]);
            return 2;
        }
    }
    if (s.gradients < 1) {
        std::fprintf(stderr, "--gradients must be at least 1\n");
        return 2;
    }
    if (s.tool.empty()) {
        std::fprintf(stderr, "give --tool=NAME: primal, hand, tapeflow, tapeflow_budget, codipack, "
                             "codipack_index, adept, xad\n");
        return 2;
    }
    return run(s);
}
