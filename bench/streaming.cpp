// bench/streaming.cpp - the streaming tape: long kernels in memory vs spilled,
// reverse-sweep bandwidth against memcpy, and an ablation of the tape options.
//
//   tapeflow_streaming_bench [options] [Google Benchmark flags]
//
//   --long-cells=N --long-steps=N   size of the long heat kernel (100000 x 1000)
//   --scaled-steps=N                steps of the scaled-down long kernel (100)
//   --long-tile-bytes=N             tile size of the long/* tapes (the default)
//   --gradient-out=FILE             long/*: write the first gradient (raw doubles)
//   --gradient-expect=FILE          long/*: the first gradient must equal FILE bit
//                                   for bit, else the benchmark fails (exit code 1)
//   --check-hand=FILE               only compare FILE with the hand-written
//                                   adjoint of the long kernel (relative 1e-10)
//   --print-defaults                only print the library's default tape_options
//
// Benchmarks (all wall-clock time: the prefetch thread works in parallel):
//   long/primal, long/in_memory, long/budget_256MiB (library defaults otherwise),
//   long/budget_256MiB_prefetch, long/budget_256MiB_noprefetch
//       nonlinear 1-D heat (bench/kernels/heat.hpp) on 100 000 cells for 1 000
//       steps: 1e8 statements, ~4 GB of tape. One gradient per iteration; the
//       tape of a configuration is kept across repetitions (warm-up once).
//       Run one configuration per process to read its peak RSS (counter
//       peak_rss_MiB, from getrusage).
//   sweep/<kernel>/<config>, memcpy/<kernel>
//       record once, then clear_adjoints + seed + sweep per iteration; memcpy
//       of as many bytes as the tape holds. bytes_per_second = tape bytes / s.
//   checksum/crc32c, checksum/crc32c_three_chains, checksum/crc32c_portable
//       the spill checksum alone on a 2 MiB tile in cache (bytes_per_second):
//       as the library runs it, the crc32 instruction alone, the tables.
//   handoff/prefetcher
//       submit an empty job to a prefetcher and wait for it: the cost of one
//       hand-off between the recording thread and the prefetch thread.
//   ablation/<kernel>/<config>
//       whole gradients with one tape option changed from the defaults. Every
//       configuration's gradient must equal the default configuration's bit
//       for bit, and that one the hand-written adjoint to 1e-10.
//
// The spill directory is $TAPEFLOW_SPILL_DIR if set, else the library's
// default ($TMPDIR, else /tmp). Not part of the test suite.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <tapeflow/tapeflow.hpp>

#include "harness/flags.hpp"
#include "harness/check.hpp"
#include "kernels/heat.hpp"

namespace streaming {
namespace {

constexpr std::size_t KiB = 1024, MiB = 1024 * 1024;

struct settings {
    std::size_t long_cells = 100000;
    std::size_t long_steps = 1000;
    std::size_t scaled_steps = 100;
    std::size_t long_tile_bytes = 0;  // the tape chooses (tape_options::tile_bytes)
    std::string gradient_out;
    std::string gradient_expect;
    std::string check_hand;
};
settings cfg;
bool failed = false;  // a gradient check failed: exit code 1

double wall_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU seconds of the whole process (every thread), user and system.
void process_cpu(double& user, double& system) {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    user = double(ru.ru_utime.tv_sec) + 1e-6 * double(ru.ru_utime.tv_usec);
    system = double(ru.ru_stime.tv_sec) + 1e-6 * double(ru.ru_stime.tv_usec);
}

double peak_rss_mib() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

std::string spill_directory() {
    const char* dir = std::getenv("TAPEFLOW_SPILL_DIR");
    return dir && *dir ? dir : "";
}

bench::heat long_kernel() {
    bench::heat k;
    k.cells = cfg.long_cells;
    k.steps = cfg.long_steps;
    return k;
}

// ---- one tape computing whole gradients ------------------------------------

struct gradient_job {
    tapeflow::tape tape;  // first: outlives the variables below
    std::vector<tapeflow::Real> x;
    tapeflow::Real y;
    double record_seconds = 0;  // summed over gradients
    double sweep_seconds = 0;
    double cpu_seconds = 0;     // process CPU (every thread, user + system)
    double system_seconds = 0;  // of which in the kernel

    explicit gradient_job(const tapeflow::tape_options& options) : tape(options) {}

