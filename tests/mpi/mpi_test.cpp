// tests/mpi/mpi_test.cpp - tapeflow/mpi.hpp under mpirun (ctest runs it on
// 1, 2 and 4 ranks). Every rank runs every test case in the same order; the
// checks use CHECK, not REQUIRE, so that a failing rank still takes part in
// the communication of the cases after it (a missing partner would hang
// until ctest's timeout).
//
// References: the single-process gradient of the same program (computed on
// every rank), analytic derivatives of each collective, and the same sweep
// with scalar and vector adjoints.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <tapeflow/checkpoint/checkpointed_loop.hpp>
#include <tapeflow/checkpoint/rematerializer.hpp>
#include <tapeflow/mpi.hpp>
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

namespace {

using tapeflow::Real;
namespace mpi = tapeflow::mpi;

int rank() { return mpi::detail::rank_of(MPI_COMM_WORLD); }
int ranks() { return mpi::detail::size_of(MPI_COMM_WORLD); }

// ---- a 1-D heat equation with a conductivity per cell ------------------------
//   u_j <- u_j + dt k_j (u_{j-1} - 2 u_j + u_{j+1}) - dt k_j u_j^3 / 4,
//   u = 0 outside [0, N); loss = sum_j w_j u_j(T)^2.
constexpr std::size_t cells = 24;  // divisible by 1, 2, 4 ranks
constexpr int steps = 30;
constexpr double dt = 0.2;

double weight(std::size_t j) { return 1.0 + 0.01 * double(j); }
double start(std::size_t j) { return std::sin(3.14159265358979 * (double(j) + 0.5) / double(cells)); }
std::vector<double> conductivity(std::size_t first, std::size_t n) {
    std::vector<double> k(n);
    for (std::size_t j = 0; j < n; ++j) k[j] = 0.3 + 0.2 * std::cos(0.7 * double(first + j));
    return k;
}

template <class T>
void heat_step(std::vector<T>& u, std::vector<T>& next, const std::vector<T>& k) {
    // u holds a ghost cell at each end: u[0] and u[n + 1]
    const std::size_t n = k.size();
    for (std::size_t j = 1; j <= n; ++j)
        next[j] = u[j] + dt * k[j - 1] * (u[j - 1] - 2.0 * u[j] + u[j + 1]) - dt * k[j - 1] * u[j] * u[j] * u[j] / 4.0;
    for (std::size_t j = 1; j <= n; ++j) u[j] = next[j];
}

// The whole problem in one process.
Real serial_loss(const std::vector<Real>& k) {
    std::vector<Real> u(cells + 2), next(cells + 2);
    for (std::size_t j = 0; j < cells; ++j) u[j + 1] = start(j);
    for (int s = 0; s < steps; ++s) heat_step(u, next, k);
    Real loss = 0.0;
    for (std::size_t j = 0; j < cells; ++j) loss += weight(j) * u[j + 1] * u[j + 1];
    return loss;
}

// The sum over the ranks of `local` at rank 0, a passive 0 elsewhere: a
// global loss that each rank's gradient counts once.
Real sum_at_root(const Real& local) {
    Real total;
    mpi::reduce(&local, &total, 1, mpi::op::sum, 0, MPI_COMM_WORLD);
    return total;
}

// This rank's part as one state [u with its halo cells (n + 2) | k (n)],
// with its neighbours (MPI_PROC_NULL at the ends).
struct halo_state {
    std::size_t n, first;
    int left, right;
    std::vector<Real> state;
    explicit halo_state(const std::vector<Real>& k)
        : n(k.size()),
          first(std::size_t(rank()) * n),
          left(rank() > 0 ? rank() - 1 : MPI_PROC_NULL),
          right(rank() + 1 < ranks() ? rank() + 1 : MPI_PROC_NULL),
          state(2 * n + 2) {
        for (std::size_t j = 0; j < n; ++j) {
            state[j + 1] = start(first + j);
            state[n + 2 + j] = k[j];
        }
    }
    // sum_j w_j u_j^2 over this rank's cells
    Real loss() const {
        Real local = 0.0;
        for (std::size_t j = 0; j < n; ++j) local += weight(first + j) * state[j + 1] * state[j + 1];
        return local;
    }
};

// One step on a halo_state's state: the halo exchange by sendrecv, then heat_step.
void halo_step(std::vector<Real>& s, std::size_t n, int left, int right) {
    mpi::sendrecv(&s[n], 1, right, 1, &s[0], 1, left, 1, MPI_COMM_WORLD);
    mpi::sendrecv(&s[1], 1, left, 2, &s[n + 1], 1, right, 2, MPI_COMM_WORLD);
    std::vector<Real> u(s.begin(), s.begin() + std::ptrdiff_t(n + 2)), next(n + 2);
    const std::vector<Real> kk(s.begin() + std::ptrdiff_t(n + 2), s.end());
    heat_step(u, next, kk);
    std::copy(u.begin(), u.end(), s.begin());
}

enum class exchange { sendrecv, nonblocking, send_then_recv };

// This rank's cells [first, first + n) with the halo exchanged each step.
Real local_loss(const std::vector<Real>& k, exchange how) {
    const int r = rank(), p = ranks();
    const std::size_t n = k.size(), first = std::size_t(r) * n;
    const int left = r > 0 ? r - 1 : MPI_PROC_NULL, right = r + 1 < p ? r + 1 : MPI_PROC_NULL;
    std::vector<Real> u(n + 2), next(n + 2);
    for (std::size_t j = 0; j < n; ++j) u[j + 1] = start(first + j);
    for (int s = 0; s < steps; ++s) {
        if (how == exchange::sendrecv) {
            mpi::sendrecv(&u[n], 1, right, 1, &u[0], 1, left, 1, MPI_COMM_WORLD);
            mpi::sendrecv(&u[1], 1, left, 2, &u[n + 1], 1, right, 2, MPI_COMM_WORLD);
        } else if (how == exchange::nonblocking) {
            std::vector<mpi::request> requests;
            requests.push_back(mpi::irecv(&u[0], 1, left, 1, MPI_COMM_WORLD));
            requests.push_back(mpi::irecv(&u[n + 1], 1, right, 2, MPI_COMM_WORLD));
            requests.push_back(mpi::isend(&u[n], 1, right, 1, MPI_COMM_WORLD));
            requests.push_back(mpi::isend(&u[1], 1, left, 2, MPI_COMM_WORLD));
            mpi::wait_all(requests);
        } else {  // both sides send first: works only because MPI buffers small sends
            mpi::send(&u[n], 1, right, 1, MPI_COMM_WORLD);
            mpi::send(&u[1], 1, left, 2, MPI_COMM_WORLD);
            mpi::recv(&u[0], 1, left, 1, MPI_COMM_WORLD);
            mpi::recv(&u[n + 1], 1, right, 2, MPI_COMM_WORLD);
        }
        heat_step(u, next, k);
    }
    Real loss = 0.0;
    for (std::size_t j = 0; j < n; ++j) loss += weight(first + j) * u[j + 1] * u[j + 1];
    return loss;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tolerance) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("rank " << rank() << " element " << i);
        CHECK(std::abs(got[i] - want[i]) <= tolerance * (1.0 + std::abs(want[i])));
    }
}

