// bench/hardware_model.cpp - the hardware model (tapeflow/hw/hardware_model.hpp)
// on the benchmark kernels, and what its hook costs when nothing is attached.
//
//   tapeflow_hw_bench --model [--kernels=heat,mlp,...] [--sram=1048576,32768]
//                     [--json=FILE]
//       One gradient (record + one sweep) of each kernel per SRAM size, twice:
//         scratchpad  tape_options::scratchpad = true with tile_bytes = SRAM/8
//                     (the two-tile scratchpad takes a quarter of the SRAM;
//                     1 MiB: the default 128 KiB tiles): the tapeflow layout
//         direct      the default options (records written straight into
//                     tiles in memory, the sweep reads them through the cache)
//       each with a tapeflow::hardware_model of that SRAM size attached. The
//       model also accounts the same recording as a conventional
//       structure-of-arrays tape; both runs must give the same conventional
//       numbers (checked). Prints a table per kernel; --json writes every
//       number for bench/run_hardware_model.
//       The energy per byte of the SRAM and of the scratchpad each follows
//       Horowitz (ISSCC 2014) for its size: 8 KiB 1.25, 32 KiB 2.5, 1 MiB
//       12.5 pJ/B, log-log interpolated between and extended beyond
//       (tapeflow::sram_pj_per_byte_of); DRAM 250 pJ/B (the model's default).
//
//   tapeflow_hw_bench --sides [--kernels=...] [--scratchpads=4096,...,262144]
//                     [--json=FILE]
//       The three layouts of the model side by side, each on the machine it
//       needs (hardware_config::accelerator, each structure at its own
//       size's energy): a probe gradient (1 MiB SRAM, 4 KiB tiles) gives the
//       on-chip bytes each needs for 99% adjoint hits; the conventional and
//       per-variable layouts then run on an SRAM of that size, the tapeflow
//       layout once per scratchpad size (tiles of half of it) with an SRAM
//       of the scratchpad plus the adjoint cache it needs (charged at the
//       adjoint cache's size). Prints a table per kernel; --json writes the
//       numbers for bench/run_hardware_model.
//
//   tapeflow_hw_bench --measure=KERNEL [--mode=direct|scratchpad]
//                     [--tile-bytes=N] [--what=sweep|gradient] [--gradients=N]
//                     [--no-sweep] [--callgrind]
//       For valgrind: no observer. --what=sweep records once and sweeps
//       once; --what=gradient takes a warm-up gradient, then N gradients.
//       With --callgrind, callgrind's instrumentation is on only around the
//       measured part (run valgrind --tool=callgrind --instr-atstart=no);
//       starting it empties callgrind's simulated caches, so a measured
//       sweep starts cold, as the model's does. --no-sweep skips the sweep
//       (everything else the same: a cachegrind run minus a --no-sweep run
//       is the sweep).
//
//   tapeflow_hw_bench --print-build
//       hook=<0|1> callgrind=<0|1>: whether the hook is compiled in
//       (TAPEFLOW_HARDWARE_MODEL) and whether valgrind/callgrind.h was found.
//
//   tapeflow_hw_bench [Google Benchmark flags]
//       overhead/<kernel>/<mode>: whole gradients (reset, record, seed,
//       sweep, read the adjoints) on a tape WITHOUT an observer, the tape
//       reused across iterations (one warm-up gradient). The same source is
//       built twice: tapeflow_hw_bench (hook compiled in, the default) and
//       tapeflow_hw_bench_nohook (-DTAPEFLOW_HARDWARE_MODEL=0);
//       bench/run_hardware_model runs them alternately and compares.
//
// Every gradient is checked against the kernel's hand-written adjoint
// (relative 1e-10); a failure makes the exit code 1.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define TAPEFLOW_HW_CALLGRIND 1
#endif
#endif
#ifndef TAPEFLOW_HW_CALLGRIND
#define TAPEFLOW_HW_CALLGRIND 0
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#include <tapeflow/hw/hardware_model.hpp>
#include <tapeflow/tapeflow.hpp>

