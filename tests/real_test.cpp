// The active type: construction, copy/move semantics, passivity, identifiers,
// and a Real that outlives the recording (reset) or the tape (destroyed).
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

using tapeflow::Real;

static_assert(sizeof(Real) == 16, "value + identifier + tape tag");
static_assert(std::is_nothrow_move_constructible_v<Real>, "vector<Real> must move, not copy");
static_assert(!std::is_convertible_v<Real, double>, "no implicit conversion to double");
static_assert(std::is_convertible_v<double, Real> && std::is_convertible_v<int, Real>,
              "numbers convert implicitly to a passive Real");

namespace {
struct recording {
    tapeflow::tape tape;
    recording() { tape.start_recording(); }
    ~recording() { tape.stop_recording(); }
    std::uint64_t statements() const { return tape.statistics().statements; }
};
}  // namespace

TEST_CASE("default, number and expression construction") {
    Real zero;
    CHECK(zero.value() == 0.0);
    CHECK_FALSE(zero.is_active());
    Real three = 3;
    CHECK(three.value() == 3.0);
    Real f = 2.5f;
    CHECK(f.value() == 2.5);
    Real e = three * f + 1;
    CHECK(e.value() == 8.5);
    CHECK_FALSE(e.is_active());  // no tape recording: values only
}

TEST_CASE("copying records one statement, moving records none") {
    recording r;
    Real x = 2.0;
    r.tape.register_input(x);
    const auto s0 = r.statements();
    Real copy = x;
    CHECK(r.statements() == s0 + 1);
    CHECK(copy.id() != x.id());
    const auto copy_id = copy.id();
    Real moved = std::move(copy);
    CHECK(r.statements() == s0 + 1);
    CHECK(moved.id() == copy_id);
    CHECK(copy.id() == 0);  // NOLINT: moved-from is passive by contract
    Real assigned;
    assigned = std::move(moved);
    CHECK(assigned.id() == copy_id);
    CHECK(r.statements() == s0 + 1);
}

TEST_CASE("assigning a number makes a variable passive and frees its identifier") {
    recording r;
    Real x = 2.0;
    r.tape.register_input(x);
    Real y = x * x;
    const auto live = r.tape.statistics().live_identifiers;
    y = 5.0;
    CHECK_FALSE(y.is_active());
    CHECK(r.tape.statistics().live_identifiers == live - 1);
    // y no longer depends on x: d(y*x)/dx = y = 5.
    Real z = y * x;
    r.tape.register_output(z);
    r.tape.stop_recording();
    r.tape.set_adjoint(z, 1.0);
    r.tape.sweep();
    CHECK(r.tape.adjoint(x) == 5.0);
}

TEST_CASE("self-referencing assignments keep the right dependencies") {
    recording r;
    Real x = 1.5;
    r.tape.register_input(x);
    Real y = x;
    y = y * y;          // x^2
    y *= x;             // x^3
    y += y;             // 2 x^3
    y = sin(y) + y;     // sin(2x^3) + 2x^3
    r.tape.register_output(y);
    r.tape.stop_recording();
    r.tape.set_adjoint(y, 1.0);
    r.tape.sweep();
    const double v = 2 * 1.5 * 1.5 * 1.5;
    CHECK(y.value() == Approx(std::sin(v) + v));
    CHECK(r.tape.adjoint(x) == Approx((std::cos(v) + 1) * 6 * 1.5 * 1.5).epsilon(1e-14));
}

TEST_CASE("increment and decrement") {
    recording r;
    Real x = 1.0;
    r.tape.register_input(x);
    Real y = x * 2.0;
    Real old = y++;
    CHECK(old.value() == 2.0);
    CHECK(y.value() == 3.0);
    --y;
    ++y;
    CHECK(y.value() == 3.0);
    Real z = y * y;  // (2x + 1)^2 -> d/dx = 4 (2x + 1) = 12
    r.tape.register_output(z);
    r.tape.stop_recording();
    r.tape.set_adjoint(z, 1.0);
    r.tape.sweep();
    CHECK(r.tape.adjoint(x) == 12.0);
}

TEST_CASE("a Real in a std::vector survives reallocation without extra records") {
    recording r;
    std::vector<Real> v;
    Real x = 1.0;
    r.tape.register_input(x);
    v.push_back(x * 2.0);
    const auto s = r.statements();
    for (int i = 0; i < 100; ++i) v.emplace_back(double(i));
    CHECK(r.statements() == s);  // growth moves, it does not copy
    CHECK(v[0].is_active());
}

TEMPLATE_TEST_CASE("float and long double scalars", "", float, long double) {
    using R = tapeflow::basic_real<TestType>;
    tapeflow::basic_tape<TestType> t;
    t.start_recording();
    R x = TestType(0.5);
    t.register_input(x);
    R y = exp(x) * x;
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, TestType(1));
    t.sweep();
    const TestType expected = std::exp(TestType(0.5)) * TestType(1.5);
    CHECK(double(t.adjoint(x)) == Approx(double(expected)).epsilon(double(std::numeric_limits<TestType>::epsilon()) * 8));
}

