// examples/parallel_loop.cpp - an OpenMP loop inside one recording
// (docs/parallel.md, "A parallel loop inside one recording").
//
// A 1-D heat equation with a conductivity per cell; each time step's cell
// loop is `#pragma omp for` inside a tapeflow::parallel_region, so every
// thread records its cells onto a segment of the tape and the sweep runs the
// segments at once. The gradient of the final energy with respect to the
// conductivities is compared with the same program run on one thread; the
// program fails (exit 1) if they differ by more than rounding.
#include <tapeflow/tapeflow.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

using tapeflow::Real;

// threads = 0: the plain loop, on the recording thread.
Real energy(const std::vector<Real>& k, int threads) {
    const long n = long(k.size());
    std::vector<Real> u(k.size()), next(k.size());
    for (long i = 0; i < n; ++i) u[std::size_t(i)] = std::sin(3.14159 * double(i) / double(n - 1));
    for (int step = 0; step < 200; ++step) {
        const auto cell = [&](long il) {
            const std::size_t i = std::size_t(il);
            next[i] = u[i] + 0.2 * (k[i] * (u[i + 1] - u[i]) - k[i - 1] * (u[i] - u[i - 1]));
        };
        if (threads == 0) {
            for (long i = 1; i < n - 1; ++i) cell(i);
        } else {
            tapeflow::parallel_region region(tapeflow::tape::active(), std::size_t(threads));
#pragma omp parallel num_threads(threads)
            {
                tapeflow::parallel_region::worker w(region, std::size_t(omp_get_thread_num()));
#pragma omp for schedule(static)
                for (long i = 1; i < n - 1; ++i) cell(i);
            }
            region.close();  // one entry on the tape for this step's loop
        }
        next[0] = 0.0;
        next[std::size_t(n - 1)] = 0.0;
        std::swap(u, next);
    }
    Real e = 0.0;
    for (const Real& v : u) e += v * v;
    return e;
}

int main() {
    std::vector<double> k(20000);
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = 0.8 + 0.4 * double(i % 10) / 10.0;
    const int threads = std::max(2, omp_get_max_threads());

    const auto serial = tapeflow::gradient([](const std::vector<Real>& c) { return energy(c, 0); }, k);
    const auto parallel = tapeflow::gradient([&](const std::vector<Real>& c) { return energy(c, threads); }, k);

    double scale = 0, worst = 0;
    for (std::size_t i = 0; i < k.size(); ++i) {
        scale = std::max(scale, std::abs(serial[i]));
        worst = std::max(worst, std::abs(parallel[i] - serial[i]));
    }
    std::printf("d energy / d k[100] = %.12g on %d threads, %.12g on one\n", parallel[100], threads, serial[100]);
    std::printf("largest difference %.3g (largest derivative %.3g)\n", worst, scale);
    return worst <= 1e-12 * scale ? 0 : 1;
}
