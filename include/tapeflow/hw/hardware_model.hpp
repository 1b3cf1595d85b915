// tapeflow/hw/hardware_model.hpp - counts the bytes a tape moves at each
// memory level and their energy, and the same recording accounted as a
// conventional tape and as a compiler-AD-like per-variable tape, for
// comparison.
//
// **Example**:
//   auto model = std::make_shared<tapeflow::hardware_model>();
//   tapeflow::tape_options options;
//   options.scratchpad = true;    // the tapeflow layout: tiles via the scratchpad
//   options.observer = model;
//   tapeflow::tape tape(options);
//   ... record, sweep ...
//   model->tapeflow().energy_pj, model->conventional().energy_pj, model->per_variable().energy_pj
//   tapeflow::print_report(*model);  // hw/report.hpp (needs fmt)
//
// What is counted (bytes, by level: SRAM, DRAM, file; the SRAM bytes also
// by on-chip structure: the scratchpad, each cache level, hardware_config.hpp):
//
//   tapeflow layout (what the tape does)
//     recording    records written into the scratchpad or, without one,
//                  straight into tiles in memory (DRAM)
//     tile moves   scratchpad -> memory or file: scratchpad read + DRAM/file write
//                  memory or file -> scratchpad: DRAM/file read + scratchpad write
//     sweep        each layer's record bytes read where they are (the
//                  scratchpad when staged, else from memory through the
//                  caches); adjoints through the caches, the last of them
//                  (the SRAM) less the scratchpad's room
//
//   conventional layout (the reference: structure of arrays, whole tape in
//   DRAM, as in tapes with separate statement/argument streams)
//     per statement 8 header bytes (lhs, k) + per pair 4 identifier bytes and
//     sizeof(Scalar) partial bytes, three streams written to DRAM while
//     recording and read backwards through the same caches as the adjoints
//
//   per-variable layout (a compiler-AD-like reference: what the reverse
//   code needs, cached per program variable in program order)
//     per statement its k values, sizeof(Scalar) each, no header and no
//     identifiers (compiled code knows them), appended to an array of its
//     own for each variable (the statement's lhs identifier; the tape keeps
//     a variable's identifier when it is assigned again), written to DRAM
//     while recording; the sweep reads each statement's element of its
//     array, so a loop reads as many arrays in turn as it assigns
//     variables, all through the same caches as the adjoints
//
//   caches: inclusive, fully associative LRU levels of line_bytes lines,
//   one stack of distances for all (lru_stack.hpp). An adjoint access is a
//   read-modify-write of one Scalar at the first level (a read for the
//   lhs of an update record, `s += ...`, which keeps its adjoint; its line
//   still counts as dirty, a small overestimate); each level it
//   misses gets the line from the next (DRAM after the last): next level
//   read + this level written. Every adjoint line is dirty, so each line a
//   level evicted was written back to the next (this level read + next
//   written), counted in the totals when a sweep ends. Lines still cached
//   then are not written back. Tape lines are clean.
//
//   energy: each structure's bytes at its own energy per byte (from its
//   size unless set), DRAM's and the file's at theirs.
//
//   every record's adjoint accesses are counted as if its adjoint were not
//   zero (the sweep skips the pairs of a record whose adjoint is 0; the
//   model sees records, not values). An external entry (custom adjoint)
//   counts its 8-byte record (conventional: an 8-byte header; per
//   variable: nothing) and one adjoint access; the work of its reverse
//   rule is not seen.
//
// Results: totals per layout, per region (records outside every region are
// region 0, "(outside regions)"; a record counts toward its innermost
// region), per layer (one per tile swept), SRAM needed and peak on-chip
// bytes. One model per tape; it is called on the tape's thread.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../stream/observer.hpp"
#include "../tape/record.hpp"
#include "../tape/region_table.hpp"
#include "hardware_config.hpp"
#include "lru_stack.hpp"

namespace tapeflow {

/// Most on-chip structures a model tells apart: the scratchpad, up to three
/// inner caches and the SRAM (hardware_config).
inline constexpr std::size_t max_on_chip_structures = 5;

/// Bytes read and written at each memory level, and the on-chip (SRAM)
/// bytes split by structure: on_chip[0] the scratchpad, on_chip[1 + j]
/// cache level j (the config's inner caches in order, then the SRAM).
/// The structures add up to the SRAM level: sum(on_chip) == bytes(sram).
struct traffic {
    std::array<std::uint64_t, memory_level_count> read{}, written{};
    std::array<std::uint64_t, max_on_chip_structures> on_chip{};  ///< read + written, by structure
    std::uint64_t records = 0;  ///< records swept