    // Fresh inputs, reset, record f(x).
    void record(const bench::heat& kernel, const std::vector<double>& xd) {
        tape.reset();
        tape.start_recording();
        x.resize(xd.size());
        for (std::size_t i = 0; i < xd.size(); ++i) {
            x[i] = xd[i];
            tape.register_input(x[i]);
        }
        y = kernel(x);
        tape.register_output(y);
        tape.stop_recording();
    }

    // Seed, sweep, read every adjoint.
    void sweep(std::vector<double>& g) {
        tape.set_adjoint(y, 1.0);
        tape.sweep();
        g.resize(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) g[i] = tape.adjoint(x[i]);
    }

    // The whole job a user pays for; returns f(x).
    double gradient(const bench::heat& kernel, const std::vector<double>& xd, std::vector<double>& g) {
        double user0, system0, user1, system1;
        process_cpu(user0, system0);
        const double t0 = wall_seconds();
        record(kernel, xd);
        const double t1 = wall_seconds();
        sweep(g);
        const double t2 = wall_seconds();
        process_cpu(user1, system1);
        record_seconds += t1 - t0;
        sweep_seconds += t2 - t1;
        cpu_seconds += (user1 - user0) + (system1 - system0);
        system_seconds += system1 - system0;
        return y.value();
    }
};

// Per-gradient counters from the statistics before and after `n` gradients.
struct job_times {
    double record, sweep, cpu, system;
    explicit job_times(const gradient_job& j)
        : record(j.record_seconds), sweep(j.sweep_seconds), cpu(j.cpu_seconds), system(j.system_seconds) {}
};

void gradient_counters(benchmark::State& state, const gradient_job& job, const tapeflow::tape_statistics& before,
                       const job_times& times, std::size_t n) {
    const tapeflow::tape_statistics s = job.tape.statistics();
    const double per = n > 0 ? 1.0 / double(n) : 0.0;
    state.counters["statements"] = double(s.statements);
    state.counters["tape_MiB"] = double(s.record_bytes) / MiB;
    state.counters["record_ms"] = 1e3 * (job.record_seconds - times.record) * per;
    state.counters["sweep_ms"] = 1e3 * (job.sweep_seconds - times.sweep) * per;
    state.counters["process_cpu_ms"] = 1e3 * (job.cpu_seconds - times.cpu) * per;
    state.counters["process_sys_ms"] = 1e3 * (job.system_seconds - times.system) * per;
    state.counters["sweep_wait_ms"] = 1e3 * (s.sweep_wait_seconds - before.sweep_wait_seconds) * per;
    state.counters["record_wait_ms"] = 1e3 * (s.record_wait_seconds - before.record_wait_seconds) * per;
    state.counters["spilled_MiB"] = double(s.bytes_spilled - before.bytes_spilled) * per / MiB;
    state.counters["read_back_MiB"] = double(s.bytes_read_back - before.bytes_read_back) * per / MiB;
    state.counters["peak_resident_MiB"] = double(s.peak_resident_bytes) / MiB;
    state.counters["peak_rss_MiB"] = peak_rss_mib();
}

// ---- gradient files (the long kernel's configurations run in separate processes)

bool write_doubles(const std::string& path, const std::vector<double>& v) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(double)));
    return bool(out);
}

bool read_doubles(const std::string& path, std::vector<double>& v) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return false;
    const std::streamsize bytes = in.tellg();
    if (bytes < 0 || bytes % std::streamsize(sizeof(double)) != 0) return false;
    v.resize(std::size_t(bytes) / sizeof(double));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(v.data()), bytes);
    return bool(in);
}

// Empty when a and b are equal bit for bit; otherwise what differs.
std::string bitwise_difference(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size())
        return "sizes differ (" + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + ")";
    std::size_t differ = 0, first = 0;
    for (std::size_t i = a.size(); i-- > 0;)
        if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0) {
            ++differ;
            first = i;
        }
    if (differ == 0) return {};
    char line[200];
    std::snprintf(line, sizeof line, "%zu of %zu components differ (first at %zu: %.17g vs %.17g), max rel %.1e",
                  differ, a.size(), first, a[first], b[first], bench::relative_difference(a, b));
    return line;
}

void fail(benchmark::State& state, const std::string& name, const std::string& what) {
    std::fprintf(stderr, "GRADIENT CHECK FAILED: %s: %s\n", name.c_str(), what.c_str());
    failed = true;
    state.SkipWithError(what.c_str());
}

// ---- 1. the long kernel ----------------------------------------------------

struct long_case {
    std::unique_ptr<gradient_job> job;
    std::vector<double> x, g;
    double first_gradient_seconds = 0;
    bool ok = true;
};

