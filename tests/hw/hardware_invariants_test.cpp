// tapeflow::hardware_model (hw/hardware_model.hpp): invariants on random
// programs (tests/random: program.hpp, interpreter.hpp), recorded with
// tapeflow::Real and swept twice (same seed) under several tape
// configurations; after sweep n (1, 2):
//
//   tape bytes written == record_bytes, tape bytes swept == n x record_bytes
//     (tape.statistics(); the second sweep writes nothing)
//   energy == sum over levels of bytes x pJ per byte (a non-default config)
//   sum over regions of their traffic + recording + tile moves + write-backs
//     == totals (both layouts; the conventional layout has no recording or
//     moves term); write-backs <= misses
//   each region's records == n x its own statements (its extent's minus its
//     children's, from tape.regions()), its conventional DRAM bytes == 8 x
//     its own statements + 12 x its own pairs
//   sum over layers == the sweep part of the totals (totals - recording -
//     tile moves outside the sweeps - write-backs); one layer per tile per sweep
//   conventional tape bytes == 8 x statements + 12 x pairs (statistics():
//     statements count external entries, arguments their 0 pairs; long
//     records have 12 x k pair bytes like the others)
//   adjoint accesses == n x (statements + pairs) (lhs + each pair)
//   bytes moved out of the scratchpad == bytes recorded into it
//   file bytes == the spill file's bytes without the per-tile checksums
//   the gradient with the model attached == the gradient without, bit for
//     bit, and the second sweep's == the first's
//
// Every third program ends in a statement of 31 or 40 operands (a long
// record, 8-byte header), which the generator does not produce.
//
// Environment: TAPEFLOW_HW_PROGRAMS=n (default 300, 100 under a sanitizer),
// TAPEFLOW_HW_SEED=s.
#include <catch2/catch.hpp>
#include <tapeflow/hw/hardware_model.hpp>
#include <tapeflow/stream/spill_file.hpp>
#include <tapeflow/tapeflow.hpp>

#include "hw/event_tally.hpp"
#include "random/interpreter.hpp"
#include "random/program.hpp"
#include "stream/stream_support.hpp"
#include "support/sanitized.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using tapeflow::hardware_config;
using tapeflow::hardware_model;
using tapeflow::memory_level;
using tapeflow::Real;
using tapeflow::traffic;
using tapeflow_test::difference;
using tapeflow_test::event_tally;
using tapeflow_test::rd;
using tapeflow_test::same_traffic;
using tapeflow_test::wr;

constexpr memory_level sram = memory_level::sram, dram = memory_level::dram, file = memory_level::file;

std::string show(const traffic& t) {
    std::ostringstream s;
    s << "read S/D/F " << t.read[0] << "/" << t.read[1] << "/" << t.read[2] << ", written S/D/F " << t.written[0]
      << "/" << t.written[1] << "/" << t.written[2] << ", records " << t.records;
    return s.str();
}

struct configuration {
    const char* name;
    std::size_t tile_bytes;
    bool scratchpad;
    std::size_t budget;
};

constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();
const configuration configurations[] = {
    {"direct, default tiles", tapeflow::default_tile_bytes, false, unlimited},
    {"direct, 1024-byte tiles", 1024, false, unlimited},
    {"scratchpad, 1024-byte tiles", 1024, true, unlimited},
    {"scratchpad, 1024-byte tiles, 4 KiB budget (spills)", 1024, true, 4096},
    {"1024-byte tiles, 4 KiB budget without the scratchpad copy (spills)", 1024, false, 4096},
};

/// A small SRAM (the scratchpad of 1024-byte tiles leaves 64 lines for the
/// adjoints) so that capacity misses and write-backs happen, and energies
/// other than the defaults.
hardware_config small_config() {
    hardware_config c;
    c.sram_bytes = 2048 + 64 * 64;
    c.sram_pj_per_byte = 1.25;
    c.scratchpad_pj_per_byte = 0.75;
    c.dram_pj_per_byte = 160;
    c.file_pj_per_byte = 3000;
    return c;
}