    std::uint64_t bytes(memory_level l) const noexcept {
        return read[std::size_t(l)] + written[std::size_t(l)];
    }
    traffic& operator+=(const traffic& o) noexcept {
        for (std::size_t l = 0; l < memory_level_count; ++l) {
            read[l] += o.read[l];
            written[l] += o.written[l];
        }
        for (std::size_t i = 0; i < max_on_chip_structures; ++i) on_chip[i] += o.on_chip[i];
        records += o.records;
        return *this;
    }
};

/// One on-chip structure as the model charges it.
struct on_chip_structure {
    std::string name;            ///< "scratchpad", an inner cache's name, the SRAM's name
    std::uint64_t capacity = 0;  ///< bytes (the scratchpad: the largest a sweep saw)
    double pj_per_byte = 0;      ///< as set, or from the capacity
};

/// What one layout did at one on-chip structure.
struct structure_summary {
    std::size_t index = 0;  ///< in traffic::on_chip and structures(): 0 the scratchpad
    on_chip_structure structure;
    std::uint64_t bytes = 0;   ///< read + written
    double energy_pj = 0;      ///< bytes x pj_per_byte
    std::uint64_t misses = 0;  ///< adjoint accesses that missed this cache (0 for the scratchpad)
};

/// What one layout needed.
struct layout_summary {
    traffic total;
    double energy_pj = 0;
    double on_chip_energy_pj = 0;  ///< of it, the on-chip structures' (the sum over structures)
    std::uint64_t tape_bytes_written = 0;  ///< record bytes written by recording
    std::uint64_t tape_bytes_swept = 0;    ///< record bytes read by sweeps
    std::uint64_t adjoint_accesses = 0;
    std::uint64_t adjoint_misses = 0;      ///< of which missed the last cache level (went to DRAM)
    std::uint64_t write_backs = 0;         ///< dirty adjoint lines the last level evicted to DRAM
    /// Smallest power-of-two cache (bytes) at which needed_hit_fraction of
    /// the adjoint re-references hit, plus the scratchpad (tapeflow layout).
    std::uint64_t sram_needed_bytes = 0;
    /// Most on-chip bytes in use: scratchpad + cached lines.
    std::uint64_t peak_on_chip_bytes = 0;
    /// Per on-chip structure, in the order of traffic::on_chip; the
    /// scratchpad only when the layout has one (tapeflow, streaming tape).
    std::vector<structure_summary> structures;
};

/// Traffic of one region, in the three layouts.
struct region_traffic {
    std::string label;          ///< "(outside regions)" for index 0
    std::size_t depth = 0;
    traffic tapeflow, conventional, per_variable;
};

/// Traffic of one layer (one tile swept): its staging and its records.
struct layer_traffic {
    std::size_t sweep = 0;  ///< 0 for the first sweep the model saw
    std::size_t tile = 0;
    memory_level level = memory_level::dram;  ///< where the sweep read it
    traffic tapeflow;
};

template <class Scalar>
class basic_hardware_model : public tape_observer {
public:
    using layout = record_layout<Scalar>;
    /// Bytes of one conventional statement header (lhs + k).
    static constexpr std::size_t conventional_header_bytes = 8;

    explicit basic_hardware_model(const hardware_config& config = {}) : config_(config) {
        check(config_);
        clear();
    }
    // Copying a model attached to a tape would split its events; share it
    // through the std::shared_ptr of tape_options::observer instead.
    basic_hardware_model(const basic_hardware_model&) = delete;
    basic_hardware_model& operator=(const basic_hardware_model&) = delete;

    const hardware_config& config() const noexcept { return config_; }

