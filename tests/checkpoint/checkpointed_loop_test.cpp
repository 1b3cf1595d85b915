// checkpointed_loop and checkpointed_while against plain taping of the same
// loop: gradients bit for bit, recomputation against the binomial optimum,
// repeated sweeps, exceptions, misuse, memory.
#include <tapeflow/checkpoint/checkpointed_loop.hpp>
#include <tapeflow/tapeflow.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "brute_force.hpp"
#include "support/finite_difference.hpp"
#include "support/options.hpp"

using tapeflow::Real;

namespace {

// One explicit step of a nonlinear heat equation on u[0..n-1]; u[n] is the
// diffusion coefficient, carried along unchanged (a parameter in the state).
template <class T>
void heat_step(std::vector<T>& u) {
    const std::size_t n = u.size() - 1;
    std::vector<T> next(u);
    for (std::size_t i = 1; i + 1 < n; ++i)
        next[i] = u[i] + u[n] * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.01 * sin(u[i]) * u[i];
    for (std::size_t i = 0; i < n; ++i) u[i] = next[i];
}

template <class T>
T loss(const std::vector<T>& u) {
    T f = 0;
    for (std::size_t i = 0; i + 1 < u.size(); ++i) f += u[i] * u[i] * double(i + 1);
    return f;
}

std::vector<double> start_state(std::size_t cells) {
    std::vector<double> x(cells + 1);
    for (std::size_t i = 0; i < cells; ++i) x[i] = std::sin(0.3 * double(i)) + 0.5;
    x[cells] = 0.2;
    return x;
}

std::vector<double> plain_gradient(const std::vector<double>& x, int steps) {
    return tapeflow::gradient(
        [&](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            for (int s = 0; s < steps; ++s) heat_step(u);
            return loss(u);
        },
        x);
}

std::vector<double> checkpointed_gradient(const std::vector<double>& x, int steps, std::size_t snapshots,
                                          std::shared_ptr<const tapeflow::checkpoint_statistics>* stats = nullptr) {
    return tapeflow::gradient(
        [&](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            auto st = tapeflow::checkpointed_loop(steps, u, [](std::vector<Real>& s) { heat_step(s); }, snapshots);
            if (stats) *stats = st;
            return loss(u);
        },
        x);
}

std::vector<double> online_gradient(const std::vector<double>& x, int steps, std::size_t snapshots,
                                    std::shared_ptr<const tapeflow::checkpoint_statistics>* stats = nullptr) {
    return tapeflow::gradient(
        [&](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            int taken = 0;
            auto st = tapeflow::checkpointed_while(
                u, [&](const std::vector<Real>&) { return taken++ < steps; },
                [](std::vector<Real>& s) { heat_step(s); }, snapshots);
            if (stats) *stats = st;
            return loss(u);
        },
        x);
}

// dy/dt = (sin 3t - k) y by explicit Euler until t >= decay_end: the state
// is {y, k}, the time t a passive value that the step advances.
constexpr double decay_dt = 0.1;
constexpr double decay_end = 2.05;  // 21 steps

template <class T>
void decay_step(std::vector<T>& s, double t) {
    s[0] = s[0] + decay_dt * (std::sin(3 * t) - s[1]) * s[0];
}

std::vector<double> plain_decay_gradient(const std::vector<double>& x) {
    return tapeflow::gradient(
        [](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            for (double t = 0; t < decay_end; t += decay_dt) decay_step(u, t);
            return u[0] * u[0];
        },
        x);
}

}  // namespace

TEST_CASE("checkpointed_loop: same gradient as plain taping, bit for bit, for every steps <= 30 and snapshots",
          "[checkpoint]") {
    const auto x = start_state(6);
    for (int steps = 0; steps <= 30; ++steps) {
        const auto expected = plain_gradient(x, steps);
        for (std::size_t snapshots = 1; snapshots <= std::size_t(steps) + 2; ++snapshots) {
            INFO("steps " << steps << ", snapshots " << snapshots);
            CHECK(checkpointed_gradient(x, steps, snapshots) == expected);
        }
    }
}

