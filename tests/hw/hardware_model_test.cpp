// tapeflow::hardware_model (hw/hardware_model.hpp) on small programs whose
// traffic can be counted by hand. Every expected value below is worked out
// from the rules in the header comment of hardware_model.hpp, with the
// arithmetic next to it:
//
//   record bytes (double)  size(k) = 12k + 4 (k >= 16: 12k + 8), external 8
//   conventional bytes     8 per statement + 12 per pair
//   adjoint access         8 B SRAM read + 8 B SRAM write (lhs, then each pair;
//                          an update record's lhs: the read only)
//   miss                   one line (64 B) DRAM read + SRAM write (fill)
//   re-miss of a line      + write-back: 64 B SRAM read + DRAM write
//   adjoint lines          identifier * 8 / 64: identifiers 0-7 share line 0
//   tape lines (no scratchpad) read through the cache: a miss per line;
//                          tiles are 64-byte aligned
//
// Identifiers on a fresh tape: inputs 1, 2, ...; each new variable takes the
// next (a variable that dies gives its identifier back, last in first out).
#include <catch2/catch.hpp>
#include <tapeflow/hw/hardware_model.hpp>
#include <tapeflow/stream/spill_file.hpp>
#include <tapeflow/tapeflow.hpp>

#include "hw/event_tally.hpp"
#include "stream/stream_support.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
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

/// Bytes expected at each level, read and written.
struct bytes {
    std::uint64_t sram_read = 0, sram_written = 0, dram_read = 0, dram_written = 0, file_read = 0,
                  file_written = 0;
};

void check_traffic(const traffic& t, const bytes& e, const std::string& what) {
    INFO(what);
    CHECK(rd(t, sram) == e.sram_read);
    CHECK(wr(t, sram) == e.sram_written);
    CHECK(rd(t, dram) == e.dram_read);
    CHECK(wr(t, dram) == e.dram_written);
    CHECK(rd(t, file) == e.file_read);
    CHECK(wr(t, file) == e.file_written);
}

tapeflow::tape_options options_with(std::shared_ptr<tapeflow::tape_observer> observer, std::size_t tile_bytes,
                                    bool scratchpad,
                                    std::size_t budget = std::numeric_limits<std::size_t>::max()) {
    tapeflow::tape_options o;
    o.tile_bytes = tile_bytes;
    o.scratchpad = scratchpad;
    o.memory_budget_bytes = budget;
    o.observer = std::move(observer);
    return o;
}

/// The chain: acc = x * y, then acc = acc * x, n records in all, each of
/// k = 2 (28 bytes); lhs is acc (identifier 3), the pairs (x: 1, y: 2, acc:
/// 3) are on adjoint line 0. 1024-byte tiles hold 36 of them (36 x 28 =
/// 1008; the 37th does not fit in the 16 bytes left). Registers x, y and
/// the result; `after(i)` is called after record i (1-based).
template <class F>
Real record_chain(tapeflow::tape& t, Real& x, Real& y, int n, F&& after) {
    t.start_recording();
    t.register_input(x);
    t.register_input(y);
    Real acc = x * y;
    after(1);
    for (int i = 2; i <= n; ++i) {
        acc = acc * x;
        after(i);
    }
    t.register_output(acc);
    t.stop_recording();
    return acc;
}
Real record_chain(tapeflow::tape& t, Real& x, Real& y, int n) {
    return record_chain(t, x, y, n, [](int) {});
}

void sweep_from(tapeflow::tape& t, const Real& out) {
    t.clear_adjoints();
    t.set_adjoint(out, 1.0);
    t.sweep();
}

/// (a)'s start: a direct-mode tape of the default configuration observed
/// by a hardware model, recording, with the inputs x1 = 0.5, x2 = 1.5,
/// x3 = -2.0 (identifiers 1, 2, 3).
struct three_inputs {
    std::shared_ptr<hardware_model> model = std::make_shared<hardware_model>();
    tapeflow::tape t{observed_by(model)};
    Real x1 = 0.5, x2 = 1.5, x3 = -2.0;

    three_inputs() {
        t.start_recording();
        t.register_input(x1);
        t.register_input(x2);
        t.register_input(x3);
    }
    static tapeflow::tape_options observed_by(std::shared_ptr<tapeflow::tape_observer> observer) {
        tapeflow::tape_options o;
        o.observer = std::move(observer);
        return o;
    }
};

}  // namespace

// ---- (a) direct mode ----------------------------------------------------------

TEST_CASE_METHOD(three_inputs, "(a) direct mode: three records of known k, default configuration") {
    Real a = x1 * x2;      // k = 2: 28 B at [0, 28)
    Real b = a + x3 * x1;  // k = 3: 40 B at [28, 68)
    Real c = sin(b);       // k = 1: 16 B at [68, 84)
    t.register_output(c);
    t.stop_recording();
    REQUIRE(x1.id() == 1);
    REQUIRE(x2.id() == 2);
    REQUIRE(x3.id() == 3);
    REQUIRE(a.id() == 4);
    REQUIRE(b.id() == 5);
    REQUIRE(c.id() == 6);
    REQUIRE(t.statistics().record_bytes == 84);  // 28 + 40 + 16
    t.set_adjoint(c, 1.0);
    t.sweep();

    const tapeflow::layout_summary f = model->tapeflow();
    CHECK(f.tape_bytes_written == 84);  // 28 + 40 + 16
    CHECK(f.tape_bytes_swept == 84);
    CHECK(f.total.records == 3);
    // adjoint accesses: c: lhs 6 + pair 5 = 2; b: lhs 5 + pairs 4, 3, 1 = 4;
    // a: lhs 4 + pairs 1, 2 = 3; in all 9, all on line 0: 1 cold miss
    CHECK(f.adjoint_accesses == 9);
    CHECK(f.adjoint_misses == 1);
    CHECK(f.write_backs == 0);  // line 0 is still cached at the end: not written back
    // tape lines (no scratchpad: through the cache): bytes 0-83 of a
    // 64-aligned tile are lines 0 and 1, each read once: 2 misses
    bytes e;
    e.dram_written = 84;             // recording straight into the tile in memory
    e.sram_read = 84 + 9 * 8;        // records from the cache + adjoint reads = 156
    e.sram_written = 9 * 8 + 64 + 2 * 64;  // adjoint writes + adjoint fill + 2 tape line fills = 264
    e.dram_read = 64 + 2 * 64;       // adjoint line + 2 tape lines = 192
    check_traffic(f.total, e, "tapeflow totals");

    // conventional: statements 3 x 8 + pairs (1 + 3 + 2) x 12 = 24 + 72 = 96
    const tapeflow::layout_summary c2 = model->conventional();
    CHECK(c2.tape_bytes_written == 96);
    CHECK(c2.tape_bytes_swept == 96);
    CHECK(c2.adjoint_accesses == 9);
    CHECK(c2.adjoint_misses == 1);
    // streams: headers 3 x 8 = 24 B, identifiers 6 x 4 = 24 B, partials
    // 6 x 8 = 48 B, each ending on a line boundary: one line each, 3 misses
    bytes ec;
    ec.dram_written = 96;
    ec.sram_read = 96 + 9 * 8;             // 168
    ec.sram_written = 9 * 8 + 64 + 3 * 64;  // 328
    ec.dram_read = 64 + 3 * 64;            // 256
    check_traffic(c2.total, ec, "conventional totals");

    // one layer: the open tile 0, read in place from memory; no staging, so
    // the layer is the whole sweep (the totals without the recording)
    REQUIRE(model->layers().size() == 1);
    CHECK(model->layers()[0].tile == 0);
    CHECK(model->layers()[0].sweep == 0);
    CHECK(model->layers()[0].level == dram);
    bytes el = e;
    el.dram_written = 0;
    check_traffic(model->layers()[0].tapeflow, el, "the layer");
    // no regions: everything is region 0
    REQUIRE(model->regions().size() == 1);
    CHECK(model->regions()[0].label == "(outside regions)");
    CHECK(same_traffic(model->regions()[0].tapeflow, model->layers()[0].tapeflow));

    // (h) on this pattern. Cache accesses in sweep order (T: tape line keys,
    // A: adjoint line 0; distance = distinct lines since the last access):
    //   c: T0 cold, A cold, A 0;  b: T0 1 (A), T1 cold, A 2 (T0 T1), A 0, A 0, A 0;
    //   a: T1 1 (A), A 1 (T1), A 0, A 0
    // adjoint re-references: distances 0 x 6, 1 x 1, 2 x 1 (8 in all); 99%
    // of 8 = 7.92 hit only in 4 lines (distance 2 < 4): 4 x 64 = 256 B
    CHECK(f.sram_needed_bytes == 256);
    CHECK(f.peak_on_chip_bytes == 3 * 64);  // T0, T1, A: 192
    // conventional: H, I, P (header, identifier, partial stream lines), A:
    //   c: H I P A cold, A 0;  b: H 3, I 3, P 3, A 3, A 0 x 3;  a: H I P 3, A 3, A 0 x 2
    // adjoint re-references: 0 x 6, 3 x 2: 4 lines (3 < 4) = 256 B
    CHECK(c2.sram_needed_bytes == 256);
    CHECK(c2.peak_on_chip_bytes == 4 * 64);  // H, I, P, A: 256
}

