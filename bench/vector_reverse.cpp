// bench/vector_reverse.cpp - the Jacobian of m outputs by vector reverse
// sweeps (tape/lane_adjoints.hpp: ceil(m / N) sweeps carrying N adjoints per
// identifier) against m scalar sweeps, on one recording.
//
//   tapeflow_vector_reverse_bench [--cells=N] [--steps=N] [--rounds=N] [--check]
//
// The kernel: `steps` explicit steps of a nonlinear heat equation on `cells`
// cells with a diffusion coefficient (cells + 1 inputs); the outputs are the
// final cells (m = cells). It is recorded once; then, per round and
// interleaved so that the machine's load affects all alike, the Jacobian is
// computed
//   scalar     m x (clear_adjoints, seed one output, sweep, read the inputs)
//   lanes N    ceil(m / N) x (clear, seed N outputs, sweep(lane_adjoints), read)
// for N = 4, 8, 16. Prints the median seconds of each and the speed-up of
// each N over scalar. --check: compares the Jacobians (to 1e-12 relative:
// with -march=native the compiler may contract the two sweeps' multiply-adds
// differently) and exits 1 on a difference. Benchmark only: timing is never
// a test (the check mode is: bench:vector_reverse_check).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <tapeflow/tapeflow.hpp>

namespace {

using tapeflow::Real;
using rows = std::vector<std::vector<double>>;

struct settings {
    std::size_t cells = 64;
    std::size_t steps = 2000;
    int rounds = 7;
    bool check = false;
};

settings parse(int argc, char** argv) {
    settings s;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](const char* name) -> const char* {
            const std::size_t n = std::strlen(name);
            return a.compare(0, n, name) == 0 ? a.c_str() + n : nullptr;
        };
        if (const char* v = value("--cells=")) s.cells = std::strtoull(v, nullptr, 10);
        else if (const char* v = value("--steps=")) s.steps = std::strtoull(v, nullptr, 10);
        else if (const char* v = value("--rounds=")) s.rounds = std::atoi(v);
        else if (a == "--check") s.check = true;
        else {
            std::fprintf(stderr, "unknown argument %s\n", argv[i]);
            std::exit(2);
        }
    }
    return s;
}

// u[0..n-1] the cells, u[n] the diffusion coefficient (unchanged).
void heat_step(std::vector<Real>& u, std::vector<Real>& next) {
    const std::size_t n = u.size() - 1;
    for (std::size_t i = 1; i + 1 < n; ++i)
        next[i] = u[i] + u[n] * (u[i - 1] - 2.0 * u[i] + u[i + 1]) + 0.01 * sin(u[i]) * u[i];
    for (std::size_t i = 1; i + 1 < n; ++i) u[i] = next[i];
}

struct recording {
    std::vector<Real> x, y;
};

recording record(tapeflow::tape& t, const settings& s) {
    recording r;
    t.reset();
    t.start_recording();
    r.x.resize(s.cells + 1);
    for (std::size_t i = 0; i < s.cells; ++i) r.x[i] = std::sin(0.3 * double(i)) + 0.5;
    r.x[s.cells] = 0.2;
    for (Real& xi : r.x) t.register_input(xi);
    std::vector<Real> u = r.x, next = r.x;
    for (std::size_t k = 0; k < s.steps; ++k) heat_step(u, next);
    r.y.assign(u.begin(), u.begin() + std::ptrdiff_t(s.cells));
    for (Real& yk : r.y) t.register_output(yk);
    t.stop_recording();
    return r;
}

rows scalar_jacobian(tapeflow::tape& t, const recording& r) {
    rows J(r.y.size(), std::vector<double>(r.x.size()));
    for (std::size_t k = 0; k < r.y.size(); ++k) {
        t.clear_adjoints();
        t.set_adjoint(r.y[k], 1.0);
        t.sweep();
        t.adjoints(r.x.begin(), r.x.end(), J[k].begin());
    }
    return J;
}

template <std::size_t Lanes>
rows lane_jacobian(tapeflow::tape& t, const recording& r) {
    rows J(r.y.size(), std::vector<double>(r.x.size()));
    tapeflow::lane_adjoints<double, Lanes> bar(t);
    for (std::size_t first = 0; first < r.y.size(); first += Lanes) {
        const std::size_t count = std::min(Lanes, r.y.size() - first);
        bar.clear();
        for (std::size_t l = 0; l < count; ++l) bar.set(r.y[first + l], l, 1.0);
        t.sweep(bar);
        for (std::size_t l = 0; l < count; ++l)
            for (std::size_t i = 0; i < r.x.size(); ++i) J[first + l][i] = bar.get(r.x[i], l);
    }
    return J;
}

template <class F>
double seconds(F&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

bool close(const rows& a, const rows& b) {
    for (std::size_t k = 0; k < a.size(); ++k)
        for (std::size_t i = 0; i < a[k].size(); ++i)
            if (std::fabs(a[k][i] - b[k][i]) > 1e-12 * std::max(1.0, std::fabs(b[k][i]))) return false;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    const settings s = parse(argc, argv);
    tapeflow::tape& t = tapeflow::tape::active();
    const recording r = record(t, s);
    const auto st = t.statistics();
    std::printf("kernel: heat, %zu cells x %zu steps: %zu inputs, %zu outputs; tape %llu statements, %.1f MiB\n",
                s.cells, s.steps, r.x.size(), r.y.size(), static_cast<unsigned long long>(st.statements),
                double(st.record_bytes) / (1024.0 * 1024.0));
    if (s.check) {
        const rows J = scalar_jacobian(t, r);
        const bool ok = close(lane_jacobian<4>(t, r), J) && close(lane_jacobian<8>(t, r), J) &&
                        close(lane_jacobian<16>(t, r), J) && close(lane_jacobian<3>(t, r), J);
        std::printf("check: vector reverse Jacobians %s the scalar sweeps'\n", ok ? "equal" : "DIFFER FROM");
        return ok ? 0 : 1;
    }
    std::vector<double> scalar, four, eight, sixteen;
    scalar_jacobian(t, r);  // warm-up: adjoint vectors grown, tape in cache as far as it fits
    lane_jacobian<8>(t, r);
    for (int round = 0; round < s.rounds; ++round) {
        scalar.push_back(seconds([&] { scalar_jacobian(t, r); }));
        four.push_back(seconds([&] { lane_jacobian<4>(t, r); }));
        eight.push_back(seconds([&] { lane_jacobian<8>(t, r); }));
        sixteen.push_back(seconds([&] { lane_jacobian<16>(t, r); }));
    }
    const double base = median(scalar);
    std::printf("%-12s %8s %12s %10s\n", "mode", "sweeps", "seconds", "speed-up");
    std::printf("%-12s %8zu %12.6f %10.2f\n", "scalar", r.y.size(), base, 1.0);
    const std::size_t m = r.y.size();
    std::printf("%-12s %8zu %12.6f %10.2f\n", "lanes N=4", (m + 3) / 4, median(four), base / median(four));
    std::printf("%-12s %8zu %12.6f %10.2f\n", "lanes N=8", (m + 7) / 8, median(eight), base / median(eight));
    std::printf("%-12s %8zu %12.6f %10.2f\n", "lanes N=16", (m + 15) / 16, median(sixteen),
                base / median(sixteen));
    return 0;
}
