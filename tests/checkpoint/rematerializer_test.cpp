// Recomputable regions under a budget: gradients as plain taping, eviction
// by score, re-recording in the sweep.
#include <tapeflow/checkpoint/rematerializer.hpp>
#include <tapeflow/tapeflow.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

using tapeflow::Real;

namespace {

// A layer of a small network-like map; `work` repeats it (more recording time).
template <class T>
void layer(std::vector<T>& u, int work) {
    for (int w = 0; w < work; ++w)
        for (std::size_t i = 0; i + 1 < u.size(); ++i) u[i] = tanh(u[i] + 0.3 * u[i + 1]) + 0.1 * u[i];
}

template <class T>
T loss(const std::vector<T>& u) {
    T f = 0;
    for (std::size_t i = 0; i < u.size(); ++i) f += u[i] * u[i] * double(i + 1);
    return f;
}

std::vector<double> start(std::size_t n) {
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = std::cos(0.7 * double(i));
    return x;
}

std::vector<double> plain(const std::vector<double>& x, int layers) {
    return tapeflow::gradient([&](const std::vector<Real>& v) {
        std::vector<Real> u = v;
        for (int l = 0; l < layers; ++l) layer(u, 1 + l % 3);
        return loss(u);
    }, x);
}

}  // namespace

TEST_CASE("rematerializer: same gradient as plain taping for any budget", "[rematerialization]") {
    const auto x = start(30);
    const auto expected = plain(x, 12);
    for (std::size_t budget : {std::size_t(0), std::size_t(200000), std::size_t(1) << 40}) {
        tapeflow::rematerializer remat(budget);
        const auto g = tapeflow::gradient([&](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            for (int l = 0; l < 12; ++l) remat.region(u, [l](std::vector<Real>& s) { layer(s, 1 + l % 3); });
            return loss(u);
        }, x);
        INFO("budget " << budget);
        CHECK(g == expected);
        const auto& st = remat.statistics();
        CHECK(st.regions == 12);
        CHECK(st.peak_held_bytes <= budget);
        if (budget == 0) {
            CHECK(st.evictions == 24);  // each region's tape, forward and again after its sweep
            CHECK(st.rerecorded == 12);
            CHECK(st.held_bytes == 0);
        }
        if (budget == std::size_t(1) << 40) {
            CHECK(st.evictions == 0);
            CHECK(st.rerecorded == 0);
        }
        if (budget == 200000) {
            // the budget holds one region's tape (one 128 KiB tile): 11 are
            // dropped while recording; the sweep records again all regions
            // without a tape (11, or 12 when timing noise made the newest
            // region the victim) and drops one tape after each
            CHECK(st.rerecorded >= 11);
            CHECK(st.rerecorded <= 12);
            CHECK(st.evictions == 11 + st.rerecorded);
        }
    }
}

TEST_CASE("rematerializer: the lowest score goes first", "[rematerialization]") {
    // Two regions with equal tapes (each one tile: 128 KiB) recorded one after
    // the other: the budget holds one. The first is cheap and staler, the
    // second expensive: the first is dropped.
    const auto x = start(20);
    tapeflow::rematerializer remat(200 * 1024);
    int cheap_runs = 0, dear_runs = 0;
    tapeflow::gradient([&](const std::vector<Real>& v) {
        std::vector<Real> u = v;
        remat.region(u, [&](std::vector<Real>& s) {
            ++cheap_runs;
            layer(s, 1);
        });
        remat.region(u, [&](std::vector<Real>& s) {
            ++dear_runs;
            layer(s, 1);
            volatile double sink = 0;  // recording time without more tape
            for (int i = 0; i < 3000000; ++i) sink = sink + 1e-9 * i;
        });
        CHECK(remat.statistics().evictions == 1);
        return loss(u);
    }, x);
    // the expensive region kept its tape; the cheap one was recorded again
    CHECK(dear_runs == 1);
    CHECK(cheap_runs == 2);
    CHECK(remat.statistics().rerecorded == 1);
}