    /// The on-chip structures, in the order of traffic::on_chip: the
    /// scratchpad (capacity: the largest a sweep of the tape saw, 0 before
    /// the first; kept by clear()), the inner caches, the SRAM; each with
    /// the energy per byte the model charges (hardware_config.hpp).
    std::vector<on_chip_structure> structures() const {
        const std::array<double, max_on_chip_structures> pj = energies();
        std::vector<on_chip_structure> s;
        s.push_back({"scratchpad", scratchpad_bytes_, pj[scratchpad]});
        for (std::size_t j = 0; j < config_.inner_caches.size(); ++j)
            s.push_back({config_.inner_caches[j].name, config_.inner_caches[j].bytes, pj[structure_of(j)]});
        s.push_back({config_.sram_name, config_.sram_bytes, pj[structure_of(config_.inner_caches.size())]});
        return s;
    }
    /// Picojoules of `t`: the bytes at each on-chip structure times its
    /// energy per byte (structures()), plus DRAM and file bytes times theirs.
    double energy_pj(const traffic& t) const {
        const std::array<double, max_on_chip_structures> pj = energies();
        double e = 0;
        for (std::size_t i = 0; i < max_on_chip_structures; ++i) e += double(t.on_chip[i]) * pj[i];
        return e + double(t.bytes(memory_level::dram)) * config_.dram_pj_per_byte +
               double(t.bytes(memory_level::file)) * config_.file_pj_per_byte;
    }

    /// The tapeflow layout: what the tape did.
    layout_summary tapeflow() const { return summary(flow_, flow_cache_, scratchpad_peak_); }
    /// The same recording as a conventional structure-of-arrays tape.
    layout_summary conventional() const { return summary(conv_, conv_cache_, 0); }
    /// The same recording as a compiler-AD-like tape: the values each
    /// statement needs cached in one array per variable (its lhs), in
    /// program order.
    layout_summary per_variable() const { return summary(var_, var_cache_, 0); }
    /// Per region; index i + 1 is region i of the tape's region table.
    const std::vector<region_traffic>& regions() const noexcept { return regions_; }
    /// Per layer, in sweep order.
    const std::vector<layer_traffic>& layers() const noexcept { return layers_; }

    /// Sets every count to zero (keeps the configuration and what the model
    /// knows of the tape's tiles). Records already recorded are not counted
    /// again: clear between recordings to count one recording alone.
    void clear() {
        flow_ = conv_ = var_ = counts{};
        flow_cache_ = conv_cache_ = var_cache_ = cache{};
        configure_caches(scratchpad_bytes_);
        scratchpad_peak_ = 0;
        regions_.assign(1, region_traffic{});
        regions_[0].label = "(outside regions)";
        layers_.clear();
        staged_.clear();
        sweeps_ = 0;
    }

    // ---- tape_observer ------------------------------------------------------