TEST_CASE_METHOD(three_inputs, "(a) an update record: its lhs adjoint is read, not written") {
    Real a = x1 * x2;  // an assignment, k = 2: 28 B at [0, 28)
    a += x3 * x1;      // an update of a, k = 2 (a's own pair not stored): 28 B at [28, 56)
    t.register_output(a);
    t.stop_recording();
    REQUIRE(a.id() == 4);
    REQUIRE(t.statistics().record_bytes == 56);
    t.set_adjoint(a, 1.0);
    t.sweep();

    const tapeflow::layout_summary f = model->tapeflow();
    // adjoint accesses: the update: lhs 4 (read only) + pairs 3, 1 = 3; the
    // assignment: lhs 4 + pairs 1, 2 = 3; in all 6, 5 of them written, all
    // on line 0: 1 cold miss. Tape bytes 0-55: line 0 of the tile, 1 miss.
    CHECK(f.adjoint_accesses == 6);
    CHECK(f.adjoint_misses == 1);
    bytes e;
    e.dram_written = 56;
    e.sram_read = 56 + 6 * 8;              // records + adjoint reads = 104
    e.sram_written = 5 * 8 + 64 + 64;      // adjoint writes + adjoint fill + tape line fill = 168
    e.dram_read = 64 + 64;                 // adjoint line + tape line = 128
    check_traffic(f.total, e, "tapeflow totals");
    // conventional, the same records: 2 x 8 + 4 x 12 = 64 B; streams of 16,
    // 16 and 32 B, a line each; the same adjoint accesses
    const tapeflow::layout_summary c = model->conventional();
    CHECK(c.tape_bytes_written == 64);
    CHECK(c.adjoint_accesses == 6);
    bytes ec;
    ec.dram_written = 64;
    ec.sram_read = 64 + 6 * 8;             // 112
    ec.sram_written = 5 * 8 + 64 + 3 * 64;  // 296
    ec.dram_read = 64 + 3 * 64;            // 256
    check_traffic(c.total, ec, "conventional totals");
}

// ---- (b) scratchpad mode --------------------------------------------------------

TEST_CASE("(b) scratchpad, 1024-byte tiles: recording, tile moves, staging, layers") {
    auto model = std::make_shared<hardware_model>();
    tapeflow::tape t(options_with(model, 1024, true));
    Real x = 1.001, y = 0.5;
    const Real out = record_chain(t, x, y, 100);
    // tiles: 36 + 36 + 28 records = 1008 + 1008 + 784 = 2800 = 100 x 28 bytes
    REQUIRE(t.statistics().record_bytes == 2800);
    sweep_from(t, out);

    const tapeflow::layout_summary f = model->tapeflow();
    CHECK(f.tape_bytes_written == 2800);
    CHECK(f.tape_bytes_swept == 2800);
    CHECK(f.total.records == 100);
    CHECK(f.adjoint_accesses == 300);  // 100 x (lhs + 2 pairs)
    CHECK(f.adjoint_misses == 1);      // identifiers 1-3: line 0, cold once
    bytes e;
    // recording 2800 into the scratchpad; closing tiles 0, 1 (at recording)
    // and 2 (sealed by the sweep) moves 2800 SRAM -> DRAM; the sweep stages
    // all three DRAM -> SRAM (2800) and reads the records there (2800);
    // adjoints 300 x 8 read + 300 x 8 written; one line fill
    e.sram_written = 2800 + 2800 + 2400 + 64;  // 8064
    e.sram_read = 2800 + 2800 + 2400;         // 8000
    e.dram_written = 2800;
    e.dram_read = 2800 + 64;  // 2864
    check_traffic(f.total, e, "tapeflow totals");

    // layers: tiles 2, 1, 0, staged into the scratchpad
    const auto& layers = model->layers();
    REQUIRE(layers.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(layers[i].tile == 2 - i);
        CHECK(layers[i].level == sram);
        CHECK(layers[i].sweep == 0);
    }
    CHECK(layers[0].tapeflow.records == 28);
    CHECK(layers[1].tapeflow.records == 36);
    CHECK(layers[2].tapeflow.records == 36);
    bytes l2;  // tile 2: staged 784, 28 records x 3 adjoint accesses = 84, the cold miss
    l2.dram_read = 784 + 64;
    l2.sram_written = 784 + 84 * 8 + 64;  // 1520
    l2.sram_read = 784 + 84 * 8;          // 1456
    check_traffic(layers[0].tapeflow, l2, "layer of tile 2");
    bytes l1;  // tiles 1 and 0: staged 1008, 36 x 3 = 108 adjoint accesses
    l1.dram_read = 1008;
    l1.sram_written = 1008 + 108 * 8;  // 1872
    l1.sram_read = 1008 + 108 * 8;     // 1872
    check_traffic(layers[1].tapeflow, l1, "layer of tile 1");
    check_traffic(layers[2].tapeflow, l1, "layer of tile 0");

    // what is not in a layer is the recording and the moves at close
    traffic swept;
    for (const auto& l : layers) swept += l.tapeflow;
    bytes rest;
    rest.sram_written = 2800;  // recording
    rest.sram_read = 2800;     // close: scratchpad ...
    rest.dram_written = 2800;  // ... -> memory
    check_traffic(difference(f.total, swept), rest, "totals - layers");

    // on chip: the scratchpad (2 x 1024) + line 0; every re-reference at
    // distance 0 (one line): 1 line needed
    CHECK(f.peak_on_chip_bytes == 2048 + 64);
    CHECK(f.sram_needed_bytes == 2048 + 64);
    // conventional: 100 x (8 + 2 x 12) = 3200
    CHECK(model->conventional().tape_bytes_written == 3200);
    CHECK(wr(model->conventional().total, dram) == 3200);
}

// ---- (c) a memory budget that spills ----------------------------------------------

TEST_CASE("(c) memory budget of two tiles + the scratchpad: tiles spill to the file") {
    tapeflow_test::temp_directory dir;
    auto model = std::make_shared<hardware_model>();
    // the constructor demands 2 tiles of scratchpad (no codec): 2048; the
    // budget leaves room for 2 tiles in memory, the rest go to the file
    tapeflow::tape_options o = options_with(model, 1024, true, 2 * 1024 + 2 * 1024);
    o.spill_directory = dir.path();
    tapeflow::tape t(o);
    Real x = 1.001, y = 0.5;
    const Real out = record_chain(t, x, y, 130);
    // tiles: 36, 36, 36, 22 records = 1008, 1008, 1008, 616 = 3640 = 130 x 28;
    // tiles 0, 1 in memory, 2 and 3 (sealed by the sweep) in the file
    REQUIRE(t.statistics().record_bytes == 3640);
    sweep_from(t, out);
    REQUIRE(t.statistics().tiles_spilled == 2);
    // the tape's own count has a checksum per tile; the model counts the
    // tile's record bytes (tile moves of `used` bytes)
    CHECK(t.statistics().bytes_spilled == 1008 + 616 + 2 * tapeflow::spill_file::checksum_bytes);

    const tapeflow::layout_summary f = model->tapeflow();
    CHECK(f.tape_bytes_written == 3640);
    CHECK(f.tape_bytes_swept == 3640);
    CHECK(f.adjoint_accesses == 390);  // 130 x 3
    CHECK(f.adjoint_misses == 1);
    bytes e;
    e.file_written = 1008 + 616;             // close of tiles 2, 3: 1624
    e.file_read = 1008 + 616;                // staged back: 1624
    e.dram_written = 1008 + 1008;            // close of tiles 0, 1: 2016
    e.dram_read = 1008 + 1008 + 64;          // staged + adjoint line: 2080
    e.sram_written = 3640 + 3640 + 3120 + 64;  // record + stage + adjoints + fill: 10464
    e.sram_read = 3640 + 3640 + 3120;        // close + records + adjoints: 10400
    check_traffic(f.total, e, "tapeflow totals");

    const auto& layers = model->layers();
    REQUIRE(layers.size() == 4);
    bytes l3;  // tile 3 from the file: 616, 22 x 3 = 66 accesses, the cold miss
    l3.file_read = 616;
    l3.dram_read = 64;
    l3.sram_written = 616 + 66 * 8 + 64;  // 1208
    l3.sram_read = 616 + 66 * 8;          // 1144
    bytes l2;  // tile 2 from the file: 1008, 108 accesses
    l2.file_read = 1008;
    l2.sram_written = 1008 + 108 * 8;  // 1872
    l2.sram_read = 1008 + 108 * 8;
    bytes l1 = l2;  // tiles 1, 0 from memory
    l1.file_read = 0;
    l1.dram_read = 1008;
    for (std::size_t i = 0; i < 4; ++i) {
        CHECK(layers[i].tile == 3 - i);
        CHECK(layers[i].level == sram);
    }
    check_traffic(layers[0].tapeflow, l3, "layer of tile 3");
    check_traffic(layers[1].tapeflow, l2, "layer of tile 2");
    check_traffic(layers[2].tapeflow, l1, "layer of tile 1");
    check_traffic(layers[3].tapeflow, l1, "layer of tile 0");
}

