// checkpointed_loop and checkpointed_while built as users build them in
// release (TAPEFLOW_DEBUG_CHECKS follows NDEBUG, so it is off in a Release
// build): the checks that must not depend on the debug checks.
#include <tapeflow/checkpoint/checkpointed_loop.hpp>
#include <tapeflow/tapeflow.hpp>

#include <catch2/catch.hpp>

#include <vector>

#include "support/finite_difference.hpp"

using tapeflow::Real;

namespace {

// y <- y (1 + k/10) + y^2/20, `steps` times, as a function of {k, y}.
template <class T>
T grow(const T& y, const T& k) {
    return y * (1 + 0.1 * k) + 0.05 * y * y;
}

double plain_loss(const std::vector<double>& x, int steps) {
    double y = x[1];
    for (int i = 0; i < steps; ++i) y = grow(y, x[0]);
    return y;
}

}  // namespace

TEST_CASE("checkpointed_loop: a step that uses an active variable outside the state throws", "[checkpoint]") {
    // Before: debug builds threw (two tapes in one expression), release
    // builds swept k's derivative into another variable ({0, 2.59} instead
    // of {47.2, 2.59}) or past the end of the step tape's adjoints.
    const std::vector<double> x{0.8, 1.5};
    Real k;  // outlives the gradient: the sweep runs the step again
    for (std::size_t snapshots : {std::size_t(1), std::size_t(3), std::size_t(12)}) {
        INFO("snapshots " << snapshots);
        auto captured = [&] {
            return tapeflow::gradient(
                [&](const std::vector<Real>& v) {
                    k = v[0];  // an active variable of the recording, not in the state
                    std::vector<Real> u{v[1]};
                    tapeflow::checkpointed_loop(12, u, [&](std::vector<Real>& s) { s[0] = grow(s[0], k); },
                                                snapshots);
                    return u[0];
                },
                x);
        };
        CHECK_THROWS_AS(captured(), tapeflow::usage_error);
        if (!tapeflow::debug_checks)  // (with them, the tape's own check speaks first)
            CHECK_THROWS_WITH(captured(), Catch::Contains("not in the state"));
        tapeflow::tape::active().reset();
    }

    // the same loop with k in the state (a parameter the step leaves unchanged)
    const auto g = tapeflow::gradient(
        [](const std::vector<Real>& v) {
            std::vector<Real> u = v;
            tapeflow::checkpointed_loop(12, u, [](std::vector<Real>& s) { s[1] = grow(s[1], s[0]); }, 3);
            return u[1];
        },
        x);
    const auto fd = tapeflow_test::central_gradient([](const std::vector<double>& v) { return plain_loss(v, 12); },
                                                    x);
    REQUIRE(g.size() == 2);
    CHECK(tapeflow_test::close(g[0], fd[0], 1e-7));
    CHECK(tapeflow_test::close(g[1], fd[1], 1e-7));
    CHECK(g[0] > 1);  // k matters
}

TEST_CASE("checkpointed_while: a step that uses an active variable outside the state throws", "[checkpoint]") {
    const std::vector<double> x{0.8, 1.5};
    Real k;
    int taken = 0;
    CHECK_THROWS_AS(tapeflow::gradient(
                        [&](const std::vector<Real>& v) {
                            k = v[0];
                            std::vector<Real> u{v[1]};
                            taken = 0;
                            tapeflow::checkpointed_while(
                                u, [&](const std::vector<Real>&) { return taken++ < 9; },
                                [&](std::vector<Real>& s) { s[0] = grow(s[0], k); }, 3);
                            return u[0];
                        },
                        x),
                    tapeflow::usage_error);
    tapeflow::tape::active().reset();
}

TEST_CASE("checkpointed_loop: outer values used passively are fine", "[checkpoint]") {
    const std::vector<double> x{0.8, 1.5};
    Real k;
    // k.value() is a constant to the step (documented: no derivative flows
    // through value()); a passive outer Real is a constant too
    const Real passive = 0.25;
    const auto g = tapeflow::gradient(
        [&](const std::vector<Real>& v) {
            k = v[0];
            std::vector<Real> u{v[1]};
            tapeflow::checkpointed_loop(
                7, u, [&](std::vector<Real>& s) { s[0] = grow(s[0], Real(k.value())) + passive * 0; }, 2);
            return u[0];
        },
        x);
    const double dy = tapeflow_test::central_gradient(
        [&](const std::vector<double>& v) {
            double y = v[0];
            for (int i = 0; i < 7; ++i) y = grow(y, x[0]);
            return y;
        },
        {x[1]})[0];
    CHECK(g[0] == 0);
    CHECK(tapeflow_test::close(g[1], dy, 1e-7));

    // not recording: the loop just runs, whatever the step captures (k keeps
    // the identifier of the last recording)
    tapeflow::tape::active().reset();
    std::vector<Real> u{Real(1.5)};
    tapeflow::checkpointed_loop(5, u, [&](std::vector<Real>& s) { s[0] = grow(s[0], k); }, 2);
    double y = 1.5;
    for (int i = 0; i < 5; ++i) y = grow(y, k.value());
    CHECK(u[0].value() == y);
}