TEST_CASE("checkpointed_loop: a template step runs untaped on plain numbers, same gradient", "[checkpoint]") {
    const auto x = start_state(6);
    for (int steps : {1, 5, 33}) {
        const auto expected = plain_gradient(x, steps);
        for (std::size_t snapshots : {std::size_t(1), std::size_t(3), std::size_t(40)}) {
            int real_calls = 0, double_calls = 0;
            const auto g = tapeflow::gradient(
                [&](const std::vector<Real>& v) {
                    std::vector<Real> u = v;
                    tapeflow::checkpointed_loop(
                        steps, u,
                        [&](auto& s) {
                            if constexpr (std::is_same_v<std::decay_t<decltype(s)>, std::vector<double>>)
                                ++double_calls;
                            else
                                ++real_calls;
                            heat_step(s);
                        },
                        snapshots);
                    return loss(u);
                },
                x);
            INFO("steps " << steps << ", snapshots " << snapshots);
            CHECK(g == expected);
            CHECK(real_calls == steps);  // only the taped runs use Real
            CHECK(double_calls >= steps);
        }
    }
}

TEST_CASE("checkpointed_loop: long loops up to 1000 steps", "[checkpoint]") {
    const auto x = start_state(5);
    for (int steps : {100, 257, 1000}) {
        const auto expected = plain_gradient(x, steps);
        for (std::size_t snapshots : {std::size_t(2), std::size_t(3), std::size_t(10), std::size_t(31),
                                      std::size_t(steps)}) {
            INFO("steps " << steps << ", snapshots " << snapshots);
            CHECK(checkpointed_gradient(x, steps, snapshots) == expected);
        }
    }
    // and against finite differences, so that plain taping is not the only judge
    const auto g = checkpointed_gradient(x, 200, 7);
    const auto fd = tapeflow_test::central_gradient(
        [](const std::vector<double>& v) {
            std::vector<double> u = v;
            for (int s = 0; s < 200; ++s) heat_step(u);
            return loss(u);
        },
        x);
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(tapeflow_test::close(g[i], fd[i], 1e-6, 1e-8));
}

TEST_CASE("checkpointed_loop re-runs exactly the binomial optimum of steps", "[checkpoint]") {
    // total untaped steps = the n - 1 of the forward's descent + those re-run
    // by the sweep = the fewest possible for (steps, snapshots)
    const auto optimum = tapeflow_test::brute_force(40, 41);
    const auto x = start_state(3);
    for (int steps = 1; steps <= 40; ++steps)
        for (int snapshots = 1; snapshots <= steps; ++snapshots) {
            std::shared_ptr<const tapeflow::checkpoint_statistics> st;
            checkpointed_gradient(x, steps, std::size_t(snapshots), &st);
            INFO("steps " << steps << ", snapshots " << snapshots);
            REQUIRE(st);
            CHECK(st->steps_recomputed + std::uint64_t(steps - 1) == optimum[steps][snapshots]);
            CHECK(st->steps_taped == std::uint64_t(steps));
            CHECK(st->peak_snapshots <= std::uint64_t(snapshots));
            CHECK(st->steps == std::uint64_t(steps));
        }
}

TEST_CASE("checkpointed_loop edge cases: no steps, one snapshot, more snapshots than steps", "[checkpoint]") {
    const auto x = start_state(4);
    std::shared_ptr<const tapeflow::checkpoint_statistics> st;
    // steps = 0: the state passes through
    CHECK(checkpointed_gradient(x, 0, 3, &st) == plain_gradient(x, 0));
    CHECK(st->steps_taped == 0);
    CHECK(st->steps_recomputed == 0);
    // one snapshot: every step re-run from the start, n(n-1)/2 - (n-1) in the sweep
    CHECK(checkpointed_gradient(x, 12, 1, &st) == plain_gradient(x, 12));
    CHECK(st->steps_recomputed == 12 * 11 / 2 - 11);
    // as many snapshots as steps (or more): nothing re-run
    CHECK(checkpointed_gradient(x, 12, 12, &st) == plain_gradient(x, 12));
    CHECK(st->steps_recomputed == 0);
    CHECK(checkpointed_gradient(x, 12, 500, &st) == plain_gradient(x, 12));
    CHECK(st->steps_recomputed == 0);
    CHECK(st->snapshots == 12);  // clamped to the number of steps
}

