// bench/forward.cpp - what forward mode costs (docs/modes.md, issue 18).
//
//   1. Every kernel of bench/kernels/all.hpp: the primal on doubles and the
//      derivative along one direction v (tapeflow::derivative: one run on
//      tapeflow::Dual), median CPU time of each and their ratio (issue 18
//      asks for at most 2.5). The derivative is checked against g . v with
//      g from the kernel's hand-written adjoint.
//   2. wide_jacobian (8 inputs, 4000 outputs): the primal,
//      tapeflow::jacobian_forward with 4 and 8 lanes, tapeflow::jacobian
//      (reverse: one sweep per 8 outputs, vector lanes) and, when built with CoDiPack
//      (-DTAPEFLOW_BENCH_CODIPACK_DIR), codi::RealForwardVec<4> and <8>
//      driven the same way; every Jacobian checked against the hand-written
//      one. Issue 18 asks tapeflow for at most 1.2x CoDiPack at the same N.
//   With CoDiPack, part 1 also runs codi::RealForward along the same v (its
//   time, its ratio to the primal, and tapeflow's time over its time).
//
// Usage: tapeflow_bench_forward [--runs n] [--skip-kernels]
// Times: median over n (default 5) samples of batches of at least 2 ms.
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef TAPEFLOW_BENCH_CODIPACK
#include <codi.hpp>
#endif

#include "harness/timing.hpp"
#include "kernels/all.hpp"
#include "kernels/wide_jacobian.hpp"

namespace {

int runs = 5;
bool failed = false;

#ifdef TAPEFLOW_BENCH_CODIPACK
/// The derivative along v with codi::RealForward: the inputs' tangents set to
/// v, one run of the kernel, the result's tangent.
template <class K>
double codipack_derivative(const K& k, const std::vector<double>& p, const std::vector<double>& v) {
    std::vector<codi::RealForward> x(p.begin(), p.end());
    for (std::size_t i = 0; i < x.size(); ++i) x[i].gradient() = v[i];
    return k(x).getGradient();
}
#endif

template <class K>
bool directional(const K& k) {
    const std::vector<double> x = k.inputs();
    const std::vector<double> v = bench::uniform(x.size(), -1.0, 1.0, 3);
    std::vector<double> g(x.size());
    k.adjoint(x, g);
    double expected = 0, magnitude = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        expected += g[i] * v[i];
        magnitude += std::fabs(g[i] * v[i]);
    }
    // a tool's derivative agrees with the hand adjoint's g . v
    const auto agrees = [&](double d) { return std::fabs(d - expected) <= 1e-8 * magnitude + 1e-300; };
    const auto f = [&k](const auto& y) { return k(y); };
    const double d = tapeflow::derivative(f, x, v);
    if (!agrees(d)) {
        std::printf("%-18s MISMATCH: forward %.17g, hand adjoint . v %.17g\n", K::name, d, expected);
        failed = true;
        return false;
    }
    volatile double sink = 0;
    const double primal = bench::median_seconds([&] { sink = k(x); }, runs);
    const double forward = bench::median_seconds([&] { sink = tapeflow::derivative(f, x, v); }, runs);
    std::printf("%-18s %12.3f %12.3f %8.2f", K::name, primal * 1e3, forward * 1e3, forward / primal);
#ifdef TAPEFLOW_BENCH_CODIPACK
    const double c = codipack_derivative(k, x, v);
    if (!agrees(c)) {
        std::printf("  CoDiPack MISMATCH: %.17g, hand adjoint . v %.17g\n", c, expected);
        failed = true;
        return false;
    }
    const double codipack = bench::median_seconds([&] { sink = codipack_derivative(k, x, v); }, runs);
    std::printf(" %12.3f %10.2f %8.2f", codipack * 1e3, codipack / primal, forward / codipack);
#endif
    std::printf("\n");
    return true;
}

double worst_error(const std::vector<std::vector<double>>& J, const std::vector<std::vector<double>>& E) {
    double worst = 0;
    if (J.size() != E.size()) return INFINITY;
    for (std::size_t i = 0; i < J.size(); ++i)
        for (std::size_t j = 0; j < J[i].size(); ++j)
            worst = std::fmax(worst, std::fabs(J[i][j] - E[i][j]) / (1 + std::fabs(E[i][j])));
    return worst;
}

