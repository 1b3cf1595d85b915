// tapeflow/hw/report.hpp - a hardware_model's counts as tables (fmt), CSV
// and JSON. Opt-in: needs fmt 9 (link fmt::fmt); no core header includes it.
//
// **Example**:
//   #include <tapeflow/hw/report.hpp>
//   tapeflow::print_report(*model);              // regions table + totals, on stdout
//   tapeflow::print_layers(*model);              // one row per tile swept (long)
//   std::string csv = tapeflow::to_csv(*model);  // for plots
//   std::string json = tapeflow::to_json(*model);
//
// The tables give bytes in human units (B, KiB, MiB, GiB) and energy in pJ,
// nJ, uJ, mJ or J; CSV and JSON give exact byte counts and energy in pJ.
//
// Which traffic is where: a region's row holds what the sweeps did for its
// records (record bytes read, adjoint accesses, misses and write-backs; for
// the conventional and per-variable layouts also the writing of its
// records). The tapeflow
// layout's recording writes and tile moves belong to no region: the tables
// and the CSV show them in a row of their own, "(not per region)",
// so that the rows add up to the total. File traffic is only ever a tile
// move, so the region rows have no file bytes.
//
//   CSV   kind,index,label,depth,records,tapeflow_sram_read,...,conventional_energy_pj,
//         per_variable_sram_read,...,per_variable_energy_pj
//         kind: region (index = position in model.regions()), other, total
//   JSON  {"config": {...}, "structures": [...], "totals": {"tapeflow": {...},
//          "conventional": {...}, "per_variable": {...}}, "regions": [...], "layers": [...]}
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "hardware_model.hpp"

namespace tapeflow {

/// Bytes in human units: "812 B", "1.5 KiB", "12.0 MiB", "3.25 GiB".
inline std::string format_bytes(std::uint64_t bytes) {
    const double b = double(bytes);
    if (bytes < 1024) return fmt::format("{} B", bytes);
    if (bytes < (std::uint64_t(1) << 20)) return fmt::format("{:.1f} KiB", b / 1024);
    if (bytes < (std::uint64_t(1) << 30)) return fmt::format("{:.1f} MiB", b / double(1 << 20));
    return fmt::format("{:.2f} GiB", b / double(std::uint64_t(1) << 30));
}

/// Picojoules in the largest unit below the value: "850 pJ", "12.3 nJ",
/// "4.6 uJ", "1.2 mJ", "2.00 J".
inline std::string format_energy(double pj) {
    if (pj < 1e3) return fmt::format("{:.0f} pJ", pj);
    if (pj < 1e6) return fmt::format("{:.1f} nJ", pj / 1e3);
    if (pj < 1e9) return fmt::format("{:.1f} uJ", pj / 1e6);
    if (pj < 1e12) return fmt::format("{:.1f} mJ", pj / 1e9);
    return fmt::format("{:.2f} J", pj / 1e12);
}

namespace detail {

// 12345678 -> "12 345 678"
inline std::string grouped(std::uint64_t n) {
    const std::string digits = std::to_string(n);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ' ';
        out += digits[i];
    }
    return out;
}

// a - b, level by level (b holds part of a's counts)
inline traffic minus(const traffic& a, const traffic& b) {
    traffic d;
    for (std::size_t l = 0; l < memory_level_count; ++l) {
        d.read[l] = a.read[l] - b.read[l];
        d.written[l] = a.written[l] - b.written[l];
    }
    for (std::size_t i = 0; i < max_on_chip_structures; ++i) d.on_chip[i] = a.on_chip[i] - b.on_chip[i];
    d.records = a.records - b.records;
    return d;
}

// What no region holds (not per region) and the total, per layout.
struct report_rows {
    traffic other_flow, other_conv, other_var, total_flow, total_conv, total_var;
};

template <class Scalar>
report_rows rows_of(const basic_hardware_model<Scalar>& model) {
    report_rows r;
    traffic in_flow, in_conv, in_var;
    for (const region_traffic& region : model.regions()) {
        in_flow += region.tapeflow;
        in_conv += region.conventional;
        in_var += region.per_variable;
    }
    r.total_flow = model.tapeflow().total;
    r.total_conv = model.conventional().total;
    r.total_var = model.per_variable().total;
    r.other_flow = minus(r.total_flow, in_flow);
    r.other_conv = minus(r.total_conv, in_conv);
    r.other_var = minus(r.total_var, in_var);
    return r;
}

inline const char* level_key(memory_level level) {
    switch (level) {
        case memory_level::sram: return "sram";
        case memory_level::dram: return "dram";
        case memory_level::file: return "file";
    }
    return "?";
}

// A JSON number: shortest round-trip form; null for inf and NaN.
inline std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

inline std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            out += fmt::format("\\u{:04x}", unsigned(static_cast<unsigned char>(c)));
        } else {
            out += c;
        }
    }
    return out + '"';
}

