// bench/main.cpp - the benchmark harness: every kernel with every tool.
//
//   tapeflow_bench [--check-only] [Google Benchmark flags]
//
// Before timing anything, each tool's gradient is checked against the
// hand-written adjoint and that against finite differences; a mismatch
// ends the run with exit code 1. Benchmarks are named <kernel>/<tool>;
// <kernel>/primal times f(x) with double. The tools: tapeflow, hand, and
// the peers built in (ADOL-C, Sacado when installed; CoDiPack, Adept, XAD
// when their source trees were given to CMake), whose versions go into
// the benchmark context (<peer>_version). With --benchmark_filter=REGEX
// only the kernels with a benchmark the filter can select are checked and
// registered (a filter that starts with '-', which excludes, keeps all).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <regex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/check.hpp"
#include "harness/timing.hpp"
#include "harness/tools.hpp"
#include "kernels/heat.hpp"
#ifdef TAPEFLOW_BENCH_ADOLC
#include "harness/adolc_tool.hpp"
#endif
#ifdef TAPEFLOW_BENCH_SACADO
#include "harness/sacado_tool.hpp"
#endif
#include "harness/peers.hpp"
#include "kernels/all.hpp"

namespace bench {
namespace {

// ADOL-C and Sacado run a kernel unless it says `static constexpr bool adolc
// = false` (`sacado`) with an `adolc_note` (`sacado_note`); so do the peers
// in their headers (runs_codipack, ...).
template <class K, class = void>
struct runs_adolc : std::true_type {};
template <class K>
struct runs_adolc<K, std::void_t<decltype(K::adolc)>> : std::bool_constant<K::adolc> {};
template <class K, class = void>
struct runs_sacado : std::true_type {};
template <class K>
struct runs_sacado<K, std::void_t<decltype(K::sacado)>> : std::bool_constant<K::sacado> {};

// A kernel may name a reference kernel with the same f (`reference()`).
template <class K, class = void>
struct has_reference : std::false_type {};
template <class K>
struct has_reference<K, std::void_t<decltype(std::declval<const K&>().reference())>> : std::true_type {};

// Every run of tapeflow_bench reports the same counters: Google Benchmark's
// CSV reporter aborts when a run has a counter that the first run lacked. A
// run without a tape (primal, hand, Sacado) reports 0 statements; the primal
// run itself (primal_seconds = 0) a gradient_over_primal of 1.
void set_counters(benchmark::State& state, const tool_stats& s, double primal_seconds) {
    using C = benchmark::Counter;
    state.counters["statements"] = s.statements;
    state.counters["arguments"] = s.arguments;
    state.counters["tape_bytes_per_statement"] = s.statements > 0 ? s.tape_bytes / s.statements : 0;
    state.counters["peak_tape_bytes"] = C(s.peak_bytes, C::kDefaults, C::kIs1024);
    // seconds per statement (the value is inverted per iteration)
    state.counters["s_per_statement"] =
        s.statements > 0 ? C(s.statements, C::kIsIterationInvariantRate | C::kInvert) : C(0);
    // time per gradient / primal time measured just before in this process
    state.counters["gradient_over_primal"] =
        primal_seconds > 0 ? C(primal_seconds, C::kIsIterationInvariantRate | C::kInvert) : C(1);
}

template <class Tool, class K>
void run_tool(benchmark::State& state, const K& kernel, double primal_seconds) {
    const std::vector<double> x = kernel.inputs();
    std::vector<double> g;
    Tool tool;
    tool.gradient(kernel, x, g);  // warm-up: the tape grows to its size here
    for (auto _ : state) {
        benchmark::DoNotOptimize(tool.gradient(kernel, x, g));
        benchmark::ClobberMemory();
    }
    set_counters(state, tool.stats(), primal_seconds);
}

template <class Tool, class K>
bool check_tool(const K& kernel, const std::vector<double>& reference, std::string& report) {
    // Twice with the same tool object, as the benchmark reuses it: the
    // second gradient runs on a tape (and variables) left by the first.
    std::vector<double> g;
    Tool tool;
    tool.gradient(kernel, kernel.inputs(), g);
    double d = relative_difference(g, reference);
    g.assign(g.size(), 0.0);
    tool.gradient(kernel, kernel.inputs(), g);
    const double d2 = relative_difference(g, reference);
    if (!(d2 <= d)) d = d2;  // a NaN too
    char line[200];
    std::snprintf(line, sizeof line, "  %s/%s: max relative difference to hand = %.1e\n", K::name,
                  Tool::name, d);
    report += line;
    return d < 1e-10;
}

// Checks a tool's gradient on the kernel (appended to report) and registers
// its benchmark <kernel>/<tool>.
template <class Tool, class K>
bool add_tool(const K& kernel, const std::vector<double>& reference, double primal, std::string& report) {
    const bool ok = check_tool<Tool>(kernel, reference, report);
    benchmark::RegisterBenchmark((std::string(K::name) + "/" + Tool::name).c_str(),
                                 [kernel, primal](benchmark::State& s) { run_tool<Tool>(s, kernel, primal); })
        ->Unit(benchmark::kMillisecond);
    return ok;
}

template <class K>
void skip_tool(const char* tool, const char* note, std::string& report) {
    report += std::string("  ") + K::name + ": " + tool + " skipped (" + note + ")\n";
}

template <class K>
bool add_kernel(const K& kernel) {
    std::string report;
    const std::vector<double> x = kernel.inputs();
    std::vector<double> reference;
    const double f_hand = kernel.adjoint(x, reference);
    const double f_primal = kernel(x);
    bool ok = std::fabs(f_hand - f_primal) <= 1e-12 * std::max(1.0, std::fabs(f_primal));
    if (!ok) report += "  hand-written adjoint returns a different f(x) than the primal\n";
    ok = check_against_finite_differences(kernel, reference, report) && ok;
    if constexpr (has_reference<K>::value) {  // the same f written another way
        const auto& other = kernel.reference();
        std::vector<double> g_other;
        const double f_other = other.adjoint(x, g_other);
        const double d = relative_difference(reference, g_other);
        char line[200];
        std::snprintf(line, sizeof line, "  %s/hand vs %s/hand: max relative difference %.1e (f: %.1e)\n", K::name,
                      std::decay_t<decltype(other)>::name, d, std::fabs(f_other - f_primal));
        report += line;
        ok = d < 1e-10 && std::fabs(f_other - f_primal) <= 1e-12 * std::max(1.0, std::fabs(f_primal)) && ok;
    }

    const double primal = median_seconds([&] { benchmark::DoNotOptimize(kernel(x)); }, 15);
    const std::string name = K::name;
    benchmark::RegisterBenchmark((name + "/primal").c_str(), [kernel, x](benchmark::State& state) {
        for (auto _ : state) benchmark::DoNotOptimize(kernel(x));
        set_counters(state, tool_stats{}, 0.0);
    })->Unit(benchmark::kMillisecond);
    ok = add_tool<tapeflow_tool>(kernel, reference, primal, report) && ok;
#ifdef TAPEFLOW_BENCH_ADOLC
    if constexpr (runs_adolc<K>::value)
        ok = add_tool<adolc_tool>(kernel, reference, primal, report) && ok;
    else
        skip_tool<K>("ADOL-C", K::adolc_note, report);
#endif
#ifdef TAPEFLOW_BENCH_SACADO
    if constexpr (runs_sacado<K>::value)
        ok = add_tool<sacado_tool>(kernel, reference, primal, report) && ok;
    else
        skip_tool<K>("Sacado", K::sacado_note, report);
#endif
#ifdef TAPEFLOW_BENCH_CODIPACK
    if constexpr (runs_codipack<K>::value) {
        ok = add_tool<codipack_tool>(kernel, reference, primal, report) && ok;
        ok = add_tool<codipack_index_tool>(kernel, reference, primal, report) && ok;
        ok = add_tool<codipack_primal_tool>(kernel, reference, primal, report) && ok;
    } else {
        skip_tool<K>("CoDiPack", K::codipack_note, report);
    }
#endif
#ifdef TAPEFLOW_BENCH_ADEPT
    if constexpr (runs_adept<K>::value)
        ok = add_tool<adept_tool>(kernel, reference, primal, report) && ok;
    else
        skip_tool<K>("Adept", K::adept_note, report);
#endif
#ifdef TAPEFLOW_BENCH_XAD
    if constexpr (runs_xad<K>::value)
        ok = add_tool<xad_tool>(kernel, reference, primal, report) && ok;
    else
        skip_tool<K>("XAD", K::xad_note, report);
#endif
    benchmark::RegisterBenchmark((name + "/hand").c_str(), [kernel, primal](benchmark::State& s) {
        run_tool<hand_tool>(s, kernel, primal);
    })->Unit(benchmark::kMillisecond);
    std::fprintf(stderr, "%s gradient check: %s\n%s", K::name, ok ? "ok" : "MISMATCH", report.c_str());
    return ok;
}

// Whether --benchmark_filter=`filter` can select a benchmark of kernel
// `name` (any tool's name, built in or not: a filter for a peer that is not
// built still checks the kernel). Google Benchmark matches the filter as an
// extended regular expression anywhere in the name; "all" and "" select
// everything, a leading '-' excludes (then every kernel stays).
bool kernel_selected(const std::string& filter, const char* name) {
    if (filter.empty() || filter == "all" || filter[0] == '-') return true;
    try {
        const std::regex re(filter, std::regex::extended);
        for (const char* tool : {"primal", "hand", "tapeflow", "adolc", "sacado", "codipack", "codipack_index",
                                 "codipack_primal", "adept", "xad"})
            if (std::regex_search(std::string(name) + "/" + tool, re)) return true;
        return false;
    } catch (const std::regex_error&) {
        return true;  // Google Benchmark reports the filter
    }
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
    bool check_only = false;
    std::string filter;
    std::vector<char*> args;
    for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--check-only") == 0)
            check_only = true;
        else
            args.push_back(argv[i]);
        if (std::strncmp(argv[i], "--benchmark_filter=", 19) == 0) filter = argv[i] + 19;
    }
    int n = int(args.size());
    benchmark::Initialize(&n, args.data());
#ifdef TAPEFLOW_BENCH_ADOLC
    const bench::adolc_directory adolc_files;  // private cwd for ADOL-C's tapes
    benchmark::AddCustomContext("adolc_version", TAPEFLOW_BENCH_ADOLC_VERSION);
#else
    std::fprintf(stderr, "ADOL-C not found at build time: its benchmarks are skipped\n");
#endif
#ifdef TAPEFLOW_BENCH_SACADO
    benchmark::AddCustomContext("sacado_version", bench::sacado_version());
#else
    std::fprintf(stderr, "Sacado not found at build time: its benchmarks are skipped\n");
#endif
#ifdef TAPEFLOW_BENCH_CODIPACK
    benchmark::AddCustomContext("codipack_version", bench::codipack_version());
#else
    std::fprintf(stderr, "CoDiPack not given at build time: its benchmarks are skipped\n");
#endif
#ifdef TAPEFLOW_BENCH_ADEPT
    benchmark::AddCustomContext("adept_version", bench::adept_version());
#else
    std::fprintf(stderr, "Adept not given at build time: its benchmarks are skipped\n");
#endif
#ifdef TAPEFLOW_BENCH_XAD
    benchmark::AddCustomContext("xad_version", bench::xad_version());
#else
    std::fprintf(stderr, "XAD not given at build time: its benchmarks are skipped\n");
#endif
    const bool ok = bench::for_each_kernel([&](const auto& k) {
        return !bench::kernel_selected(filter, std::decay_t<decltype(k)>::name) || bench::add_kernel(k);
    });
    if (!ok) {
        std::fprintf(stderr, "gradient check FAILED: not timing anything\n");
        return 1;
    }
    if (check_only) return 0;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