    void recorded(std::uint64_t bytes, memory_level level) override {
        tile_bytes(flow_.total, level, 0, bytes);
        flow_.tape_written += bytes;
        new_bytes_ = bytes;
    }
    void tile_finished(std::size_t tile, std::size_t used) override {
        if (tile_start_.size() < tile + 1) tile_start_.resize(tile + 1, tile_start_.back());
        tile_start_.resize(tile + 2);
        tile_start_[tile + 1] = tile_start_[tile] + used;
    }
    void tile_moved(std::size_t tile, std::size_t bytes, memory_level from, memory_level to) override {
        traffic t;
        tile_bytes(t, from, bytes, 0);
        tile_bytes(t, to, 0, bytes);
        flow_.total += t;
        if (sweeping_) staged_.emplace_back(tile, t);  // attributed to the layer of `tile`
    }
    void sweep_begins(const sweep_context& c) override {
        if (c.adjoint_bytes != sizeof(Scalar))
            throw usage_error("a basic_hardware_model<S> reads the records of a tape of S: attach "
                              "basic_hardware_model<float> to a tape_f, basic_hardware_model<long double> "
                              "to a tape_l (this model's S has " + std::to_string(sizeof(Scalar)) +
                              " bytes, the tape's " + std::to_string(c.adjoint_bytes) + ")");
        if (c.scratchpad_bytes > 0) check_room(c.scratchpad_bytes);
        sweeping_ = true;
        context_ = c;
        // records past what was recorded before the last recorded() are new
        const std::uint64_t new_from = c.record_bytes - std::min(new_bytes_, c.record_bytes);
        new_bytes_ = 0;
        cut_written(new_from);
        swept_begin_ = std::numeric_limits<std::uint64_t>::max();
        swept_end_ = 0;
        scratchpad_peak_ = std::max<std::uint64_t>(scratchpad_peak_, c.scratchpad_bytes);
        scratchpad_bytes_ = std::max<std::uint64_t>(scratchpad_bytes_, c.scratchpad_bytes);
        configure_caches(c.scratchpad_bytes);
        // conventional stream cursors: fresh per sweep (positions count down)
        conv_statement_ = conv_pair_ = std::uint64_t(1) << 40;
        // per-variable arrays: read from their ends, their lines new to this sweep
        arrays_.assign(arrays_.size(), array_cursor{});
        segments(c);
    }
    void layer(std::size_t tile, const std::byte* data, std::size_t begin, std::size_t end,
               memory_level level) override {
        layer_traffic lt;
        lt.sweep = sweeps_;
        lt.tile = tile;
        lt.level = level;
        for (auto it = staged_.begin(); it != staged_.end();)
            if (it->first == tile) {
                lt.tapeflow += it->second;
                it = staged_.erase(it);
            } else {
                ++it;
            }
        const std::uint64_t base = tile < tile_start_.size() ? tile_start_[tile] : tile_start_.back();
        reverse_record_reader<Scalar> r(data + begin, data + end);
        while (r.more()) {
            const record_header h = r.previous();
            const bool external = h.count == 0;
            if (external) r.take_external();
            const std::size_t size = external ? layout::external_size : layout::size(h.count);
            const std::byte* cursor = r.record();
            const std::uint64_t global = base + std::uint64_t(cursor - data);
            region_traffic& region = regions_[region_of(global)];
            traffic flow, conv, var;
            flow.records = conv.records = var.records = 1;
            // the conventional tape writes a record once: the first time a sweep meets it
            const bool is_new = !written(global);
            swept_begin_ = std::min(swept_begin_, global);
            swept_end_ = std::max(swept_end_, global + size);
            sweep_record(r, h, size, level, is_new, flow, conv, var);
            region.tapeflow += flow;
            region.conventional += conv;
            region.per_variable += var;
            lt.tapeflow += flow;
            flow_.total += flow;
            conv_.total += conv;
            var_.total += var;
        }
        layers_.push_back(lt);
    }
    void sweep_ends() override {
        write_backs(flow_cache_, flow_);
        write_backs(conv_cache_, conv_);
        write_backs(var_cache_, var_);
        if (swept_begin_ < swept_end_) add_written(swept_begin_, swept_end_);
        sweeping_ = false;
        staged_.clear();
        ++sweeps_;
    }
    void tile_reopened(std::size_t tile) override {
        if (tile_start_.size() > tile + 1) tile_start_.resize(tile + 1);
    }
    void cleared() override {
        tile_start_.assign(1, 0);
        written_.clear();
    }

private:
    struct counts {
        traffic total;
        std::uint64_t tape_written = 0, tape_swept = 0;
    };
    // Cache levels: the inner caches and the SRAM.
    static constexpr std::size_t max_levels = max_on_chip_structures - 1;
    static constexpr std::size_t scratchpad = 0;  // index in traffic::on_chip
    // Index in traffic::on_chip of cache level j.
    static constexpr std::size_t structure_of(std::size_t level) noexcept { return 1 + level; }

    // An inclusive hierarchy of fully associative LRU caches, simulated by
    // one stack: an access at stack distance d hits level j when d is below
    // its capacity, and misses every level before (LRU caches of growing
    // sizes and the same line hold nested sets of lines).
    struct cache {
        lru_stack stack;
        std::size_t levels = 1;
        std::array<std::uint64_t, max_levels> capacity{};      // lines, per level
        std::uint64_t accesses = 0;                             // adjoint accesses
        std::array<std::uint64_t, max_levels> misses{};        // adjoint misses, per level
        std::array<std::uint64_t, max_levels> written_back{};  // adjoint lines written back so far, per level
        std::array<std::uint64_t, 65> reuse{};  // adjoint re-references by bit width of the distance
        std::uint64_t peak_lines = 0;
        // tape streams read through the cache: the line each is in and its
        // key (tape lines are numbered in the order they are first read)
        std::array<std::uint64_t, 3> stream_line{~std::uint64_t(0), ~std::uint64_t(0), ~std::uint64_t(0)};
        std::array<std::uint64_t, 3> stream_key{};
        std::uint64_t next_key = 0;
    };