TEST_CASE("(c) budget without the scratchpad copy: tiles in memory are read in place, through the cache") {
    // The header: "each layer's record bytes read where they are (SRAM when
    // staged, else DRAM through the cache)". With a budget but scratchpad =
    // false, memory tiles are not staged: the sweep reads them in place
    // (layer level DRAM), so their bytes go through the cache as in direct
    // mode: SRAM read of the bytes + a line from DRAM per tape line.
    tapeflow_test::temp_directory dir;
    auto model = std::make_shared<hardware_model>();
    tapeflow::tape_options o = options_with(model, 1024, false, 4 * 1024);
    o.spill_directory = dir.path();
    tapeflow::tape t(o);
    Real x = 1.001, y = 0.5;
    const Real out = record_chain(t, x, y, 130);
    sweep_from(t, out);
    const auto& layers = model->layers();
    REQUIRE(layers.size() == 4);
    CHECK(layers[0].level == sram);  // file tiles are staged
    CHECK(layers[1].level == sram);
    REQUIRE(layers[2].level == dram);  // memory tiles read in place
    REQUIRE(layers[3].level == dram);
    // tile 0 (the last layer): 1008 bytes of a 64-aligned tile = 16 lines
    // (15 x 64 = 960 < 1008), each a miss; 36 records x 3 adjoint accesses
    // (line 0 is cached since the first layer)
    bytes l0;
    l0.sram_read = 1008 + 108 * 8;             // 1872
    l0.sram_written = 108 * 8 + 16 * 64;       // 864 + 1024 = 1888
    l0.dram_read = 16 * 64;                    // 1024
    check_traffic(layers[3].tapeflow, l0, "layer of tile 0, read in place from memory");
}

// ---- (d) the conventional layout ----------------------------------------------------

TEST_CASE("(d) conventional layout: 8 B per statement + 12 B per pair, written once") {
    auto model = std::make_shared<hardware_model>();
    tapeflow::tape_options o;
    o.observer = model;
    tapeflow::tape t(o);
    t.start_recording();
    Real x1 = 0.5, x2 = 1.5, x3 = -2.0;
    t.register_input(x1);
    t.register_input(x2);
    t.register_input(x3);
    Real a = x1 * x2;      // k = 2: 28 B, conventional 8 + 24 = 32
    Real b = a + x3 * x1;  // k = 3: 40 B, conventional 8 + 36 = 44
    Real c = sin(b);       // k = 1: 16 B, conventional 8 + 12 = 20
    t.register_output(c);
    t.stop_recording();
    sweep_from(t, c);
    const auto f1 = model->tapeflow();
    const auto c1 = model->conventional();
    CHECK(c1.tape_bytes_written == 96);  // 32 + 44 + 20
    CHECK(c1.tape_bytes_swept == 96);
    CHECK(wr(c1.total, dram) == 96);  // nothing else goes to DRAM (no write-backs in 1 MiB)

    // the same recording swept again: no new writes in either layout, the
    // reads again
    sweep_from(t, c);
    const auto f2 = model->tapeflow();
    const auto c2 = model->conventional();
    CHECK(c2.tape_bytes_written == 96);
    CHECK(c2.tape_bytes_swept == 2 * 96);
    CHECK(wr(c2.total, dram) == 96);
    CHECK(f2.tape_bytes_written == 84);  // 28 + 40 + 16, not counted again
    CHECK(f2.tape_bytes_swept == 2 * 84);
    CHECK(wr(f2.total, dram) == 84);
    // SRAM reads of the second sweep: tapeflow 84 record bytes + 9 adjoint
    // reads x 8 = 156; conventional 96 + 72 = 168
    CHECK(rd(f2.total, sram) - rd(f1.total, sram) == 156);
    CHECK(rd(c2.total, sram) - rd(c1.total, sram) == 168);
    CHECK(c2.total.records == 6);
    CHECK(c2.adjoint_accesses == 18);
}

TEST_CASE("(d) conventional layout: long records and external entries") {
    auto model = std::make_shared<hardware_model>();
    tapeflow::tape_options o;
    o.observer = model;
    tapeflow::tape t(o);
    t.start_recording();
    std::vector<Real> x(31);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = 0.1 * double(i + 1);
        t.register_input(x[i]);
    }
    // 31 distinct operands: a long record, 31 x 12 + 8 = 380 B
    Real s = x[0] + x[1] + x[2] + x[3] + x[4] + x[5] + x[6] + x[7] + x[8] + x[9] + x[10] + x[11] + x[12] +
             x[13] + x[14] + x[15] + x[16] + x[17] + x[18] + x[19] + x[20] + x[21] + x[22] + x[23] + x[24] +
             x[25] + x[26] + x[27] + x[28] + x[29] + x[30];
    // an external entry (custom adjoint): 8 B, a statement with no pairs
    Real z;
    {
        tapeflow::custom_adjoint op(t);
        op.add_input(s);
        op.add_output(z, 2 * s.value());
        op.record([](const double* yb, double* xb) { xb[0] += 2 * yb[0]; });
    }
    Real w = s * z;  // k = 2: 28 B
    t.register_output(w);
    t.stop_recording();
    const auto st = t.statistics();
    REQUIRE(st.statements == 3);
    REQUIRE(st.arguments == 33);  // 31 + 0 + 2
    REQUIRE(st.externals == 1);
    REQUIRE(st.record_bytes == 380 + 8 + 28);  // 416
    sweep_from(t, w);
    // conventional: 3 x 8 + 33 x 12 = 24 + 396 = 420
    CHECK(model->conventional().tape_bytes_written == 420);
    CHECK(model->conventional().tape_bytes_swept == 420);
    CHECK(model->tapeflow().tape_bytes_written == 416);
    CHECK(model->tapeflow().tape_bytes_swept == 416);
    // adjoint accesses: w: 1 + 2; the external entry: its lhs (0) only; s: 1 + 31
    CHECK(model->tapeflow().adjoint_accesses == 3 + 1 + 32);
    CHECK(model->tapeflow().total.records == 3);
}

TEST_CASE("(d) conventional layout: a piecewise sweep writes each record once") {
    // sweep(from, to) in pieces (checkpointing does this): every record is
    // swept once, so the conventional tape is written once: 96 bytes
    auto model = std::make_shared<hardware_model>();
    tapeflow::tape_options o;
    o.observer = model;
    tapeflow::tape t(o);
    t.start_recording();
    Real x1 = 0.5, x2 = 1.5, x3 = -2.0;
    t.register_input(x1);
    t.register_input(x2);
    t.register_input(x3);
    Real a = x1 * x2;  // conventional 32
    const tapeflow::position p1 = t.get_position();
    Real b = a + x3 * x1;  // 44
    const tapeflow::position p2 = t.get_position();
    Real c = sin(b);  // 20
    t.register_output(c);
    t.stop_recording();
    t.set_adjoint(c, 1.0);
    t.sweep(t.get_position(), p2);
    t.sweep(p2, p1);
    t.sweep(p1, tapeflow::position{});
    CHECK(model->tapeflow().tape_bytes_written == 84);
    CHECK(model->tapeflow().tape_bytes_swept == 84);
    CHECK(model->conventional().tape_bytes_swept == 96);
    CHECK(model->conventional().tape_bytes_written == 96);  // 32 + 44 + 20
}

TEST_CASE("(d) conventional layout: pieces swept out of order, each record written once") {
    // sweep(from, to) takes any range: the last piece, the first, then the
    // middle one. Each record is met once: 96 conventional bytes written.
    auto model = std::make_shared<hardware_model>();
    tapeflow::tape_options o;
    o.observer = model;
    tapeflow::tape t(o);
    t.start_recording();
    Real x1 = 0.5, x2 = 1.5, x3 = -2.0;
    t.register_input(x1);
    t.register_input(x2);
    t.register_input(x3);
    Real a = x1 * x2;  // conventional 32
    const tapeflow::position p1 = t.get_position();
    Real b = a + x3 * x1;  // 44
    const tapeflow::position p2 = t.get_position();
    Real c = sin(b);  // 20
    t.register_output(c);
    t.stop_recording();
    t.set_adjoint(c, 1.0);
    t.sweep(t.get_position(), p2);         // c
    t.sweep(p1, tapeflow::position{});     // a
    t.sweep(p2, p1);                       // b
    CHECK(model->conventional().tape_bytes_swept == 96);
    CHECK(model->conventional().tape_bytes_written == 96);  // 20 + 32 + 44
}

// ---- (e) regions ----------------------------------------------------------------------

TEST_CASE("(d) per-variable layout: k values per statement, one array per variable") {
    auto model = std::make_shared<hardware_model>();
    tapeflow::tape t(options_with(model, 1024, false));
    Real x = 1.001, y = 0.5;
    const Real out = record_chain(t, x, y, 130);
    sweep_from(t, out);
    // every record assigns acc (identifier 3) from two operands: 16 bytes
    // of values each, one array of 130 x 16 = 2080 bytes, read backwards
    // from its end (on a line boundary): 2080 = 32.5 lines, 33 lines read
    const auto p = model->per_variable();
    CHECK(p.tape_bytes_written == 130 * 16);
    CHECK(p.tape_bytes_swept == 130 * 16);
    CHECK(p.adjoint_accesses == 390);
    CHECK(p.adjoint_misses == 1);  // identifiers 1-3 share line 0
    bytes e;
    e.dram_written = 2080;              // the values, written while recording
    e.dram_read = 33 * 64 + 64;        // the array's lines and the adjoint line
    e.sram_read = 2080 + 390 * 8;      // values read from the cache, adjoints
    e.sram_written = 390 * 8 + 34 * 64;  // adjoints, fills
    check_traffic(p.total, e, "per-variable totals");
    REQUIRE(p.structures.size() == 1);
    CHECK(p.structures[0].bytes == p.total.bytes(sram));
}