void long_gradient(benchmark::State& state, const std::string& name, const tapeflow::tape_options& options) {
    static std::map<std::string, long_case> cases;  // kept across repetitions
    const bench::heat kernel = long_kernel();
    long_case& c = cases[name];
    if (!c.job) {
        c.job = std::make_unique<gradient_job>(options);
        c.x = kernel.inputs();
        const double start = wall_seconds();
        c.job->gradient(kernel, c.x, c.g);  // warm-up: the tape grows, the spill file fills
        c.first_gradient_seconds = wall_seconds() - start;
        if (!cfg.gradient_expect.empty()) {
            std::vector<double> expected;
            if (!read_doubles(cfg.gradient_expect, expected)) {
                c.ok = false;
                fail(state, name, "cannot read " + cfg.gradient_expect);
                return;
            }
            const std::string d = bitwise_difference(c.g, expected);
            if (!d.empty()) {
                c.ok = false;
                fail(state, name, "gradient differs from " + cfg.gradient_expect + ": " + d);
                return;
            }
            std::fprintf(stderr, "%s: gradient bitwise identical to %s\n", name.c_str(),
                         cfg.gradient_expect.c_str());
        }
        if (!cfg.gradient_out.empty() && !write_doubles(cfg.gradient_out, c.g)) {
            c.ok = false;
            fail(state, name, "cannot write " + cfg.gradient_out);
            return;
        }
    }
    if (!c.ok) {
        state.SkipWithError("gradient check failed earlier");
        return;
    }
    gradient_job& job = *c.job;
    const tapeflow::tape_statistics before = job.tape.statistics();
    const job_times times(job);
    for (auto _ : state) {
        benchmark::DoNotOptimize(job.gradient(kernel, c.x, c.g));
        benchmark::ClobberMemory();
    }
    gradient_counters(state, job, before, times, std::size_t(state.iterations()));
    state.counters["first_gradient_s"] = c.first_gradient_seconds;
}

void register_long() {
    benchmark::RegisterBenchmark("long/primal", [](benchmark::State& state) {
        const bench::heat kernel = long_kernel();
        const std::vector<double> x = kernel.inputs();
        for (auto _ : state) benchmark::DoNotOptimize(kernel(x));
        state.counters["peak_rss_MiB"] = peak_rss_mib();
    })->UseRealTime()->Unit(benchmark::kMillisecond);

    benchmark::RegisterBenchmark("long/in_memory", [](benchmark::State& state) {
        tapeflow::tape_options options;
        options.tile_bytes = cfg.long_tile_bytes;
        long_gradient(state, "long/in_memory", options);
    })->UseRealTime()->Iterations(1)->Unit(benchmark::kMillisecond);

    benchmark::RegisterBenchmark("long/budget_256MiB", [](benchmark::State& state) {
        tapeflow::tape_options options;
        options.memory_budget_bytes = 256 * MiB;
        options.spill_directory = spill_directory();
        options.tile_bytes = cfg.long_tile_bytes;
        long_gradient(state, "long/budget_256MiB", options);
    })->UseRealTime()->Iterations(1)->Unit(benchmark::kMillisecond);

    for (const bool prefetch : {true, false}) {
        const std::string name = std::string("long/budget_256MiB_") + (prefetch ? "prefetch" : "noprefetch");
        benchmark::RegisterBenchmark(name.c_str(), [name, prefetch](benchmark::State& state) {
            tapeflow::tape_options options;
            options.memory_budget_bytes = 256 * MiB;
            options.spill_directory = spill_directory();
            options.prefetch = prefetch;
            options.tile_bytes = cfg.long_tile_bytes;
            long_gradient(state, name, options);
        })->UseRealTime()->Iterations(1)->Unit(benchmark::kMillisecond);
    }
}

int check_hand(const std::string& path) {
    std::vector<double> g, reference;
    if (!read_doubles(path, g)) {
        std::fprintf(stderr, "cannot read %s\n", path.c_str());
        return 1;
    }
    const bench::heat kernel = long_kernel();
    const double f = kernel.adjoint(kernel.inputs(), reference);
    const double d = bench::relative_difference(g, reference);
    const bool ok = d < 1e-10;
    std::fprintf(stderr, "heat %zu x %zu: f = %.17g; tape gradient vs hand-written adjoint: max relative difference %.1e: %s\n",
                 kernel.cells, kernel.steps, f, d, ok ? "ok" : "MISMATCH");
    return ok ? 0 : 1;
}

