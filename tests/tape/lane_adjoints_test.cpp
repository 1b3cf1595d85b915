// tape/lane_adjoints.hpp and basic_tape::sweep(lane_adjoints&): vector
// reverse sweeps against scalar sweeps (bit for bit) on a streaming tape
// that spills (prefetch thread on and off), through positions and regions,
// with custom adjoints (a one-lane rule called once per lane, a rule that
// takes lanes called once), checkpointed loops, rematerialized regions,
// the hardware model; and
// misuse with the messages users see. (Random programs:
// tests/random/lane_sweep_test.cpp.)
#include <catch2/catch.hpp>
#include <tapeflow/checkpoint/checkpointed_loop.hpp>
#include <tapeflow/checkpoint/rematerializer.hpp>
#include <tapeflow/tapeflow.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "stream/stream_support.hpp"
#include "support/jacobian_rows.hpp"
#include "support/options.hpp"

using tapeflow::Real;

namespace {

using rows = std::vector<std::vector<double>>;

bool same_bits(const rows& a, const rows& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k) {
        if (a[k].size() != b[k].size()) return false;
        if (!a[k].empty() && std::memcmp(a[k].data(), b[k].data(), a[k].size() * sizeof(double)) != 0) return false;
    }
    return true;
}

// Records f(x) on `t` (x registered, outputs registered); keeps both alive.
struct recording {
    std::vector<Real> x, y;
    template <class F>
    recording(tapeflow::tape& t, const std::vector<double>& values, F f) {
        t.reset();
        t.start_recording();
        x.assign(values.begin(), values.end());
        for (Real& xi : x) t.register_input(xi);
        y = f(x);
        for (Real& yk : y) t.register_output(yk);
        t.stop_recording();
    }
};

using tapeflow_test::lane_rows;    // support/jacobian_rows.hpp
using tapeflow_test::scalar_rows;

// A chain of thousands of statements with 6 outputs taken along the way.
std::vector<Real> chain(const std::vector<Real>& v) {
    std::vector<Real> out;
    Real y = v[0];
    for (int i = 0; i < 3000; ++i) {
        y = 0.999 * y + 0.01 * sin(v[0] * y) + v[1] * v[2];
        if (i % 500 == 499) out.push_back(y * v[i % 3]);
    }
    return out;
}

}  // namespace

TEST_CASE("a vector sweep gives each lane the rows of its seeds, analytic") {
    tapeflow::tape& t = tapeflow::tape::active();
    // y = (x0 x1, sin x0 + x1^2, x0 / x1)
    recording r(t, {0.7, 1.9}, [](const std::vector<Real>& v) {
        return std::vector<Real>{v[0] * v[1], sin(v[0]) + v[1] * v[1], v[0] / v[1]};
    });
    tapeflow::lane_adjoints<double, 4> bar(t);
    bar.set(r.y[0], 0, 1.0);
    bar.set(r.y[1], 1, 1.0);
    bar.set(r.y[2], 2, 2.0);   // lane 2: twice output 2
    bar.set(r.y[0], 3, 1.0);   // lane 3: output 0 + output 1
    bar.set(r.y[1], 3, 1.0);
    t.sweep(bar);
    const double x0 = 0.7, x1 = 1.9;
    CHECK(bar.get(r.x[0], 0) == Approx(x1).epsilon(1e-15));
    CHECK(bar.get(r.x[1], 0) == Approx(x0).epsilon(1e-15));
    CHECK(bar.get(r.x[0], 1) == Approx(std::cos(x0)).epsilon(1e-15));
    CHECK(bar.get(r.x[1], 1) == Approx(2 * x1).epsilon(1e-15));
    CHECK(bar.get(r.x[0], 2) == Approx(2 / x1).epsilon(1e-15));
    CHECK(bar.get(r.x[1], 2) == Approx(-2 * x0 / (x1 * x1)).epsilon(1e-15));
    const std::array<double, 4> all = bar.get(r.x[0]);
    CHECK(all[3] == Approx(x1 + std::cos(x0)).epsilon(1e-15));
    CHECK(t.adjoint(r.x[0]) == 0.0);  // the tape's scalar adjoints are not touched
    CHECK(bar.bytes() >= 4 * sizeof(double) * 5);
    // copies and moves keep the values (the rows sit in an aligned buffer)
    tapeflow::lane_adjoints<double, 4> copy(bar);
    tapeflow::lane_adjoints<double, 4> moved(std::move(copy));
    tapeflow::lane_adjoints<double, 4> assigned(t);
    assigned = moved;
    CHECK(moved.get(r.x[0]) == all);
    CHECK(assigned.get(r.x[0]) == all);
    bar.clear();
    CHECK(assigned.get(r.x[1], 1) == Approx(2 * x1).epsilon(1e-15));
}

