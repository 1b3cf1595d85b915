// bench/second_order.cpp - what second derivatives cost (docs/modes.md, issue 18).
//
// Every kernel of bench/kernels/all.hpp: the reverse gradient
// (tapeflow::gradient on Real) and the Hessian-vector product along a
// random v (tapeflow::hessian_vector_product: one recording on
// basic_real<Dual> and one sweep), median CPU time of each and their ratio
// (issue 18 asks for at most 4). H v is checked against Richardson-
// extrapolated central differences of the kernel's hand-written adjoint
// along v (a kernel with a second_order_note says why it is not). When built with CoDiPack (-DTAPEFLOW_BENCH_CODIPACK_DIR), its
// forward-over-reverse type codi::RealReverseGen<codi::RealForward> computes
// the same product in the same run (checked against tapeflow's), beside its
// gradient with codi::RealReverse.
//
// Usage: tapeflow_bench_second_order [--runs n]
// Times: median over n (default 5) samples of batches of at least 2 ms.
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#ifdef TAPEFLOW_BENCH_CODIPACK
#include <codi.hpp>
#endif

#include "harness/timing.hpp"
#include "kernels/all.hpp"

namespace {

int runs = 5;
bool failed = false;

/// H v by central differences of the hand-written adjoint, steps h and h/2 extrapolated.
template <class K>
std::vector<double> differences(const K& k, const std::vector<double>& x, const std::vector<double>& v) {
    const std::size_t n = x.size();
    const auto step = [&](double h) {
        std::vector<double> up = x, down = x, gu(n), gd(n), d(n);
        for (std::size_t i = 0; i < n; ++i) {
            up[i] += h * v[i];
            down[i] -= h * v[i];
        }
        k.adjoint(up, gu);
        k.adjoint(down, gd);
        for (std::size_t i = 0; i < n; ++i) d[i] = (gu[i] - gd[i]) / (2 * h);
        return d;
    };
    const std::vector<double> d1 = step(1e-3), d2 = step(5e-4);
    std::vector<double> r(n);
    for (std::size_t i = 0; i < n; ++i) r[i] = (4 * d2[i] - d1[i]) / 3;
    return r;
}

/// max_i |a_i - b_i| / max_i |b_i|.
double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
    double worst = 0, scale = 1e-300;
    for (std::size_t i = 0; i < b.size(); ++i) {
        worst = std::fmax(worst, std::fabs(a[i] - b[i]));
        scale = std::fmax(scale, std::fabs(b[i]));
    }
    return a.size() == b.size() ? worst / scale : INFINITY;
}

#ifdef TAPEFLOW_BENCH_CODIPACK
template <class K>
double codipack_gradient(const K& k, const std::vector<double>& p, std::vector<double>& g) {
    using T = codi::RealReverse;
    auto& tape = T::getTape();
    tape.reset();
    std::vector<T> x(p.begin(), p.end());
    tape.setActive();
    for (T& xi : x) tape.registerInput(xi);
    T y = k(x);
    tape.registerOutput(y);
    tape.setPassive();
    y.gradient() = 1.0;
    tape.evaluate();
    g.resize(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) g[i] = x[i].getGradient();
    return y.getValue();
}

/// H v by forward over reverse (CoDiPack's tutorial 6): the tangents of the
/// inputs' primal values hold v, the output's adjoint 1.
template <class K>
void codipack_hvp(const K& k, const std::vector<double>& p, const std::vector<double>& v, std::vector<double>& hv) {
    using T = codi::RealReverseGen<codi::RealForward>;
    auto& tape = T::getTape();
    tape.reset();
    std::vector<T> x(p.begin(), p.end());
    for (std::size_t i = 0; i < p.size(); ++i) x[i].value().gradient() = v[i];
    tape.setActive();
    for (T& xi : x) tape.registerInput(xi);
    T y = k(x);
    tape.registerOutput(y);
    tape.setPassive();
    y.gradient().value() = 1.0;
    tape.evaluate();
    hv.resize(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) hv[i] = x[i].getGradient().gradient();
}
#endif

/// K::second_order_note, when K has one: why its H v is not checked against differences.
template <class K, class = void>
struct note_of {
    static constexpr const char* value = nullptr;
};
template <class K>
struct note_of<K, std::void_t<decltype(K::second_order_note)>> {
    static constexpr const char* value = K::second_order_note;
};

template <class K>
bool second_order(const K& k) {
    const std::vector<double> x = k.inputs();
    const std::vector<double> v = bench::uniform(x.size(), -1.0, 1.0, 5);
    const auto f = [&k](const auto& y) { return k(y); };
    const std::vector<double> hv = tapeflow::hessian_vector_product(f, x, v);
    const double error = note_of<K>::value ? 0.0 : relative_error(hv, differences(k, x, v));
    if (!(error < 1e-5)) {
        std::printf("%-18s MISMATCH: H v against differences of the hand adjoint, relative error %.3g\n", K::name,
                    error);
        failed = true;
        return false;
    }
    volatile double sink = 0;
    const double gradient = bench::median_seconds(
        [&] { sink = tapeflow::gradient([&k](const std::vector<tapeflow::Real>& y) { return k(y); }, x)[0]; }, runs);
    const double product = bench::median_seconds([&] { sink = tapeflow::hessian_vector_product(f, x, v)[0]; }, runs);
    // %g: a tiny kernel (quick_start, well under a microsecond) keeps its digits
    std::printf("%-18s %10.4g %10.4g %7.2f", K::name, gradient * 1e3, product * 1e3, product / gradient);
#ifdef TAPEFLOW_BENCH_CODIPACK
    std::vector<double> g, chv;
    codipack_hvp(k, x, v, chv);
    const double agree = relative_error(chv, hv);
    if (!(agree < 1e-9)) {
        std::printf("  MISMATCH: CoDiPack's H v differs from tapeflow's by %.3g\n", agree);
        failed = true;
        return false;
    }
    const double cg = bench::median_seconds([&] { sink = codipack_gradient(k, x, g); }, runs);
    const double ch = bench::median_seconds([&] { codipack_hvp(k, x, v, chv); }, runs);
    std::printf(" %10.4g %10.4g %7.2f %9.2f", cg * 1e3, ch * 1e3, ch / cg, product / ch);
#endif
    std::printf("\n");
    if (note_of<K>::value) std::printf("  (%s)\n", note_of<K>::value);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
            runs = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: %s [--runs n]\n", argv[0]);
            return 2;
        }
    }
    std::printf("%-18s %10s %10s %7s", "kernel", "grad ms", "H v ms", "ratio");
#ifdef TAPEFLOW_BENCH_CODIPACK
    std::printf(" %10s %10s %7s %9s", "codi grad", "codi H v", "ratio", "ours/codi");
#else
    std::printf("   (CoDiPack not built in: configure with -DTAPEFLOW_BENCH_CODIPACK_DIR=...)");
#endif
    std::printf("\n");
    bench::for_each_kernel([](const auto& k) { return second_order(k); });
    return failed ? 1 : 0;
}
