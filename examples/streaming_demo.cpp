// The gradient of a long simulation under a memory budget: a streaming tape.
//
// A nonlinear 1-D heat equation with explicit time steps (as in
// bench/kernels/heat.hpp),
//
//   u_i <- u_i + r [ (1 + b u_{i+1}) (u_{i+1} - u_i) - (1 + b u_{i-1}) (u_i - u_{i-1}) ],
//
// boundary cells held fixed, then f = sum_i u_i^2. The simulation is a
// template on its number type: with double it is the plain program (timed,
// and used for the finite differences); with tapeflow::Real it is recorded
// once on a tape that may keep at most --budget-mib MiB of tape in memory.
// The rest of the tape goes to a private spill file and comes back, one
// tile ahead of the reverse sweep, on the tape's prefetch thread.
//
// With the defaults (10 000 cells, 2 500 steps) the tape holds about 25 M
// statements, 1 GB, under a 64 MiB budget. The program prints the tape
// statistics, checks df/du0 at three cells against central finite
// differences of the double program, and returns 1 if one differs by more
// than 1e-6 (relative to max(1, |finite difference|)) or if the tape held
// more memory than the budget. A progress bar goes to stderr when it is a
// terminal (otherwise a few milestone lines); --quiet turns it off.
//
// Usage: streaming_demo [--cells N] [--steps N] [--budget-mib N] [--quiet]
#include <tapeflow/tapeflow.hpp>

#include <fmt/core.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr double r = 0.2;  // dt / dx^2, below the explicit stability limit
constexpr double b = 0.1;  // slope of the conductivity 1 + b u

// `steps` explicit steps from the initial state u0, then the sum of squares.
// One statement per interior cell and step: 3 distinct active operands.
template <class T>
T simulate(const std::vector<T>& u0, std::size_t steps) {
    const std::size_t cells = u0.size();
    std::vector<T> u(u0), next(u0);
    for (std::size_t s = 0; s < steps; ++s) {
        for (std::size_t i = 1; i + 1 < cells; ++i)
            next[i] = u[i] + r * ((1.0 + b * u[i + 1]) * (u[i + 1] - u[i]) -
                                  (1.0 + b * u[i - 1]) * (u[i] - u[i - 1]));
        std::swap(u, next);
    }
    T f = 0.0;
    for (std::size_t i = 0; i < cells; ++i) f += u[i] * u[i];
    return f;
}

// A deterministic, bumpy initial temperature in [0.05, 0.95].
std::vector<double> initial_state(std::size_t cells) {
    std::vector<double> u(cells);
    for (std::size_t i = 0; i < cells; ++i)
        u[i] = 0.5 + 0.3 * std::sin(0.013 * double(i)) + 0.15 * std::cos(0.41 * double(i));
    return u;
}

struct settings {
    std::size_t cells = 10000;
    std::size_t steps = 2500;
    std::size_t budget_mib = 64;
    bool quiet = false;
};

[[noreturn]] void usage(const char* message, int status = 2) {
    std::fprintf(stderr,
                 "streaming_demo: %s\n"
                 "usage: streaming_demo [--cells N] [--steps N] [--budget-mib N] [--quiet]\n"
                 "  --cells N       cells of the 1-D grid, at least 3 (default 10000)\n"
                 "  --steps N       explicit time steps, at least 1 (default 2500)\n"
                 "  --budget-mib N  most tape held in memory, in MiB (default 64)\n"
                 "  --quiet         no progress output on stderr\n",
                 message);
    std::exit(status);
}

settings parse(int argc, char** argv) {
    settings s;
    auto number = [&](int& i) -> std::size_t {
        if (i + 1 >= argc) usage((std::string(argv[i]) + " needs a number").c_str());
        const char* text = argv[++i];
        char* end = nullptr;
        errno = 0;
        const unsigned long long v = std::strtoull(text, &end, 10);
        if (*text == '\0' || *text == '-' || *end != '\0' || errno != 0)
            usage((std::string("not a number: ") + text).c_str());
        return std::size_t(v);
    };
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--cells") s.cells = number(i);
        else if (arg == "--steps") s.steps = number(i);
        else if (arg == "--budget-mib") s.budget_mib = number(i);
        else if (arg == "--quiet") s.quiet = true;
        else if (arg == "--help" || arg == "-h") usage("the gradient of a heat equation on a streaming tape", 0);
        else usage(("unknown argument " + arg).c_str());
    }
    if (s.cells < 3) usage("--cells must be at least 3");
    if (s.steps < 1) usage("--steps must be at least 1");
    if (s.budget_mib < 1 || s.budget_mib > (std::size_t(1) << 40)) usage("--budget-mib out of range");
    return s;
}

// 12345678 -> "12 345 678"
std::string grouped(std::uint64_t n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ' ';
        out += digits[i];
    }
    return out;
}

double mib(double bytes) { return bytes / double(1 << 20); }