TEST_CASE("checkpointed_loop: several sweeps of one recording (jacobian)", "[checkpoint]") {
    const auto x = start_state(5);
    auto outputs = [](std::vector<Real>& u) {
        return std::vector<Real>{u[1] * u[2], sin(u[3]) + u[4], u[0] * u[5]};
    };
    const auto plain = tapeflow::jacobian(
        [&](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            for (int s = 0; s < 25; ++s) heat_step(u);
            return outputs(u);
        },
        x);
    for (std::size_t snapshots : {std::size_t(1), std::size_t(3), std::size_t(25)}) {
        const auto checkpointed = tapeflow::jacobian(
            [&](const std::vector<Real>& v) {
                std::vector<Real> u = v;
                tapeflow::checkpointed_loop(25, u, [](std::vector<Real>& s) { heat_step(s); }, snapshots);
                return outputs(u);
            },
            x);
        INFO("snapshots " << snapshots);
        CHECK(checkpointed == plain);
    }
}

TEST_CASE("checkpointed_loop composes with ordinary statements, regions and a streaming tape", "[checkpoint]") {
    const auto x = start_state(8);
    auto program = [](std::vector<Real>& u) {
        tapeflow::Region region("before");
        for (auto& e : u) e = e * 1.01 + 0.001 * e * e;
        tapeflow::checkpointed_loop(40, u, [](std::vector<Real>& s) { heat_step(s); }, 5);
        tapeflow::checkpointed_loop(17, u, [](std::vector<Real>& s) { heat_step(s); }, 2);
        return loss(u);
    };
    const auto in_memory = tapeflow::gradient([&](const std::vector<Real>& v) {
        std::vector<Real> u = v;
        return program(u);
    }, x);
    const auto plain = tapeflow::gradient([&](const std::vector<Real>& v) {
        std::vector<Real> u = v;
        for (auto& e : u) e = e * 1.01 + 0.001 * e * e;
        for (int s = 0; s < 57; ++s) heat_step(u);
        return loss(u);
    }, x);
    CHECK(in_memory == plain);

    // a streaming tape: small tiles, a budget of two tiles (spilling), prefetch on
    tapeflow::tape streaming(tapeflow_test::tape_options(4096, true, 8192, true));
    streaming.activate();
    const auto spilled = tapeflow::gradient([&](const std::vector<Real>& v) {
        std::vector<Real> u = v;
        return program(u);
    }, x);
    tapeflow::tape::thread_default().activate();
    CHECK(spilled == in_memory);
    CHECK(streaming.statistics().tiles_spilled > 0);
}

TEST_CASE("checkpointed_while: loops of unknown length, same gradient bit for bit", "[checkpoint]") {
    const auto x = start_state(5);
    for (int steps : {0, 1, 2, 3, 7, 16, 33, 100}) {
        const auto expected = plain_gradient(x, steps);
        for (std::size_t snapshots : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(5),
                                      std::size_t(8), std::size_t(200)}) {
            std::shared_ptr<const tapeflow::checkpoint_statistics> st;
            INFO("steps " << steps << ", snapshots " << snapshots);
            CHECK(online_gradient(x, steps, snapshots, &st) == expected);
            CHECK(st->steps == std::uint64_t(steps));
            CHECK(st->steps_taped == std::uint64_t(steps));
            CHECK(st->peak_snapshots <= snapshots);
            // bounded extra work: never more than re-running from the start for every step
            CHECK(st->steps_recomputed <= std::uint64_t(steps) * std::uint64_t(steps) / 2);
        }
    }
}

TEST_CASE("checkpointed_while: several sweeps of one recording", "[checkpoint]") {
    const auto x = start_state(4);
    auto outputs = [](std::vector<Real>& u) { return std::vector<Real>{u[1] * u[2], exp(u[3])}; };
    const auto plain = tapeflow::jacobian(
        [&](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            for (int s = 0; s < 30; ++s) heat_step(u);
            return outputs(u);
        },
        x);
    const auto online = tapeflow::jacobian(
        [&](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            int taken = 0;
            tapeflow::checkpointed_while(u, [&](const std::vector<Real>&) { return taken++ < 30; },
                                         [](std::vector<Real>& s) { heat_step(s); }, 4);
            return outputs(u);
        },
        x);
    CHECK(online == plain);
}

