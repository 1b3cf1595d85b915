#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include <string>
#include <type_traits>
#include <vector>

using tapeflow::Real;

namespace {

// A small explicit Euler time loop with one region per step.
std::vector<Real> simulate(tapeflow::tape& t, std::vector<Real> u, int steps) {
    for (int s = 0; s < steps; ++s) {
        tapeflow::Region step(t, "step " + std::to_string(s));
        std::vector<Real> next(u.size());
        for (std::size_t i = 0; i < u.size(); ++i) next[i] = u[i] - 0.1 * sin(u[i]);
        u = std::move(next);
    }
    return u;
}

}  // namespace

TEST_CASE("regions record their label, extent and counts") {
    tapeflow::tape t;
    t.start_recording();
    std::vector<Real> u{0.5, 1.0, 1.5};
    for (auto& x : u) t.register_input(x);
    Real before = u[0] * u[1];  // implicit region: 1 statement
    u = simulate(t, std::move(u), 4);  // moved: no copy statements
    t.stop_recording();

    const auto& regions = t.regions();
    REQUIRE(regions.size() == 4);
    for (std::size_t s = 0; s < 4; ++s) {
        const auto& r = regions[s];
        CHECK(r.label == "step " + std::to_string(s));
        CHECK(r.depth == 0);
        CHECK(r.parent == tapeflow::region_info::no_parent);
        CHECK_FALSE(r.open);
        CHECK(r.statements() == 3);  // one per cell
        CHECK(r.arguments() == 3);   // u[i] appears twice but is merged
        CHECK(r.bytes() == 3 * tapeflow::record_layout<double>::size(1));
    }
    CHECK(regions[0].begin.statements == 1);
    CHECK(regions[3].end.statements == t.statistics().statements);
    CHECK(t.statistics().regions == 4);
}

TEST_CASE("regions nest and the RAII scope closes inner ones") {
    tapeflow::tape t;
    t.start_recording();
    Real x = 2.0;
    t.register_input(x);
    {
        tapeflow::Region outer(t, "outer");
        Real a = x * x;
        {
            tapeflow::Region inner(t, "inner");
            Real b = a * x;
            Real c = b + a;
        }
        Real d = a - x;
    }
    t.stop_recording();
    const auto& regions = t.regions();
    REQUIRE(regions.size() == 2);
    CHECK(regions[0].label == "outer");
    CHECK(regions[0].statements() == 4);
    CHECK(regions[1].label == "inner");
    CHECK(regions[1].parent == 0);
    CHECK(regions[1].depth == 1);
    CHECK(regions[1].statements() == 2);
    CHECK(regions[1].begin.statements == 1);
}

TEST_CASE("an open region reports the records made so far") {
    tapeflow::tape t;
    t.start_recording();
    Real x = 1.0;
    t.register_input(x);
    tapeflow::Region r(t, "open");
    Real y = exp(x);
    Real z = y * x;
    REQUIRE(t.regions().size() == 1);
    CHECK(t.regions()[0].open);
    CHECK(t.regions()[0].statements() == 2);
    t.stop_recording();
}

TEST_CASE("reset and reset(position) forget the regions opened after the position") {
    tapeflow::tape t;
    t.start_recording();
    Real x = 1.0;
    t.register_input(x);
    { tapeflow::Region a(t, "a"); Real y = x * 3.0; }
    const auto middle = t.get_position();
    { tapeflow::Region b(t, "b"); Real y = x * 4.0; }
    REQUIRE(t.regions().size() == 2);
    t.reset(middle);
    REQUIRE(t.regions().size() == 1);
    CHECK(t.regions()[0].label == "a");
    t.reset();
    CHECK(t.regions().size() == 0);
    t.stop_recording();
}

TEST_CASE("a Region whose entry a reset removed leaves a region opened since at its index open") {
    // Both begin at the start of a recording (the same point, positions ==),
    // in different epochs: the old Region's end must not close the new one.
    tapeflow::tape t;
    t.start_recording();
    Real x = 1.0;
    t.register_input(x);
    std::size_t kept = 0;
    {
        tapeflow::Region old_scope(t, "old");
        t.reset();  // removes "old" (the tape records on)
        t.register_input(x);
        kept = t.begin_region("new");  // takes index 0 at the same point
        REQUIRE(kept == 0);
        REQUIRE(t.regions()[0].begin == tapeflow::position{});
    }  // old_scope ends here
    Real y = x * 2.0;  // inside "new" while it is open
    REQUIRE(t.regions().size() == 1);
    CHECK(t.regions()[0].label == "new");
    CHECK(t.regions()[0].open);
    t.end_region(kept);
    CHECK_FALSE(t.regions()[0].open);
    CHECK(t.regions()[0].statements() == 1);
    t.stop_recording();
}

TEST_CASE("a Region on the active tape without naming it") {
    auto& t = tapeflow::tape::active();
    t.reset();
    t.start_recording();
    Real x = 1.0;
    t.register_input(x);
    {
        tapeflow::Region r("scope");
        Real y = x + 1.0;
    }
    t.stop_recording();
    REQUIRE(t.regions().size() == 1);
    CHECK(t.regions()[0].label == "scope");
    CHECK(t.regions()[0].statements() == 1);
    t.reset();
}

namespace {

// One template for doubles and Reals: region_for<T> opens a region only for Real.
template <class T>
T stepped_sum(const std::vector<T>& u, int steps) {
    T total = 0.0;
    for (int s = 0; s < steps; ++s) {
        tapeflow::region_for<T> step("step");
        for (const auto& x : u) total += x * x;
    }
    return total;
}

}  // namespace

TEST_CASE("region_for<T>: a Region for Real, a scope that does nothing for double and float") {
    static_assert(std::is_same_v<tapeflow::region_for<Real>, tapeflow::Region>);
    static_assert(std::is_same_v<tapeflow::region_for<tapeflow::RealF>, tapeflow::basic_region<float>>);
    static_assert(std::is_same_v<tapeflow::region_for<double>, tapeflow::no_region>);
    static_assert(std::is_same_v<tapeflow::region_for<float>, tapeflow::no_region>);
    static_assert(!std::is_copy_constructible_v<tapeflow::no_region>);

    CHECK(stepped_sum(std::vector<double>{1.0, 2.0}, 3) == 15.0);

    tapeflow::tape t;
    t.start_recording();
    std::vector<Real> u{1.0, 2.0};
    for (auto& x : u) t.register_input(x);
    Real total = stepped_sum(u, 3);
    t.register_output(total);
    t.stop_recording();
    CHECK(total.value() == 15.0);
    REQUIRE(t.regions().size() == 3);
    for (const auto& r : t.regions()) {
        CHECK(r.label == "step");
        CHECK(r.statements() == 2);  // total += x * x for two cells
    }
    t.set_adjoint(total, 1.0);
    t.sweep();
    CHECK(t.adjoint(u[0]) == 6.0);   // 3 steps of 2 x
    CHECK(t.adjoint(u[1]) == 12.0);
}