struct heat_case {
    std::size_t n = cells / std::size_t(ranks());
    std::size_t first = std::size_t(rank()) * n;
    std::vector<double> k_all = conductivity(0, cells);
    std::vector<double> k = conductivity(first, n);
    std::vector<double> expected;  // this rank's slice of the serial gradient
    double serial_value = 0;
    heat_case() {
        auto [value, g] = tapeflow::value_and_gradient(serial_loss, k_all);
        serial_value = value;
        expected.assign(g.begin() + std::ptrdiff_t(first), g.begin() + std::ptrdiff_t(first + n));
    }
};

}  // namespace

TEST_CASE("heat with halo exchange by sendrecv: the gradient of the serial program") {
    heat_case c;
    auto f = [](const std::vector<Real>& k) {
        Real local = local_loss(k, exchange::sendrecv);
        return sum_at_root(local);  // a passive 0 on ranks other than 0
    };
    auto [value, g] = tapeflow::value_and_gradient(f, c.k);
    if (rank() == 0) CHECK(std::abs(value - c.serial_value) <= 1e-12 * c.serial_value);
    check_close(g, c.expected, 1e-12);
}

TEST_CASE("heat by isend, irecv and wait, and by sends before receives: the serial gradient") {
    // sends before receives on both sides: the reverse of recv; send starts
    // with the adjoint of recv on both sides, which must not block
    heat_case c;
    for (exchange how : {exchange::nonblocking, exchange::send_then_recv}) {
        INFO("exchange " << int(how));
        auto f = [how](const std::vector<Real>& k) { return sum_at_root(local_loss(k, how)); };
        check_close(tapeflow::gradient(f, c.k), c.expected, 1e-12);
    }
}