    // The traffic of one record in the three layouts.
    void sweep_record(const reverse_record_reader<Scalar>& r, const record_header& h, std::size_t size,
                      memory_level level, bool is_new, traffic& flow, traffic& conv, traffic& var) {
        const std::byte* at = r.record();
        // tapeflow: the record's bytes where the layer is
        flow_.tape_swept += size;
        if (level == memory_level::dram) {  // read in place from memory, through the caches
            on_chip(flow, structure_of(0), size, 0);
            const std::uint64_t a = std::uint64_t(reinterpret_cast<std::uintptr_t>(at));
            stream_lines(flow_cache_, flow, 0, a, size);
        } else {
            tile_bytes(flow, level, size, 0);  // staged: the scratchpad
        }
        // conventional: header, identifiers and partials streams (of the
        // same records: an update's lhs pair is left out there too)
        const std::uint64_t k = h.count;
        const std::uint64_t conv_bytes = conventional_header_bytes + k * layout::pair_bytes;
        if (is_new) {
            conv.written[std::size_t(memory_level::dram)] += conv_bytes;
            conv_.tape_written += conv_bytes;
        }
        on_chip(conv, structure_of(0), conv_bytes, 0);  // read from the first cache
        conv_.tape_swept += conv_bytes;
        conv_statement_ -= 1;
        conv_pair_ -= k;
        stream_lines(conv_cache_, conv, 0, conv_statement_ * conventional_header_bytes, conventional_header_bytes);
        if (k > 0) {
            stream_lines(conv_cache_, conv, 1, conv_pair_ * sizeof(identifier), k * sizeof(identifier));
            stream_lines(conv_cache_, conv, 2, conv_pair_ * sizeof(Scalar), k * sizeof(Scalar));
        }
        // per variable: k values (no header, no identifiers: the code knows
        // them), the element of the lhs's array this statement appended
        const std::uint64_t var_bytes = k * sizeof(Scalar);
        if (is_new) {
            var.written[std::size_t(memory_level::dram)] += var_bytes;
            var_.tape_written += var_bytes;
        }
        if (var_bytes > 0) {
            on_chip(var, structure_of(0), var_bytes, 0);  // read from the first cache
            var_.tape_swept += var_bytes;
            if (arrays_.size() <= h.lhs) arrays_.resize(std::size_t(h.lhs) + 1);
            array_cursor& a = arrays_[h.lhs];
            a.end -= var_bytes;
            read_lines(var_cache_, var, a.line, a.key, a.end, var_bytes);
        }
        // adjoints: lhs (read, then set to 0; an update record's is only
        // read), then each pair's target
        adjoint(flow_cache_, flow, h.lhs, !h.update);
        adjoint(conv_cache_, conv, h.lhs, !h.update);
        adjoint(var_cache_, var, h.lhs, !h.update);
        for (std::uint32_t i = 0; i < h.count; ++i) {
            const identifier id = r.id(i);
            adjoint(flow_cache_, flow, id);
            adjoint(conv_cache_, conv, id);
            adjoint(var_cache_, var, id);
        }
    }