// ---- the smaller kernels of the sweep and ablation benchmarks ----------------

struct kernel_case {
    std::string name;
    bench::heat kernel;
    std::size_t small_budget;  // "budget small" of the ablation
};

std::vector<kernel_case> small_kernels() {
    bench::heat standard;  // 4000 x 500, as in bench/main.cpp
    bench::heat scaled;
    scaled.cells = cfg.long_cells;
    scaled.steps = cfg.scaled_steps;
    return {{"heat", standard, 16 * MiB}, {"heat100k", scaled, 16 * MiB}};
}

struct config {
    std::string name;
    tapeflow::tape_options options;
};

std::string size_name(std::size_t bytes) {
    if (bytes >= 1024 * MiB) return std::to_string(bytes / (1024 * MiB)) + "GiB";
    return bytes >= MiB ? std::to_string(bytes / MiB) + "MiB" : std::to_string(bytes / KiB) + "KiB";
}

std::vector<config> ablation_configs(std::size_t small_budget) {
    std::vector<config> out;
    const std::string dir = spill_directory();
    auto add = [&](std::string name, auto change) {
        tapeflow::tape_options o;
        o.spill_directory = dir;
        change(o);
        out.push_back({std::move(name), o});
    };
    const std::string budget = "budget" + size_name(small_budget);
    const std::size_t never = std::size_t(64) * 1024 * MiB;  // a finite budget no tape here reaches
    add("default", [](tapeflow::tape_options&) {});
    // prefetch only acts on a streaming tape: both values, whatever the default
    for (const bool prefetch : {true, false}) {
        const std::string suffix = prefetch ? "-prefetch" : "-noprefetch";
        add("scratchpad" + suffix, [prefetch](tapeflow::tape_options& o) {
            o.scratchpad = true;
            o.prefetch = prefetch;
        });
        add(budget + suffix, [&, prefetch](tapeflow::tape_options& o) {
            o.memory_budget_bytes = small_budget;
            o.prefetch = prefetch;
        });
        // Recording goes through the scratchpad, nothing is spilled, and the
        // sweep reads the tiles in place.
        add("budget64GiB" + suffix, [never, prefetch](tapeflow::tape_options& o) {
            o.memory_budget_bytes = never;
            o.prefetch = prefetch;
        });
    }
    add(budget + "-scratchpad", [&](tapeflow::tape_options& o) {
        o.memory_budget_bytes = small_budget;
        o.scratchpad = true;
    });
    // tiles of a tape in memory (the default: default_tile_bytes)
    for (std::size_t t = 16 * KiB; t <= 4 * MiB; t *= 2)
        if (t != tapeflow::default_tile_bytes)
            add("tile" + size_name(t), [t](tapeflow::tape_options& o) { o.tile_bytes = t; });
    // tiles of a spilling tape (the default: default_streaming_tile_bytes)
    for (std::size_t t : {128 * KiB, 512 * KiB, 1 * MiB, 4 * MiB})
        if (t != tapeflow::default_streaming_tile_bytes)
            add(budget + "-tile" + size_name(t), [&, t](tapeflow::tape_options& o) {
                o.memory_budget_bytes = small_budget;
                o.tile_bytes = t;
            });
    return out;
}

// The hand-written adjoint and the default configuration's gradient of a
// kernel, computed once.
struct reference {
    std::vector<double> hand, tape;
    std::string problem;  // empty: the default tape matches the hand-written adjoint
};

const reference& reference_for(const kernel_case& k) {
    static std::map<std::string, reference> cache;
    auto found = cache.find(k.name);
    if (found != cache.end()) return found->second;
    reference& r = cache[k.name];
    const std::vector<double> x = k.kernel.inputs();
    k.kernel.adjoint(x, r.hand);
    gradient_job job{tapeflow::tape_options{}};
    job.gradient(k.kernel, x, r.tape);
    const double d = bench::relative_difference(r.tape, r.hand);
    std::fprintf(stderr, "%s: default tape vs hand-written adjoint: max relative difference %.1e\n", k.name.c_str(), d);
    if (!(d < 1e-10)) r.problem = "default tape differs from the hand-written adjoint: " + std::to_string(d);
    return r;
}