TEST_CASE("an allreduced loss is one value: seeded on one rank, it gives the serial gradient") {
    heat_case c;
    tapeflow::tape& tape = tapeflow::tape::active();
    tape.reset();
    tape.start_recording();
    std::vector<Real> k(c.k.begin(), c.k.end());
    tape.register_inputs(k.data(), k.data() + k.size());
    Real local = local_loss(k, exchange::sendrecv);
    Real total;
    mpi::allreduce(&local, &total, 1, mpi::op::sum, MPI_COMM_WORLD);
    tape.register_output(total);
    tape.stop_recording();
    CHECK(std::abs(total.value() - c.serial_value) <= 1e-12 * c.serial_value);  // on every rank
    if (rank() == 0) tape.set_adjoint(total, 1.0);
    tape.sweep();
    std::vector<double> g(k.size());
    tape.adjoints(k.data(), k.data() + k.size(), g.data());
    check_close(g, c.expected, 1e-12);

    // seeded on every rank, the sweep counts the loss once per rank
    tape.clear_adjoints();
    tape.set_adjoint(total, 1.0);
    tape.sweep();
    tape.adjoints(k.data(), k.data() + k.size(), g.data());
    std::vector<double> times_p(c.expected);
    for (double& e : times_p) e *= ranks();
    check_close(g, times_p, 1e-12);
    tape.reset();
}

namespace {

// The heat loss with the time loop checkpointed: the state is [u with its
// halo cells (n + 2) | k (n)]; the sweep re-runs steps, messages included.
// With `only_first`, only rank 0's cells enter the loss.
Real checkpointed_loss(const std::vector<Real>& k, std::size_t total_steps, bool only_first, bool nested = false) {
    halo_state h(k);
    const std::size_t n = h.n;
    const int left = h.left, right = h.right;
    std::vector<Real>& state = h.state;
    auto body = [n, left, right](std::vector<Real>& s) { halo_step(s, n, left, right); };
    if (nested)  // total_steps = 6 x 5: an outer loop whose step is a checkpointed loop
        tapeflow::checkpointed_loop(
            total_steps / 5, state, [body](std::vector<Real>& s) { tapeflow::checkpointed_loop(5, s, body, 2); }, 3);
    else
        tapeflow::checkpointed_loop(total_steps, state, body, 4);
    return sum_at_root(!only_first || rank() == 0 ? h.loss() : Real(0.0));
}

}  // namespace

TEST_CASE("a checkpointed time loop with halo exchanges: the serial gradient") {
    heat_case c;
    auto f = [](const std::vector<Real>& k) { return checkpointed_loss(k, steps, false); };
    check_close(tapeflow::gradient(f, c.k), c.expected, 1e-12);
}

TEST_CASE("nested checkpointed loops with halo exchanges: the serial gradient") {
    heat_case c;
    static_assert(steps % 5 == 0, "the outer loop runs steps / 5 inner loops of 5 steps");
    auto f = [](const std::vector<Real>& k) { return checkpointed_loss(k, steps, false, true); };
    check_close(tapeflow::gradient(f, c.k), c.expected, 1e-12);
}

TEST_CASE("rematerialized regions that communicate keep their tapes: the serial gradient") {
    // a budget of 0 would drop every region's tape and record it again in
    // the sweep, on this rank alone; regions that communicate are kept
    heat_case c;
    tapeflow::rematerializer remat(0);
    auto f = [&remat](const std::vector<Real>& k) {
        halo_state h(k);
        const std::size_t n = h.n;
        const int left = h.left, right = h.right;
        for (int s = 0; s < steps; ++s)
            remat.region(h.state, [n, left, right](std::vector<Real>& st) { halo_step(st, n, left, right); });
        return sum_at_root(h.loss());
    };
    check_close(tapeflow::gradient(f, c.k), c.expected, 1e-12);
    CHECK(remat.statistics().regions == std::uint64_t(steps));
    CHECK(remat.statistics().evictions == 0);
    CHECK(remat.statistics().rerecorded == 0);
}