inline std::string csv_string(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + '"';
}

// "sram_read":1,"sram_written":2,...,"records":3,"energy_pj":4.5
template <class Scalar>
std::string json_traffic(const traffic& t, const basic_hardware_model<Scalar>& model) {
    std::string out = "{";
    for (std::size_t l = 0; l < memory_level_count; ++l) {
        const char* key = level_key(memory_level(l));
        out += fmt::format("\"{}_read\": {}, \"{}_written\": {}, ", key, t.read[l], key, t.written[l]);
    }
    return out + fmt::format("\"records\": {}, \"energy_pj\": {}}}", t.records, json_number(model.energy_pj(t)));
}

inline std::string json_structure(const on_chip_structure& s) {
    return fmt::format("\"name\": {}, \"capacity\": {}, \"pj_per_byte\": {}", json_string(s.name), s.capacity,
                       json_number(s.pj_per_byte));
}

template <class Scalar>
std::string json_summary(const layout_summary& s, const basic_hardware_model<Scalar>& model) {
    std::string out = json_traffic(s.total, model);
    out.pop_back();  // the closing brace
    out += fmt::format(
        ", \"tape_bytes_written\": {}, \"tape_bytes_swept\": {}, \"adjoint_accesses\": {}, "
        "\"adjoint_misses\": {}, \"write_backs\": {}, \"sram_needed_bytes\": {}, "
        "\"peak_on_chip_bytes\": {}, \"on_chip_energy_pj\": {}, \"structures\": [",
        s.tape_bytes_written, s.tape_bytes_swept, s.adjoint_accesses, s.adjoint_misses, s.write_backs,
        s.sram_needed_bytes, s.peak_on_chip_bytes, json_number(s.on_chip_energy_pj));
    for (std::size_t i = 0; i < s.structures.size(); ++i) {
        const structure_summary& one = s.structures[i];
        out += fmt::format("{}{{{}, \"bytes\": {}, \"energy_pj\": {}, \"misses\": {}}}", i == 0 ? "" : ", ",
                           json_structure(one.structure), one.bytes, json_number(one.energy_pj), one.misses);
    }
    return out + "]}";
}

// ",6 counts,energy" of one layout in CSV
template <class Scalar>
std::string csv_traffic(const traffic& t, const basic_hardware_model<Scalar>& model) {
    std::string out;
    for (std::size_t l = 0; l < memory_level_count; ++l)
        out += fmt::format(",{},{}", t.read[l], t.written[l]);
    return out + fmt::format(",{}", model.energy_pj(t));
}

// conventional / tapeflow, or "-" when tapeflow is 0
inline std::string ratio(double conventional, double tapeflow) {
    return tapeflow > 0 ? fmt::format("{:.2f}x", conventional / tapeflow) : std::string("-");
}

}  // namespace detail