TEST_CASE("(d) per-variable layout: two variables read as two arrays in turn") {
    auto model = std::make_shared<hardware_model>();
    tapeflow::tape t(options_with(model, 1024, false));
    Real x = 1.001, y = 0.5;
    t.start_recording();
    t.register_input(x);   // 1
    t.register_input(y);   // 2
    Real a = x * y;        // 3
    Real b = x + y;        // 4
    for (int i = 0; i < 64; ++i) {
        a = a * x;  // (a, x)
        b = b * y;  // (b, y)
    }
    Real f = a + b;  // 5
    t.register_output(f);
    t.stop_recording();
    sweep_from(t, f);
    // arrays: a 65 x 16 = 1040 bytes (16.25 lines: 17 read), b the same,
    // f one element of 16 bytes (1 line); read alternately, each line
    // missed once in the 1 MiB SRAM; adjoints 1-5 on line 0
    const auto p = model->per_variable();
    CHECK(p.tape_bytes_written == 131 * 16);
    CHECK(rd(p.total, dram) == (17 + 17 + 1) * 64 + 64);
    CHECK(wr(p.total, dram) == 131 * 16);
    // the conventional layout reads the same records as three streams in
    // sweep order: 131 x 8 header bytes (16.4 lines), 262 x 4 identifier
    // bytes (16.4), 262 x 8 partial bytes (32.75), each ending on a line
    // boundary: 17 + 17 + 33 lines
    const auto c = model->conventional();
    CHECK(rd(c.total, dram) == (17 + 17 + 33) * 64 + 64);
}

TEST_CASE("(e) per region: innermost region, region 0 outside, labels, depths") {
    auto model = std::make_shared<hardware_model>();
    auto probe = std::make_shared<event_tally>(model);
    tapeflow::tape_options o;
    o.observer = probe;
    tapeflow::tape t(o);
    t.start_recording();
    Real x1 = 0.5, x2 = 1.5;
    t.register_input(x1);
    t.register_input(x2);
    Real a = x1 * x2;  // R0 outside: k = 2, 28 B
    {
        tapeflow::Region outer(t, "outer");
        Real b = a * x1;  // R1 outer: k = 2, 28 B
        {
            tapeflow::Region inner(t, "inner");
            b = sin(b);  // R2 inner: k = 1, 16 B
            b = b * b;   // R3 inner: one operand twice, merged: k = 1, 16 B
        }
        a = a + b + x2;  // R4 outer: k = 3, 40 B
    }
    Real y = a * x1;  // R5 outside: k = 2, 28 B
    {
        tapeflow::Region unlabelled(t);
        y = y * y * x2;  // R6 region 2: y twice merged: k = 2, 28 B
    }
    t.register_output(y);
    t.stop_recording();
    REQUIRE(t.statistics().record_bytes == 184);  // 28 + 28 + 16 + 16 + 40 + 28 + 28
    REQUIRE(t.statistics().statements == 7);
    REQUIRE(t.statistics().arguments == 13);  // 2 + 2 + 1 + 1 + 3 + 2 + 2
    sweep_from(t, y);

    const auto& r = model->regions();
    REQUIRE(r.size() == 4);  // outside + 3 regions
    CHECK(r[0].label == "(outside regions)");
    CHECK(r[0].depth == 0);
    CHECK(r[1].label == "outer");
    CHECK(r[1].depth == 1);
    CHECK(r[2].label == "inner");
    CHECK(r[2].depth == 2);
    CHECK(r[3].label == "region 2");  // table index 2, no label
    CHECK(r[3].depth == 1);

    // records: outside R0, R5; outer R1, R4 (not R2, R3: inner is innermost);
    // inner R2, R3; region 2: R6
    CHECK(r[0].tapeflow.records == 2);
    CHECK(r[1].tapeflow.records == 2);
    CHECK(r[2].tapeflow.records == 2);
    CHECK(r[3].tapeflow.records == 1);
    CHECK(r[1].conventional.records == 2);
    // tapeflow SRAM reads per record: its bytes + 8 x (k + 1) adjoint reads
    //   k = 2: 28 + 24 = 52; k = 1: 16 + 16 = 32; k = 3: 40 + 32 = 72
    CHECK(rd(r[0].tapeflow, sram) == 52 + 52);
    CHECK(rd(r[1].tapeflow, sram) == 52 + 72);
    CHECK(rd(r[2].tapeflow, sram) == 32 + 32);
    CHECK(rd(r[3].tapeflow, sram) == 52);
    // conventional DRAM writes: 8 + 12k: k = 2: 32, k = 1: 20, k = 3: 44
    CHECK(wr(r[0].conventional, dram) == 32 + 32);
    CHECK(wr(r[1].conventional, dram) == 32 + 44);
    CHECK(wr(r[2].conventional, dram) == 20 + 20);
    CHECK(wr(r[3].conventional, dram) == 32);
    // conventional SRAM reads: 8 + 12k + 8 (k + 1)
    CHECK(rd(r[0].conventional, sram) == 56 + 56);
    CHECK(rd(r[1].conventional, sram) == 56 + 76);
    CHECK(rd(r[2].conventional, sram) == 36 + 36);
    CHECK(rd(r[3].conventional, sram) == 56);
    // the recording is in no region: DRAM writes of the regions are 0
    for (const auto& region : r) CHECK(wr(region.tapeflow, dram) == 0);

    // regions + recording + tile moves + write-backs == totals (both layouts)
    traffic flow = probe->recorded_bytes, conv;
    flow += probe->moves_outside;
    flow += probe->moves_in_sweeps;
    CHECK(model->tapeflow().write_backs == 0);  // 1 MiB: nothing evicted
    CHECK(model->conventional().write_backs == 0);
    for (const auto& region : r) {
        flow += region.tapeflow;
        conv += region.conventional;
    }
    CHECK(same_traffic(flow, model->tapeflow().total));
    CHECK(same_traffic(conv, model->conventional().total));
}

TEST_CASE("(e) regions across tiles, with the scratchpad") {
    // 100 chain records in 1024-byte tiles (36, 36, 28); a region holds
    // records 30-79: 7 in tile 0 (30-36), 36 in tile 1 (37-72), 7 in tile 2
    // (73-79); a region nested in it holds records 40-49 (tile 1)
    auto model = std::make_shared<hardware_model>();
    tapeflow::tape t(options_with(model, 1024, true));
    Real x = 1.001, y = 0.5;
    std::unique_ptr<tapeflow::Region> outer, inner;
    const Real out = record_chain(t, x, y, 100, [&](int i) {
        if (i == 29) outer = std::make_unique<tapeflow::Region>(t, "outer");
        if (i == 39) inner = std::make_unique<tapeflow::Region>(t, "inner");
        if (i == 49) inner.reset();
        if (i == 79) outer.reset();
    });
    sweep_from(t, out);
    const auto& r = model->regions();
    REQUIRE(r.size() == 3);
    CHECK(r[2].tapeflow.records == 10);            // 40-49
    CHECK(r[1].tapeflow.records == 50 - 10);       // 30-79 without 40-49
    CHECK(r[0].tapeflow.records == 100 - 50);      // 1-29, 80-100
    // each record: 28 bytes read in the scratchpad + 3 adjoint reads
    CHECK(rd(r[2].tapeflow, sram) == 10 * (28 + 24));
    CHECK(rd(r[1].tapeflow, sram) == 40 * (28 + 24));
}

TEST_CASE("(e) a region still open when the sweep runs") {
    // Sweeping inside a Region scope (after stop_recording): the records
    // recorded in it count toward it.
    auto model = std::make_shared<hardware_model>();
    tapeflow::tape_options o;
    o.observer = model;
    tapeflow::tape t(o);
    t.start_recording();
    Real x1 = 0.5, x2 = 1.5;
    t.register_input(x1);
    t.register_input(x2);
    Real a = x1 * x2;  // outside
    {
        tapeflow::Region open(t, "open");
        Real b = a * x1;  // in "open"
        Real c = b * x2;  // in "open"
        t.register_output(c);
        t.stop_recording();
        sweep_from(t, c);
        REQUIRE(model->regions().size() == 2);
        CHECK(model->regions()[1].tapeflow.records == 2);
        CHECK(model->regions()[0].tapeflow.records == 1);
    }
}

// ---- (f) energy ------------------------------------------------------------------------