TEST_CASE("a checkpointed loop communicates in the sweep where its adjoints are 0") {
    // one step: the k of ranks other than 0 cannot reach rank 0's cells, so
    // their loop's output adjoints are all 0; rank 0's sweep still needs
    // their messages (without them it would wait for ever)
    heat_case c;
    auto f = [](const std::vector<Real>& k) { return checkpointed_loss(k, 1, true); };
    const std::vector<double> g = tapeflow::gradient(f, c.k);
    // reference: the same loss without checkpointing, by finite differences
    // of the one-step loss of rank 0 (its own k only)
    if (rank() != 0) {
        check_close(g, std::vector<double>(c.n, 0.0), 0.0);
    } else {
        auto direct = [&](std::vector<double> k) {
            std::vector<double> u(c.n + 2, 0.0), next(c.n + 2);
            for (std::size_t j = 0; j < c.n; ++j) u[j + 1] = start(j);
            if (ranks() > 1) u[c.n + 1] = start(c.n);  // the neighbour's first cell
            heat_step(u, next, k);
            double loss = 0;
            for (std::size_t j = 0; j < c.n; ++j) loss += weight(j) * u[j + 1] * u[j + 1];
            return loss;
        };
        std::vector<double> want(c.n);
        for (std::size_t j = 0; j < c.n; ++j) {
            std::vector<double> up(c.k), down(c.k);
            const double h = 1e-6;
            up[j] += h;
            down[j] -= h;
            want[j] = (direct(up) - direct(down)) / (2 * h);
        }
        check_close(g, want, 1e-8);
    }
}

namespace {

// x of rank s: elements 0-2 different on every rank, element 3 the same on
// all (a tie: min and max go to the lowest rank)
constexpr std::size_t reduced = 4;
double x_of(int s, std::size_t i) {
    return i == 3 ? 0.75 : 0.5 + 0.37 * double(s) * (i == 1 ? -1.0 : 1.0) + 0.1 * double(i);
}
// weight of y_i in the loss of rank s
double w_of(int s, std::size_t i) { return 1.0 + 0.25 * double(s) + 0.5 * double(i); }

std::vector<double> reduction_input() {
    std::vector<double> x(reduced);
    for (std::size_t i = 0; i < reduced; ++i) x[i] = x_of(rank(), i);
    return x;
}

// y = allreduce(x, o) or reduce(x, o) to rank 0
std::vector<Real> reduced_values(const std::vector<Real>& x, mpi::op o, bool all) {
    std::vector<Real> y(reduced);
    if (all)
        mpi::allreduce(x.data(), y.data(), int(reduced), o, MPI_COMM_WORLD);
    else
        mpi::reduce(x.data(), y.data(), int(reduced), o, 0, MPI_COMM_WORLD);
    return y;
}

// Records loss = reduce_sum_s(sum_i w_si y_i) and returns this rank's gradient.
std::vector<double> reduction_gradient(mpi::op o, bool all) {
    const int me = rank();
    auto f = [o, all, me](const std::vector<Real>& x) {
        const std::vector<Real> y = reduced_values(x, o, all);
        Real local = 0.0;
        for (std::size_t i = 0; i < reduced; ++i) local += w_of(all ? me : 0, i) * y[i];
        return sum_at_root(local);
    };
    return tapeflow::gradient(f, reduction_input());
}

// dy_i / dx_{me,i}: 1 for sum; the other ranks' product for prod; for min
// and max 1 on the lowest rank that holds the extreme, else 0
std::vector<double> reduction_derivative(mpi::op o) {
    const int me = rank(), p = ranks();
    std::vector<double> d(reduced, 1.0);
    for (std::size_t i = 0; i < reduced; ++i) {
        if (o == mpi::op::prod) {
            for (int s = 0; s < p; ++s)
                if (s != me) d[i] *= x_of(s, i);
        } else if (o == mpi::op::min || o == mpi::op::max) {
            int holder = 0;
            for (int s = 1; s < p; ++s)
                if (o == mpi::op::min ? x_of(s, i) < x_of(holder, i) : x_of(s, i) > x_of(holder, i)) holder = s;
            d[i] = holder == me ? 1.0 : 0.0;
        }
    }
    return d;
}

// d loss / d x_{me,i}: (sum of the weights of the ranks holding y) * dy_i/dx_{me,i}
std::vector<double> reduction_expected(mpi::op o, bool all) {
    const std::vector<double> d = reduction_derivative(o);
    std::vector<double> g(reduced);
    for (std::size_t i = 0; i < reduced; ++i) {
        double weights = 0;
        for (int s = 0; s < (all ? ranks() : 1); ++s) weights += w_of(s, i);
        g[i] = weights * d[i];
    }
    return g;
}

}  // namespace