    // One read-modify-write of adjoint `id` through cache c (a read only
    // when not `written`): at the first level, with a line filled into each
    // level it missed.
    void adjoint(cache& c, traffic& t, identifier id, bool written = true) {
        const std::size_t b = context_.adjoint_bytes * context_.lanes;  // one row of lanes
        on_chip(t, structure_of(0), b, written ? b : 0);
        const std::uint64_t distance = c.stack.access(0, std::uint64_t(id) * b / config_.line_bytes);
        ++c.accesses;
        if (distance != lru_stack::cold) {
            std::size_t width = 0;
            for (std::uint64_t d = distance; d != 0; d >>= 1) ++width;
            ++c.reuse[width];
        }
        const std::size_t missed = serve(c, t, distance);
        for (std::size_t j = 0; j < missed; ++j) ++c.misses[j];
    }
    // An access at stack distance `distance` through cache c: a line filled
    // into each level it missed, from the first level on; returns how many.
    std::size_t serve(cache& c, traffic& t, std::uint64_t distance) const {
        std::size_t j = 0;
        for (; j < c.levels && (distance == lru_stack::cold || distance >= c.capacity[j]); ++j) fill(c, t, j);
        c.peak_lines = std::max<std::uint64_t>(c.peak_lines,
                                               std::min<std::uint64_t>(c.stack.distinct(), c.capacity[c.levels - 1]));
        return j;
    }
    // Every adjoint line is dirty once touched, so each one a level has
    // evicted was written back to the next level (DRAM after the last):
    // evicted = missed - still cached. Counted in the totals when a sweep
    // ends (regions and layers leave them out).
    void write_backs(cache& c, counts& n) {
        for (std::size_t j = 0; j < c.levels; ++j) {
            const std::uint64_t evicted = c.misses[j] - c.stack.resident(0, c.capacity[j]);
            // (a level that grew since the last sweep can hold lines it had evicted: none to write now)
            const std::uint64_t lines = (evicted > c.written_back[j] ? evicted - c.written_back[j] : 0) * config_.line_bytes;
            c.written_back[j] = std::max(c.written_back[j], evicted);
            on_chip(n.total, structure_of(j), lines, 0);
            if (j + 1 < c.levels)
                on_chip(n.total, structure_of(j + 1), 0, lines);
            else
                n.total.written[std::size_t(memory_level::dram)] += lines;
        }
    }
    // A line missed at level j: read from the next level (DRAM after the
    // last) and written into level j.
    void fill(const cache& c, traffic& t, std::size_t j) const {
        on_chip(t, structure_of(j), 0, config_.line_bytes);
        if (j + 1 < c.levels)
            on_chip(t, structure_of(j + 1), config_.line_bytes, 0);
        else
            t.read[std::size_t(memory_level::dram)] += config_.line_bytes;
    }
    // Energy per byte of each structure, in the order of traffic::on_chip.
    // Before any sweep told the scratchpad's size, its bytes cost the SRAM's.
    std::array<double, max_on_chip_structures> energies() const {
        std::array<double, max_on_chip_structures> pj{};
        pj[scratchpad] = config_.scratchpad_pj_per_byte > 0 ? config_.scratchpad_pj_per_byte
                         : scratchpad_bytes_ > 0             ? sram_pj_per_byte_of(scratchpad_bytes_)
                                                             : config_.sram_energy();
        const std::size_t inner = config_.inner_caches.size();
        for (std::size_t j = 0; j < inner; ++j) {
            const cache_level& l = config_.inner_caches[j];
            pj[structure_of(j)] = l.pj_per_byte > 0 ? l.pj_per_byte : sram_pj_per_byte_of(l.bytes);
        }
        pj[structure_of(inner)] = config_.sram_energy();
        return pj;
    }
    // The cache levels of the three layouts: every level as configured; in
    // the tapeflow layout the scratchpad takes its room from the SRAM's.
    void configure_caches(std::uint64_t scratchpad_bytes) {
        const std::size_t levels = config_.inner_caches.size() + 1;
        flow_cache_.levels = conv_cache_.levels = var_cache_.levels = levels;
        for (std::size_t j = 0; j + 1 < levels; ++j)
            flow_cache_.capacity[j] = conv_cache_.capacity[j] = var_cache_.capacity[j] =
                config_.inner_caches[j].bytes / config_.line_bytes;
        const std::uint64_t lines = config_.sram_bytes / config_.line_bytes;
        const std::uint64_t pad_lines = (scratchpad_bytes + config_.line_bytes - 1) / config_.line_bytes;
        flow_cache_.capacity[levels - 1] = lines > pad_lines ? lines - pad_lines : 0;
        conv_cache_.capacity[levels - 1] = var_cache_.capacity[levels - 1] = lines;
    }
    // The SRAM left beside a scratchpad must hold a line and be larger than
    // every inner cache (the levels nest).
    void check_room(std::uint64_t scratchpad_bytes) const {
        const std::uint64_t left = scratchpad_bytes < config_.sram_bytes ? config_.sram_bytes - scratchpad_bytes : 0;
        const std::uint64_t inner = config_.inner_caches.empty() ? 0 : config_.inner_caches.back().bytes;
        if (left < config_.line_bytes || left <= inner)
            throw usage_error("hardware_config: the tape's scratchpad (" + std::to_string(scratchpad_bytes) +
                              " bytes, two tiles) leaves " + std::to_string(left) + " of the SRAM's " +
                              std::to_string(config_.sram_bytes) + " bytes for the adjoints" +
                              (inner > 0 ? ", not more than the last inner cache (" + std::to_string(inner) + ")" : "") +
                              ": raise sram_bytes or lower tape_options::tile_bytes");
    }
    // Tile bytes read or written at a level: on chip, tiles are only ever in
    // the scratchpad.
    static void tile_bytes(traffic& t, memory_level level, std::uint64_t read, std::uint64_t written) noexcept {
        t.read[std::size_t(level)] += read;
        t.written[std::size_t(level)] += written;
        if (level == memory_level::sram) t.on_chip[scratchpad] += read + written;
    }
    static void on_chip(traffic& t, std::size_t structure, std::uint64_t read, std::uint64_t written) noexcept {
        t.read[std::size_t(memory_level::sram)] += read;
        t.written[std::size_t(memory_level::sram)] += written;
        t.on_chip[structure] += read + written;
    }
    static void check(const hardware_config& c) {
        auto refuse = [](const std::string& what) {
            throw usage_error("hardware_config: " + what);
        };
        if (c.line_bytes == 0) refuse("line_bytes is 0: give the cache line size in bytes (64 on most CPUs)");
        if (c.inner_caches.size() > max_levels - 1)
            refuse("more than " + std::to_string(max_levels - 1) + " inner caches (" +
                   std::to_string(c.inner_caches.size()) + "): give at most " + std::to_string(max_levels - 1) +
                   ", the SRAM (sram_bytes) is the last level");
        std::size_t before = 0;
        for (const cache_level& l : c.inner_caches) {
            if (l.bytes < c.line_bytes || l.bytes <= before || l.bytes >= c.sram_bytes)
                refuse("inner cache '" + l.name + "' of " + std::to_string(l.bytes) +
                       " bytes: inner caches must hold at least one line, grow from the first to the last, "
                       "and each be smaller than sram_bytes (" + std::to_string(c.sram_bytes) + ")");
            before = l.bytes;
        }
    }