void ablation(benchmark::State& state, const std::string& name, const kernel_case& k,
              const tapeflow::tape_options& options) {
    const reference& ref = reference_for(k);
    if (!ref.problem.empty()) return fail(state, name, ref.problem);
    const std::vector<double> x = k.kernel.inputs();
    std::vector<double> g;
    gradient_job job(options);
    job.gradient(k.kernel, x, g);  // warm-up, and the check
    const std::string d = bitwise_difference(g, ref.tape);
    if (!d.empty()) return fail(state, name, "gradient differs from the default configuration's: " + d);
    const tapeflow::tape_statistics before = job.tape.statistics();
    const job_times times(job);
    for (auto _ : state) {
        benchmark::DoNotOptimize(job.gradient(k.kernel, x, g));
        benchmark::ClobberMemory();
    }
    gradient_counters(state, job, before, times, std::size_t(state.iterations()));
}

// ---- 2. sweep bandwidth -------------------------------------------------------

void sweep_only(benchmark::State& state, const std::string& name, const kernel_case& k,
                const tapeflow::tape_options& options) {
    const std::vector<double> x = k.kernel.inputs();
    std::vector<double> g;
    gradient_job job(options);
    job.gradient(k.kernel, x, g);  // the tape grows to its size
    job.record(k.kernel, x);       // recorded once
    job.sweep(g);
    const std::string d = bitwise_difference(g, reference_for(k).tape);
    if (!d.empty()) return fail(state, name, "gradient differs from the default configuration's: " + d);
    const tapeflow::tape_statistics before = job.tape.statistics();
    for (auto _ : state) {
        job.tape.clear_adjoints();
        job.tape.set_adjoint(job.y, 1.0);
        job.tape.sweep();
        benchmark::DoNotOptimize(job.tape.adjoint(job.x[0]));
    }
    const tapeflow::tape_statistics s = job.tape.statistics();
    const double per = 1.0 / double(state.iterations());
    state.SetBytesProcessed(std::int64_t(s.record_bytes) * std::int64_t(state.iterations()));
    state.counters["tape_MiB"] = double(s.record_bytes) / MiB;
    state.counters["sweep_wait_ms"] = 1e3 * (s.sweep_wait_seconds - before.sweep_wait_seconds) * per;
    state.counters["read_back_MiB"] = double(s.bytes_read_back - before.bytes_read_back) * per / MiB;
}

// Bytes of the kernel's tape (recorded once with the default options).
std::size_t tape_bytes(const kernel_case& k) {
    static std::map<std::string, std::size_t> cache;
    auto found = cache.find(k.name);
    if (found != cache.end()) return found->second;
    gradient_job job{tapeflow::tape_options{}};
    job.record(k.kernel, k.kernel.inputs());
    return cache[k.name] = std::size_t(job.tape.statistics().record_bytes);
}

void copy(benchmark::State& state, const kernel_case& k) {
    const std::size_t bytes = tape_bytes(k);
    std::unique_ptr<char[]> from(new char[bytes]), to(new char[bytes]);
    std::memset(from.get(), 1, bytes);  // touched: no page faults while timing
    std::memset(to.get(), 2, bytes);
    for (auto _ : state) {
        std::memcpy(to.get(), from.get(), bytes);
        benchmark::DoNotOptimize(to.get());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(std::int64_t(bytes) * std::int64_t(state.iterations()));
    state.counters["tape_MiB"] = double(bytes) / MiB;
}

// One hand-off to a prefetch thread and back: submit an empty job, wait for it
// (what a streaming tape pays per tile moved, on top of the copy itself).
void handoff(benchmark::State& state) {
    tapeflow::prefetcher worker(true);
    worker.wait(worker.submit([] {}));  // the thread is started
    for (auto _ : state) worker.wait(worker.submit([] {}));
}

// The spill checksum alone on one 2 MiB tile (the default tile of a tape
// with a budget), in cache: CRC-32C as the library runs it (folding with
// VPCLMULQDQ where the CPU has it), the crc32 instruction in three chains,
// and the portable fallback (tapeflow/stream/crc32c.hpp).
enum class crc_code { library, three_chains, portable };
void checksum(benchmark::State& state, crc_code code) {
    std::uint32_t (*crc)(const void*, std::size_t, std::uint32_t) = tapeflow::crc32c;
    if (code == crc_code::portable) crc = tapeflow::detail::crc32c_portable;
    if (code == crc_code::three_chains) {
#if TAPEFLOW_CRC32C_X86
        if (!tapeflow::detail::crc32c_hardware()) return state.SkipWithError("this CPU has no SSE4.2");
        crc = tapeflow::detail::crc32c_sse42;
#else
        return state.SkipWithError("not an x86-64 build");
#endif
    }
    std::vector<std::byte> tile(2 * MiB);
    for (std::size_t i = 0; i < tile.size(); ++i) tile[i] = std::byte((i * 2654435761u) >> 13);
    for (auto _ : state) benchmark::DoNotOptimize(crc(tile.data(), tile.size(), 0));
    state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(tile.size()));
}