TEST_CASE("(f) energy == bytes x pJ per byte, non-default configuration") {
    hardware_config config;
    config.sram_bytes = 4096;  // 128 lines of 32 B; the scratchpad takes 64: 64 left
    config.line_bytes = 32;
    config.sram_pj_per_byte = 1.5;
    config.scratchpad_pj_per_byte = 0.5;
    config.dram_pj_per_byte = 100;
    config.file_pj_per_byte = 1000;
    tapeflow_test::temp_directory dir;
    auto model = std::make_shared<hardware_model>(config);
    tapeflow::tape_options o = options_with(model, 1024, true, 4 * 1024);
    o.spill_directory = dir.path();
    tapeflow::tape t(o);
    Real x = 1.001, y = 0.5;
    const Real out = record_chain(t, x, y, 130);
    sweep_from(t, out);
    const auto f = model->tapeflow();
    // as in (c), with 32-byte lines: the adjoint line (identifiers 1-3, line
    // 0) is one 32-byte fill
    bytes e;
    e.file_written = 1624;
    e.file_read = 1624;
    e.dram_written = 2016;
    e.dram_read = 2016 + 32;                   // 2048
    e.sram_written = 3640 + 3640 + 3120 + 32;  // 10432
    e.sram_read = 3640 + 3640 + 3120;          // 10400
    check_traffic(f.total, e, "tapeflow totals, 32-byte lines");
    // the SRAM bytes by structure: the scratchpad has the records (written
    // by recording and staging, read by the close and the sweep), the SRAM
    // the adjoints (3120 read, 3120 + 32 written)
    REQUIRE(f.structures.size() == 2);
    CHECK(f.structures[0].structure.name == "scratchpad");
    CHECK(f.structures[0].structure.capacity == 2048);  // two tiles
    CHECK(f.structures[0].bytes == 4 * 3640);
    CHECK(f.structures[1].structure.name == "SRAM");
    CHECK(f.structures[1].structure.capacity == 4096);
    CHECK(f.structures[1].bytes == 3120 + 3120 + 32);
    CHECK(f.structures[1].misses == 1);
    // 14560 x 0.5 + 6272 x 1.5 + (2048 + 2016) x 100 + (1624 + 1624) x 1000
    //   = 7280 + 9408 + 406400 + 3248000 = 3671088 (exact in double)
    CHECK(f.structures[0].energy_pj == 7280.0);
    CHECK(f.structures[1].energy_pj == 9408.0);
    CHECK(f.energy_pj == 3671088.0);
    CHECK(f.on_chip_energy_pj == 7280.0 + 9408.0);
    CHECK(model->energy_pj(f.total) == 3671088.0);
    CHECK(model->config().sram_pj_per_byte == 1.5);

    // the conventional layout, each region and each layer by the same rule
    const auto c = model->conventional();
    REQUIRE(c.structures.size() == 1);  // no scratchpad
    CHECK(c.structures[0].bytes == c.total.bytes(sram));
    CHECK(c.energy_pj == double(c.total.bytes(sram)) * 1.5 + double(c.total.bytes(dram)) * 100 +
                             double(c.total.bytes(file)) * 1000);
    CHECK(c.total.bytes(file) == 0);
    for (const auto& l : model->layers())
        CHECK(model->energy_pj(l.tapeflow) == double(l.tapeflow.on_chip[0]) * 0.5 +
                                                   double(l.tapeflow.on_chip[1]) * 1.5 +
                                                   double(l.tapeflow.bytes(dram)) * 100 +
                                                   double(l.tapeflow.bytes(file)) * 1000);
    // the default figures are the documented ones
    const hardware_config defaults;
    CHECK(defaults.sram_bytes == 1024 * 1024);
    CHECK(defaults.line_bytes == 64);
    CHECK(defaults.sram_pj_per_byte == 0);  // from the size:
    CHECK(defaults.sram_energy() == Approx(12.5));  // 100 pJ / 8 B at 1 MiB
    CHECK(defaults.scratchpad_pj_per_byte == 0);
    CHECK(defaults.inner_caches.empty());
    CHECK(defaults.dram_pj_per_byte == 250);   // 2 nJ / 8 B
    CHECK(defaults.file_pj_per_byte == 2500);
}

TEST_CASE("(f) the scratchpad's energy comes from its size unless set") {
    auto model = std::make_shared<hardware_model>();  // defaults: both from the sizes
    tapeflow::tape t(options_with(model, 4096, true));
    Real x = 1.001, y = 0.5;
    sweep_from(t, record_chain(t, x, y, 500));
    const std::vector<tapeflow::on_chip_structure> s = model->structures();
    REQUIRE(s.size() == 2);
    CHECK(s[0].capacity == 8192);  // two 4 KiB tiles
    CHECK(s[0].pj_per_byte == Approx(1.25));  // Horowitz: 10 pJ per 64 bits at 8 KiB
    CHECK(s[1].pj_per_byte == Approx(12.5));  // the 1 MiB SRAM
    const auto f = model->tapeflow();
    CHECK(f.energy_pj == Approx(double(f.total.on_chip[0]) * 1.25 + double(f.total.on_chip[1]) * 12.5 +
                                double(f.total.bytes(dram)) * 250));
}

// ---- (g), (h) a small SRAM ---------------------------------------------------------------

namespace {

// 40 inputs (identifiers 1-40, lines id / 8: x[0] on line 0, x[8] line 1,
// x[16] line 2, x[24] line 3, x[32] line 4) and five records of k = 2
// (28 B each) whose lhs are identifiers 41-45 (line 5):
//   R0: x[24] * x[32]  lines 5 | 3 4
//   R1: x[0] * x[8]    lines 5 | 0 1
//   R2: x[16] * x[24]  lines 5 | 2 3
//   R3: x[32] * x[0]   lines 5 | 4 0
//   R4: x[8] * x[16]   lines 5 | 1 2
void small_sram_program(tapeflow::tape& t, int sweeps = 1) {
    t.start_recording();
    std::vector<Real> x(40);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = 1 + 0.01 * double(i);
        t.register_input(x[i]);
    }
    Real r0 = x[24] * x[32];
    Real r1 = x[0] * x[8];
    Real r2 = x[16] * x[24];
    Real r3 = x[32] * x[0];
    Real r4 = x[8] * x[16];
    REQUIRE(x[0].id() == 1);
    REQUIRE(x[32].id() == 33);
    REQUIRE(r0.id() == 41);
    REQUIRE(r4.id() == 45);
    t.register_output(r4);
    t.stop_recording();
    REQUIRE(t.statistics().record_bytes == 5 * 28);
    for (int i = 0; i < sweeps; ++i) sweep_from(t, r4);
}

}  // namespace

TEST_CASE("(g) a 4-line adjoint cache: capacity misses and write-backs") {
    // scratchpad 2 x 1024 = 32 lines; SRAM 36 lines: 4 left for adjoints
    hardware_config config;
    config.sram_bytes = 36 * 64;
    auto model = std::make_shared<hardware_model>(config);
    tapeflow::tape t(options_with(model, 1024, true));
    small_sram_program(t);

    // sweep order R4 .. R0, lines (distance = distinct lines since the last
    // access; a hit needs distance < 4):
    //   #1 L5 cold  #2 L1 cold  #3 L2 cold                         (R4)
    //   #4 L5 2     #5 L4 cold  #6 L0 cold                         (R3)
    //   #7 L5 2     #8 L2 3 (L5 L4 L0)   #9 L3 cold                (R2)
    //   #10 L5 2    #11 L0 3 (L5 L2 L3)  #12 L1 5 (L2 L5 L4 L0 L3): miss (R1)
    //   #13 L5 2    #14 L3 3 (L5 L0 L1)  #15 L4 5 (L0 L5 L2 L3 L1): miss (R0)
    // 15 accesses, 6 cold + 2 capacity misses = 8.
    // Write-backs: every line evicted (all adjoint lines are dirty). The
    // 4-line LRU cache evicts L1 at #6 (fill of L0), L4 at #9 (L3), L2 at
    // #12 (L1), L0 at #15 (L4): 4 = 8 fills - 4 lines still cached at the
    // end (L1 L5 L3 L4, not written back)
    const auto f = model->tapeflow();
    CHECK(f.adjoint_accesses == 15);
    CHECK(f.adjoint_misses == 8);
    CHECK(f.write_backs == 4);
    bytes e;
    // record 140 (SRAM) + close 140 (SRAM -> DRAM) + stage 140 (DRAM -> SRAM)
    // + records read 140 (SRAM) + 15 accesses x 8 B read and written
    // + 8 fills (DRAM read, SRAM write) + 4 write-backs (SRAM read, DRAM write)
    e.sram_read = 140 + 140 + 120 + 4 * 64;     // 656
    e.sram_written = 140 + 140 + 120 + 8 * 64;  // 912
    e.dram_read = 140 + 8 * 64;                 // 652
    e.dram_written = 140 + 4 * 64;              // 396
    check_traffic(f.total, e, "tapeflow totals, 4-line cache");

    // conventional: one cache of 36 lines; adjoints never miss again
    // (largest distance 9, see (h)): 6 cold misses; streams: headers 5 x 8 =
    // 40 B (1 line), identifiers 10 x 4 = 40 B (1 line), partials 10 x 8 =
    // 80 B ending on a line boundary (2 lines): 4 misses
    const auto c = model->conventional();
    CHECK(c.adjoint_misses == 6);
    CHECK(c.write_backs == 0);  // 10 lines in 36: nothing evicted
    bytes ec;
    ec.dram_written = 5 * 32;             // 8 + 2 x 12 per record: 160
    ec.sram_read = 160 + 15 * 8;          // 280
    ec.sram_written = 15 * 8 + 10 * 64;   // 760
    ec.dram_read = 10 * 64;               // 640
    check_traffic(c.total, ec, "conventional totals, 36-line cache");
}

TEST_CASE("(g) a 4-line adjoint cache, the recording swept twice: each eviction written back once") {
    hardware_config config;
    config.sram_bytes = 36 * 64;
    auto model = std::make_shared<hardware_model>(config);
    tapeflow::tape t(options_with(model, 1024, true));
    small_sram_program(t, 2);
    // after the first sweep (see above): cached L1 L5 L3 L4; LRU stack, most
    // recent first: L4 L3 L5 L1 L0 L2. The second sweep:
    //   #16 L5 2    #17 L1 3    #18 L2 5: miss, evicts L3               (R4)
    //   #19 L5 2    #20 L4 3    #21 L0 5: miss, evicts L1               (R3)
    //   #22 L5 2    #23 L2 3    #24 L3 5: miss, evicts L4               (R2)
    //   #25 L5 2    #26 L0 3    #27 L1 5: miss, evicts L2               (R1)
    //   #28 L5 2    #29 L3 3    #30 L4 5: miss, evicts L0               (R0)
    // 5 misses and 5 evictions: 13 misses, 9 write-backs (13 - 4 cached)
    const auto f = model->tapeflow();
    CHECK(f.adjoint_accesses == 30);
    CHECK(f.adjoint_misses == 8 + 5);
    CHECK(f.write_backs == 4 + 5);
    // first sweep as above; the second adds staging 140 (DRAM -> SRAM), the
    // records 140 (SRAM read), 15 x 8 read and written, 5 fills, 5 write-backs
    bytes e;
    e.sram_read = 656 + 140 + 120 + 5 * 64;     // 1236
    e.sram_written = 912 + 140 + 120 + 5 * 64;  // 1492
    e.dram_read = 652 + 140 + 5 * 64;           // 1112
    e.dram_written = 396 + 5 * 64;              // 716
    check_traffic(f.total, e, "tapeflow totals, two sweeps");
    REQUIRE(model->layers().size() == 2);
    CHECK(model->layers()[1].sweep == 1);
}