TEST_CASE("allreduce and reduce: sum, prod, min and max against analytic derivatives") {
    for (mpi::op o : {mpi::op::sum, mpi::op::prod, mpi::op::min, mpi::op::max})
        for (bool all : {true, false}) {
            INFO("op " << int(o) << (all ? " allreduce" : " reduce"));
            check_close(reduction_gradient(o, all), reduction_expected(o, all), 1e-14);
        }
}

TEST_CASE("allreduce and reduce in vector sweeps: every lane against analytic derivatives") {
    // the Jacobian of y (summed over the ranks that hold it) with respect to
    // this rank's x: diagonal, (ranks holding y) x dy_i/dx_{me,i}
    for (mpi::op o : {mpi::op::sum, mpi::op::prod, mpi::op::min, mpi::op::max})
        for (bool all : {true, false}) {
            INFO("op " << int(o) << (all ? " allreduce" : " reduce"));
            auto f = [o, all](const std::vector<Real>& x) { return reduced_values(x, o, all); };
            const std::vector<double> d = reduction_derivative(o);
            const auto lanes = tapeflow::jacobian<4>(f, reduction_input());
            const auto scalar = tapeflow::jacobian<1>(f, reduction_input());
            REQUIRE(lanes.size() == reduced);
            REQUIRE(scalar.size() == reduced);
            for (std::size_t i = 0; i < reduced; ++i) {
                std::vector<double> row(reduced, 0.0);
                row[i] = (all ? ranks() : 1) * d[i];
                check_close(lanes[i], row, 1e-14);
                check_close(scalar[i], row, 1e-14);
            }
        }
}

TEST_CASE("allreduce in place and its values") {
    const int p = ranks();
    std::vector<Real> x(2);
    x[0] = 1.0 + rank();
    x[1] = 2.0;
    mpi::allreduce(x.data(), x.data(), 2, mpi::op::sum, MPI_COMM_WORLD);  // no tape records: plain values
    CHECK(x[0].value() == p * (p + 1) / 2.0);
    CHECK(x[1].value() == 2.0 * p);
    CHECK(!x[0].is_active());
    // in place while recording: d(sum_s x_s * x_s-after) ... the gradient of
    // loss = reduce_sum(allreduce_sum(x)^2) / one value per rank
    auto f = [](const std::vector<Real>& v) {
        std::vector<Real> y(v);
        mpi::allreduce(y.data(), y.data(), 1, mpi::op::sum, MPI_COMM_WORLD);
        Real local = y[0] * y[0];
        return sum_at_root(local);
    };
    // loss = p * S^2 with S = sum_s x_s: d/dx_me = 2 p S
    const double s = p * (p + 1) / 2.0;
    check_close(tapeflow::gradient(f, std::vector<double>{1.0 + rank()}), {2.0 * p * s}, 1e-14);
}

