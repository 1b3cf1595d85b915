// What the tape's memory traffic costs: a hardware model on a time loop.
//
// A nonlinear 1-D heat equation, 400 cells and 40 explicit steps,
//
//   u_i <- u_i + r (u_{i-1} - 2 u_i + u_{i+1}) - q u_i^3,
//
// boundary cells held fixed, then f = sum_i u_i^2. Each step is one
// tapeflow::Region labelled "step". The tape uses the tapeflow layout
// (records go through a scratchpad of two 4 KiB tiles) and has a
// tapeflow::hardware_model attached, which counts the bytes the recording
// and the reverse sweep move at each memory level (SRAM, DRAM, file) and
// their energy, and the same for a conventional structure-of-arrays tape
// and for a compiler-AD-like tape that caches values per variable.
//
// The program checks df/du0 at three cells against central finite
// differences of the double program and that the model saw every record
// byte once in each direction, prints the model's report (hw/report.hpp,
// needs fmt) and, with --csv FILE, writes the per-region counts as CSV
// (--json FILE: everything as JSON). Then it takes the same gradient on
// three machines (hardware_config: the default 1 MiB SRAM, an accelerator
// with a 64 KiB SRAM, a CPU's L1, L2 and L3 with a scratchpad beside them,
// which a real CPU does not have) and prints a line each:
// the on-chip and the whole energy of the three layouts (tapeflow,
// conventional, per variable). It returns 1 if a check fails.
//
// Usage: hardware_model [--csv FILE] [--json FILE]
#include <tapeflow/hw/hardware_model.hpp>
#include <tapeflow/hw/report.hpp>
#include <tapeflow/tapeflow.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

constexpr std::size_t cells = 400;
constexpr int steps = 40;
constexpr double r = 0.25;   // dt / dx^2, below the stability limit 0.5
constexpr double q = 0.05;   // strength of the cubic sink

// `steps` explicit steps from u0, then the sum of squares. One record of
// three operands per interior cell and step.
template <class T>
T simulate(const std::vector<T>& u0) {
    std::vector<T> u(u0), next(u0);  // the boundary cells of both stay u0's
    for (int n = 0; n < steps; ++n) {
        tapeflow::region_for<T> step("step");  // a Region for Real, nothing for double
        for (std::size_t i = 1; i + 1 < cells; ++i)
            next[i] = u[i] + r * (u[i - 1] - 2.0 * u[i] + u[i + 1]) - q * u[i] * u[i] * u[i];
        std::swap(u, next);
    }
    T f = 0.0;
    for (std::size_t i = 0; i < cells; ++i) f += u[i] * u[i];
    return f;
}

// Writes `text` to the file `path`; false (and a message) if it cannot.
bool write_file(const char* path, const std::string& text) {
    std::FILE* file = std::fopen(path, "w");
    if (!file) {
        fmt::print(stderr, "hardware_model: cannot write {}: {}\n", path, std::strerror(errno));
        return false;
    }
    const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
    if (std::fclose(file) != 0 || !written) {
        fmt::print(stderr, "hardware_model: writing {} failed\n", path);
        return false;
    }
    return true;
}

// The gradient recorded and swept on a tape with the tapeflow layout and a
// model of `machine` attached; the model's summaries of the three layouts.
std::tuple<tapeflow::layout_summary, tapeflow::layout_summary, tapeflow::layout_summary> on_machine(
    const tapeflow::hardware_config& machine, const std::vector<double>& u0) {
    auto model = std::make_shared<tapeflow::hardware_model>(machine);
    tapeflow::tape_options options;
    options.scratchpad = true;
    options.tile_bytes = 4096;
    options.observer = model;
    tapeflow::tape tape(options);
    tape.start_recording();
    std::vector<tapeflow::Real> u(u0.begin(), u0.end());
    for (tapeflow::Real& ui : u) tape.register_input(ui);
    tapeflow::Real f = simulate(u);
    tape.register_output(f);
    tape.stop_recording();
    tape.set_adjoint(f, 1.0);
    tape.sweep();
    return {model->tapeflow(), model->conventional(), model->per_variable()};
}

std::vector<double> initial_state() {
    std::vector<double> u(cells);
    for (std::size_t i = 0; i < cells; ++i)
        u[i] = 0.5 + 0.4 * std::sin(0.05 * double(i)) * std::cos(0.31 * double(i));
    return u;
}

}  // namespace