TEST_CASE("(g) two cache levels: a 2-line L1 in front of the 4-line adjoint cache") {
    // the program of the test above; the same distances. L1 (2 lines) hits
    // when the distance is below 2: never, so all 15 accesses miss it; the
    // SRAM (4 lines left by the scratchpad) misses the same 8 as alone
    hardware_config config;
    config.sram_bytes = 36 * 64;
    config.inner_caches = {{"L1", 2 * 64, 0}};
    auto model = std::make_shared<hardware_model>(config);
    tapeflow::tape t(options_with(model, 1024, true));
    small_sram_program(t);
    const auto f = model->tapeflow();
    CHECK(f.adjoint_accesses == 15);
    CHECK(f.adjoint_misses == 8);  // the last level's: what goes to DRAM
    CHECK(f.write_backs == 4);
    REQUIRE(f.structures.size() == 3);
    CHECK(f.structures[1].structure.name == "L1");
    CHECK(f.structures[1].misses == 15);
    CHECK(f.structures[2].misses == 8);
    // scratchpad: record, close, stage, sweep: 4 x 140
    CHECK(f.total.on_chip[0] == 4 * 140);
    // L1: 15 accesses x 8 B read and written, 15 fills, 13 lines written back
    // to the SRAM (15 filled - the 2 still cached: L4 and L3, the last two)
    CHECK(f.total.on_chip[1] == 15 * 16 + 15 * 64 + 13 * 64);
    // SRAM: the 15 lines of L1's fills read from it (8 of them first filled
    // from DRAM: written into it), the 13 lines from L1 written, the 4 lines
    // written back to DRAM read
    CHECK(f.total.on_chip[2] == 15 * 64 + 8 * 64 + 13 * 64 + 4 * 64);
    CHECK(f.total.on_chip[3] == 0);
    CHECK(f.total.on_chip[0] + f.total.on_chip[1] + f.total.on_chip[2] == f.total.bytes(sram));
    // DRAM as with the SRAM alone (test above): the inner level changes
    // only what happens on chip
    CHECK(rd(f.total, dram) == 140 + 8 * 64);
    CHECK(wr(f.total, dram) == 140 + 4 * 64);
    // energy: each structure at its own size's figure (L1 128 B, below the
    // smallest published size: the power law extended)
    const std::vector<tapeflow::on_chip_structure> s = model->structures();
    REQUIRE(s.size() == 3);
    CHECK(s[1].pj_per_byte == Approx(tapeflow::sram_pj_per_byte_of(128)));
    CHECK(s[1].pj_per_byte < s[2].pj_per_byte);
    CHECK(f.energy_pj == Approx(double(f.total.on_chip[0]) * s[0].pj_per_byte +
                                double(f.total.on_chip[1]) * s[1].pj_per_byte +
                                double(f.total.on_chip[2]) * s[2].pj_per_byte + double(f.total.bytes(dram)) * 250));

    // conventional: the SRAM's misses and DRAM bytes as with the SRAM alone
    // (test above: 6 adjoint misses, 10 lines from DRAM, 160 B written)
    const auto c = model->conventional();
    CHECK(c.adjoint_misses == 6);
    CHECK(rd(c.total, dram) == 10 * 64);
    CHECK(wr(c.total, dram) == 5 * 32);
    REQUIRE(c.structures.size() == 2);  // L1, SRAM: no scratchpad
    CHECK(c.structures[0].misses >= c.structures[1].misses);
    CHECK(c.structures[0].bytes + c.structures[1].bytes == c.total.bytes(sram));
}

TEST_CASE("(g) cache levels of a hierarchy miss as caches of their sizes alone") {
    // the stack property: an access misses an LRU cache of capacity C when
    // its distance is C or more, whatever the other levels are; so level j
    // of a hierarchy misses exactly what a single cache of its size misses
    auto record = [](const hardware_config& config) {
        auto model = std::make_shared<hardware_model>(config);
        tapeflow::tape t(options_with(model, 1024, false));  // direct: the tape lines go through the caches
        std::vector<Real> x(300);
        t.start_recording();
        for (std::size_t i = 0; i < x.size(); ++i) {
            x[i] = 0.001 * double(i + 1);
            t.register_input(x[i]);
        }
        for (int step = 0; step < 4; ++step)
            for (std::size_t i = 0; i < x.size(); ++i) x[i] = x[i] * x[(i * 7 + 3) % x.size()] + 0.5;
        Real f = 0.0;
        for (const Real& v : x) f += v;
        t.register_output(f);
        t.stop_recording();
        sweep_from(t, f);
        return std::make_pair(model->tapeflow(), model->conventional());
    };
    hardware_config levels;
    levels.inner_caches = {{"L1", 16 * 64, 0}, {"L2", 64 * 64, 0}};
    levels.sram_bytes = 256 * 64;
    const auto all = record(levels);
    const std::size_t sizes[] = {16 * 64, 64 * 64, 256 * 64};
    for (std::size_t j = 0; j < 3; ++j) {
        hardware_config one;
        one.sram_bytes = sizes[j];
        const auto alone = record(one);
        INFO("level " << j);
        CHECK(all.first.structures[j].misses == alone.first.adjoint_misses);
        CHECK(all.second.structures[j].misses == alone.second.adjoint_misses);
        if (j == 2) {  // the last level: the same DRAM traffic as one cache of its size
            CHECK(all.first.total.bytes(dram) == alone.first.total.bytes(dram));
            CHECK(all.second.total.bytes(dram) == alone.second.total.bytes(dram));
            CHECK(all.first.write_backs == alone.first.write_backs);
        }
    }
    CHECK(all.first.structures[0].misses > all.first.structures[2].misses);  // the sizes matter here
}

TEST_CASE("(g) a hardware_config that cannot describe caches is refused") {
    hardware_config c;
    c.inner_caches = {{"L1", 4096, 0}, {"L2", 2048, 0}};  // shrinking
    CHECK_THROWS_AS(hardware_model(c), tapeflow::usage_error);
    c.inner_caches = {{"L1", 4096, 0}, {"L2", c.sram_bytes, 0}};  // as large as the SRAM
    CHECK_THROWS_AS(hardware_model(c), tapeflow::usage_error);
    c.inner_caches = {{"L0", 1024, 0}, {"L1", 4096, 0}, {"L2", 8192, 0}, {"L3", 16384, 0}};  // four
    CHECK_THROWS_WITH(hardware_model(c), Catch::Contains("at most 3"));
    c.inner_caches = {{"L1", 32, 0}};  // less than a line
    CHECK_THROWS_AS(hardware_model(c), tapeflow::usage_error);
    c.inner_caches = {};
    c.line_bytes = 0;
    CHECK_THROWS_WITH(hardware_model(c), Catch::Contains("line_bytes"));
}

TEST_CASE("(g) a scratchpad that leaves the SRAM no room for the adjoints is refused when the sweep begins") {
    hardware_config config;
    config.sram_bytes = 8192;  // two 4 KiB tiles take it all
    auto model = std::make_shared<hardware_model>(config);
    tapeflow::tape t(options_with(model, 4096, true));
    Real x = 1.001, y = 0.5;
    const Real out = record_chain(t, x, y, 10);
    t.set_adjoint(out, 1.0);
    CHECK_THROWS_WITH(t.sweep(), Catch::Contains("leaves 0 of the SRAM's 8192 bytes") &&
                                     Catch::Contains("raise sram_bytes"));
    // with an inner cache, the SRAM left must be larger than it
    config.sram_bytes = 16384;
    config.inner_caches = {{"L1", 8192, 0}};
    auto nested = std::make_shared<hardware_model>(config);
    tapeflow::tape u(options_with(nested, 4096, true));
    const Real out2 = record_chain(u, x, y, 10);
    u.set_adjoint(out2, 1.0);
    CHECK_THROWS_WITH(u.sweep(), Catch::Contains("not more than the last inner cache"));
    // room for one line more is enough
    config.sram_bytes = 16384 + 64;
    auto fits = std::make_shared<hardware_model>(config);
    tapeflow::tape v(options_with(fits, 4096, true));
    sweep_from(v, record_chain(v, x, y, 10));
    CHECK(fits->tapeflow().adjoint_accesses == 30);
}

TEST_CASE("(g) the configurations of a CPU and of an accelerator") {
    const hardware_config cpu = hardware_config::cpu();
    REQUIRE(cpu.inner_caches.size() == 2);
    CHECK(cpu.inner_caches[0].name == "L1");
    CHECK(cpu.inner_caches[0].bytes == 32 * 1024);
    CHECK(cpu.inner_caches[1].name == "L2");
    CHECK(cpu.inner_caches[1].bytes == 1024 * 1024);
    CHECK(cpu.sram_name == "L3");
    CHECK(cpu.sram_bytes == 32 * 1024 * 1024);
    CHECK_NOTHROW(hardware_model(cpu));
    const hardware_config acc = hardware_config::accelerator(128 * 1024);
    CHECK(acc.inner_caches.empty());
    CHECK(acc.sram_bytes == 128 * 1024);
    CHECK(hardware_config::accelerator().sram_bytes == 64 * 1024);
}