TEST_CASE("bcast, gather, scatter and allgather against analytic derivatives") {
    const int me = rank(), p = ranks();
    const std::size_t up = std::size_t(p);
    SECTION("bcast") {
        // x at root 0 goes everywhere; loss = sum_s (s + 1) * x0 * x0_s(copy)  -> at root: 2 x0 sum(s + 1)
        auto f = [me](const std::vector<Real>& x) {
            std::vector<Real> c(x);
            mpi::bcast(c.data(), 1, 0, MPI_COMM_WORLD);
            Real local = double(me + 1) * c[0] * c[0];
            return sum_at_root(local);
        };
        const double x0 = 1.5;
        const double sum = p * (p + 1) / 2.0;
        check_close(tapeflow::gradient(f, std::vector<double>{me == 0 ? x0 : 9.0}), {me == 0 ? 2.0 * x0 * sum : 0.0},
                    1e-14);
    }
    SECTION("gather") {
        // root gathers x (2 per rank); loss = sum_j (j + 1) y_j^2 at root
        auto f = [up](const std::vector<Real>& x) {
            std::vector<Real> y(2 * up);
            mpi::gather(x.data(), 2, y.data(), 0, MPI_COMM_WORLD);
            Real loss = 0.0;
            if (rank() == 0)
                for (std::size_t j = 0; j < y.size(); ++j) loss += double(j + 1) * y[j] * y[j];
            return loss;
        };
        const std::vector<double> x{0.5 + me, -1.0 - me};
        const std::size_t j0 = 2 * std::size_t(me);
        check_close(tapeflow::gradient(f, x), {2.0 * double(j0 + 1) * x[0], 2.0 * double(j0 + 2) * x[1]}, 1e-14);
    }
    SECTION("scatter") {
        // root scatters x (1 per rank); rank s: loss_s = (s + 2) y^2, summed at root
        auto f = [me](const std::vector<Real>& x) {
            Real y;
            mpi::scatter(x.data(), 1, &y, 0, MPI_COMM_WORLD);
            return sum_at_root(double(me + 2) * y * y);
        };
        std::vector<double> x(me == 0 ? up : 0);
        for (std::size_t s = 0; s < x.size(); ++s) x[s] = 0.25 * double(s + 1);
        std::vector<double> want(x.size());
        for (std::size_t s = 0; s < x.size(); ++s) want[s] = 2.0 * double(s + 2) * x[s];
        check_close(tapeflow::gradient(f, x), want, 1e-14);
    }
    SECTION("allgather") {
        // every rank gathers x (1 per rank); rank s: loss_s = sum_j (s + j + 1) y_j^2
        auto f = [me, up](const std::vector<Real>& x) {
            std::vector<Real> y(up);
            mpi::allgather(x.data(), 1, y.data(), MPI_COMM_WORLD);
            Real local = 0.0;
            for (std::size_t j = 0; j < up; ++j) local += double(me + int(j) + 1) * y[j] * y[j];
            return sum_at_root(local);
        };
        const double x = 0.3 + me;
        double coefficient = 0;
        for (int s = 0; s < p; ++s) coefficient += double(s + me + 1);
        check_close(tapeflow::gradient(f, std::vector<double>{x}), {2.0 * coefficient * x}, 1e-14);
    }
}

TEST_CASE("a vector sweep carries every lane through the messages") {
    // z = x * S elementwise, S = allreduce_sum(x): the Jacobian of the sum
    // over ranks of z with respect to this rank's x is diag(2 S)
    const int me = rank();
    const std::vector<double> x{0.5 + me, 1.0 - 0.25 * me, 2.0, 0.125 * me};
    auto f = [](const std::vector<Real>& v) {
        std::vector<Real> s(v.size()), z(v.size());
        mpi::allreduce(v.data(), s.data(), int(v.size()), mpi::op::sum, MPI_COMM_WORLD);
        for (std::size_t i = 0; i < v.size(); ++i) z[i] = v[i] * s[i];
        return z;
    };
    std::vector<double> sum(4, 0.0);
    for (int r = 0; r < ranks(); ++r) {
        const std::vector<double> xr{0.5 + r, 1.0 - 0.25 * r, 2.0, 0.125 * r};
        for (std::size_t i = 0; i < 4; ++i) sum[i] += xr[i];
    }
    const auto lanes = tapeflow::jacobian<4>(f, x);
    const auto scalar = tapeflow::jacobian<1>(f, x);
    for (std::size_t i = 0; i < 4; ++i) {
        std::vector<double> row(4, 0.0);
        row[i] = 2.0 * sum[i];
        check_close(lanes[i], row, 1e-14);
        check_close(scalar[i], row, 1e-14);
    }
}