TEST_CASE("a Real used after its tape's reset(): a constant of the next recording, as documented") {
    tapeflow::tape t;
    t.start_recording();
    Real x = 2.0;
    t.register_input(x);
    Real old = x * x;
    t.register_output(old);
    t.stop_recording();
    t.set_adjoint(old, 1.0);
    t.sweep();
    REQUIRE(t.adjoint(x) == 4.0);
    t.reset();
    CHECK(old.value() == 4.0);
    CHECK(old.is_active());        // it keeps its identifier ...
    CHECK(t.adjoint(old) == 0.0);  // ... whose adjoint reset() zeroed
    CHECK(t.adjoint(x) == 0.0);
    t.start_recording();
    Real z = 3.0;
    t.register_input(z);
    Real y = z * old;  // old is the constant 4 here
    t.register_output(y);
    t.stop_recording();
    CHECK(t.statistics().statements == 1);
    t.set_adjoint(y, 1.0);
    t.sweep();
    CHECK(t.adjoint(z) == 4.0);
    CHECK(t.adjoint(old) == 3.0);  // accumulated, as for an input
    CHECK(t.adjoint(x) == 0.0);    // nothing flows to what it was computed from
    const auto live = t.statistics().live_identifiers;
    old = old.value();  // the documented way to make it passive
    CHECK_FALSE(old.is_active());
    CHECK(t.statistics().live_identifiers == live - 1);
}

TEST_CASE("a Real that outlives its tape: reading and destroying it touch no tape") {
    // A Real does not point to its tape: it returns its identifier to the
    // thread's active tape only if that tape's serial is its tag. So a Real
    // of a destroyed tape is destroyed safely, whatever tape is active then.
    std::uint32_t dead_serial = 0;
    std::unique_ptr<Real> x, y;
    auto record_on = [&](tapeflow::tape& t) {
        t.start_recording();
        x = std::make_unique<Real>(1.5);
        t.register_input(*x);
        y = std::make_unique<Real>(*x * 2.0);
        t.stop_recording();
        dead_serial = t.serial();
    };
    SECTION("no tape active (the tape was on the heap: a touch would be a use after free)") {
        auto t = std::make_unique<tapeflow::tape>();
        record_on(*t);
        t.reset();  // destroys the tape
        CHECK(x->value() == 1.5);
        CHECK(y->value() == 3.0);
        CHECK(y->tape_tag() == dead_serial);
        *x = 4.0;  // assigning a number drops the identifier: nothing to give back
        CHECK_FALSE(x->is_active());
        x.reset();
        y.reset();
    }
    SECTION("a new tape in the same storage is active: it gets nothing back") {
        std::optional<tapeflow::tape> slot;
        slot.emplace();
        record_on(*slot);
        slot.reset();
        slot.emplace();  // same address, new serial
        tapeflow::tape& t = *slot;
        CHECK(t.serial() != dead_serial);
        t.start_recording();
        std::vector<Real> in{0.5, 1.5, 2.5, 3.5};
        for (Real& v : in) t.register_input(v);  // identifiers 1..4: those x and y held
        const auto live = t.statistics().live_identifiers;
        CHECK_THROWS_WITH(t.adjoint(*y), Catch::Contains("a tape that no longer exists"));
        CHECK_THROWS_WITH(t.set_adjoint(*y, 1.0), Catch::Contains("a tape that no longer exists"));
        x.reset();
        y.reset();
        CHECK(t.statistics().live_identifiers == live);
        // had x or y given 1 or 2 back, s would take an input's identifier
        Real s = in[0] * in[1] + in[2] * in[3];
        t.register_output(s);
        t.stop_recording();
        t.set_adjoint(s, 1.0);
        t.sweep();
        CHECK(t.adjoint(in[0]) == 1.5);
        CHECK(t.adjoint(in[1]) == 0.5);
        CHECK(t.adjoint(in[2]) == 3.5);
        CHECK(t.adjoint(in[3]) == 2.5);
    }
    SECTION("the thread's default tape is active") {
        {
            tapeflow::tape t;
            record_on(t);
        }
        tapeflow::tape& d = tapeflow::tape::active();
        REQUIRE(&d == &tapeflow::tape::thread_default());
        const auto live = d.statistics().live_identifiers;
        x.reset();
        y.reset();
        CHECK(d.statistics().live_identifiers == live);
    }
}

namespace {
// Generic code receives an expression of its caller's statement by const
// reference (as Eigen does with a scalar): allowed, and it is current.
template <class T>
auto square(const T& t) {
    return t * t;
}
template <class T>
Real to_real(const T& t) {
    return t;
}
// A generic lambda may return an expression: nodes hold operands by value.
const auto affine = [](const auto& a, const auto& b) { return a * b + a; };
}  // namespace

TEST_CASE("expressions through function templates and generic lambdas (the rule is only against auto e = ...)") {
    recording r;
    Real a = 2.0, b = 3.0;
    r.tape.register_input(a);
    r.tape.register_input(b);
    Real y = square(a * b) + to_real(a * b) + affine(a, b);  // 36 + 6 + 8
    r.tape.register_output(y);
    r.tape.stop_recording();
    r.tape.set_adjoint(y, 1.0);
    r.tape.sweep();
    CHECK(y.value() == 50.0);
    CHECK(r.tape.adjoint(a) == 2 * 6.0 * 3 + 3 + (3 + 1));  // d/da (ab)^2 + ab + ab + a
    CHECK(r.tape.adjoint(b) == 2 * 6.0 * 2 + 2 + 2);
}