/// Prints one row per region (label indented by depth; records swept; SRAM,
/// DRAM and file bytes and energy of each layout), a row for the traffic of
/// no region (not per region) and the total.
template <class Scalar>
void print_regions(const basic_hardware_model<Scalar>& model, std::FILE* out = stdout) {
    std::size_t width = 24;
    for (const region_traffic& r : model.regions()) width = std::max(width, 2 * r.depth + r.label.size());
    auto row = [&](const std::string& label, const traffic& flow, const traffic& conv, const traffic& var) {
        fmt::print(out, "  {:<{}} {:>9}  {:>10} {:>10} {:>10} {:>9}  {:>10} {:>10} {:>9}  {:>10} {:>10} {:>9}\n",
                   label, width, detail::grouped(flow.records), format_bytes(flow.bytes(memory_level::sram)),
                   format_bytes(flow.bytes(memory_level::dram)), format_bytes(flow.bytes(memory_level::file)),
                   format_energy(model.energy_pj(flow)), format_bytes(conv.bytes(memory_level::sram)),
                   format_bytes(conv.bytes(memory_level::dram)), format_energy(model.energy_pj(conv)),
                   format_bytes(var.bytes(memory_level::sram)), format_bytes(var.bytes(memory_level::dram)),
                   format_energy(model.energy_pj(var)));
    };
    fmt::print(out, "bytes moved (read + written) and energy per region\n");
    fmt::print(out, "  {:<{}} {:>9}  {:-^42}  {:-^31}  {:-^31}\n", "", width, "", " tapeflow ", " conventional ",
               " per variable ");
    fmt::print(out, "  {:<{}} {:>9}  {:>10} {:>10} {:>10} {:>9}  {:>10} {:>10} {:>9}  {:>10} {:>10} {:>9}\n",
               "region", width, "records", "SRAM", "DRAM", "file", "energy", "SRAM", "DRAM", "energy", "SRAM", "DRAM",
               "energy");
    for (const region_traffic& r : model.regions())
        row(std::string(2 * r.depth, ' ') + r.label, r.tapeflow, r.conventional, r.per_variable);
    const detail::report_rows rows = detail::rows_of(model);
    row("(not per region)", rows.other_flow, rows.other_conv, rows.other_var);
    row("total", rows.total_flow, rows.total_conv, rows.total_var);
}

/// Prints one row per layer (a tile swept, in sweep order) of the tapeflow
/// layout: the tile's staging and its records. One row per tile and sweep,
/// so it may be long.
template <class Scalar>
void print_layers(const basic_hardware_model<Scalar>& model, std::FILE* out = stdout) {
    constexpr const char* line = "  {:>5} {:>6} {:>5} {:>9}  {:>10} {:>10} {:>10} {:>9}\n";
    fmt::print(out, "tapeflow layout per layer (tile swept: staging + records)\n");
    fmt::print(out, line, "sweep", "tile", "from", "records", "SRAM", "DRAM", "file", "energy");
    for (const layer_traffic& l : model.layers()) {
        const traffic& t = l.tapeflow;
        fmt::print(out, line, l.sweep, l.tile, name(l.level), detail::grouped(t.records),
                   format_bytes(t.bytes(memory_level::sram)), format_bytes(t.bytes(memory_level::dram)),
                   format_bytes(t.bytes(memory_level::file)), format_energy(model.energy_pj(t)));
    }
}

/// Prints one row per on-chip structure (the scratchpad, the caches, the
/// SRAM): its capacity and energy per byte, and per layout (tapeflow,
/// conventional, per variable) the bytes read and written there, their
/// energy and the adjoint misses (caches).
template <class Scalar>
void print_structures(const basic_hardware_model<Scalar>& model, std::FILE* out = stdout) {
    const layout_summary layouts[] = {model.tapeflow(), model.conventional(), model.per_variable()};
    constexpr const char* line = "  {:<12} {:>10} {:>6}  {:>10} {:>9} {:>9}  {:>10} {:>9} {:>9}  {:>10} {:>9} {:>9}\n";
    fmt::print(out, "{:<33}  {:-^30}  {:-^30}  {:-^30}\n", "on-chip structures", " tapeflow ", " conventional ",
               " per variable ");
    fmt::print(out, line, "structure", "capacity", "pJ/B", "bytes", "energy", "misses", "bytes", "energy", "misses",
               "bytes", "energy", "misses");
    const std::vector<on_chip_structure> structures = model.structures();
    for (std::size_t i = 0; i < structures.size(); ++i) {
        const on_chip_structure& s = structures[i];
        std::array<std::string, 9> cells;
        cells.fill("-");
        bool any = false;
        for (std::size_t l = 0; l < 3; ++l)
            for (const structure_summary& one : layouts[l].structures)
                if (one.index == i) {
                    cells[3 * l] = format_bytes(one.bytes);
                    cells[3 * l + 1] = format_energy(one.energy_pj);
                    if (i > 0) cells[3 * l + 2] = detail::grouped(one.misses);
                    any = true;
                }
        if (!any) continue;  // no scratchpad in any layout
        fmt::print(out, line, s.name, format_bytes(s.capacity), fmt::format("{:.3g}", s.pj_per_byte), cells[0],
                   cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[7], cells[8]);
    }
}