TEST_CASE("an infinite partial reaches only the lanes whose adjoint is not 0, as in scalar sweeps") {
    // sqrt at 0 has the partial +inf: the lane of y1 must not get 0 * inf = NaN
    tapeflow::tape& t = tapeflow::tape::active();
    recording r(t, {0.0, 3.0}, [](const std::vector<Real>& v) {
        return std::vector<Real>{sqrt(v[0]) * v[1], v[0] * 2.0 + v[1], sqrt(v[0]) + v[1]};
    });
    const rows scalar = scalar_rows(t, r);
    CHECK(std::isinf(scalar[0][0]));
    CHECK(scalar[1][0] == 2.0);
    CHECK(std::isinf(scalar[2][0]));
    const rows lanes = lane_rows<4>(t, r);
    CHECK(lanes[1][0] == 2.0);
    CHECK(same_bits(lanes, scalar));
}

TEST_CASE("vector sweeps == scalar sweeps on a streaming tape that spills, prefetch on and off") {
    tapeflow_test::watchdog dog(120, "lane sweeps on a spilling tape");
    const bool prefetch = GENERATE(true, false);
    CAPTURE(prefetch);
    const std::vector<double> x{0.3, 0.002, -0.4};
    rows expected;
    {
        tapeflow::tape plain;
        recording r(plain, x, chain);
        expected = scalar_rows(plain, r);
    }
    tapeflow_test::temp_directory dir;
    tapeflow::tape_options o = tapeflow_test::tape_options(1024, true, 4 * 1024, prefetch);
    o.spill_directory = dir.path();
    tapeflow::tape t(o);
    recording r(t, x, chain);
    REQUIRE(r.y.size() == 6);
    CHECK(same_bits(scalar_rows(t, r), expected));
    const auto before = t.statistics();
    CHECK(before.tiles_spilled > 50);
    CHECK(same_bits(lane_rows<8>(t, r), expected));
    CHECK(t.statistics().tiles_read_back == before.tiles_read_back + before.tiles_spilled);  // ONE sweep
    CHECK(same_bits(lane_rows<4>(t, r), expected));
    CHECK(same_bits(lane_rows<5>(t, r), expected));
    CHECK(same_bits(lane_rows<1>(t, r), expected));
    for (const auto& row : expected) CHECK(row[1] != 0.0);
}