/// Whether a configuration's tape records into the scratchpad.
bool streaming_of(const configuration& c) { return c.scratchpad || c.budget != unlimited; }

/// The sum of c[0] .. c[N-1] as ONE statement: a long record (N >= 16).
template <std::size_t... I>
Real sum_of(const std::vector<Real>& c, std::index_sequence<I...>) {
    return (c[I] + ...);
}

/// y + the sum of N distinct multiples of y: N records of k = 1, then one
/// of k = N (the random programs have no statement of 31 or more operands).
template <std::size_t N>
Real long_tail(const Real& y) {
    std::vector<Real> c;
    c.reserve(N);
    for (std::size_t i = 0; i < N; ++i) c.push_back(y * (1.0 + 0.01 * double(i)));
    return sum_of(c, std::make_index_sequence<N>{});
}

/// What a run gives after each of its two sweeps.
struct sweep_result {
    std::vector<double> gradient;
    tapeflow::tape_statistics statistics;  ///< after the sweep
};
struct run_result {
    sweep_result sweeps[2];
    std::vector<tapeflow::region_info> regions;  ///< the recording's regions
};

/// Records program p on a fresh tape with options o (with a long record
/// appended when `tail` is 31 or 40) and sweeps it twice with the same seed;
/// after(s, result) is called after sweep s (0, 1).
template <class After>
run_result run(const tapeflow_random::program& p, const std::vector<double>& xv, const tapeflow::tape_options& o,
               int tail, After&& after) {
    tapeflow::tape t(o);
    t.start_recording();
    std::vector<Real> x(xv.begin(), xv.end());
    for (Real& xi : x) t.register_input(xi);
    tapeflow_random::interpreter<Real> interpreter(p);
    Real y = std::move(interpreter.run(x)[0]);
    if (tail == 31) y = long_tail<31>(y);
    if (tail == 40) y = long_tail<40>(y);
    t.register_output(y);
    t.stop_recording();
    run_result r;
    r.regions.assign(t.regions().begin(), t.regions().end());
    for (int s = 0; s < 2; ++s) {
        t.clear_adjoints();
        t.set_adjoint(y, 1.0);
        t.sweep();
        for (const Real& xi : x) r.sweeps[s].gradient.push_back(t.adjoint(xi));
        r.sweeps[s].statistics = t.statistics();
        after(s, r);
    }
    return r;
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

std::uint64_t environment(const char* name, std::uint64_t fallback) {
    const char* s = std::getenv(name);
    return s && *s ? std::strtoull(s, nullptr, 0) : fallback;
}

struct coverage {
    std::uint64_t programs = 0, runs = 0, statements = 0, externals = 0, long_records = 0, regions = 0,
                  spilled = 0, write_backs = 0, layers = 0;
};

}  // namespace

