// The memory budget holds in the process, not only in the tape's own
// accounting: a tape more than 20 times larger than the budget is recorded
// and swept while the peak RSS (getrusage ru_maxrss) grows by at most the
// budget plus a fixed allowance. Its own executable, so that no other test
// has raised the peak before.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include "stream/stream_support.hpp"
#include "support/finite_difference.hpp"
#include "support/sanitized.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <vector>

using tapeflow::Real;

namespace {

// Peak resident set size of the process so far, in bytes.
std::size_t peak_rss_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return std::size_t(usage.ru_maxrss) * 1024;  // Linux: kilobytes
}

constexpr std::size_t MiB = std::size_t(1) << 20;
// What the process may hold besides the tape's tiles: the adjoint vector and
// identifiers (a few thousand live variables here), the state vectors, the
// prefetch thread's stack, allocator slack and page-granularity rounding.
constexpr std::size_t allowance = 32 * MiB;

}  // namespace

TEST_CASE("a tape 20x larger than the memory budget stays within it in RSS") {
    constexpr std::size_t budget = 8 * MiB;
    constexpr std::size_t cells = 1024;
    // ~52 bytes per cell and step: ~170 MiB of records. Sanitizer builds do
    // not check the RSS (shadow memory), so they record a quarter of it.
    constexpr std::size_t steps = tapeflow_test::sanitized ? 825 : 3300;

    tapeflow_test::temp_directory dir;
    tapeflow::tape_options options;
    options.memory_budget_bytes = budget;
    options.spill_directory = dir.path();
    tapeflow::tape t(options);

    const auto u0 = tapeflow_test::heat_initial(cells);
    std::vector<Real> inputs(u0.begin(), u0.end());
    Real kappa = tapeflow_test::heat_kappa;
    const std::size_t rss_before = peak_rss_bytes();
    const auto start = std::chrono::steady_clock::now();

    t.start_recording();
    for (auto& x : inputs) t.register_input(x);
    t.register_input(kappa);
    std::vector<Real> u = tapeflow_test::heat_step(inputs, kappa);
    for (std::size_t s = 1; s < steps; ++s) u = tapeflow_test::heat_step(u, kappa);  // identifiers reused
    Real J = tapeflow_test::heat_objective_of(u);
    t.register_output(J);
    t.stop_recording();
    const std::size_t rss_recorded = peak_rss_bytes();
    const auto recorded = std::chrono::steady_clock::now();

    t.set_adjoint(J, 1.0);
    t.sweep();
    const std::size_t rss_swept = peak_rss_bytes();
    const auto swept = std::chrono::steady_clock::now();
    const double dkappa = t.adjoint(kappa);
    const double du7 = t.adjoint(inputs[7]);

    const auto s = t.statistics();
    std::printf("budget_rss_test: %.1f MiB of records (%.1fx the budget of %zu MiB), %llu tiles, %llu spilled\n",
                double(s.record_bytes) / double(MiB), double(s.record_bytes) / double(budget), budget / MiB,
                (unsigned long long)s.tiles_written, (unsigned long long)s.tiles_spilled);
    std::printf("budget_rss_test: peak RSS %.1f MiB before, +%.1f MiB after recording, +%.1f MiB after the sweep "
                "(bound: budget + %zu MiB = %zu MiB); peak resident tape %.1f MiB; adjoints %.1f KiB\n",
                double(rss_before) / double(MiB), double(rss_recorded - rss_before) / double(MiB),
                double(rss_swept - rss_before) / double(MiB), allowance / MiB, (budget + allowance) / MiB,
                double(s.peak_resident_bytes) / double(MiB), double(s.adjoint_bytes) / 1024.0);
    std::printf("budget_rss_test: recording %.2f s, sweep %.2f s\n",
                std::chrono::duration<double>(recorded - start).count(),
                std::chrono::duration<double>(swept - recorded).count());

    CHECK(s.record_bytes >= (tapeflow_test::sanitized ? 5 : 20) * budget);
    CHECK(s.peak_resident_bytes <= budget);
    CHECK(s.tiles_spilled + budget / s.tile_bytes - 2 == s.tiles_written);
    CHECK(s.bytes_read_back == s.bytes_spilled);
    if (tapeflow_test::sanitized) {
        WARN("sanitizer build: shadow memory inflates the RSS; the RSS bound is not checked");
    } else {
        CHECK(rss_swept - rss_before <= budget + allowance);
    }
    CHECK(dir.entries().empty());

    // The gradient is right (finite differences on the plain program).
    std::vector<double> x = u0;
    x.push_back(tapeflow_test::heat_kappa);
    auto f = [&](std::size_t i) {
        return [&, i](double v) {
            std::vector<double> xi = x;
            xi[i] = v;
            return tapeflow_test::heat_objective(xi, steps);
        };
    };
    const double fd_kappa = tapeflow_test::central_difference(f(cells), x[cells]);
    const double fd_u7 = tapeflow_test::central_difference(f(7), x[7]);
    INFO("dJ/dkappa " << dkappa << " vs " << fd_kappa << "; dJ/du7 " << du7 << " vs " << fd_u7);
    CHECK(dkappa != 0.0);
    CHECK(tapeflow_test::close(dkappa, fd_kappa, 1e-6, 1e-9));
    CHECK(tapeflow_test::close(du7, fd_u7, 1e-6, 1e-9));
}
