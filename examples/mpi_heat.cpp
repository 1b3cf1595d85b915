// examples/mpi_heat.cpp - the gradient of a domain-decomposed simulation:
// a 1-D heat equation whose cells are split over the MPI ranks, with a halo
// exchange every step and a global loss (docs/parallel.md, "MPI").
//
//   mpirun -np 2 ./mpi_heat [--cells N] [--steps T] [--repeat R]
//
// Each rank owns cells [r n, (r + 1) n) and their conductivities k (the
// parameters), records its part on its own tape, and gets the gradient of
// the global loss with respect to its own k. Rank 0 then checks the result
// against the gradient of the whole problem taped in one process.
#include <tapeflow/mpi.hpp>
#include <tapeflow/tapeflow.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using tapeflow::Real;
namespace mpi = tapeflow::mpi;

namespace {

std::size_t cells = 4096;
int steps = 200;
int repeat = 3;  // gradients timed (the median is printed; the first one also faults in the tape)
constexpr double dt = 0.2;

double start(std::size_t j) { return std::sin(3.14159265358979 * (double(j) + 0.5) / double(cells)); }
double conductivity(std::size_t j) { return 0.3 + 0.2 * std::cos(0.7 * double(j)); }

// One explicit step on cells 1..n of u (u[0] and u[n + 1] are halo cells).
void step(std::vector<Real>& u, std::vector<Real>& next, const std::vector<Real>& k) {
    const std::size_t n = k.size();
    for (std::size_t j = 1; j <= n; ++j)
        next[j] = u[j] + dt * k[j - 1] * (u[j - 1] - 2.0 * u[j] + u[j + 1]) - dt * k[j - 1] * u[j] * u[j] * u[j] / 4.0;
    for (std::size_t j = 1; j <= n; ++j) u[j] = next[j];
}

// The loss of cells [first, first + n) after `steps` steps; the halo cells
// come from the neighbours (MPI_PROC_NULL at the ends: they stay 0).
Real local_loss(const std::vector<Real>& k, std::size_t first, int left, int right, MPI_Comm comm) {
    const std::size_t n = k.size();
    std::vector<Real> u(n + 2), next(n + 2);
    for (std::size_t j = 0; j < n; ++j) u[j + 1] = start(first + j);
    for (int s = 0; s < steps; ++s) {
        mpi::sendrecv(&u[n], 1, right, 0, &u[0], 1, left, 0, comm);
        mpi::sendrecv(&u[1], 1, left, 1, &u[n + 1], 1, right, 1, comm);
        step(u, next, k);
    }
    Real loss = 0.0;
    for (std::size_t j = 1; j <= n; ++j) loss += u[j] * u[j];
    return loss;
}

// Median wall time of `repeat` calls of body(), which each rank runs together.
template <class Body>
double median_seconds(MPI_Comm comm, Body&& body) {
    std::vector<double> times;
    for (int i = 0; i < repeat; ++i) {
        MPI_Barrier(comm);
        const auto t0 = std::chrono::steady_clock::now();
        body();
        MPI_Barrier(comm);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--cells") == 0) cells = std::strtoul(argv[i + 1], nullptr, 10);
        if (std::strcmp(argv[i], "--steps") == 0) steps = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--repeat") == 0) repeat = std::max(1, std::atoi(argv[i + 1]));
    }
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (cells % std::size_t(ranks) != 0) {
        if (rank == 0) std::fprintf(stderr, "mpi_heat: --cells must be a multiple of the number of ranks\n");
        MPI_Finalize();
        return 2;
    }
    const std::size_t n = cells / std::size_t(ranks), first = std::size_t(rank) * n;
    const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank + 1 < ranks ? rank + 1 : MPI_PROC_NULL;
    std::vector<double> k(n);
    for (std::size_t j = 0; j < n; ++j) k[j] = conductivity(first + j);

    // The global loss is one value: reduced to rank 0 (a passive 0 on the
    // others), so that each rank's gradient counts it once.
    auto loss = [&](const std::vector<Real>& kr) {
        Real local = local_loss(kr, first, left, right, MPI_COMM_WORLD);
        Real total;
        mpi::reduce(&local, &total, 1, mpi::op::sum, 0, MPI_COMM_WORLD);
        return total;
    };
    tapeflow::value_and_gradient_result<double> result{};
    const double distributed_seconds =
        median_seconds(MPI_COMM_WORLD, [&] { result = tapeflow::value_and_gradient(loss, k); });
    const double value = result.value;
    const std::vector<double>& g = result.gradient;

    // Every rank's gradient to rank 0, which compares it with one process's.
    std::vector<double> all(rank == 0 ? cells : 0);
    MPI_Gather(g.data(), int(n), MPI_DOUBLE, all.data(), int(n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int status = 0;
    if (rank == 0) {
        std::vector<double> k_all(cells);
        for (std::size_t j = 0; j < cells; ++j) k_all[j] = conductivity(j);
        auto serial = [&](const std::vector<Real>& kr) {
            return local_loss(kr, 0, MPI_PROC_NULL, MPI_PROC_NULL, MPI_COMM_SELF);
        };
        tapeflow::value_and_gradient_result<double> one{};
        const double serial_seconds =
            median_seconds(MPI_COMM_SELF, [&] { one = tapeflow::value_and_gradient(serial, k_all); });
        const double serial_value = one.value;
        const std::vector<double>& serial_g = one.gradient;
        double worst = 0;
        for (std::size_t j = 0; j < cells; ++j)
            worst = std::max(worst, std::abs(all[j] - serial_g[j]) / (1.0 + std::abs(serial_g[j])));
        std::printf("cells %zu, steps %d, ranks %d\n", cells, steps, ranks);
        std::printf("loss %.12g (one process: %.12g)\n", value, serial_value);
        std::printf("gradient on %d ranks: %.4f s; in one process: %.4f s (medians of %d)\n", ranks, distributed_seconds,
                    serial_seconds, repeat);
        std::printf("largest relative difference to one process: %.2e\n", worst);
        status = worst <= 1e-12 && std::abs(value - serial_value) <= 1e-12 * std::abs(serial_value) ? 0 : 1;
        if (status != 0) std::printf("mpi_heat: the gradients differ\n");
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    tapeflow::tape::active().reset();  // completes the adjoint sends still open, before MPI ends
    MPI_Finalize();
    return status;
}