TEST_CASE("(f) the scratchpad's energy before any sweep is the SRAM's, and its size survives clear()") {
    auto model = std::make_shared<hardware_model>();
    tapeflow::tape t(options_with(model, 4096, true));
    Real x = 1.001, y = 0.5;
    record_chain(t, x, y, 500);
    t.reset();  // drops the records unswept: recorded() tells the model of them
    REQUIRE(model->tapeflow().total.on_chip[0] > 0);
    CHECK(model->structures()[0].capacity == 0);  // no sweep told the size yet
    CHECK(model->structures()[0].pj_per_byte == Approx(12.5));  // the 1 MiB SRAM's
    sweep_from(t, record_chain(t, x, y, 500));
    CHECK(model->structures()[0].capacity == 8192);
    CHECK(model->structures()[0].pj_per_byte == Approx(1.25));
    model->clear();
    CHECK(model->tapeflow().total.on_chip[0] == 0);
    CHECK(model->structures()[0].capacity == 8192);  // what the model knows of the tape stays
    CHECK(model->structures()[0].pj_per_byte == Approx(1.25));
}

TEST_CASE("(f) SRAM energy per byte from the capacity: Horowitz's figures, between and beyond them") {
    using tapeflow::sram_pj_per_byte_of;
    // 10, 20 and 100 pJ per 64-bit access at 8 KiB, 32 KiB, 1 MiB
    CHECK(sram_pj_per_byte_of(8 * 1024) == Approx(10.0 / 8));
    CHECK(sram_pj_per_byte_of(32 * 1024) == Approx(20.0 / 8));
    CHECK(sram_pj_per_byte_of(1024 * 1024) == Approx(100.0 / 8));
    // between: a power law per segment (x2 per x4 below 32 KiB, x5 per x32 above)
    CHECK(sram_pj_per_byte_of(16 * 1024) == Approx(1.25 * std::sqrt(2.0)));
    CHECK(sram_pj_per_byte_of(32 * 1024 * 32 / 2) == Approx(2.5 * std::pow(5.0, 0.8)));  // 512 KiB
    // beyond: the nearest segment's law extended
    CHECK(sram_pj_per_byte_of(4 * 1024) == Approx(1.25 / std::sqrt(2.0)));
    CHECK(sram_pj_per_byte_of(32 * 1024 * 1024) == Approx(12.5 * 5));
    // larger costs more, at every size
    double before = 0;
    for (std::size_t b = 64; b <= (std::size_t(1) << 30); b *= 2) {
        CHECK(sram_pj_per_byte_of(b) > before);
        before = sram_pj_per_byte_of(b);
    }
}

TEST_CASE("(h) SRAM needed and peak on-chip bytes") {
    // tapeflow (adjoints only; the scratchpad keeps the tape out of the
    // cache): re-reference distances from (g): 2, 2, 3, 2, 3, 5, 2, 3, 5;
    // bit widths 2 (x7: distances 2, 3) and 3 (x2: distance 5)
    hardware_config config;
    config.sram_bytes = 36 * 64;
    SECTION("99% of the re-references") {
        auto model = std::make_shared<hardware_model>(config);
        tapeflow::tape t(options_with(model, 1024, true));
        small_sram_program(t);
        // 0.99 x 9 = 8.91: 7 hit in 4 lines, all 9 in 8 lines: 8 x 64 + scratchpad 2048
        CHECK(model->tapeflow().sram_needed_bytes == 8 * 64 + 2048);
        // 6 distinct lines, 4 fit: 4 x 64 + 2048
        CHECK(model->tapeflow().peak_on_chip_bytes == 4 * 64 + 2048);
        // conventional sweep order R4 .. R0, stream lines H (headers), I
        // (identifiers), P1, P2 (partials; R0's are in P2) then adjoints:
        //   R4: H I P1 L5 L1 L2 cold
        //   R3: H I P1 5, L5 5, L4 L0 cold
        //   R2: H I P1 5, L5 5, L2 6 (H I P1 L5 L4 L0), L3 cold
        //   R1: H I P1 5, L5 5, L0 6 (H I P1 L5 L2 L3), L1 8 (H I P1 L5 L2 L4 L0 L3)
        //   R0: H I 5, P2 cold, L5 5, L3 7 (H I P1 L5 L0 L1 P2),
        //       L4 9 (L0 H I P1 L5 L2 L3 L1 P2)
        // adjoint re-references: 5 5 6 5 6 8 5 7 9: widths 3 (x7), 4 (x2);
        // 8.91 needs width 4: 16 lines = 1024 B; peak: 10 lines = 640 B
        CHECK(model->conventional().sram_needed_bytes == 16 * 64);
        CHECK(model->conventional().peak_on_chip_bytes == 10 * 64);
    }
    SECTION("75% of the re-references") {
        config.needed_hit_fraction = 0.75;
        auto model = std::make_shared<hardware_model>(config);
        tapeflow::tape t(options_with(model, 1024, true));
        small_sram_program(t);
        // 0.75 x 9 = 6.75 <= 7: 4 lines + 2048
        CHECK(model->tapeflow().sram_needed_bytes == 4 * 64 + 2048);
        // conventional: 7 re-references of width 3: 8 lines
        CHECK(model->conventional().sram_needed_bytes == 8 * 64);
    }
}

// ---- (i) gradients ---------------------------------------------------------------------