TEST_CASE("checkpointed_loop: an exception in a re-recorded step reaches the caller, and reset recovers",
          "[checkpoint]") {
    auto& tape = tapeflow::tape::active();
    const auto x = start_state(4);
    int calls = 0, throw_at = -1;
    auto step = [&](std::vector<Real>& s) {
        if (++calls == throw_at) throw std::runtime_error("step failed");
        heat_step(s);
    };
    tape.reset();
    tape.start_recording();
    std::vector<Real> u(x.begin(), x.end());
    for (auto& e : u) tape.register_input(e);
    tapeflow::checkpointed_loop(20, u, step, 3);
    Real f = loss(u);
    tape.register_output(f);
    tape.stop_recording();
    throw_at = calls + 5;  // the fifth call of the sweep (a re-run or a taped step)
    tape.set_adjoint(f, 1.0);
    CHECK_THROWS_WITH(tape.sweep(), "step failed");
    CHECK(&tapeflow::tape::active() == &tape);  // the loop's private tape is no longer active
    CHECK_FALSE(tape.is_recording());
    tape.reset();
    throw_at = -1;
    CHECK(checkpointed_gradient(x, 20, 3) == plain_gradient(x, 20));

    // an exception in the forward run (while recording) leaves through gradient()
    calls = 0;
    throw_at = 7;
    CHECK_THROWS_WITH(tapeflow::gradient(
                          [&](const std::vector<Real>& v) {
                              std::vector<Real> w = v;
                              tapeflow::checkpointed_loop(20, w, step, 3);
                              return loss(w);
                          },
                          x),
                      "step failed");
    throw_at = -1;
    CHECK(checkpointed_gradient(x, 20, 3) == plain_gradient(x, 20));
}

TEST_CASE("checkpointed_loop misuse gives clear errors", "[checkpoint]") {
    const auto x = start_state(4);
    CHECK_THROWS_AS(checkpointed_gradient(x, 10, 0), tapeflow::usage_error);
    CHECK_THROWS_AS(online_gradient(x, 10, 0), tapeflow::usage_error);
    CHECK_THROWS_AS(tapeflow::gradient(
                        [](const std::vector<Real>& v) {
                            std::vector<Real> u = v;
                            tapeflow::checkpointed_loop(5, u, [](std::vector<Real>& s) { s.push_back(s[0]); }, 2);
                            return u[0];
                        },
                        x),
                    tapeflow::usage_error);
    CHECK(checkpointed_gradient(x, 10, 2) == plain_gradient(x, 10));  // still usable
}

TEST_CASE("checkpointed_loop keeps snapshots instead of the tape of every step", "[checkpoint]") {
    auto& tape = tapeflow::tape::active();
    const auto x = start_state(50);
    tapeflow::gradient([&](const std::vector<Real>& v) {
        std::vector<Real> u = v;
        for (int s = 0; s < 300; ++s) heat_step(u);
        return loss(u);
    }, x);
    const auto plain = tape.statistics();
    std::shared_ptr<const tapeflow::checkpoint_statistics> st;
    checkpointed_gradient(x, 300, 10, &st);
    const auto checkpointed = tape.statistics();
    CHECK(checkpointed.externals == 1);
    // the outer tape: the loss, the loop entry and 11 states' worth of snapshots
    CHECK(checkpointed.external_bytes >= 10 * x.size() * sizeof(double));
    CHECK(checkpointed.external_bytes <= 12 * x.size() * sizeof(double) + 4096 + 8 * x.size() * 2);
    CHECK(checkpointed.record_bytes + checkpointed.external_bytes < plain.record_bytes / 20);
    // each sweep tapes one step at a time
    CHECK(st->peak_step_tape_bytes > 0);
    CHECK(st->peak_step_tape_bytes * 300 <= plain.record_bytes + 300 * 64);
    CHECK(st->state_bytes == x.size() * sizeof(double));
}