TEST_CASE("recv from any source answers the rank that sent") {
    // a ring: rank r sends x_r to r + 1 and receives from MPI_ANY_SOURCE;
    // loss = sum_r (r + 1) * received_r^2  ->  d/dx_r = 2 (r + 2 mod p ...) x_r
    const int me = rank(), p = ranks();
    if (p < 2) return;  // a blocking send to oneself needs a partner
    auto f = [me, p](const std::vector<Real>& x) {
        Real got;
        MPI_Status status;
        if (me % 2 == 0) {
            mpi::send(x.data(), 1, (me + 1) % p, 7, MPI_COMM_WORLD);
            mpi::recv(&got, 1, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        } else {
            mpi::recv(&got, 1, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
            mpi::send(x.data(), 1, (me + 1) % p, 7, MPI_COMM_WORLD);
        }
        CHECK(status.MPI_SOURCE == (me + p - 1) % p);
        Real local = double(me + 1) * got * got;
        Real total = sum_at_root(local);
        // no rank sweeps before every wildcard receive has its forward message
        MPI_Barrier(MPI_COMM_WORLD);
        return total;
    };
    const double x = 0.75 + me;
    const int receiver = (me + 1) % p;
    check_close(tapeflow::gradient(f, std::vector<double>{x}), {2.0 * double(receiver + 1) * x}, 1e-14);
}

TEST_CASE("gather, scatter and allgather in vector sweeps: every lane") {
    const int me = rank(), p = ranks();
    const std::size_t up = std::size_t(p);
    constexpr std::size_t n = 2;  // a constant: the lambdas below use it without capturing it
    const std::vector<double> x{0.5 + me, -1.0 - me};
    SECTION("gather") {
        // y at root: block r is x of rank r; elsewhere the outputs are passive 0s
        auto f = [up](const std::vector<Real>& v) {
            std::vector<Real> y(n * up);
            mpi::gather(v.data(), int(n), y.data(), 0, MPI_COMM_WORLD);
            return y;
        };
        for (const auto& J : {tapeflow::jacobian<8>(f, x), tapeflow::jacobian<1>(f, x)}) {
            REQUIRE(J.size() == n * up);
            for (std::size_t j = 0; j < n * up; ++j) {
                std::vector<double> row(n, 0.0);
                if (j / n == std::size_t(me)) row[j % n] = 1.0;
                check_close(J[j], row, 0.0);
            }
        }
    }
    SECTION("allgather") {
        // every rank holds a copy of block me: the copies' seeds add up to p
        auto f = [up](const std::vector<Real>& v) {
            std::vector<Real> y(n * up);
            mpi::allgather(v.data(), int(n), y.data(), MPI_COMM_WORLD);
            return y;
        };
        for (const auto& J : {tapeflow::jacobian<8>(f, x), tapeflow::jacobian<1>(f, x)}) {
            REQUIRE(J.size() == n * up);
            for (std::size_t j = 0; j < n * up; ++j) {
                std::vector<double> row(n, 0.0);
                if (j / n == std::size_t(me)) row[j % n] = double(p);
                check_close(J[j], row, 0.0);
            }
        }
    }
    SECTION("scatter") {
        // root's x (n per rank) goes out in blocks; rank r's y is block r:
        // seeding y_l on every rank reaches x[r n + l] of the root for all r
        std::vector<double> all(n * up);
        for (std::size_t j = 0; j < all.size(); ++j) all[j] = 0.1 * double(j + 1);
        auto f = [](const std::vector<Real>& v) {
            std::vector<Real> y(n);
            mpi::scatter(v.data(), int(n), y.data(), 0, MPI_COMM_WORLD);
            return y;
        };
        for (const auto& J : {tapeflow::jacobian<2>(f, all), tapeflow::jacobian<1>(f, all)}) {
            REQUIRE(J.size() == n);
            for (std::size_t l = 0; l < n; ++l) {
                std::vector<double> row(n * up, 0.0);
                if (me == 0)
                    for (std::size_t r = 0; r < up; ++r) row[r * n + l] = 1.0;
                check_close(J[l], row, 0.0);
            }
        }
    }
}

TEST_CASE("adjoint messages past MPI's eager limit: both sides send first, 8 lanes, several sweeps") {
    // 256 doubles (2 KiB) go out eagerly in the forward; with 8 lanes the
    // adjoint messages are 16 KiB, which a blocking send would not buffer:
    // both sides' reverse starts with the adjoint of their recv. (One rank
    // sends to itself, where Open MPI buffers less than 2 KiB: 64 doubles.)
    const int me = rank(), p = ranks();
    if (p % 2 != 0 && p != 1) return;
    const int partner = p == 1 ? 0 : me ^ 1;
    const std::size_t n = p == 1 ? 64 : 256;
    constexpr std::size_t outputs = 8;
    auto c = [](int r, std::size_t l, std::size_t i) { return 1.0 + 0.01 * double(r) + 0.1 * double(l) + 1e-3 * double(i); };
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = 0.5 + 0.001 * double(i) + 0.1 * me;
    std::vector<double> x_partner(n);
    for (std::size_t i = 0; i < n; ++i) x_partner[i] = 0.5 + 0.001 * double(i) + 0.1 * partner;
    auto f = [&](const std::vector<Real>& v) {
        std::vector<Real> y(n);
        mpi::send(v.data(), int(n), partner, 5, MPI_COMM_WORLD);
        mpi::recv(y.data(), int(n), partner, 5, MPI_COMM_WORLD);
        std::vector<Real> z(outputs);
        for (std::size_t l = 0; l < outputs; ++l) {
            z[l] = 0.0;
            for (std::size_t i = 0; i < n; ++i) z[l] += c(me, l, i) * y[i] * v[i];
        }
        return z;
    };
    // row l: c(me, l, i) y_i from this rank's z_l, c(partner, l, i) x_partner_i
    // from the partner's z_l (its y is this rank's x); one rank: both terms are its own
    for (const auto& J : {tapeflow::jacobian<8>(f, x), tapeflow::jacobian<1>(f, x)}) {
        REQUIRE(J.size() == outputs);
        for (std::size_t l = 0; l < outputs; ++l) {
            std::vector<double> row(n);
            for (std::size_t i = 0; i < n; ++i)
                row[i] = p == 1 ? 2.0 * c(me, l, i) * x[i] : c(me, l, i) * x_partner[i] + c(partner, l, i) * x_partner[i];
            check_close(J[l], row, 1e-13);
        }
    }
}

TEST_CASE("float: values travel as MPI_FLOAT, adjoints too") {
    using RealF = tapeflow::basic_real<float>;
    const int p = ranks();
    auto f = [](const std::vector<RealF>& v) {
        RealF sum;
        mpi::allreduce(v.data(), &sum, 1, mpi::op::sum, MPI_COMM_WORLD);
        RealF local = sum * sum, total;
        mpi::reduce(&local, &total, 1, mpi::op::sum, 0, MPI_COMM_WORLD);
        return total;
    };
    // loss = p S^2 with S = sum_s (1 + s): d/dx_me = 2 p S
    const double sum = p * (p + 1) / 2.0;
    const std::vector<float> g = tapeflow::gradient(f, std::vector<float>{1.0f + float(rank())});
    REQUIRE(g.size() == 1);
    CHECK(g[0] == Approx(2.0 * p * sum).epsilon(1e-6));
    tapeflow::basic_tape<float>::active().reset();  // its adjoint sends complete before MPI ends
}

TEST_CASE("misuse is refused with a message") {
    std::vector<Real> x(2);
    CHECK_THROWS_AS(mpi::send(x.data(), -1, 0, 0, MPI_COMM_WORLD), tapeflow::usage_error);
    CHECK_THROWS_AS(mpi::send(static_cast<const Real*>(nullptr), 2, 0, 0, MPI_COMM_WORLD), tapeflow::usage_error);
    // a request posted before the recording cannot be waited for inside it
    tapeflow::tape& tape = tapeflow::tape::active();
    tape.reset();
    Real y;
    mpi::request r = mpi::irecv(&y, 1, rank(), 3, MPI_COMM_WORLD);
    mpi::request s = mpi::isend(x.data(), 1, rank(), 3, MPI_COMM_WORLD);
    tape.start_recording();
    CHECK_THROWS_AS(mpi::wait(r), tapeflow::usage_error);
    tape.stop_recording();
    mpi::wait(r);
    mpi::wait(s);
    CHECK_THROWS_AS(mpi::wait(s), tapeflow::usage_error);  // twice
    mpi::request never;
    CHECK_THROWS_AS(mpi::wait(never), tapeflow::usage_error);

    // posted in one recording, waited for in the next: refused (the request
    // is cancelled when it goes)
    tape.reset();
    tape.start_recording();
    {
        Real z;
        mpi::request early = mpi::irecv(&z, 1, rank(), 99, MPI_COMM_WORLD);
        tape.stop_recording();
        tape.reset();
        tape.start_recording();
        CHECK_THROWS_AS(mpi::wait(early), tapeflow::usage_error);
        tape.stop_recording();
    }
    tape.reset();
    tape.reset();
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    const int failed = Catch::Session().run(argc, argv);
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    tapeflow::tape::active().reset();  // completes the adjoint sends still open, before MPI ends
    MPI_Finalize();
    return any != 0 ? 1 : 0;
}