// Draws the tape_options::progress reports on stderr: a bar redrawn in place
// when stderr is a terminal, otherwise one line at 25 %, 50 % and 75 % and
// one at the end of each phase.
class progress_display {
public:
    progress_display(bool enabled, std::uint64_t expected_statements)
        : enabled_(enabled), terminal_(enabled && ::isatty(STDERR_FILENO) != 0),
          expected_(double(std::max<std::uint64_t>(expected_statements, 1))) {}

    void operator()(const tapeflow::tape_progress& p) {
        if (!enabled_) return;
        const bool sweeping = p.stage == tapeflow::tape_progress::phase::sweeping;
        const double fraction =
            sweeping ? p.sweep_fraction : std::min(double(p.statements) / expected_, 1.0);
        const int percent = int(100.0 * fraction);
        if (percent == last_percent_ && sweeping == last_sweeping_) return;
        last_percent_ = percent;
        last_sweeping_ = sweeping;
        if (terminal_) {
            draw(sweeping, fraction, p);
        } else if (percent / 25 > milestone_ && percent < 100) {
            milestone_ = percent / 25;
            std::fprintf(stderr, "%s\n", text(sweeping, milestone_ * 25, p).c_str());
        }
    }

    // Ends the phase: the bar at 100 % and a new line, or the last milestone.
    void finish(tapeflow::tape_progress::phase stage, const tapeflow::tape_statistics& s) {
        if (!enabled_) return;
        const bool sweeping = stage == tapeflow::tape_progress::phase::sweeping;
        tapeflow::tape_progress p;
        p.stage = stage;
        p.statements = s.statements;
        p.tiles = std::size_t(s.tiles_written);
        p.tiles_spilled = std::size_t(s.tiles_spilled);
        p.sweep_fraction = 1.0;
        if (terminal_) {
            draw(sweeping, 1.0, p);
            std::fputc('\n', stderr);
        } else {
            std::fprintf(stderr, "%s\n", text(sweeping, 100, p).c_str());
        }
        last_percent_ = -1;
        milestone_ = 0;
    }

private:
    static std::string text(bool sweeping, int percent, const tapeflow::tape_progress& p) {
        if (sweeping)
            return fmt::format("sweeping  {:3}%  {} of {} tiles ({} from the spill file)", percent,
                               grouped(std::uint64_t(std::llround(p.sweep_fraction * double(p.tiles)))),
                               grouped(p.tiles), grouped(p.tiles_spilled));
        return fmt::format("recording {:3}%  {} statements, {} tiles, {} spilled", percent,
                           grouped(p.statements), grouped(p.tiles), grouped(p.tiles_spilled));
    }
    static void draw(bool sweeping, double fraction, const tapeflow::tape_progress& p) {
        constexpr int width = 30;
        const int full = int(fraction * width);
        const std::string bar = std::string(std::size_t(full), '#') + std::string(std::size_t(width - full), '.');
        const std::string line = text(sweeping, int(100.0 * fraction), p);
        // "recording  42%  ..." -> "recording [####....]  42%  ..."
        std::fprintf(stderr, "\r%.9s [%s]%s\033[K", line.c_str(), bar.c_str(), line.c_str() + 9);
        std::fflush(stderr);
    }