TEST_CASE("checkpointed_loop when not recording, or on constants: just the loop", "[checkpoint]") {
    std::vector<Real> u;
    for (double v : start_state(5)) u.emplace_back(v);
    auto reference = start_state(5);
    for (int s = 0; s < 9; ++s) heat_step(reference);
    tapeflow::tape::active().reset();
    tapeflow::checkpointed_loop(9, u, [](std::vector<Real>& s) { heat_step(s); }, 3);
    for (std::size_t i = 0; i < u.size(); ++i) {
        CHECK(u[i].value() == reference[i]);
        CHECK_FALSE(u[i].is_active());
    }
    CHECK(tapeflow::tape::active().statistics().externals == 0);
}

TEST_CASE("checkpointed_loop in float", "[checkpoint]") {
    const std::vector<float> x{0.5f, 0.7f, 0.9f, 0.4f, 0.2f};
    auto run = [&](bool checkpointed) {
        return tapeflow::gradient(
            [&](const std::vector<tapeflow::RealF>& v) {
                std::vector<tapeflow::RealF> u = v;
                if (checkpointed)
                    tapeflow::checkpointed_loop(13, u, [](std::vector<tapeflow::RealF>& s) { heat_step(s); }, 3);
                else
                    for (int s = 0; s < 13; ++s) heat_step(u);
                return loss(u);
            },
            x);
    };
    CHECK(run(true) == run(false));
}

TEST_CASE("checkpointed_loop: nested loops, the inner one in the step of the outer one", "[checkpoint]") {
    const auto x = start_state(5);
    const auto expected = plain_gradient(x, 24);
    const auto g = tapeflow::gradient(
        [](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            tapeflow::checkpointed_loop(
                6, u,
                [](std::vector<Real>& s) {
                    tapeflow::checkpointed_loop(4, s, [](std::vector<Real>& r) { heat_step(r); }, 2);
                },
                3);
            return loss(u);
        },
        x);
    CHECK(g == expected);
}

TEST_CASE("checkpointed_loop: a step that uses an active variable outside the state throws", "[checkpoint]") {
    // (tests/checkpoint/checkpointed_loop_release_test.cpp: the same without
    // the debug checks, where the message is checkpointed_loop's own)
    const std::vector<double> x{0.8, 1.5};
    Real k;
    CHECK_THROWS_AS(tapeflow::gradient(
                        [&](const std::vector<Real>& v) {
                            k = v[0];
                            std::vector<Real> u{v[1]};
                            tapeflow::checkpointed_loop(
                                6, u, [&](std::vector<Real>& s) { s[0] = s[0] * k; }, 2);
                            return u[0];
                        },
                        x),
                    tapeflow::usage_error);
    tapeflow::tape::active().reset();
    CHECK(checkpointed_gradient(start_state(4), 10, 2) == plain_gradient(start_state(4), 10));  // still usable
}

TEST_CASE("checkpointed_loop switches to its private tape through activate()", "[checkpoint]") {
    auto& tape = tapeflow::tape::active();
    const auto x = start_state(4);
    auto record = [&] {
        tape.reset();
        tape.start_recording();
        std::vector<Real> u(x.begin(), x.end());
        for (auto& e : u) tape.register_input(e);
        tapeflow::checkpointed_loop(8, u, [](std::vector<Real>& s) { heat_step(s); }, 3);
        Real f = loss(u);
        tape.register_output(f);
        tape.stop_recording();
        tape.set_adjoint(f, 1.0);
    };
    // sweeping the loop while another tape records would record its steps
    // while that recording is on: refused, as activate() refuses it
    record();
    {
        tapeflow::tape other;
        other.start_recording();
        CHECK_THROWS_WITH(tape.sweep(), Catch::Contains("another tape is recording"));
        other.stop_recording();
    }
    CHECK(&tapeflow::tape::active() == &tape);
    tape.reset();

    // a reset while recording drops the loop's entry without switching tapes
    tape.start_recording();
    std::vector<Real> u(x.begin(), x.end());
    for (auto& e : u) tape.register_input(e);
    tapeflow::checkpointed_loop(8, u, [](std::vector<Real>& s) { heat_step(s); }, 3);
    CHECK(tape.statistics().externals == 1);
    tape.reset();
    CHECK(tape.is_recording());
    CHECK(tape.statistics().externals == 0);
    tape.stop_recording();
    tape.reset();
    CHECK(checkpointed_gradient(x, 8, 3) == plain_gradient(x, 8));
}