void register_small() {
    benchmark::RegisterBenchmark("handoff/prefetcher", handoff)->UseRealTime()->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("checksum/crc32c", checksum, crc_code::library)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("checksum/crc32c_three_chains", checksum, crc_code::three_chains)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("checksum/crc32c_portable", checksum, crc_code::portable)
        ->Unit(benchmark::kMicrosecond);
    for (const kernel_case& k : small_kernels()) {
        const std::string budget = "budget" + size_name(k.small_budget);
        const std::string sweep_default = "sweep/" + k.name + "/default";
        benchmark::RegisterBenchmark(sweep_default.c_str(), [k, sweep_default](benchmark::State& s) {
            sweep_only(s, sweep_default, k, tapeflow::tape_options{});
        })->UseRealTime()->Unit(benchmark::kMillisecond);
        const std::string sweep_budget = "sweep/" + k.name + "/" + budget;
        benchmark::RegisterBenchmark(sweep_budget.c_str(), [k, sweep_budget](benchmark::State& s) {
            tapeflow::tape_options o;
            o.memory_budget_bytes = k.small_budget;
            o.spill_directory = spill_directory();
            sweep_only(s, sweep_budget, k, o);
        })->UseRealTime()->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("memcpy/" + k.name).c_str(), [k](benchmark::State& s) {
            copy(s, k);
        })->UseRealTime()->Unit(benchmark::kMillisecond);
        for (const config& c : ablation_configs(k.small_budget)) {
            const tapeflow::tape_options o = c.options;
            const std::string name = "ablation/" + k.name + "/" + c.name;
            benchmark::RegisterBenchmark(name.c_str(), [k, o, name](benchmark::State& s) {
                ablation(s, name, k, o);
            })->UseRealTime()->Unit(benchmark::kMillisecond);
        }
    }
}

using bench::take_flag;

}  // namespace
}  // namespace streaming

int main(int argc, char** argv) {
    using streaming::cfg;
    std::vector<char*> args;
    for (int i = 0; i < argc; ++i) {
        std::string v;
        if (streaming::take_flag(argv[i], "--long-cells", v))
            cfg.long_cells = std::stoul(v);
        else if (streaming::take_flag(argv[i], "--long-steps", v))
            cfg.long_steps = std::stoul(v);
        else if (streaming::take_flag(argv[i], "--scaled-steps", v))
            cfg.scaled_steps = std::stoul(v);
        else if (streaming::take_flag(argv[i], "--long-tile-bytes", v))
            cfg.long_tile_bytes = std::stoul(v);
        else if (streaming::take_flag(argv[i], "--gradient-out", v))
            cfg.gradient_out = v;
        else if (streaming::take_flag(argv[i], "--gradient-expect", v))
            cfg.gradient_expect = v;
        else if (streaming::take_flag(argv[i], "--check-hand", v))
            cfg.check_hand = v;
        else
            args.push_back(argv[i]);
    }
    if (!cfg.check_hand.empty()) return streaming::check_hand(cfg.check_hand);
    if (argc > 1 && std::strcmp(argv[1], "--print-defaults") == 0) {
        const tapeflow::tape_options o;
        tapeflow::tape_options streaming;
        streaming.memory_budget_bytes = 256 * streaming::MiB;
        const std::size_t chosen = tapeflow::tape(o).statistics().tile_bytes;
        const std::size_t chosen_streaming = tapeflow::tape(streaming).statistics().tile_bytes;
        std::printf("tile_bytes=%s memory_tile_bytes=%zu streaming_tile_bytes=%zu scratchpad=%d prefetch=%d "
                    "memory_budget_bytes=%s\n",
                    o.tile_bytes == 0 ? "auto" : std::to_string(o.tile_bytes).c_str(), chosen, chosen_streaming,
                    int(o.scratchpad), int(o.prefetch),
                    o.memory_budget_bytes == std::numeric_limits<std::size_t>::max()
                        ? "unlimited"
                        : std::to_string(o.memory_budget_bytes).c_str());
        return 0;
    }
    int n = int(args.size());
    benchmark::Initialize(&n, args.data());
    streaming::register_long();
    streaming::register_small();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (streaming::failed) {
        std::fprintf(stderr, "a gradient check FAILED (see above)\n");
        return 1;
    }
    return 0;
}