TEST_CASE("rematerializer: several sweeps, exceptions, misuse", "[rematerialization]") {
    const auto x = start(10);
    auto outputs = [](std::vector<Real>& u) { return std::vector<Real>{u[0] * u[1], exp(u[2])}; };
    const auto expected = tapeflow::jacobian([&](const std::vector<Real>& v) {
        std::vector<Real> u = v;
        for (int l = 0; l < 5; ++l) layer(u, 2);
        return outputs(u);
    }, x);
    tapeflow::rematerializer remat(0);
    const auto j = tapeflow::jacobian([&](const std::vector<Real>& v) {
        std::vector<Real> u = v;
        for (int l = 0; l < 5; ++l) remat.region(u, [](std::vector<Real>& s) { layer(s, 2); });
        return outputs(u);
    }, x);
    CHECK(j == expected);

    // an exception while recording a region again in the sweep
    auto& tape = tapeflow::tape::active();
    bool fail = false;
    tapeflow::rematerializer none(0);
    tape.reset();
    tape.start_recording();
    std::vector<Real> u(x.begin(), x.end());
    for (auto& e : u) tape.register_input(e);
    none.region(u, [&](std::vector<Real>& s) {
        if (fail) throw std::runtime_error("region failed");
        layer(s, 1);
    });
    Real f = loss(u);
    tape.register_output(f);
    tape.stop_recording();
    fail = true;
    tape.set_adjoint(f, 1.0);
    CHECK_THROWS_WITH(tape.sweep(), "region failed");
    CHECK(&tapeflow::tape::active() == &tape);
    tape.reset();

    CHECK_THROWS_AS(tapeflow::gradient([&](const std::vector<Real>& v) {
        std::vector<Real> w = v;
        none.region(w, [](std::vector<Real>& s) { s.pop_back(); });
        return w[0];
    }, x), tapeflow::usage_error);
}

TEST_CASE("rematerializer: a region inside a region of the same rematerializer, any budget", "[rematerialization]") {
    // The inner region, recorded again while the outer one's tape is swept,
    // evicted that tape under the sweep (heap-use-after-free under
    // AddressSanitizer, a crash at -O2) and uncounted bytes never counted.
    // s_i = sin(x_i)^2 + 1, f = s_0 s_1.
    const std::vector<double> x{0.3, 0.7};
    const double s0 = std::pow(std::sin(0.3), 2) + 1, s1 = std::pow(std::sin(0.7), 2) + 1;
    const std::vector<double> want{s1 * std::sin(0.6), s0 * std::sin(1.4)};  // 2 sin cos = sin 2x
    for (const std::size_t budget : {std::size_t(0), std::size_t(1), std::size_t(200) * 1024, std::size_t(1) << 30}) {
        INFO("budget " << budget);
        tapeflow::rematerializer remat(budget);
        const auto inner = [](std::vector<Real>& s) {
            for (auto& v : s) v = v * v + 1.0;
        };
        auto outer = [remat, inner](std::vector<Real>& s) mutable {  // a copy shares remat's state
            for (auto& v : s) v = sin(v);
            remat.region(s, inner);
        };
        std::vector<std::size_t> held;  // after each gradient
        for (int round = 0; round < 3; ++round) {
            const auto g = tapeflow::gradient([&](const std::vector<Real>& v) {
                std::vector<Real> s(v);
                remat.region(s, outer);
                return Real(s[0] * s[1]);
            }, x);
            CHECK(std::fabs(g[0] - want[0]) <= 1e-15);
            CHECK(std::fabs(g[1] - want[1]) <= 1e-15);
            held.push_back(remat.statistics().held_bytes);
        }
        // the regions of a gradient go with the next one's reset: what is held
        // does not pile up (the tapes of destroyed regions had stayed counted)
        CHECK(held[1] == held[0]);
        CHECK(held[2] == held[0]);
        CHECK(held[0] <= std::max<std::size_t>(budget, remat.statistics().peak_held_bytes));
        tapeflow::tape::active().reset();
        CHECK(remat.statistics().held_bytes == 0);
        if (budget == 0) CHECK(remat.statistics().rerecorded >= 3);
    }
}
