// Regions: one tapeflow::Region per time step of an explicit 1-D diffusion
// loop, with a nested region for the fluxes. Prints what each region holds
// and returns 1 (saying why) if a count differs from what the loop body
// must record.
#include <tapeflow/tapeflow.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr std::size_t cells = 32;
constexpr int steps = 100;
constexpr double dt = 0.2;

int failures = 0;

void expect(bool ok, const std::string& what) {
    if (!ok) {
        std::printf("MISMATCH: %s\n", what.c_str());
        ++failures;
    }
}

}  // namespace

int main() {
    using tapeflow::Real;

    auto& tape = tapeflow::tape::active();
    tape.reset();
    tape.start_recording();
    std::vector<Real> u(cells);
    for (std::size_t i = 0; i < cells; ++i) u[i] = (i >= 12 && i < 20) ? 1.0 : 0.0;
    Real kappa = 0.5;
    for (Real& ui : u) tape.register_input(ui);
    tape.register_input(kappa);

    std::vector<Real> flux(cells - 1);
    for (int step = 0; step < steps; ++step) {
        tapeflow::Region region("step");
        {
            tapeflow::Region inner("fluxes");
            for (std::size_t i = 0; i + 1 < cells; ++i)
                flux[i] = kappa * (u[i + 1] - u[i]);  // kappa, u[i+1], u[i]
        }
        for (std::size_t i = 1; i + 1 < cells; ++i)
            u[i] += dt * (flux[i] - flux[i - 1]);  // an update of u[i]: flux[i], flux[i-1]
    }
    Real energy = 0.0;  // outside every region: the implicit region
    for (const Real& ui : u) energy += ui * ui;
    tape.register_output(energy);
    tape.stop_recording();

    tape.set_adjoint(energy, 1.0);
    tape.sweep();
    std::printf("d energy / d kappa = %.9f\n", tape.adjoint(kappa));

    const tapeflow::region_table& regions = tape.regions();
    std::printf("%-5s %-6s %6s %5s %10s %9s %5s\n", "index", "label", "parent", "depth",
                "statements", "arguments", "bytes");
    for (std::size_t i = 0; i < 4 && i < regions.size(); ++i) {  // the first two steps
        const tapeflow::region_info& r = regions[i];
        const std::string parent =
            r.parent == tapeflow::region_info::no_parent ? "-" : std::to_string(r.parent);
        std::printf("%-5zu %-6s %6s %5zu %10llu %9llu %5llu\n", i, r.label.c_str(),
                    parent.c_str(), r.depth, static_cast<unsigned long long>(r.statements()),
                    static_cast<unsigned long long>(r.arguments()),
                    static_cast<unsigned long long>(r.bytes()));
    }
    std::printf("... %zu regions in all\n", regions.size());
    std::cout << "tape: " << tape.statistics() << '\n';

    // What the loop body records, counted from the code above (every operand is
    // active: u and kappa are inputs). A record of k arguments takes
    // record_layout<double>::size(k) bytes. u[i] += ... records an update of
    // u[i], whose own partial 1 is not stored: two arguments.
    const std::uint64_t flux_records = cells - 1;   // one per flux[i] = ..., 3 arguments
    const std::uint64_t update_records = cells - 2;  // one per u[i] += ..., 2 arguments
    const std::uint64_t step_records = flux_records + update_records;
    const std::uint64_t step_arguments = 3 * flux_records + 2 * update_records;
    const std::size_t step_bytes = flux_records * tapeflow::record_layout<double>::size(3) +
                                   update_records * tapeflow::record_layout<double>::size(2);

    expect(regions.size() == 2 * steps, "two regions per step");
    for (int step = 0; step < steps && regions.size() == 2 * steps; ++step) {
        const tapeflow::region_info& outer = regions[2 * step];
        const tapeflow::region_info& inner = regions[2 * step + 1];
        const std::string at = "step " + std::to_string(step) + ": ";
        expect(outer.label == "step" && inner.label == "fluxes", at + "labels");
        expect(outer.depth == 0 && outer.parent == tapeflow::region_info::no_parent,
               at + "the step region is top-level");
        expect(inner.depth == 1 && inner.parent == std::size_t(2 * step),
               at + "the flux region is nested in its step");
        expect(!outer.open && !inner.open, at + "regions are closed");
        expect(outer.statements() == step_records, at + "statements of the step");
        expect(outer.arguments() == step_arguments, at + "arguments of the step");
        expect(outer.bytes() == step_bytes, at + "bytes of the step");
        expect(inner.statements() == flux_records, at + "statements of the fluxes");
        expect(inner.arguments() == 3 * flux_records, at + "arguments of the fluxes");
        expect(inner.begin == outer.begin, at + "the fluxes open the step");
        expect(outer.begin.statements == std::uint64_t(step) * step_records,
               at + "steps follow each other without a gap");
    }
    // The energy loop: one argument per record (u[i], merged from u[i] * u[i]):
    // the first assigns (energy is the constant 0 there), the others update.
    const tapeflow::tape_statistics s = tape.statistics();
    expect(s.statements == steps * step_records + cells, "total statements");
    expect(s.arguments == steps * step_arguments + cells, "total arguments");

    if (failures != 0) {
        std::printf("%d check(s) failed\n", failures);
        return 1;
    }
    std::printf("all region counts match the loop body\n");
    return 0;
}