TEST_CASE("vector sweeps through positions and regions: the pieces make the whole sweep") {
    tapeflow::tape& t = tapeflow::tape::active();
    t.reset();
    t.start_recording();
    std::vector<Real> x{0.4, -1.1, 2.0};
    for (Real& xi : x) t.register_input(xi);
    const tapeflow::position start = t.get_position();
    Real a = x[0], b = x[1];
    for (int i = 0; i < 50; ++i) {
        tapeflow::Region region("step");
        a = a + 0.01 * b * x[2];
        b = b - 0.01 * sin(a);
    }
    const tapeflow::position middle = t.get_position();
    const tapeflow::identifier state[2] = {a.id(), b.id()};
    for (int i = 0; i < 50; ++i) {
        tapeflow::Region region("step");
        a = a + 0.01 * b * x[2];
        b = b - 0.01 * sin(a);
    }
    t.register_output(a);
    t.register_output(b);
    t.stop_recording();

    tapeflow::lane_adjoints<double, 2> whole(t), pieces(t);
    whole.set(a, 0, 1.0);
    whole.set(b, 1, 1.0);
    t.sweep(whole);
    pieces.set(a, 0, 1.0);
    pieces.set(b, 1, 1.0);
    t.sweep(pieces, middle);
    // the adjoints of the state at `middle`, lane by lane, equal scalar partial sweeps
    for (std::size_t lane = 0; lane < 2; ++lane) {
        t.clear_adjoints();
        t.set_adjoint(lane == 0 ? a : b, 1.0);
        t.sweep(middle);
        CHECK(pieces.get(state[0], lane) == t.adjoint(state[0]));
        CHECK(pieces.get(state[1], lane) == t.adjoint(state[1]));
        CHECK(pieces.get(state[0], lane) != 0.0);
    }
    t.sweep(pieces, middle, start);
    // a region's records alone: the last step, from its end back to its start
    const tapeflow::region_info& last = t.regions()[t.regions().size() - 1];
    tapeflow::lane_adjoints<double, 2> step(t);
    step.set(a, 0, 1.0);
    t.sweep(step, last.end, last.begin);
    CHECK(step.get(x[2], 0) != 0.0);
    for (std::size_t lane = 0; lane < 2; ++lane)
        for (const Real& xi : x) CHECK(pieces.get(xi, lane) == whole.get(xi, lane));
}

TEST_CASE("custom adjoints in a vector sweep: a one-lane rule runs per lane, a lanes rule once") {
    tapeflow::tape& t = tapeflow::tape::active();
    int one_lane_calls = 0, lanes_calls = 0;
    std::size_t lanes_seen = 0;
    auto record = [&](const std::vector<Real>& v) {
        // y0 = x0 x1 (one-lane rule), y1 = (x0 + x1, x0 - x1) (rule that takes lanes)
        Real p;
        tapeflow::custom_adjoint product;
        product.add_input(v[0]);
        product.add_input(v[1]);
        product.add_output(p, v[0].value() * v[1].value());
        const double a = v[0].value(), b = v[1].value();
        product.record([&one_lane_calls, a, b](const double* yb, double* xb) {
            ++one_lane_calls;
            xb[0] += yb[0] * b;
            xb[1] += yb[0] * a;
        });
        Real s, d;
        tapeflow::custom_adjoint sum;
        sum.add_input(v[0]);
        sum.add_input(v[1]);
        sum.add_output(s, a + b);
        sum.add_output(d, a - b);
        sum.record([&lanes_calls, &lanes_seen](const double* yb, double* xb, std::size_t lanes) {
            ++lanes_calls;
            lanes_seen = lanes;
            for (std::size_t l = 0; l < lanes; ++l) {
                xb[0 * lanes + l] += yb[0 * lanes + l] + yb[1 * lanes + l];
                xb[1 * lanes + l] += yb[0 * lanes + l] - yb[1 * lanes + l];
            }
        });
        return std::vector<Real>{p * s, d * 2.0, p + 1.0, s * s};
    };
    recording r(t, {1.5, -0.5}, record);
    one_lane_calls = lanes_calls = 0;
    const rows scalar = scalar_rows(t, r);
    CHECK(one_lane_calls == 2);  // the sweeps of outputs 0 and 2, which depend on p
    CHECK(lanes_calls == 3);     // outputs 0, 1, 3 depend on s or d
    CHECK(lanes_seen == 1);      // a scalar sweep calls a lanes rule with one lane
    one_lane_calls = lanes_calls = 0;
    const rows lanes = lane_rows<4>(t, r);
    CHECK(same_bits(lanes, scalar));
    CHECK(one_lane_calls == 2);  // once per lane that reaches p: those of outputs 0 and 2
    CHECK(lanes_calls == 1);
    CHECK(lanes_seen == 4);
    // analytic: row 0 = d(p s) = s dp + p ds
    const double a = 1.5, b = -0.5;
    CHECK(scalar[0][0] == Approx((a + b) * b + a * b).epsilon(1e-15));
    CHECK(scalar[0][1] == Approx((a + b) * a + a * b).epsilon(1e-15));
    CHECK(scalar[1][0] == 2.0);
    CHECK(scalar[1][1] == -2.0);
}