TEST_CASE("checkpointed_while: a step with hidden state (the time outside the state) throws, no wrong gradient",
          "[checkpoint]") {
    // The pattern docs/checkpointing.md used to show: the step advances a
    // time kept outside the state, so running it again from a snapshot sees
    // the time where the last run left it. Plain taping gives {0.109,
    // -0.322}; this gave {0.144, -0.507} with 3 snapshots, without a word.
    const std::vector<double> x{1.3, 0.7};
    const auto expected = plain_decay_gradient(x);
    for (std::size_t snapshots : {std::size_t(2), std::size_t(3), std::size_t(30)}) {
        INFO("snapshots " << snapshots);
        double t = 0;  // outlives the gradient: the sweep runs the step again
        auto hidden = [&] {
            return tapeflow::gradient(
                [&](const std::vector<Real>& v) {
                    std::vector<Real> u = v;
                    t = 0;
                    tapeflow::checkpointed_while(
                        u, [&](const std::vector<Real>&) { return t < decay_end; },
                        [&](std::vector<Real>& s) {
                            decay_step(s, t);
                            t += decay_dt;
                        },
                        snapshots);
                    return u[0] * u[0];
                },
                x);
        };
        CHECK_THROWS_WITH(hidden(), Catch::Contains("hidden state"));
        tapeflow::tape::active().reset();
    }
    CHECK(checkpointed_gradient(start_state(4), 10, 2) == plain_gradient(start_state(4), 10));  // still usable
}

TEST_CASE("checkpointed_loop: a step with a hidden counter throws, also a template step", "[checkpoint]") {
    const auto x = start_state(5);
    int calls = 0;
    auto counted = [&](auto& s) {  // the step changes with the number of calls
        heat_step(s);
        s[0] = s[0] + 1e-3 * double(++calls % 3);
    };
    CHECK_THROWS_WITH(tapeflow::gradient(
                          [&](const std::vector<Real>& v) {
                              std::vector<Real> u = v;
                              tapeflow::checkpointed_loop(20, u, counted, 4);
                              return loss(u);
                          },
                          x),
                      Catch::Contains("hidden state"));
    tapeflow::tape::active().reset();
    CHECK_THROWS_WITH(tapeflow::gradient(
                          [&](const std::vector<Real>& v) {
                              std::vector<Real> u = v;
                              tapeflow::checkpointed_loop(
                                  20, u, [&](std::vector<Real>& s) { counted(s); }, 20);
                              return loss(u);
                          },
                          x),
                      Catch::Contains("hidden state"));
    tapeflow::tape::active().reset();
}

TEST_CASE("checkpointed_while: the time in the passive part, same gradient as plain taping", "[checkpoint]") {
    const std::vector<double> x{1.3, 0.7};
    const auto expected = plain_decay_gradient(x);
    double final_time = 0;
    for (int k = 0; k < 21; ++k) final_time += decay_dt;
    for (std::size_t snapshots : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(7),
                                  std::size_t(30)}) {
        INFO("snapshots " << snapshots);
        int real_calls = 0, double_calls = 0;
        double t = -1, t_seen_by_sweep = -1;
        std::shared_ptr<const tapeflow::checkpoint_statistics> st;
        auto run = [&](auto step) {
            return tapeflow::gradient(
                [&](const std::vector<Real>& v) {
                    std::vector<Real> u = v;
                    t = 0;
                    st = tapeflow::checkpointed_while(
                        u, t, [](const std::vector<Real>&, double time) { return time < decay_end; }, step,
                        snapshots);
                    CHECK(t == final_time);
                    t = 99;                     // the caller's copy: the sweep does not read it
                    return u[0] * u[0];
                },
                x);
        };
        // a step on Reals
        CHECK(run([&](std::vector<Real>& s, double& time) {
                  decay_step(s, time);
                  t_seen_by_sweep = time;
                  time += decay_dt;
              }) == expected);
        CHECK(t_seen_by_sweep == 0);  // the last step taped is the first one
        CHECK(st->steps == 21);
        // a template step: the untaped runs on plain numbers, the forward too
        CHECK(run([&](auto& s, double& time) {
                  if constexpr (std::is_same_v<std::decay_t<decltype(s)>, std::vector<double>>)
                      ++double_calls;
                  else
                      ++real_calls;
                  decay_step(s, time);
                  time += decay_dt;
              }) == expected);
        CHECK(real_calls == 21);
        CHECK(double_calls >= 21);
    }
}