TEST_CASE("hardware model invariants on random programs", "[hw][random]") {
    const std::uint64_t programs = environment("TAPEFLOW_HW_PROGRAMS", tapeflow_test::sanitized ? 100 : 300);
    const std::uint64_t seed = environment("TAPEFLOW_HW_SEED", 20240705);
    const auto start = std::chrono::steady_clock::now();
    tapeflow_test::temp_directory dir;
    const hardware_config config = small_config();
    coverage seen;
    std::uint64_t failures = 0;

    for (std::uint64_t i = 0; i < programs; ++i) {
        const std::uint64_t program_seed = seed + i;
        const tapeflow_random::program p = tapeflow_random::generator(program_seed).make();
        std::mt19937_64 rng(program_seed ^ 0x9e3779b97f4a7c15ull);
        std::vector<double> x;
        for (int k = 0; k < p.inputs; ++k) x.push_back(-2 + 4 * double(rng() >> 11) * 0x1.0p-53);
        ++seen.programs;

        for (const configuration& c : configurations) {
            INFO("program seed " << program_seed << " (TAPEFLOW_HW_SEED=" << program_seed
                                 << " TAPEFLOW_HW_PROGRAMS=1), configuration: " << c.name);
            tapeflow::tape_options plain;
            plain.tile_bytes = c.tile_bytes;
            plain.scratchpad = c.scratchpad;
            plain.memory_budget_bytes = c.budget;
            plain.spill_directory = dir.path();
            auto model = std::make_shared<hardware_model>(config);
            auto tally = std::make_shared<event_tally>(model);
            tapeflow::tape_options observed = plain;
            observed.observer = tally;

            // every third program ends in a long record (k = 31 or 40)
            const int tail = i % 3 == 0 ? (i % 2 == 0 ? 31 : 40) : 0;
            const run_result without = run(p, x, plain, tail, [](int, const run_result&) {});
            bool ok = true;
            auto check = [&](bool condition, const std::string& what) {
                if (condition) return;
                ok = false;
                if (failures < 20) {
                    UNSCOPED_INFO("seed " << program_seed << ", " << c.name << ": " << what);
                    CHECK(condition);
                }
            };
            const auto after = [&](int s, const run_result& r) {
                const std::uint64_t n = std::uint64_t(s) + 1;  // sweeps so far
                const std::string sweep = " (after sweep " + std::to_string(n) + ")";
                const tapeflow::tape_statistics& st = r.sweeps[s].statistics;
                const tapeflow::layout_summary f = model->tapeflow();
                const tapeflow::layout_summary v = model->conventional();
                const tapeflow::layout_summary pv = model->per_variable();

                // the model changes nothing; the tape is reusable
                check(bitwise_equal(r.sweeps[s].gradient, without.sweeps[s].gradient),
                      "gradient with the model != gradient without, bit for bit" + sweep);
                check(bitwise_equal(r.sweeps[s].gradient, r.sweeps[0].gradient),
                      "second sweep's gradient != first's" + sweep);
                check(st.record_bytes == without.sweeps[s].statistics.record_bytes,
                      "record bytes differ with the model");

                // written once, swept n times
                check(f.tape_bytes_written == st.record_bytes, "tapeflow tape_bytes_written != record_bytes" + sweep);
                check(f.tape_bytes_swept == n * st.record_bytes, "tapeflow tape_bytes_swept != n x record_bytes" + sweep);
                check(f.total.records == n * st.statements, "records swept != n x statements" + sweep);
                const std::uint64_t conventional_bytes = 8 * st.statements + 12 * st.arguments;
                check(v.tape_bytes_written == conventional_bytes,
                      "conventional written != 8 statements + 12 pairs" + sweep);
                check(v.tape_bytes_swept == n * conventional_bytes,
                      "conventional swept != n x (8 statements + 12 pairs)" + sweep);
                check(f.adjoint_accesses == n * (st.statements + st.arguments),
                      "tapeflow adjoint accesses != n x (statements + pairs)" + sweep);
                check(v.adjoint_accesses == n * (st.statements + st.arguments),
                      "conventional adjoint accesses != n x (statements + pairs)" + sweep);
                // per variable: 8 bytes of values per pair, no header, no identifier
                check(pv.tape_bytes_written == 8 * st.arguments, "per-variable written != 8 pairs" + sweep);
                check(pv.tape_bytes_swept == n * 8 * st.arguments, "per-variable swept != n x 8 pairs" + sweep);
                check(pv.adjoint_accesses == v.adjoint_accesses, "per-variable adjoint accesses != conventional's" + sweep);
                check(pv.total.records == n * st.statements, "per-variable records swept != n x statements" + sweep);

                // the on-chip structures add up to the SRAM level: the totals,
                // every region and every layer (on_chip[0] the scratchpad,
                // [1] the SRAM; no scratchpad bytes without a scratchpad)
                const auto adds_up = [&](const traffic& t) {
                    std::uint64_t sum = 0;
                    for (std::uint64_t b : t.on_chip) sum += b;
                    return sum == t.bytes(sram) && (streaming_of(c) || t.on_chip[0] == 0);
                };
                check(adds_up(f.total) && adds_up(v.total) && adds_up(pv.total) && v.total.on_chip[0] == 0 &&
                          pv.total.on_chip[0] == 0,
                      "on-chip structures do not add up to the SRAM bytes (totals)" + sweep);
                for (const auto& region : model->regions())
                    check(adds_up(region.tapeflow) && adds_up(region.conventional) && adds_up(region.per_variable),
                          "on-chip structures do not add up to the SRAM bytes (region " + region.label + ")" + sweep);
                for (const auto& l : model->layers())
                    check(adds_up(l.tapeflow), "on-chip structures do not add up to the SRAM bytes (a layer)" + sweep);
                std::uint64_t summarized = 0;
                for (const auto& one : f.structures) summarized += one.bytes;
                check(summarized == f.total.bytes(sram), "layout_summary::structures != SRAM bytes" + sweep);

                // energy: the scratchpad's bytes at its energy, the SRAM's at its own
                const auto energy = [&](const traffic& t) {
                    return double(t.on_chip[0]) * config.scratchpad_pj_per_byte +
                           double(t.on_chip[1]) * config.sram_pj_per_byte +
                           double(t.bytes(dram)) * config.dram_pj_per_byte +
                           double(t.bytes(file)) * config.file_pj_per_byte;
                };
                check(f.energy_pj == energy(f.total), "tapeflow energy != sum bytes x pJ" + sweep);
                check(v.energy_pj == energy(v.total), "conventional energy != sum bytes x pJ" + sweep);
                check(pv.energy_pj == energy(pv.total), "per-variable energy != sum bytes x pJ" + sweep);

                // regions + recording + tile moves + write-backs == totals (write-backs
                // of evicted adjoint lines are counted when a sweep ends, in no
                // region and no layer: a line's SRAM read + DRAM write each)
                const auto write_backs = [&](std::uint64_t lines) {
                    traffic w;
                    w.read[std::size_t(sram)] = lines * config.line_bytes;
                    w.on_chip[1] = lines * config.line_bytes;  // read from the SRAM
                    w.written[std::size_t(dram)] = lines * config.line_bytes;
                    return w;
                };
                check(f.write_backs <= f.adjoint_misses, "tapeflow write-backs > misses" + sweep);
                check(v.write_backs <= v.adjoint_misses, "conventional write-backs > misses" + sweep);
                check(pv.write_backs <= pv.adjoint_misses, "per-variable write-backs > misses" + sweep);
                traffic flow = tally->recorded_bytes, conv = write_backs(v.write_backs), var = write_backs(pv.write_backs);
                flow += tally->moves_outside;
                flow += tally->moves_in_sweeps;
                flow += write_backs(f.write_backs);
                for (const auto& region : model->regions()) {
                    flow += region.tapeflow;
                    conv += region.conventional;
                    var += region.per_variable;
                }
                check(same_traffic(flow, f.total), "regions + recording + moves + write-backs (" + show(flow) +
                                                       ") != tapeflow totals (" + show(f.total) + ")" + sweep);
                check(same_traffic(conv, v.total), "regions + write-backs (" + show(conv) +
                                                       ") != conventional totals (" + show(v.total) + ")" + sweep);
                check(same_traffic(var, pv.total), "regions + write-backs (" + show(var) +
                                                       ") != per-variable totals (" + show(pv.total) + ")" + sweep);

                // each record toward its innermost region: a region's own
                // statements and pairs are its extent's minus its children's
                if (st.statements > 0) {  // (an empty tape is not swept: the model sees nothing)
                    const std::size_t m = r.regions.size();
                    check(model->regions().size() == m + 1, "regions() != 1 + the tape's regions");
                    std::vector<std::uint64_t> statements(m + 1, 0), pairs(m + 1, 0);
                    statements[0] = st.statements;
                    pairs[0] = st.arguments;
                    for (std::size_t k = 0; k < m; ++k) {
                        const tapeflow::region_info& ri = r.regions[k];
                        statements[k + 1] += ri.statements();
                        pairs[k + 1] += ri.arguments();
                        const std::size_t parent = ri.parent == tapeflow::region_info::no_parent ? 0 : ri.parent + 1;
                        statements[parent] -= ri.statements();
                        pairs[parent] -= ri.arguments();
                    }
                    for (std::size_t k = 0; k <= m && k < model->regions().size(); ++k) {
                        const auto& region = model->regions()[k];
                        if (region.tapeflow.records != n * statements[k] ||
                            wr(region.conventional, dram) != 8 * statements[k] + 12 * pairs[k] ||
                            wr(region.per_variable, dram) != 8 * pairs[k]) {
                            check(false, "region " + std::to_string(k) + ": " +
                                             std::to_string(region.tapeflow.records) + " records, " +
                                             std::to_string(wr(region.conventional, dram)) +
                                             " conventional bytes; its own statements: " +
                                             std::to_string(statements[k]) + ", pairs " + std::to_string(pairs[k]) +
                                             sweep);
                            break;
                        }
                    }
                }

                // layers == the sweep part of the totals; one per tile per sweep
                traffic layers;
                for (const auto& l : model->layers()) layers += l.tapeflow;
                traffic outside = tally->recorded_bytes;
                outside += tally->moves_outside;
                outside += write_backs(f.write_backs);
                check(same_traffic(layers, difference(f.total, outside)),
                      "sum of layers (" + show(layers) + ") != totals - recording - moves at close - write-backs" +
                          sweep);
                check(model->layers().size() == (st.statements == 0 ? 0 : n * st.tiles), "layers != tiles" + sweep);

                // the recording: where it went, and the moves out of the scratchpad
                const bool streaming = streaming_of(c);
                const memory_level level = streaming ? sram : dram;
                check(wr(tally->recorded_bytes, level) == st.record_bytes, "recorded() bytes != record_bytes" + sweep);
                if (streaming) {
                    check(rd(tally->moves_outside, sram) == st.record_bytes,
                          "bytes moved out of the scratchpad != bytes recorded into it" + sweep);
                    check(wr(tally->moves_outside, dram) + wr(tally->moves_outside, file) == st.record_bytes,
                          "bytes moved to memory and file != record bytes" + sweep);
                }
                if (c.scratchpad)  // every tile staged back for each sweep
                    check(wr(tally->moves_in_sweeps, sram) == n * st.record_bytes, "bytes staged != record bytes" + sweep);
                // file bytes: the spill file's, without its checksum per tile
                constexpr std::uint64_t checksum = tapeflow::spill_file::checksum_bytes;
                check(wr(f.total, file) == st.bytes_spilled - checksum * st.tiles_spilled,
                      "file bytes written != spilled bytes without checksums" + sweep);
                check(rd(f.total, file) == st.bytes_read_back - checksum * st.tiles_read_back,
                      "file bytes read != read-back bytes without checksums" + sweep);
            };
            const run_result with = run(p, x, observed, tail, after);
            const tapeflow::tape_statistics& st = with.sweeps[1].statistics;
            ++seen.runs;
            if (!ok) ++failures;
            seen.statements += st.statements;
            seen.externals += st.externals;
            seen.long_records += st.record_bytes != 4 * st.statements + 12 * st.arguments + 4 * st.externals;
            seen.regions += st.regions;
            seen.spilled += st.tiles_spilled;
            seen.layers += model->layers().size();
            seen.write_backs += model->tapeflow().write_backs > 0;
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("hardware_invariants_test: %llu programs x %zu configurations: %llu statements, %llu external "
                "entries, %llu runs with long records, %llu regions, %llu tiles spilled, %llu layers, %llu runs "
                "with write-backs; %llu failing runs; %.2f s\n",
                (unsigned long long)seen.programs, std::size(configurations), (unsigned long long)seen.statements,
                (unsigned long long)seen.externals, (unsigned long long)seen.long_records,
                (unsigned long long)seen.regions, (unsigned long long)seen.spilled, (unsigned long long)seen.layers,
                (unsigned long long)seen.write_backs, (unsigned long long)failures, seconds);
    CHECK(failures == 0);
    if (programs >= 100) {
        // the programs exercise what the invariants are about
        CHECK(seen.externals > 0);
        CHECK(seen.long_records > 0);
        CHECK(seen.regions > 0);
        CHECK(seen.spilled > 0);
        CHECK(seen.write_backs > 0);
        CHECK(seen.layers > 2 * seen.runs);  // several tiles per recording on average (2 sweeps)
    }
}