TEST_CASE("checkpointed loops in a vector sweep equal scalar sweeps and plain taping") {
    auto step = [](std::vector<Real>& u) {
        std::vector<Real> next(u);
        for (std::size_t i = 1; i + 1 < u.size(); ++i)
            next[i] = u[i] + 0.2 * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.01 * sin(u[i]) * u[i];
        u = next;
    };
    const std::vector<double> x{0.5, 1.0, -0.3, 0.8, 0.1, 1.2};
    auto plain = [&](const std::vector<Real>& v) {
        std::vector<Real> u = v;
        for (int s = 0; s < 40; ++s) step(u);
        return u;
    };
    auto checkpointed = [&](const std::vector<Real>& v) {
        std::vector<Real> u = v;
        tapeflow::checkpointed_loop(40, u, step, 4);
        return u;
    };
    tapeflow::tape& t = tapeflow::tape::active();
    recording r(t, x, checkpointed);
    const rows scalar = scalar_rows(t, r);
    CHECK(same_bits(lane_rows<8>(t, r), scalar));
    CHECK(same_bits(lane_rows<3>(t, r), scalar));
    const rows taped = tapeflow::jacobian<1>(plain, x);
    CHECK(same_bits(scalar, taped));
    CHECK(same_bits(tapeflow::jacobian(checkpointed, x), taped));
    CHECK(scalar[2][1] != 0.0);
}

TEST_CASE("rematerialized regions in a vector sweep equal scalar sweeps") {
    auto layer = [](std::vector<Real>& u) {
        for (std::size_t i = 0; i + 1 < u.size(); ++i) u[i] = tanh(u[i] * 1.3 + u[i + 1] * 0.4);
    };
    auto remat_f = [&](const std::vector<Real>& v) {
        tapeflow::rematerializer remat(1);  // a budget so small that every region is dropped
        std::vector<Real> u = v;
        for (int k = 0; k < 6; ++k) remat.region(u, layer);
        return u;
    };
    const std::vector<double> x{0.2, -0.5, 0.9, 0.1, -1.0};
    tapeflow::tape& t = tapeflow::tape::active();
    recording r(t, x, remat_f);
    const rows scalar = scalar_rows(t, r);
    CHECK(same_bits(lane_rows<8>(t, r), scalar));
    CHECK(same_bits(lane_rows<2>(t, r), scalar));
    CHECK(scalar[0][1] != 0.0);
}

TEST_CASE("the hardware model prices a vector sweep's adjoint rows") {
    auto model = std::make_shared<tapeflow::hardware_model>();
    tapeflow::tape_options o;
    o.observer = model;
    tapeflow::tape t(o);
    recording r(t, {0.3, 0.002, -0.4}, chain);
    tapeflow::lane_adjoints<double, 8> bar(t);
    bar.set(r.y[0], 0, 1.0);
    t.sweep(bar);
    CHECK(bar.get(r.x[1], 0) != 0.0);
}