    bool enabled_;
    bool terminal_;
    double expected_;
    int last_percent_ = -1;
    bool last_sweeping_ = false;
    int milestone_ = 0;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run(const settings& config) {
    using tapeflow::Real;
    const std::vector<double> u0 = initial_state(config.cells);
    const std::size_t cells = config.cells, steps = config.steps;
    const std::size_t budget = config.budget_mib << 20;
    // copies of u0 into u and next, one update per interior cell and step, the sum
    const std::uint64_t expected_statements = 2 * cells + std::uint64_t(steps) * (cells - 2) + cells;

    fmt::print("tapeflow streaming demo: gradient of a nonlinear 1-D heat equation\n");
    fmt::print("  {} cells x {} explicit steps, f = sum of u_i^2 at the end, memory budget {} MiB\n\n",
               grouped(cells), grouped(steps), grouped(config.budget_mib));

    // The plain program in double: the value and the time to beat.
    auto start = std::chrono::steady_clock::now();
    const double f_primal = simulate(u0, steps);
    double primal_seconds = seconds_since(start);

    std::fflush(stdout);  // the header before the progress output on stderr
    progress_display progress(!config.quiet, expected_statements);

    // A tape that keeps at most `budget` bytes of tape in memory; the rest
    // goes to a private spill file in $TMPDIR (or /tmp).
    tapeflow::tape_options options;
    options.memory_budget_bytes = budget;
    options.progress = [&progress](const tapeflow::tape_progress& p) { progress(p); };
    tapeflow::tape tape(options);

    // Record the simulation once ...
    start = std::chrono::steady_clock::now();
    tape.start_recording();
    std::vector<Real> u(u0.begin(), u0.end());
    for (Real& ui : u) tape.register_input(ui);
    Real f = simulate(u, steps);
    tape.register_output(f);
    tape.stop_recording();
    const double record_seconds = seconds_since(start);
    progress.finish(tapeflow::tape_progress::phase::recording, tape.statistics());

    // ... and sweep it backwards: df/du0 for every cell.
    start = std::chrono::steady_clock::now();
    tape.set_adjoint(f, 1.0);
    tape.sweep();
    std::vector<double> gradient(cells);
    for (std::size_t i = 0; i < cells; ++i) gradient[i] = tape.adjoint(u[i]);
    const double sweep_seconds = seconds_since(start);
    const tapeflow::tape_statistics s = tape.statistics();
    progress.finish(tapeflow::tape_progress::phase::sweeping, s);

    // Central finite differences of the double program at three cells.
    const std::size_t probe[3] = {1, cells / 2, cells - 2};
    double fd[3];
    for (int k = 0; k < 3; ++k) {
        const std::size_t i = probe[k];
        const double h = 1e-4 * std::max(1.0, std::fabs(u0[i]));
        std::vector<double> x = u0;
        x[i] = u0[i] + h;
        start = std::chrono::steady_clock::now();
        const double plus = simulate(x, steps);
        primal_seconds = std::min(primal_seconds, seconds_since(start));
        x[i] = u0[i] - h;
        const double minus = simulate(x, steps);
        fd[k] = (plus - minus) / (2 * h);
    }

    const double tape_bytes = double(s.record_bytes);
    fmt::print("f = {:.10f} (tape: {:.10f})\n\n", f_primal, f.value());
    fmt::print("tape statistics\n");
    auto row = [](const char* what, const std::string& value, const std::string& note = {}) {
        fmt::print("  {:<38} {:>16}{}{}\n", what, value, note.empty() ? "" : "  ", note);
    };
    row("statements", grouped(s.statements));
    row("tape bytes (records)", grouped(s.record_bytes), fmt::format("{:.1f} MiB", mib(tape_bytes)));
    row("bytes per statement", fmt::format("{:.1f}", s.bytes_per_statement()));
    row("tiles written", grouped(s.tiles_written), fmt::format("{} KiB each", s.tile_bytes >> 10));
    row("  spilled to the file", grouped(s.tiles_spilled));
    row("  read back by the sweep", grouped(s.tiles_read_back));
    row("bytes spilled", grouped(s.bytes_spilled), fmt::format("{:.1f} MiB", mib(double(s.bytes_spilled))));
    row("bytes read back", grouped(s.bytes_read_back), fmt::format("{:.1f} MiB", mib(double(s.bytes_read_back))));
    row("peak resident tape memory", grouped(s.peak_resident_bytes),
        fmt::format("{:.1f} MiB of a {} MiB budget", mib(double(s.peak_resident_bytes)), config.budget_mib));
    rusage self{};
    ::getrusage(RUSAGE_SELF, &self);  // ru_maxrss in KiB on Linux
    row("peak resident set of the process", grouped(std::uint64_t(self.ru_maxrss) << 10),
        fmt::format("{:.1f} MiB, everything included", mib(double(self.ru_maxrss) * 1024)));
    row("adjoint vector", grouped(s.adjoint_bytes),
        fmt::format("{} identifiers at most", grouped(s.peak_identifiers)));
    row("time recording", fmt::format("{:.3f} s", record_seconds));
    row("  waiting for a free scratchpad half", fmt::format("{:.3f} s", s.record_wait_seconds));
    row("time sweeping", fmt::format("{:.3f} s", sweep_seconds));
    row("  waiting for the prefetch thread", fmt::format("{:.3f} s", s.sweep_wait_seconds));
    row("time of the double program", fmt::format("{:.3f} s", primal_seconds), "fastest of 4 runs");
    row("gradient / primal", fmt::format("{:.1f}", (record_seconds + sweep_seconds) / primal_seconds),
        "(recording + sweep) / double program");

    int failures = 0;
    fmt::print("\ngradient check against central finite differences of the double program\n");
    for (int k = 0; k < 3; ++k) {
        const double g = gradient[probe[k]];
        const double error = std::fabs(g - fd[k]) / std::max(1.0, std::fabs(fd[k]));
        const bool ok = error <= 1e-6;
        failures += ok ? 0 : 1;
        fmt::print("  df/du0[{:>6}]  tape {:+.9f}  finite differences {:+.9f}  relative error {:.1e}{}\n",
                   probe[k], g, fd[k], error, ok ? "" : "  MISMATCH");
    }
    if (failures > 0) {
        fmt::print(stderr, "streaming_demo: {} of 3 gradient components differ from finite differences "
                           "by more than 1e-6\n", failures);
        return 1;
    }
    if (s.peak_resident_bytes > budget) {
        fmt::print(stderr, "streaming_demo: the tape held {} bytes, more than the budget of {} bytes\n",
                   s.peak_resident_bytes, budget);
        return 1;
    }
    fmt::print("all 3 agree within 1e-6; the tape stayed within its memory budget\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const settings config = parse(argc, argv);
    try {
        return run(config);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "\nstreaming_demo: %s\n", e.what());
        return 1;
    }
}