    // The lines of bytes [offset, offset + bytes) of tape stream s, read
    // backwards through cache c (a miss per line not cached).
    void stream_lines(cache& c, traffic& t, std::size_t s, std::uint64_t offset, std::uint64_t bytes) {
        read_lines(c, t, c.stream_line[s], c.stream_key[s], offset, bytes);
    }
    // The lines of bytes [offset, offset + bytes) of a tape stream or a
    // per-variable array, read backwards through cache c. A stream is read
    // from its end to its start in a sweep, so a line it left is not read
    // again: `line` and `key` are the stream's current line and its key in
    // the cache's stack (a new key per line met).
    void read_lines(cache& c, traffic& t, std::uint64_t& line, std::uint64_t& key, std::uint64_t offset,
                    std::uint64_t bytes) {
        const std::uint64_t first = offset / config_.line_bytes;
        const std::uint64_t last = (offset + bytes - 1) / config_.line_bytes;
        for (std::uint64_t l = last + 1; l-- > first;) {
            if (l != line) {
                line = l;
                key = c.next_key++;
            }
            tape_line(c, t, key);
        }
    }
    // A tape line (clean: never written back) read through cache c.
    void tape_line(cache& c, traffic& t, std::uint64_t key) {
        serve(c, t, c.stack.access(1, key));
    }

    bool written(std::uint64_t at) const {
        auto it = std::upper_bound(written_.begin(), written_.end(), std::make_pair(at, ~std::uint64_t(0)));
        return it != written_.begin() && at < std::prev(it)->second;
    }
    void add_written(std::uint64_t begin, std::uint64_t end) {
        std::vector<std::pair<std::uint64_t, std::uint64_t>> merged;
        bool placed = false;
        for (const auto& r : written_) {
            if (r.second < begin || end < r.first) {  // apart
                if (!placed && end < r.first) {
                    merged.emplace_back(begin, end);
                    placed = true;
                }
                merged.push_back(r);
            } else {  // overlapping or adjacent: grow the new range
                begin = std::min(begin, r.first);
                end = std::max(end, r.second);
            }
        }
        if (!placed) merged.emplace_back(begin, end);
        written_.swap(merged);
    }
    // Records at or past `at` are new (recorded after a reset to `at`).
    void cut_written(std::uint64_t at) {
        while (!written_.empty() && written_.back().first >= at) written_.pop_back();
        if (!written_.empty() && written_.back().second > at) written_.back().second = at;
    }

    // Region index (into regions_) of the record at record byte `global`.
    std::size_t region_of(std::uint64_t global) const {
        auto it = std::upper_bound(segment_start_.begin(), segment_start_.end(), global);
        if (it == segment_start_.begin()) return 0;
        return segment_region_[std::size_t(it - segment_start_.begin()) - 1];
    }
    // Flattens the nested regions into disjoint byte ranges, each labelled
    // with its innermost region (0: outside every region).
    void segments(const sweep_context& c) {
        segment_start_.clear();
        segment_region_.clear();
        if (!c.regions) return;
        const region_table& table = *c.regions;
        if (regions_.size() < table.size() + 1) regions_.resize(table.size() + 1);
        std::vector<std::size_t> open;
        auto mark = [&](std::uint64_t at) {
            const std::size_t r = open.empty() ? 0 : open.back() + 1;
            if (!segment_start_.empty() && segment_start_.back() == at) {
                segment_region_.back() = r;
            } else {
                segment_start_.push_back(at);
                segment_region_.push_back(r);
            }
        };
        // a region still open (its Region object in scope) reaches the end of the tape
        auto end_of = [&](std::size_t i) { return table[i].open ? c.record_bytes : table[i].end.bytes; };
        auto close_until = [&](std::uint64_t at) {
            while (!open.empty() && end_of(open.back()) <= at) {
                const std::uint64_t end = end_of(open.back());
                open.pop_back();
                mark(end);
            }
        };
        for (std::size_t i = 0; i < table.size(); ++i) {
            const region_info& r = table[i];
            regions_[i + 1].label = r.label.empty() ? "region " + std::to_string(i) : r.label;
            regions_[i + 1].depth = r.depth + 1;
            close_until(r.begin.bytes);
            open.push_back(i);
            mark(r.begin.bytes);
        }
        close_until(std::numeric_limits<std::uint64_t>::max());
    }