/// Prints the totals of the three layouts side by side with the ratios
/// conventional / tapeflow and per variable / tapeflow, the on-chip
/// structures (print_structures) and the hardware configuration.
template <class Scalar>
void print_totals(const basic_hardware_model<Scalar>& model, std::FILE* out = stdout) {
    const hardware_config& config = model.config();
    const layout_summary f = model.tapeflow(), v = model.conventional(), p = model.per_variable();
    constexpr const char* line = "  {:<22} {:>14} {:>14} {:>14}  {:>16} {:>16}\n";
    fmt::print(out, "{:<24} {:>14} {:>14} {:>14}  {:>16} {:>16}\n", "totals", "tapeflow", "conventional",
               "per variable", "conv / tapeflow", "p.var / tapeflow");
    auto bytes = [&](const char* what, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
        fmt::print(out, line, what, format_bytes(a), format_bytes(b), format_bytes(c),
                   detail::ratio(double(b), double(a)), detail::ratio(double(c), double(a)));
    };
    auto count = [&](const char* what, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
        fmt::print(out, line, what, detail::grouped(a), detail::grouped(b), detail::grouped(c),
                   detail::ratio(double(b), double(a)), detail::ratio(double(c), double(a)));
    };
    auto energy = [&](const char* what, double a, double b, double c) {
        fmt::print(out, line, what, format_energy(a), format_energy(b), format_energy(c), detail::ratio(b, a),
                   detail::ratio(c, a));
    };
    const auto sram = memory_level::sram, dram = memory_level::dram, file = memory_level::file;
    bytes("SRAM needed", f.sram_needed_bytes, v.sram_needed_bytes, p.sram_needed_bytes);
    bytes("peak on-chip bytes", f.peak_on_chip_bytes, v.peak_on_chip_bytes, p.peak_on_chip_bytes);
    bytes("SRAM bytes", f.total.bytes(sram), v.total.bytes(sram), p.total.bytes(sram));
    bytes("DRAM bytes", f.total.bytes(dram), v.total.bytes(dram), p.total.bytes(dram));
    bytes("file bytes", f.total.bytes(file), v.total.bytes(file), p.total.bytes(file));
    energy("energy", f.energy_pj, v.energy_pj, p.energy_pj);
    energy("  of it on chip", f.on_chip_energy_pj, v.on_chip_energy_pj, p.on_chip_energy_pj);
    count("adjoint misses", f.adjoint_misses, v.adjoint_misses, p.adjoint_misses);
    count("write-backs", f.write_backs, v.write_backs, p.write_backs);
    count("adjoint accesses", f.adjoint_accesses, v.adjoint_accesses, p.adjoint_accesses);
    bytes("tape bytes written", f.tape_bytes_written, v.tape_bytes_written, p.tape_bytes_written);
    bytes("tape bytes swept", f.tape_bytes_swept, v.tape_bytes_swept, p.tape_bytes_swept);
    count("records swept", f.total.records, v.total.records, p.total.records);
    fmt::print(out, "\n");
    print_structures(model, out);
    std::string on_chip;
    const std::vector<on_chip_structure> structures = model.structures();
    for (std::size_t i = 0; i < structures.size(); ++i)
        if (i > 0 || structures[i].capacity > 0)  // the scratchpad, when there is one
            on_chip += fmt::format("{} {} ({:.3g} pJ/B), ", structures[i].name, format_bytes(structures[i].capacity),
                                   structures[i].pj_per_byte);
    fmt::print(out, "hardware: {}{} B lines; DRAM {:g}, file {:g} pJ per byte; "
                    "SRAM needed: {:g}% of adjoint re-references hit\n",
               on_chip, config.line_bytes, config.dram_pj_per_byte, config.file_pj_per_byte,
               100 * config.needed_hit_fraction);
}

/// Prints the regions table and the totals (print_regions, print_totals).
template <class Scalar>
void print_report(const basic_hardware_model<Scalar>& model, std::FILE* out = stdout) {
    print_regions(model, out);
    fmt::print(out, "\n");
    print_totals(model, out);
}