#include "harness/check.hpp"
#include "kernels/black_scholes.hpp"
#include "kernels/bundle_adjustment.hpp"
#include "kernels/determinant.hpp"
#include "kernels/gmm.hpp"
#include "kernels/heat.hpp"
#include "kernels/least_squares.hpp"
#include "kernels/lstm.hpp"
#include "kernels/mlp.hpp"
#include "kernels/nbody.hpp"
#include "kernels/ode.hpp"

namespace hwbench {
namespace {

constexpr std::size_t KiB = 1024, MiB = 1024 * 1024;
constexpr double tolerance = 1e-10;  // against the hand-written adjoint
bool failed = false;

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---- one tape computing gradients ------------------------------------------

struct gradient_job {
    tapeflow::tape tape;  // first: outlives the variables below
    std::vector<tapeflow::Real> x;
    tapeflow::Real y;

    explicit gradient_job(const tapeflow::tape_options& options) : tape(options) {}

    template <class K>
    void record(const K& kernel, const std::vector<double>& xd) {
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
    void seed() { tape.set_adjoint(y, 1.0); }
    void read(std::vector<double>& g) const {
        g.resize(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) g[i] = tape.adjoint(x[i]);
    }
    template <class K>
    double gradient(const K& kernel, const std::vector<double>& xd, std::vector<double>& g) {
        record(kernel, xd);
        seed();
        tape.sweep();
        read(g);
        return y.value();
    }
};

// Relative difference of g from the hand-written adjoint `hand`; reports a failure.
template <class K>
double check(const K&, const std::vector<double>& g, const std::vector<double>& hand, const char* what) {
    const double d = bench::relative_difference(g, hand);
    if (!(d <= tolerance)) {
        std::fprintf(stderr, "GRADIENT CHECK FAILED: %s %s: relative difference %.2e from the hand-written adjoint\n",
                     K::name, what, d);
        failed = true;
    }
    return d;
}
template <class K>
double check(const K& kernel, const std::vector<double>& g, const char* what) {
    std::vector<double> hand;
    kernel.adjoint(kernel.inputs(), hand);
    return check(kernel, g, hand, what);
}

// The long heat run's width (docs/performance.md: 100 000 cells x 1 000
// steps) with 20 of its steps: every step repeats the same accesses, so its
// on-chip needs and its counts per statement are the long run's (but for
// the first and last step), at a fiftieth of the model's time (the long
// run would take it about 6 minutes per gradient).
bench::heat heat_100k() {
    bench::heat k;
    k.cells = 100000;
    k.steps = 20;
    return k;
}
// The long heat run itself (100 M statements; about 13 minutes and 9.5 GB
// per gradient with the model attached).
bench::heat heat_long() {
    bench::heat k;
    k.cells = 100000;
    k.steps = 1000;
    return k;
}

// Calls f(kernel) for the kernel called `name`; false when there is none.
template <class F>
bool with_kernel(const std::string& name, F&& f) {
    if (name == bench::heat::name) return f(bench::heat{}), true;
    if (name == bench::gmm::name) return f(bench::gmm{}), true;
    if (name == bench::lstm::name) return f(bench::lstm{}), true;
    if (name == bench::mlp::name) return f(bench::mlp{}), true;
    if (name == bench::nbody::name) return f(bench::nbody{}), true;
    if (name == bench::black_scholes::name) return f(bench::black_scholes{}), true;
    if (name == bench::determinant::name) return f(bench::determinant{}), true;
    if (name == bench::least_squares::name) return f(bench::least_squares{}), true;
    if (name == bench::ode::name) return f(bench::ode{}), true;
    if (name == bench::bundle_adjustment::name) return f(bench::bundle_adjustment{}), true;
    if (name == "heat_100k") return f(heat_100k()), true;
    if (name == "heat_long") return f(heat_long()), true;
    return false;
}
// quick_start (3 statements) says nothing about memory; mlp_eigen tapes its
// products as external entries, whose work the model does not see.
const char* const model_kernels =
    "heat,gmm,lstm,mlp,nbody,black_scholes,determinant,least_squares,ode,bundle_adjustment";

// Says that `name` is not a kernel of with_kernel(); the exit status.
int unknown_kernel(const std::string& name) {
    std::fprintf(stderr, "unknown kernel %s (known: %s, heat_100k, heat_long)\n", name.c_str(), model_kernels);
    return 2;
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

// ---- the model on the kernels ----------------------------------------------

struct model_run {
    std::string kernel, mode;
    tapeflow::hardware_config hw;
    std::size_t tile_bytes = 0, scratchpad_bytes = 0;
    double scratchpad_pj_per_byte = 0;  // what the model charged
    tapeflow::tape_statistics stats;
    tapeflow::layout_summary flow, conv;
    std::uint64_t sweep_dram_read = 0, sweep_dram_written = 0;  // tapeflow layout, during the sweep
    std::uint64_t layers = 0;
    double model_seconds = 0;  // the gradient with the model attached
    double plain_seconds = 0;  // the same gradient without it
    double error = 0;          // against the hand-written adjoint
};

template <class K>
model_run run_model(const K& kernel, const std::string& mode, std::size_t sram) {
    model_run r;
    r.kernel = K::name;
    r.mode = mode;
    r.hw.sram_bytes = sram;
    // energies per byte from the sizes (hw/hardware_config.hpp): the SRAM's
    // and the scratchpad's each its own
    tapeflow::tape_options options;
    if (mode == "scratchpad") {
        options.scratchpad = true;
        options.tile_bytes = std::max(tapeflow::min_tile_bytes, sram / 8);
    }
    const std::vector<double> x = kernel.inputs();
    std::vector<double> g;
    {  // the gradient without the model: what the model costs on top
        gradient_job plain(options);
        plain.gradient(kernel, x, g);
        const double t0 = now_seconds();
        plain.gradient(kernel, x, g);
        r.plain_seconds = now_seconds() - t0;
    }
    auto model = std::make_shared<tapeflow::hardware_model>(r.hw);
    options.observer = model;
    gradient_job job(options);
    const double t0 = now_seconds();
    job.gradient(kernel, x, g);
    r.model_seconds = now_seconds() - t0;
    r.error = check(kernel, g, mode.c_str());
    r.stats = job.tape.statistics();
    r.tile_bytes = r.stats.tile_bytes;  // what the tape chose when options.tile_bytes is 0
    r.flow = model->tapeflow();
    r.conv = model->conventional();
    r.scratchpad_bytes = options.scratchpad ? 2 * r.tile_bytes : 0;
    r.scratchpad_pj_per_byte = model->structures()[0].pj_per_byte;
    // DRAM reads of the sweep: the layers' (tile staging, tape lines, adjoint
    // line fills); its DRAM writes: the adjoint write-backs, which the model
    // counts in the totals when the sweep ends
    for (const tapeflow::layer_traffic& l : model->layers())
        r.sweep_dram_read += l.tapeflow.read[std::size_t(tapeflow::memory_level::dram)];
    r.sweep_dram_written = r.flow.write_backs * r.hw.line_bytes;
    r.layers = model->layers().size();
    return r;
}

std::uint64_t dram(const tapeflow::layout_summary& s) { return s.total.bytes(tapeflow::memory_level::dram); }
std::uint64_t sram_bytes(const tapeflow::layout_summary& s) { return s.total.bytes(tapeflow::memory_level::sram); }

bool same(const tapeflow::layout_summary& a, const tapeflow::layout_summary& b) {
    return a.total.read == b.total.read && a.total.written == b.total.written && a.total.records == b.total.records &&
           a.sram_needed_bytes == b.sram_needed_bytes && a.peak_on_chip_bytes == b.peak_on_chip_bytes &&
           a.adjoint_misses == b.adjoint_misses;
}

std::string human(double bytes) {
    const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        ++u;
    }
    char s[32];
    std::snprintf(s, sizeof s, u == 0 ? "%.0f %s" : "%.4g %s", bytes, unit[u]);
    return s;
}

void print_row(const char* what, const tapeflow::layout_summary& s) {
    std::printf("  %-26s %11s %13s %11s %11s %12.4g %9llu %9llu %9llu\n", what,
                human(double(s.sram_needed_bytes)).c_str(), human(double(s.peak_on_chip_bytes)).c_str(),
                human(double(dram(s))).c_str(), human(double(sram_bytes(s))).c_str(), s.energy_pj * 1e-6,
                (unsigned long long)s.adjoint_accesses, (unsigned long long)s.adjoint_misses,
                (unsigned long long)s.write_backs);
}

void print_ratio(const char* what, double a, double b, double c) {
    std::printf("  %-26s %10.2fx %13s %10.2fx %11s %11.2fx\n", what, a, "", b, "", c);
}

void print_kernel(const model_run& pad, const model_run& direct) {
    std::printf("\n%s, SRAM %s (%.3g pJ/B), DRAM %.0f pJ/B: %llu statements, %s of tape, %zu adjoints; "
                "gradient %.3f s with the model, %.3f s without\n",
                pad.kernel.c_str(), human(double(pad.hw.sram_bytes)).c_str(), pad.hw.sram_energy(),
                pad.hw.dram_pj_per_byte, (unsigned long long)pad.stats.statements,
                human(double(pad.stats.record_bytes)).c_str(), pad.stats.adjoint_bytes / sizeof(double),
                pad.model_seconds, pad.plain_seconds);
    std::printf("  %-26s %11s %13s %11s %11s %12s %9s %9s %9s\n", "layout", "SRAM needed", "peak on-chip", "DRAM",
                "SRAM", "energy uJ", "adj acc", "adj miss", "wrt back");
    char label[64];
    std::snprintf(label, sizeof label, "tapeflow (scratchpad %s)", human(double(pad.scratchpad_bytes)).c_str());
    print_row(label, pad.flow);
    print_row("tapeflow direct", direct.flow);
    print_row("conventional SoA", pad.conv);
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    print_ratio("conventional / scratchpad", ratio(double(pad.conv.sram_needed_bytes), double(pad.flow.sram_needed_bytes)),
                ratio(double(dram(pad.conv)), double(dram(pad.flow))), ratio(pad.conv.energy_pj, pad.flow.energy_pj));
    print_ratio("conventional / direct", ratio(double(pad.conv.sram_needed_bytes), double(direct.flow.sram_needed_bytes)),
                ratio(double(dram(pad.conv)), double(dram(direct.flow))), ratio(pad.conv.energy_pj, direct.flow.energy_pj));
    if (!same(pad.conv, direct.conv)) {
        std::fprintf(stderr, "MODEL CHECK FAILED: %s: the conventional account differs between the scratchpad and "
                             "the direct run (same records, same SRAM)\n", pad.kernel.c_str());
        failed = true;
    }
}

// ---- JSON ---------------------------------------------------------------------

void json_traffic(std::ostream& o, const tapeflow::traffic& t) {
    o << "{";
    for (std::size_t l = 0; l < tapeflow::memory_level_count; ++l) {
        const char* n = l == 0 ? "sram" : l == 1 ? "dram" : "file";
        o << (l ? ", " : "") << "\"" << n << "_read\": " << t.read[l] << ", \"" << n << "_written\": " << t.written[l];
    }
    o << ", \"records\": " << t.records << "}";
}

void json_summary(std::ostream& o, const tapeflow::layout_summary& s) {
    o << "{\"sram_needed_bytes\": " << s.sram_needed_bytes << ", \"peak_on_chip_bytes\": " << s.peak_on_chip_bytes
      << ", \"dram_bytes\": " << dram(s) << ", \"sram_bytes\": " << sram_bytes(s)
      << ", \"file_bytes\": " << s.total.bytes(tapeflow::memory_level::file) << ", \"energy_pj\": " << s.energy_pj
      << ", \"on_chip_energy_pj\": " << s.on_chip_energy_pj
      << ", \"tape_bytes_written\": " << s.tape_bytes_written << ", \"tape_bytes_swept\": " << s.tape_bytes_swept
      << ", \"adjoint_accesses\": " << s.adjoint_accesses << ", \"adjoint_misses\": " << s.adjoint_misses
      << ", \"write_backs\": " << s.write_backs
      << ", \"traffic\": ";
    json_traffic(o, s.total);
    o << "}";
}

void json_run(std::ostream& o, const model_run& r) {
    o.precision(17);
    o << "    {\"kernel\": \"" << r.kernel << "\", \"mode\": \"" << r.mode << "\", \"sram_bytes\": " << r.hw.sram_bytes
      << ", \"line_bytes\": " << r.hw.line_bytes << ", \"sram_pj_per_byte\": " << r.hw.sram_energy()
      << ", \"dram_pj_per_byte\": " << r.hw.dram_pj_per_byte << ", \"file_pj_per_byte\": " << r.hw.file_pj_per_byte
      << ", \"needed_hit_fraction\": " << r.hw.needed_hit_fraction << ", \"tile_bytes\": " << r.tile_bytes
      << ", \"scratchpad_bytes\": " << r.scratchpad_bytes << ", \"scratchpad_pj_per_byte\": "
      << r.scratchpad_pj_per_byte << ", \"statements\": " << r.stats.statements
      << ", \"arguments\": " << r.stats.arguments << ", \"record_bytes\": " << r.stats.record_bytes
      << ", \"adjoint_bytes\": " << r.stats.adjoint_bytes << ", \"tiles\": " << r.stats.tiles
      << ", \"layers\": " << r.layers << ", \"sweep_dram_read\": " << r.sweep_dram_read
      << ", \"sweep_dram_written\": " << r.sweep_dram_written << ", \"model_seconds\": " << r.model_seconds
      << ", \"plain_seconds\": " << r.plain_seconds << ", \"gradient_error\": " << r.error << ",\n     \"tapeflow\": ";
    json_summary(o, r.flow);
    o << ",\n     \"conventional\": ";
    json_summary(o, r.conv);
    o << "}";
}

int run_models(const std::vector<std::string>& kernels, const std::vector<std::size_t>& srams,
               const std::string& json) {
    if (!tapeflow::hardware_model_hook) {
        std::fprintf(stderr, "built with TAPEFLOW_HARDWARE_MODEL=0: no hook, nothing to model\n");
        return 2;
    }
    std::vector<model_run> runs;
    for (const std::string& name : kernels) {
        const bool known = with_kernel(name, [&](const auto& kernel) {
            for (std::size_t sram : srams) {
                model_run pad = run_model(kernel, "scratchpad", sram);
                model_run direct = run_model(kernel, "direct", sram);
                print_kernel(pad, direct);
                std::fflush(stdout);
                runs.push_back(pad);
                runs.push_back(direct);
            }
        });
        if (!known) return unknown_kernel(name);
    }
    if (!json.empty()) {
        std::ofstream o(json);
        o << "{\"runs\": [\n";
        for (std::size_t i = 0; i < runs.size(); ++i) {
            json_run(o, runs[i]);
            o << (i + 1 < runs.size() ? ",\n" : "\n");
        }
        o << "]}\n";
        if (!o) {
            std::fprintf(stderr, "cannot write %s\n", json.c_str());
            return 2;
        }
    }
    return failed ? 1 : 0;
}

// ---- the three layouts side by side, each on the machine it needs ------------

// One gradient with a model of `config` attached; the tape records through
// a scratchpad of two `tile` tiles, or (tile 0) is a default direct tape,
// for the baselines, whose counts do not depend on the tape's mode. Checks
// the gradient.
template <class K>
std::shared_ptr<tapeflow::hardware_model> modelled(const K& kernel, const tapeflow::hardware_config& config,
                                                   std::size_t tile) {
    tapeflow::tape_options options;
    options.scratchpad = tile > 0;
    options.tile_bytes = tile;
    auto model = std::make_shared<tapeflow::hardware_model>(config);
    options.observer = model;
    const std::vector<double> x = kernel.inputs();
    std::vector<double> g;
    gradient_job job(options);
    job.gradient(kernel, x, g);
    check(kernel, g, "side by side");
    return model;
}

// The accelerator whose SRAM is `bytes` (at least a line), charged at that
// size's energy per byte.
tapeflow::hardware_config machine_of(std::size_t bytes) {
    return tapeflow::hardware_config::accelerator(std::max<std::size_t>(bytes, 64));
}

void json_layout(std::ostream& o, const char* name, const tapeflow::layout_summary& s, std::size_t sram) {
    o << "\"" << name << "\": {\"sram_bytes\": " << sram << ", \"sram_needed_bytes\": " << s.sram_needed_bytes
      << ", \"on_chip_energy_pj\": " << s.on_chip_energy_pj << ", \"energy_pj\": " << s.energy_pj
      << ", \"dram_bytes\": " << dram(s) << ", \"on_chip_bytes\": " << sram_bytes(s)
      << ", \"adjoint_misses\": " << s.adjoint_misses << "}";
}

// For each kernel: a probe gradient (1 MiB SRAM, 4 KiB tiles) gives what
// each layout needs on chip for 99% adjoint hits (the tapeflow layout: its
// adjoint cache, beside the scratchpad). The baselines then run on an
// accelerator whose SRAM is what they need, the tapeflow layout once per
// scratchpad size on an accelerator with the scratchpad and an adjoint
// SRAM of what it needs, each structure at its own size's energy.
int run_sides(const std::vector<std::string>& kernels, const std::vector<std::size_t>& scratchpads,
              const std::string& json) {
    if (!tapeflow::hardware_model_hook) {
        std::fprintf(stderr, "built with TAPEFLOW_HARDWARE_MODEL=0: no hook, nothing to model\n");
        return 2;
    }
    std::ostringstream o;
    o.precision(17);
    o << "{\"kernels\": [\n";
    bool first = true;
    for (const std::string& name : kernels) {
        const bool known = with_kernel(name, [&](const auto& kernel) {
            const double t0 = now_seconds();
            constexpr std::size_t probe_tile = 4096;
            auto probe = modelled(kernel, tapeflow::hardware_config{}, probe_tile);
            const std::uint64_t adjoints = probe->tapeflow().sram_needed_bytes - 2 * probe_tile;
            const std::uint64_t conv_need = probe->conventional().sram_needed_bytes;
            const std::uint64_t var_need = probe->per_variable().sram_needed_bytes;
            const tapeflow::hardware_config conv_machine = machine_of(conv_need), var_machine = machine_of(var_need);
            const tapeflow::layout_summary conv = modelled(kernel, conv_machine, 0)->conventional();
            const tapeflow::layout_summary var = modelled(kernel, var_machine, 0)->per_variable();
            std::printf("\n%s: on chip for 99%% adjoint hits: tapeflow %s of adjoints + the scratchpad, "
                        "conventional %s, per variable %s\n", name.c_str(), human(double(adjoints)).c_str(),
                        human(double(conv_need)).c_str(), human(double(var_need)).c_str());
            std::printf("  %-12s %12s %14s %12s %14s %14s\n", "scratchpad", "on chip", "on-chip uJ", "DRAM",
                        "conv/tapeflow", "p.var/tapeflow");
            if (!first) o << ",\n";
            first = false;
            o << "  {\"kernel\": \"" << name << "\", \"statements\": " << probe->tapeflow().total.records
              << ", \"adjoint_needed_bytes\": " << adjoints << ",\n   ";
            json_layout(o, "conventional", conv, conv_machine.sram_bytes);
            o << ",\n   ";
            json_layout(o, "per_variable", var, var_machine.sram_bytes);
            o << ",\n   \"tapeflow\": [";
            for (std::size_t i = 0; i < scratchpads.size(); ++i) {
                const std::size_t pad = scratchpads[i], tile = pad / 2;
                // the scratchpad takes its room from the SRAM: the adjoints get what they need
                tapeflow::hardware_config machine = machine_of(adjoints + pad);
                machine.sram_pj_per_byte = tapeflow::sram_pj_per_byte_of(std::max<std::uint64_t>(adjoints, 64));
                const tapeflow::layout_summary flow = modelled(kernel, machine, tile)->tapeflow();
                std::printf("  %-12s %12s %14.4g %12s %13.2fx %13.2fx\n", human(double(pad)).c_str(),
                            human(double(flow.sram_needed_bytes)).c_str(), flow.on_chip_energy_pj * 1e-6,
                            human(double(dram(flow))).c_str(), conv.on_chip_energy_pj / flow.on_chip_energy_pj,
                            var.on_chip_energy_pj / flow.on_chip_energy_pj);
                o << (i ? ",\n     {" : "\n     {") << "\"scratchpad_bytes\": " << pad << ", \"tile_bytes\": " << tile
                  << ", ";
                json_layout(o, "layout", flow, machine.sram_bytes);
                o << "}";
            }
            o << "],\n   \"seconds\": " << now_seconds() - t0 << "}";
            std::fflush(stdout);
        });
        if (!known) return unknown_kernel(name);
    }
    o << "\n]}\n";
    if (!json.empty()) {
        std::ofstream file(json);
        file << o.str();
        if (!file) {
            std::fprintf(stderr, "cannot write %s\n", json.c_str());
            return 2;
        }
    }
    return failed ? 1 : 0;
}

// ---- under valgrind -----------------------------------------------------------

struct measure_settings {
    std::string kernel, mode = "direct", what = "sweep";
    std::size_t tile_bytes = tapeflow::default_tile_bytes;
    int gradients = 1;
    bool sweep = true, callgrind = false;
};

int measure(const measure_settings& m) {
    tapeflow::tape_options options;
    options.scratchpad = m.mode == "scratchpad";
    options.tile_bytes = m.tile_bytes;
    const bool known = with_kernel(m.kernel, [&](const auto& kernel) {
        const std::vector<double> x = kernel.inputs();
        std::vector<double> g, hand;
        kernel.adjoint(x, hand);  // first, and with or without --no-sweep
        gradient_job job(options);
        if (m.what == "gradient") {
            job.gradient(kernel, x, g);  // warm-up: the tape's memory is there
            if (m.callgrind) CALLGRIND_START_INSTRUMENTATION;
            for (int i = 0; i < m.gradients; ++i) job.gradient(kernel, x, g);
            if (m.callgrind) CALLGRIND_STOP_INSTRUMENTATION;
        } else {
            job.record(kernel, x);
            job.seed();
            if (m.callgrind) CALLGRIND_START_INSTRUMENTATION;
            if (m.sweep) job.tape.sweep();
            if (m.callgrind) CALLGRIND_STOP_INSTRUMENTATION;
            job.read(g);
        }
        const tapeflow::tape_statistics s = job.tape.statistics();
        std::printf("%s %s: %llu statements, %llu record bytes, %zu tiles of %zu bytes\n", m.kernel.c_str(),
                    m.mode.c_str(), (unsigned long long)s.statements, (unsigned long long)s.record_bytes, s.tiles,
                    s.tile_bytes);
        // the same reads with or without the sweep (a cachegrind run minus a --no-sweep run is the sweep)
        const double d = bench::relative_difference(g, hand);
        if (m.sweep && !(d <= tolerance)) check(kernel, g, hand, m.mode.c_str());
    });
    if (!known) {
        std::fprintf(stderr, "unknown kernel %s\n", m.kernel.c_str());
        return 2;
    }
    return failed ? 1 : 0;
}

// ---- the overhead of the hook (Google Benchmark) ------------------------------

template <class K>
void overhead(benchmark::State& state, K kernel, bool scratchpad) {
    tapeflow::tape_options options;  // no observer
    options.scratchpad = scratchpad;
    gradient_job job(options);
    const std::vector<double> x = kernel.inputs();
    std::vector<double> g;
    job.gradient(kernel, x, g);  // warm-up: the tape's memory grows
    if (check(kernel, g, scratchpad ? "scratchpad" : "direct") > tolerance) {
        state.SkipWithError("gradient differs from the hand-written adjoint");
        return;
    }
    for (auto _ : state) benchmark::DoNotOptimize(job.gradient(kernel, x, g));
    state.counters["statements"] = double(job.tape.statistics().statements);
    state.counters["hook"] = tapeflow::hardware_model_hook ? 1 : 0;
}

void register_overhead() {
    benchmark::RegisterBenchmark("overhead/heat/direct", [](benchmark::State& s) { overhead(s, bench::heat{}, false); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("overhead/heat/scratchpad",
                                 [](benchmark::State& s) { overhead(s, bench::heat{}, true); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("overhead/mlp/direct", [](benchmark::State& s) { overhead(s, bench::mlp{}, false); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("overhead/mlp/scratchpad",
                                 [](benchmark::State& s) { overhead(s, bench::mlp{}, true); })
        ->Unit(benchmark::kMillisecond);
}

bool take_flag(const char* arg, const char* name, std::string& value) {
    const std::size_t n = std::strlen(name);
    if (std::strncmp(arg, name, n) != 0) return false;
    if (arg[n] == '=') {
        value = arg + n + 1;
        return true;
    }
    if (arg[n] == '\0') {
        value.clear();
        return true;
    }
    return false;
}

}  // namespace
}  // namespace hwbench

int main(int argc, char** argv) {
    using namespace hwbench;
    std::vector<char*> args;
    bool model = false, sides = false, print_build = false;
    std::string kernels = model_kernels, srams = "1048576,32768", json;
    std::string scratchpads = "4096,8192,16384,32768,65536,131072,262144";
    measure_settings m;
    for (int i = 0; i < argc; ++i) {
        std::string v;
        if (take_flag(argv[i], "--model", v))
            model = true;
        else if (take_flag(argv[i], "--sides", v))
            sides = true;
        else if (take_flag(argv[i], "--scratchpads", v))
            scratchpads = v;
        else if (take_flag(argv[i], "--kernels", v))
            kernels = v;
        else if (take_flag(argv[i], "--sram", v))
            srams = v;
        else if (take_flag(argv[i], "--json", v))
            json = v;
        else if (take_flag(argv[i], "--measure", v))
            m.kernel = v;
        else if (take_flag(argv[i], "--mode", v))
            m.mode = v;
        else if (take_flag(argv[i], "--what", v))
            m.what = v;
        else if (take_flag(argv[i], "--tile-bytes", v))
            m.tile_bytes = std::stoul(v);
        else if (take_flag(argv[i], "--gradients", v))
            m.gradients = std::stoi(v);
        else if (take_flag(argv[i], "--no-sweep", v))
            m.sweep = false;
        else if (take_flag(argv[i], "--callgrind", v))
            m.callgrind = true;
        else if (take_flag(argv[i], "--print-build", v))
            print_build = true;
        else
            args.push_back(argv[i]);
    }
    if (print_build) {
        std::printf("hook=%d callgrind=%d\n", int(tapeflow::hardware_model_hook), TAPEFLOW_HW_CALLGRIND);
        return 0;
    }
    if (m.callgrind && !TAPEFLOW_HW_CALLGRIND) {
        std::fprintf(stderr, "--callgrind: valgrind/callgrind.h was not found at build time\n");
        return 2;
    }
    if (!m.kernel.empty()) {
        if ((m.mode != "direct" && m.mode != "scratchpad") || (m.what != "sweep" && m.what != "gradient")) {
            std::fprintf(stderr, "--mode is direct or scratchpad, --what sweep or gradient\n");
            return 2;
        }
        return measure(m);
    }
    if (sides) {
        std::vector<std::size_t> sizes;
        for (const std::string& s : split(scratchpads)) sizes.push_back(std::stoul(s));
        return run_sides(split(kernels), sizes, json);
    }
    if (model) {
        std::vector<std::size_t> sizes;
        for (const std::string& s : split(srams)) sizes.push_back(std::stoul(s));
        return run_models(split(kernels), sizes, json);
    }
    int n = int(args.size());
    benchmark::Initialize(&n, args.data());
    register_overhead();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (failed) {
        std::fprintf(stderr, "a gradient check FAILED (see above)\n");
        return 1;
    }
    return 0;
}