TEST_CASE("vector sweep misuse is refused with messages that say what to do") {
    tapeflow::tape& t = tapeflow::tape::active();
    recording r(t, {1.0, 2.0}, [](const std::vector<Real>& v) { return std::vector<Real>{v[0] * v[1]}; });
    tapeflow::lane_adjoints<double, 4> bar(t);
    CHECK_THROWS_WITH(bar.set(r.y[0], 4, 1.0),
                      Catch::Contains("lane 4 is out of range; these adjoints have 4 lanes (0 to 3)"));
    CHECK_THROWS_WITH(bar.get(r.x[0], 7), Catch::Contains("out of range"));
    // by identifier too: lane 4 of identifier i would be lane 0 of i + 1
    CHECK_THROWS_WITH(bar.get(r.x[0].id(), 4), Catch::Contains("lane 4 is out of range"));
    CHECK(bar.get(r.x[0].id(), 3) == bar.get(r.x[0], 3));
    const Real passive = 3.0;
    CHECK_THROWS_WITH(bar.set(passive, 0, 1.0), Catch::Contains("passive variable; call register_output()"));
    CHECK(bar.get(passive, 0) == 0.0);

    tapeflow::tape other;
    tapeflow::lane_adjoints<double, 4> foreign(other);
    CHECK_THROWS_WITH(t.sweep(foreign), Catch::Contains("made for another tape"));
    CHECK_THROWS_WITH(foreign.set(r.y[0], 0, 1.0), Catch::Contains("belongs to another tape"));

    t.reset();
    t.start_recording();
    CHECK_THROWS_WITH(t.sweep(bar), Catch::Contains("sweep() called while recording"));
    t.stop_recording();
    t.reset();

    // seeding the adjoints being swept from a reverse rule
    t.start_recording();
    Real x = 2.0;
    t.register_input(x);
    Real y;
    tapeflow::custom_adjoint op;
    op.add_input(x);
    op.add_output(y, 4.0);
    op.record([&](const double* yb, double* xb) {
        xb[0] += yb[0];
        bar.set(x, 1, 1.0);
    });
    t.register_output(y);
    t.stop_recording();
    bar.clear();
    bar.set(y, 0, 1.0);
    CHECK_THROWS_WITH(t.sweep(bar), Catch::Contains("while the tape sweeps these adjoints"));
    CHECK_FALSE(t.is_sweeping());
    t.reset();
}

TEST_CASE("an external entry without a rule for lanes is refused by a vector sweep") {
    struct scalar_only final : tapeflow::external_entry<double> {
        tapeflow::identifier in, out;
        void reverse(double* adjoint, std::vector<double>&) override {
            adjoint[in] += adjoint[out];
            adjoint[out] = 0;
        }
        std::size_t bytes() const noexcept override { return sizeof(*this); }
    };
    tapeflow::tape& t = tapeflow::tape::active();
    t.reset();
    t.start_recording();
    Real x = 2.0;
    t.register_input(x);
    Real y = x * 3.0;
    auto entry = std::make_unique<scalar_only>();
    entry->in = y.id();
    entry->out = t.acquire_identifier();
    const tapeflow::identifier out = entry->out;
    t.push_external(std::move(entry));
    t.stop_recording();
    tapeflow::lane_adjoints<double, 2> bar(t);
    bar.set(y, 0, 1.0);  // any seed: the entry is met on the path of zero adjoints
    CHECK_THROWS_WITH(t.sweep(bar), Catch::Contains("implement external_entry::reverse_lanes"));
    t.reset();
    (void)out;
}

TEST_CASE("moving lane adjoints leaves the source empty, not sharing the new owner's rows") {
    // y = x^2 at x = 2: dy/dx = 4. The moved-from adjoints, cleared or seeded
    // again, must not touch the ones they moved to (they did: the source kept
    // a pointer into the moved buffer, a use-after-free once it was freed).
    tapeflow::tape& t = tapeflow::tape::active();
    recording r(t, {2.0}, [](const std::vector<Real>& v) { return std::vector<Real>{v[0] * v[0]}; });
    tapeflow::lane_adjoints<double, 2> a(t);
    a.set(r.y[0], 0, 1.0);
    SECTION("move construction") {
        tapeflow::lane_adjoints<double, 2> b(std::move(a));
        a.clear();  // NOLINT: a moved-from object may be reused
        CHECK(a.bytes() == 0);
        t.sweep(b);
        CHECK(b.get(r.x[0], 0) == 4.0);
    }
    SECTION("move assignment") {
        tapeflow::lane_adjoints<double, 2> b(t);
        b = std::move(a);
        a.clear();  // NOLINT
        t.sweep(b);
        CHECK(b.get(r.x[0], 0) == 4.0);
    }
    SECTION("the new owner gone, the source seeded again") {
        { tapeflow::lane_adjoints<double, 2> b(std::move(a)); }
        a.set(r.y[0], 1, 1.0);  // NOLINT: grows rows of its own (ASan saw a use-after-free here)
        t.sweep(a);
        CHECK(a.get(r.x[0], 1) == 4.0);
        CHECK(a.get(r.x[0], 0) == 0.0);
    }
}