/// The regions as CSV: a header line, one row per region (kind "region",
/// index = its position in model.regions()), one for the traffic of no
/// region (kind "other") and the total (kind "total"), both with an empty
/// index; exact bytes read and written per level and layout, energy in pJ.
/// Labels are quoted ("" inside).
template <class Scalar>
std::string to_csv(const basic_hardware_model<Scalar>& model) {
    std::string out = "kind,index,label,depth,records";
    for (const char* layout : {"tapeflow", "conventional", "per_variable"}) {
        for (std::size_t l = 0; l < memory_level_count; ++l) {
            const char* key = detail::level_key(memory_level(l));
            out += fmt::format(",{}_{}_read,{}_{}_written", layout, key, layout, key);
        }
        out += fmt::format(",{}_energy_pj", layout);
    }
    out += '\n';
    auto row = [&](const char* kind, const std::string& index, std::string_view label, std::size_t depth,
                   const traffic& flow, const traffic& conv, const traffic& var) {
        out += fmt::format("{},{},{},{},{}", kind, index, detail::csv_string(label), depth, flow.records);
        out += detail::csv_traffic(flow, model) + detail::csv_traffic(conv, model) + detail::csv_traffic(var, model) +
               '\n';
    };
    const auto& regions = model.regions();
    for (std::size_t i = 0; i < regions.size(); ++i) {
        const region_traffic& r = regions[i];
        row("region", std::to_string(i), r.label, r.depth, r.tapeflow, r.conventional, r.per_variable);
    }
    const detail::report_rows rows = detail::rows_of(model);
    row("other", "", "(not per region)", 0, rows.other_flow, rows.other_conv, rows.other_var);
    row("total", "", "total", 0, rows.total_flow, rows.total_conv, rows.total_var);
    return out;
}

/// Everything as one JSON object: the hardware_config, the totals of each
/// layout, the regions and the layers. Exact bytes; energy in pJ.
template <class Scalar>
std::string to_json(const basic_hardware_model<Scalar>& model) {
    const hardware_config& c = model.config();
    std::string out = "{\n";
    using detail::json_number;
    std::string inner;
    for (const cache_level& l : c.inner_caches)
        inner += fmt::format("{}{{\"name\": {}, \"bytes\": {}, \"pj_per_byte\": {}}}", inner.empty() ? "" : ", ",
                             detail::json_string(l.name), l.bytes, json_number(l.pj_per_byte));
    out += fmt::format("  \"config\": {{\"sram_bytes\": {}, \"sram_name\": {}, \"inner_caches\": [{}], "
                       "\"line_bytes\": {}, \"sram_pj_per_byte\": {}, \"scratchpad_pj_per_byte\": {}, "
                       "\"dram_pj_per_byte\": {}, \"file_pj_per_byte\": {}, \"needed_hit_fraction\": {}}},\n",
                       c.sram_bytes, detail::json_string(c.sram_name), inner, c.line_bytes,
                       json_number(c.sram_pj_per_byte), json_number(c.scratchpad_pj_per_byte),
                       json_number(c.dram_pj_per_byte), json_number(c.file_pj_per_byte),
                       json_number(c.needed_hit_fraction));
    out += "  \"structures\": [";
    const std::vector<on_chip_structure> structures = model.structures();
    for (std::size_t i = 0; i < structures.size(); ++i)
        out += fmt::format("{}{{{}}}", i == 0 ? "" : ", ", detail::json_structure(structures[i]));
    out += "],\n";
    out += "  \"totals\": {\n    \"tapeflow\": " + detail::json_summary(model.tapeflow(), model) +
           ",\n    \"conventional\": " + detail::json_summary(model.conventional(), model) +
           ",\n    \"per_variable\": " + detail::json_summary(model.per_variable(), model) + "\n  },\n";
    out += "  \"regions\": [";
    const auto& regions = model.regions();
    for (std::size_t i = 0; i < regions.size(); ++i) {
        const region_traffic& r = regions[i];
        out += fmt::format("{}\n    {{\"index\": {}, \"label\": {}, \"depth\": {}, \"tapeflow\": {}, "
                           "\"conventional\": {}, \"per_variable\": {}}}",
                           i == 0 ? "" : ",", i, detail::json_string(r.label), r.depth,
                           detail::json_traffic(r.tapeflow, model), detail::json_traffic(r.conventional, model),
                           detail::json_traffic(r.per_variable, model));
    }
    out += "\n  ],\n  \"layers\": [";
    const auto& layers = model.layers();
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const layer_traffic& l = layers[i];
        out += fmt::format("{}\n    {{\"sweep\": {}, \"tile\": {}, \"level\": \"{}\", \"tapeflow\": {}}}",
                           i == 0 ? "" : ",", l.sweep, l.tile, detail::level_key(l.level),
                           detail::json_traffic(l.tapeflow, model));
    }
    return out + (layers.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

}  // namespace tapeflow