int main(int argc, char** argv) {
    const char* csv_path = nullptr;
    const char* json_path = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv_path = argv[++i];
        } else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json_path = argv[++i];
        } else {
            fmt::print(stderr, "usage: hardware_model [--csv FILE] [--json FILE]\n");
            return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    using tapeflow::Real;
    const std::vector<double> u0 = initial_state();

    // The model, attached to a tape with the tapeflow layout.
    auto model = std::make_shared<tapeflow::hardware_model>();  // default hardware_config
    tapeflow::tape_options options;
    options.scratchpad = true;   // record into two on-chip tiles, stage tiles back for the sweep
    options.tile_bytes = 4096;
    options.observer = model;
    tapeflow::tape tape(options);

    // Record once and sweep: the explicit tape API.
    tape.start_recording();
    std::vector<Real> u(u0.begin(), u0.end());
    for (Real& ui : u) tape.register_input(ui);
    Real f = simulate(u);
    tape.register_output(f);
    tape.stop_recording();
    tape.set_adjoint(f, 1.0);
    tape.sweep();

    int failures = 0;
    for (const std::size_t i : {std::size_t(1), cells / 2, cells - 2}) {
        const double h = 1e-5;
        std::vector<double> x = u0;
        x[i] = u0[i] + h;
        const double plus = simulate(x);
        x[i] = u0[i] - h;
        const double fd = (plus - simulate(x)) / (2 * h);
        const double error = std::fabs(tape.adjoint(u[i]) - fd) / std::max(1.0, std::fabs(fd));
        if (error > 1e-6) {
            fmt::print(stderr, "hardware_model: df/du0[{}] is {} on the tape, {} by finite differences\n", i,
                       tape.adjoint(u[i]), fd);
            ++failures;
        }
    }
    const std::uint64_t record_bytes = tape.statistics().record_bytes;
    const tapeflow::layout_summary flow = model->tapeflow();
    if (flow.tape_bytes_written != record_bytes || flow.tape_bytes_swept != record_bytes) {
        fmt::print(stderr, "hardware_model: the tape holds {} record bytes; the model saw {} written, {} "
                           "swept\n", record_bytes, flow.tape_bytes_written, flow.tape_bytes_swept);
        ++failures;
    }

    fmt::print("gradient of a 1-D heat equation: {} cells, {} steps, {} records, {} tiles of {} B\n\n", cells,
               steps, tape.statistics().statements, tape.statistics().tiles, options.tile_bytes);
    tapeflow::print_report(*model);
    if (failures == 0) fmt::print("\ndf/du0 at 3 cells agrees with finite differences within 1e-6\n");

    // The same gradient on three machines: each structure at its own size's energy.
    const std::pair<const char*, tapeflow::hardware_config> machines[] = {
        {"default: 1 MiB SRAM", tapeflow::hardware_config{}},
        {"accelerator: 64 KiB SRAM", tapeflow::hardware_config::accelerator()},
        {"CPU caches (L1, L2, L3) + scratchpad", tapeflow::hardware_config::cpu()}};
    fmt::print("\n{:<39}{:-^29}  {:-^29}  {:-^20}\n", "on three machines", " on-chip energy ", " energy ",
               " on chip: / tapeflow ");
    fmt::print("  {:<36} {:>9} {:>9} {:>9}  {:>9} {:>9} {:>9}  {:>9} {:>10}\n", "machine", "tapeflow", "conv", "p.var",
               "tapeflow", "conv", "p.var", "conv", "p.var");
    for (const auto& [name, machine] : machines) {
        const auto [flow_on, conv_on, var_on] = on_machine(machine, u0);
        fmt::print("  {:<36} {:>9} {:>9} {:>9}  {:>9} {:>9} {:>9}  {:>8.2f}x {:>9.2f}x\n", name,
                   tapeflow::format_energy(flow_on.on_chip_energy_pj), tapeflow::format_energy(conv_on.on_chip_energy_pj),
                   tapeflow::format_energy(var_on.on_chip_energy_pj), tapeflow::format_energy(flow_on.energy_pj),
                   tapeflow::format_energy(conv_on.energy_pj), tapeflow::format_energy(var_on.energy_pj),
                   conv_on.on_chip_energy_pj / flow_on.on_chip_energy_pj,
                   var_on.on_chip_energy_pj / flow_on.on_chip_energy_pj);
        if (flow_on.tape_bytes_written != record_bytes) ++failures;  // the same recording on every machine
    }

    if (csv_path) {
        if (!write_file(csv_path, tapeflow::to_csv(*model))) return 1;
        fmt::print("\nper-region counts written to {}\n", csv_path);
    }
    if (json_path) {
        if (!write_file(json_path, tapeflow::to_json(*model))) return 1;
        fmt::print("\nthe model's counts written to {} as JSON\n", json_path);
    }
    return failures == 0 ? 0 : 1;
}