#ifdef TAPEFLOW_BENCH_CODIPACK
/// The Jacobian with codi::RealForwardVec<N>, seeded and read as jacobian_forward does.
template <std::size_t N, class K>
std::vector<std::vector<double>> codipack_jacobian(const K& k, const std::vector<double>& p) {
    using T = codi::RealForwardVec<N>;
    const std::size_t n = p.size();
    std::vector<T> x(p.begin(), p.end());
    std::vector<std::vector<double>> rows;
    for (std::size_t begin = 0; begin < n; begin += N) {
        const std::size_t end = begin + N < n ? begin + N : n;
        for (std::size_t j = begin; j < end; ++j) x[j].gradient()[j - begin] = 1.0;
        const std::vector<T> y = k(x);
        if (rows.empty()) rows.assign(y.size(), std::vector<double>(n));
        for (std::size_t i = 0; i < y.size(); ++i)
            for (std::size_t j = begin; j < end; ++j) rows[i][j] = y[i].getGradient()[j - begin];
        for (std::size_t j = begin; j < end; ++j) x[j].gradient()[j - begin] = 0.0;
    }
    return rows;
}
#endif

template <class Compute>
double time_jacobian(const char* label, Compute compute, const std::vector<std::vector<double>>& expected,
                     double primal) {
    const double error = worst_error(compute(), expected);
    if (!(error < 1e-10)) {
        std::printf("%-34s MISMATCH: worst error %.3g against the hand-written Jacobian\n", label, error);
        failed = true;
        return 0;
    }
    volatile std::size_t sink = 0;
    const double t = bench::median_seconds([&] { sink = compute().size(); }, runs);
    std::printf("%-34s %12.3f %10.2f\n", label, t * 1e3, t / primal);
    return t;
}

void wide() {
    const bench::wide_jacobian k;
    const std::vector<double> p = k.inputs();
    const auto expected = k.jacobian(p);
    const auto f = [&k](const auto& x) { return k(x); };
    volatile std::size_t sink = 0;
    const double primal = bench::median_seconds([&] { sink = k(p).size(); }, runs);
    std::printf("\nwide_jacobian: %zu inputs, %zu outputs\n%-34s %12s %10s\n", p.size(), k.residuals, "method",
                "ms", "x primal");
    std::printf("%-34s %12.3f %10.2f\n", "primal (double)", primal * 1e3, 1.0);
    const double f4 = time_jacobian("tapeflow jacobian_forward<4>", [&] { return tapeflow::jacobian_forward<4>(f, p); },
                                    expected, primal);
    const double f8 = time_jacobian("tapeflow jacobian_forward<8>", [&] { return tapeflow::jacobian_forward<8>(f, p); },
                                    expected, primal);
    time_jacobian("tapeflow jacobian (reverse)", [&] { return tapeflow::jacobian(f, p); }, expected, primal);
#ifdef TAPEFLOW_BENCH_CODIPACK
    const double c4 = time_jacobian("codi::RealForwardVec<4>", [&] { return codipack_jacobian<4>(k, p); }, expected,
                                    primal);
    const double c8 = time_jacobian("codi::RealForwardVec<8>", [&] { return codipack_jacobian<8>(k, p); }, expected,
                                    primal);
    if (c4 > 0 && c8 > 0)
        std::printf("tapeflow / CoDiPack: %.2f (N = 4), %.2f (N = 8)\n", f4 / c4, f8 / c8);
#else
    (void)f4;
    (void)f8;
    std::printf("(CoDiPack not built in: configure with -DTAPEFLOW_BENCH_CODIPACK_DIR=...)\n");
#endif
}

}  // namespace

int main(int argc, char** argv) {
    bool kernels = true;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--skip-kernels"))
            kernels = false;
        else {
            std::fprintf(stderr, "usage: %s [--runs n] [--skip-kernels]\n", argv[0]);
            return 2;
        }
    }
    if (kernels) {
        std::printf("%-18s %12s %12s %8s", "kernel", "primal ms", "Dual J v ms", "ratio");
#ifdef TAPEFLOW_BENCH_CODIPACK
        std::printf(" %12s %10s %8s", "CoDiPack ms", "CoDi ratio", "ours/its");
#endif
        std::printf("\n");
        bench::for_each_kernel([](const auto& k) { return directional(k); });
    }
    wide();
    return failed ? 1 : 0;
}