namespace {

std::vector<double> chain_gradient(const tapeflow::tape_options& o, int n) {
    tapeflow::tape t(o);
    Real x = 1.001, y = 0.5;
    const Real out = record_chain(t, x, y, n);
    sweep_from(t, out);
    return {t.adjoint(x), t.adjoint(y)};
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("(i) the model does not change gradients: no observer, same gradient") {
    tapeflow_test::temp_directory dir;
    const int n = 130;
    // d(x^n y)/dx = n x^(n-1) y, d/dy = x^n
    const double xv = 1.001, yv = 0.5;
    const double gx = n * std::pow(xv, n - 1) * yv, gy = std::pow(xv, n);
    struct configuration {
        const char* name;
        std::size_t tile;
        bool scratchpad;
        std::size_t budget;
    };
    const configuration configurations[] = {
        {"direct, default tiles", tapeflow::default_tile_bytes, false, std::numeric_limits<std::size_t>::max()},
        {"direct, 1024-byte tiles", 1024, false, std::numeric_limits<std::size_t>::max()},
        {"scratchpad, 1024-byte tiles", 1024, true, std::numeric_limits<std::size_t>::max()},
        {"budget that spills", 1024, true, 4 * 1024}};
    for (const auto& c : configurations) {
        INFO(c.name);
        tapeflow::tape_options plain = options_with(nullptr, c.tile, c.scratchpad, c.budget);
        plain.spill_directory = dir.path();
        tapeflow::tape_options observed = plain;
        auto model = std::make_shared<hardware_model>();
        observed.observer = model;
        const std::vector<double> g0 = chain_gradient(plain, n);
        const std::vector<double> g1 = chain_gradient(observed, n);
        CHECK(bitwise_equal(g0, g1));
        CHECK(g0[0] == Approx(gx).epsilon(1e-12));
        CHECK(g0[1] == Approx(gy).epsilon(1e-12));
        CHECK(model->tapeflow().tape_bytes_swept == 130 * 28);  // the model did see the sweep
    }
}

// ---- (j) clear() and resets -----------------------------------------------------------------

TEST_CASE("(j) hardware_model::clear() forgets the counts") {
    auto model = std::make_shared<hardware_model>();
    tapeflow::tape_options o;
    o.observer = model;
    tapeflow::tape t(o);
    auto run = [&] {
        t.reset();
        t.start_recording();
        Real x1 = 0.5, x2 = 1.5, x3 = -2.0;
        t.register_input(x1);
        t.register_input(x2);
        t.register_input(x3);
        Real a = x1 * x2;
        Real b = a + x3 * x1;
        Real c = sin(b);
        t.register_output(c);
        t.stop_recording();
        sweep_from(t, c);
    };
    run();
    REQUIRE(model->tapeflow().tape_bytes_written == 84);
    model->clear();
    const auto f0 = model->tapeflow();
    CHECK(f0.tape_bytes_written == 0);
    CHECK(f0.tape_bytes_swept == 0);
    CHECK(f0.adjoint_accesses == 0);
    CHECK(f0.energy_pj == 0);
    CHECK(f0.peak_on_chip_bytes == 0);
    CHECK(f0.sram_needed_bytes == 0);
    CHECK(same_traffic(f0.total, traffic{}));
    CHECK(same_traffic(model->conventional().total, traffic{}));
    CHECK(model->layers().empty());
    REQUIRE(model->regions().size() == 1);
    CHECK(same_traffic(model->regions()[0].tapeflow, traffic{}));
    // the same program again (after a reset): the counts of (a), from a cold cache
    run();
    const auto f = model->tapeflow();
    CHECK(f.tape_bytes_written == 84);
    CHECK(f.tape_bytes_swept == 84);
    CHECK(f.adjoint_misses == 1);
    bytes e;  // as in (a)
    e.dram_written = 84;
    e.sram_read = 84 + 9 * 8;
    e.sram_written = 9 * 8 + 64 + 2 * 64;
    e.dram_read = 64 + 2 * 64;
    check_traffic(f.total, e, "after clear(), the program of (a)");
    CHECK(model->conventional().tape_bytes_written == 96);
}

TEST_CASE("(j) clear() between two sweeps of a recording of several tiles keeps regions right") {
    // 100 chain records in 1024-byte tiles (36, 36, 28); a region holds
    // records 80-100 (tile 2). Sweep, clear the model, sweep again: the
    // second sweep alone, attributed as the first.
    auto model = std::make_shared<hardware_model>();
    tapeflow::tape t(options_with(model, 1024, false));
    Real x = 1.001, y = 0.5;
    std::unique_ptr<tapeflow::Region> region;
    const Real out = record_chain(t, x, y, 100, [&](int i) {
        if (i == 79) region = std::make_unique<tapeflow::Region>(t, "last");
    });
    region.reset();
    sweep_from(t, out);
    REQUIRE(model->regions().size() == 2);
    CHECK(model->regions()[1].tapeflow.records == 21);
    model->clear();
    sweep_from(t, out);
    CHECK(model->tapeflow().tape_bytes_swept == 2800);
    REQUIRE(model->regions().size() == 2);
    CHECK(model->regions()[1].tapeflow.records == 21);
    CHECK(model->regions()[0].tapeflow.records == 79);
}

TEST_CASE("(j) reset() and new recordings: every recording counted once") {
    auto model = std::make_shared<hardware_model>();
    auto probe = std::make_shared<event_tally>(model);
    tapeflow::tape t(options_with(probe, 1024, true));
    SECTION("reset() after a sweep") {
        {
            Real x = 1.001, y = 0.5;
            const Real out = record_chain(t, x, y, 100);  // 2800 B
            sweep_from(t, out);
        }
        t.reset();
        CHECK(probe->cleared_count == 1);
        Real x = 1.001, y = 0.5;
        const Real out = record_chain(t, x, y, 50);  // 1400 B
        REQUIRE(t.statistics().record_bytes == 1400);
        sweep_from(t, out);
        CHECK(model->tapeflow().tape_bytes_written == 2800 + 1400);
        CHECK(model->tapeflow().tape_bytes_swept == 2800 + 1400);
        CHECK(model->conventional().tape_bytes_written == 100 * 32 + 50 * 32);  // 8 + 24 per record
        // the second recording's tiles: 36 + 14 records = 1008 + 392
        const auto& layers = model->layers();
        REQUIRE(layers.size() == 3 + 2);
        CHECK(layers[3].sweep == 1);
        CHECK(layers[3].tile == 1);
        CHECK(layers[3].tapeflow.records == 14);
        CHECK(layers[4].tapeflow.records == 36);
    }
    SECTION("reset() before any sweep") {
        {
            Real x = 1.001, y = 0.5;
            record_chain(t, x, y, 100);  // 2800 B recorded, never swept
        }
        t.reset();
        Real x = 1.001, y = 0.5;
        const Real out = record_chain(t, x, y, 50);  // 1400 B
        sweep_from(t, out);
        // both recordings wrote their records into the scratchpad
        CHECK(model->tapeflow().tape_bytes_written == 2800 + 1400);
        CHECK(model->tapeflow().tape_bytes_swept == 1400);
        // tiles 0 and 1 of the first recording (2016 B) were moved out of the
        // scratchpad: they must have been written into it
        CHECK(wr(probe->recorded_bytes, sram) >= rd(probe->moves_outside, sram));
    }
}

TEST_CASE("(j) reset(position) into a finished tile, then new records") {
    // scratchpad, 1024-byte tiles: 100 chain records (tiles 36, 36, 28), a
    // position p after record 50 (tile 1, offset 14 x 28 = 392, byte 1400);
    // sweep, reset(p), 20 more records (tile 1 again: 14 + 20 = 34 records,
    // 952 B), sweep.
    auto model = std::make_shared<hardware_model>();
    auto probe = std::make_shared<event_tally>(model);
    tapeflow::tape t(options_with(probe, 1024, true));
    Real x = 1.001, y = 0.5;
    tapeflow::position p;
    Real out = record_chain(t, x, y, 100, [&](int i) {
        if (i == 50) p = t.get_position();
    });
    REQUIRE(p.bytes == 1400);
    REQUIRE(p.tile == 1);
    sweep_from(t, out);
    t.reset(p);
    CHECK(probe->reopened == 1);
    t.start_recording();
    for (int i = 0; i < 20; ++i) out = out * x;  // k = 2, lhs out's identifier (3)
    t.stop_recording();
    REQUIRE(t.statistics().record_bytes == 1400 + 560);  // 20 x 28
    sweep_from(t, out);

    const auto f = model->tapeflow();
    // written: 2800 + 560 (the records past p); swept: 2800 + 1960
    CHECK(f.tape_bytes_written == 2800 + 560);
    CHECK(f.tape_bytes_swept == 2800 + 1960);
    // conventional: 100 x 32, then the 20 new records x 32
    CHECK(model->conventional().tape_bytes_written == 3200 + 640);
    CHECK(model->conventional().tape_bytes_swept == 3200 + 70 * 32);
    const auto& layers = model->layers();
    REQUIRE(layers.size() == 3 + 2);
    CHECK(layers[3].tile == 1);
    CHECK(layers[3].tapeflow.records == 34);
    CHECK(layers[4].tile == 0);
    CHECK(layers[4].tapeflow.records == 36);
    // Every movement of tape data is told: reopening tile 1 copied its first
    // 392 bytes back from memory into the scratchpad (DRAM read + SRAM write).
    // Totals:
    //   recording     SRAM written 2800 + 560
    //   close         SRAM read, DRAM written: 2800 (tiles 0, 1, 2) + 952 (tile 1 again)
    //   reset's read  DRAM read, SRAM written: 784 + 1008 (tiles 2 and 1,
    //                 staged to read the records it drops; no layer)
    //   reopen        DRAM read, SRAM written: 392
    //   staging       DRAM read, SRAM written: 2800 + 1960
    //   records       SRAM read 2800 + 1960
    //   adjoints      (300 + 70 x 3) = 510 accesses x 8 read and written, 1 fill
    bytes e;
    e.sram_written = 3360 + 1792 + 392 + 4760 + 4080 + 64;  // 14448
    e.sram_read = 3752 + 4760 + 4080;                       // 12592
    e.dram_written = 3752;
    e.dram_read = 1792 + 392 + 4760 + 64;  // 7008
    check_traffic(f.total, e, "tapeflow totals over both sweeps");
    // bytes moved out of the scratchpad were all put into it; reset's read
    // put 1792 more into it, which it read there and let go
    traffic in = probe->recorded_bytes;
    in += probe->moves_outside;
    CHECK(wr(in, sram) == rd(probe->moves_outside, sram) + 1792);
}

TEST_CASE("(j) reset(position) into a tile in the spill file, then new records") {
    // budget: tiles 0, 1 in memory, the rest in the file. 130 chain records
    // (tiles 36, 36, 36, 22 = 1008, 1008, 1008, 616); p after record 80
    // (tile 2: records 73-108, offset 8 x 28 = 224, byte 2240); sweep,
    // reset(p): tile 2 is read back from the file (all its 1008 bytes) into
    // the scratchpad; 10 more records (tile 2: 18 records, 504 B, to the file
    // again: memory holds tiles 0, 1); sweep.
    tapeflow_test::temp_directory dir;
    auto model = std::make_shared<hardware_model>();
    auto probe = std::make_shared<event_tally>(model);
    tapeflow::tape_options o = options_with(probe, 1024, true, 4 * 1024);
    o.spill_directory = dir.path();
    tapeflow::tape t(o);
    Real x = 1.001, y = 0.5;
    tapeflow::position p;
    Real out = record_chain(t, x, y, 130, [&](int i) {
        if (i == 80) p = t.get_position();
    });
    REQUIRE(p.bytes == 2240);
    REQUIRE(p.tile == 2);
    sweep_from(t, out);
    t.reset(p);
    t.start_recording();
    for (int i = 0; i < 10; ++i) out = out * x;
    t.stop_recording();
    REQUIRE(t.statistics().record_bytes == 2240 + 280);
    sweep_from(t, out);
    REQUIRE(t.statistics().tiles_spilled == 3);

    const auto f = model->tapeflow();
    CHECK(f.tape_bytes_written == 3640 + 280);
    CHECK(f.tape_bytes_swept == 3640 + 2520);
    //   recording   SRAM written 3640 + 280
    //   close       SRAM read 3640 + 504; DRAM written 1008 + 1008;
    //               file written 1008 + 616 + 504
    //   reset's read file read 616 + 1008, SRAM written 1624 (tiles 3 and
    //               2, staged to read the records it drops; no layer)
    //   reopen      file read 1008, SRAM written 1008
    //   staging     sweep 1: file 1008 + 616, DRAM 2016 -> SRAM 3640;
    //               sweep 2: file 504, DRAM 2016 -> SRAM 2520
    //   records     SRAM read 3640 + 2520
    //   adjoints    (130 + 90) x 3 = 660 accesses x 8 read and written, 1 fill
    bytes e;
    e.sram_written = 3920 + 1624 + 1008 + 3640 + 2520 + 5280 + 64;  // 18056
    e.sram_read = 4144 + 6160 + 5280;                        // 15584
    e.dram_written = 2016;
    e.dram_read = 2016 + 2016 + 64;  // 4096
    e.file_written = 1624 + 504;     // 2128
    e.file_read = 1624 + 1008 + 1624 + 504;  // 4760
    check_traffic(f.total, e, "tapeflow totals over both sweeps");
    const auto& layers = model->layers();
    REQUIRE(layers.size() == 4 + 3);
    CHECK(layers[4].tile == 2);
    CHECK(layers[4].tapeflow.records == 18);
    CHECK(rd(layers[4].tapeflow, file) == 504);  // staged from the file
}