TEST_CASE("checkpointed_loop: a passive struct (time and counter), several sweeps", "[checkpoint]") {
    struct clock_state {
        double t = 0;
        int step = 0;
    };
    const std::vector<double> x{1.3, 0.7};
    auto outputs = [](std::vector<Real>& u) { return std::vector<Real>{u[0] * u[0], u[0] * u[1]}; };
    const auto plain = tapeflow::jacobian(
        [&](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            double t = 0;
            for (int k = 0; k < 21; ++k) {
                decay_step(u, t);
                if (k % 4 == 3) u[0] = u[0] * 1.01;  // every fourth step, by the counter
                t += decay_dt;
            }
            return outputs(u);
        },
        x);
    for (std::size_t snapshots : {std::size_t(1), std::size_t(4), std::size_t(21)}) {
        INFO("snapshots " << snapshots);
        clock_state c;
        // one step: the time and the step count are the passive part
        const auto clock_step = [](auto& s, clock_state& k) {
            decay_step(s, k.t);
            if (k.step % 4 == 3) s[0] = s[0] * 1.01;
            k.t += decay_dt;
            ++k.step;
        };
        const auto checkpointed = tapeflow::jacobian(
            [&](const std::vector<Real>& v) {
                std::vector<Real> u = v;
                c = clock_state{};
                tapeflow::checkpointed_loop(21, u, c,
                                            clock_step,
                                            snapshots);
                CHECK(c.step == 21);
                return outputs(u);
            },
            x);
        CHECK(checkpointed == plain);
        const auto online = tapeflow::jacobian(
            [&](const std::vector<Real>& v) {
                std::vector<Real> u = v;
                c = clock_state{};
                tapeflow::checkpointed_while(u, c, [](const auto&, const clock_state& k) { return k.step < 21; },
                                             clock_step,
                                             snapshots);
                CHECK(c.step == 21);
                return outputs(u);
            },
            x);
        CHECK(online == plain);
    }
    // against finite differences of the plain loop on doubles
    const auto fd = tapeflow_test::central_gradient(
        [](const std::vector<double>& v) {
            std::vector<double> u = v;
            double t = 0;
            for (int k = 0; k < 21; ++k) {
                decay_step(u, t);
                if (k % 4 == 3) u[0] *= 1.01;
                t += decay_dt;
            }
            return u[0] * u[0];
        },
        x);
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(tapeflow_test::close(plain[0][i], fd[i], 1e-7));
}

TEST_CASE("checkpointed_loop: a random generator as the passive part replays its numbers", "[checkpoint]") {
    // docs/checkpointing.md: copied with each snapshot, the generator gives
    // a step run again from a snapshot the numbers it gave the first time
    const auto x = start_state(5);
    auto noisy_step = [](auto& s, std::mt19937& generator) {
        heat_step(s);
        s[1] = s[1] + 1e-3 * std::uniform_real_distribution<double>(-1, 1)(generator);
    };
    const auto plain = tapeflow::gradient(
        [&](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            std::mt19937 generator(7);
            for (int k = 0; k < 30; ++k) noisy_step(u, generator);
            return loss(u);
        },
        x);
    for (std::size_t snapshots : {std::size_t(1), std::size_t(3), std::size_t(30)}) {
        INFO("snapshots " << snapshots);
        std::mt19937 generator(7);
        CHECK(tapeflow::gradient(
                  [&](const std::vector<Real>& v) {
                      std::vector<Real> u = v;
                      generator.seed(7);
                      tapeflow::checkpointed_loop(30, u, generator, noisy_step, snapshots);
                      return loss(u);
                  },
                  x) == plain);
    }
}