    layout_summary summary(const counts& n, const cache& c, std::uint64_t scratchpad_bytes) const {
        layout_summary s;
        s.total = n.total;
        s.energy_pj = energy_pj(n.total);
        s.tape_bytes_written = n.tape_written;
        s.tape_bytes_swept = n.tape_swept;
        s.adjoint_accesses = c.accesses;
        s.adjoint_misses = c.misses[c.levels - 1];
        s.write_backs = c.written_back[c.levels - 1];
        const std::vector<on_chip_structure> on = structures();
        // the scratchpad when the layout has one (the tapeflow layout of a streaming tape)
        const bool has_scratchpad = scratchpad_bytes > 0 || n.total.on_chip[scratchpad] > 0;
        for (std::size_t i = has_scratchpad ? 0 : 1; i < on.size(); ++i) {
            structure_summary one;
            one.index = i;
            one.structure = on[i];
            one.bytes = n.total.on_chip[i];
            one.energy_pj = double(one.bytes) * on[i].pj_per_byte;
            if (i > 0 && i - 1 < c.levels) one.misses = c.misses[i - 1];
            s.on_chip_energy_pj += one.energy_pj;
            s.structures.push_back(one);
        }
        std::uint64_t reuses = 0;
        for (std::uint64_t r : c.reuse) reuses += r;
        std::uint64_t hits = 0, lines = 1;
        for (std::size_t w = 0; w < c.reuse.size(); ++w) {
            hits += c.reuse[w];  // distances of bit width w are < 2^w
            lines = std::uint64_t(1) << std::min<std::size_t>(w, 63);
            if (double(hits) >= config_.needed_hit_fraction * double(reuses)) break;
        }
        s.sram_needed_bytes = (reuses == 0 ? 0 : lines * config_.line_bytes) + scratchpad_bytes;
        s.peak_on_chip_bytes = c.peak_lines * config_.line_bytes + scratchpad_bytes;
        return s;
    }

    hardware_config config_;
    counts flow_, conv_, var_;
    cache flow_cache_, conv_cache_, var_cache_;
    // A per-variable array in a sweep: where the part not yet read ends
    // (counts down from 2^36), the line being read and its key (as
    // cache::stream_line and stream_key).
    struct array_cursor {
        std::uint64_t end = std::uint64_t(1) << 36;
        std::uint64_t line = ~std::uint64_t(0);
        std::uint64_t key = 0;
    };
    std::vector<array_cursor> arrays_;  // by variable (lhs identifier)
    std::uint64_t scratchpad_peak_ = 0;
    std::uint64_t scratchpad_bytes_ = 0;  // the largest scratchpad a sweep saw, kept by clear(): its energy
    std::vector<region_traffic> regions_;
    std::vector<layer_traffic> layers_;
    std::vector<std::pair<std::size_t, traffic>> staged_;  // tile moves of this sweep, by tile
    std::size_t sweeps_ = 0;
    bool sweeping_ = false;
    sweep_context context_;
    std::vector<std::uint64_t> tile_start_ = {0};  // record bytes before each tile
    std::uint64_t new_bytes_ = 0;            // last recorded() amount
    // record byte ranges [begin, end) the conventional tape has written
    // already (met by an earlier sweep of this recording): sorted, disjoint
    std::vector<std::pair<std::uint64_t, std::uint64_t>> written_;
    std::uint64_t swept_begin_ = 0, swept_end_ = 0;  // range met by the current sweep
    std::uint64_t conv_statement_ = 0, conv_pair_ = 0;  // conventional stream cursors
    std::vector<std::uint64_t> segment_start_;
    std::vector<std::size_t> segment_region_;
};

using hardware_model = basic_hardware_model<double>;

}  // namespace tapeflow
