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

TEST_CASE("assigning a passive Real: no record, the variable becomes passive and frees its identifier") {
    // What Eigen's setZero() and fill() do to a matrix of Real: copy-assign
    // a passive Real to each element.
    recording r;
    Real x = 2.0;
    r.tape.register_input(x);
    Real y = x * x;
    Real w = x * 3.0;
    const Real seven = 7.0;
    const auto s0 = r.statements();
    const auto live = r.tape.statistics().live_identifiers;
    y = seven;
    CHECK_FALSE(y.is_active());
    CHECK(y.value() == 7.0);
    CHECK(r.statements() == s0);
    CHECK(r.tape.statistics().live_identifiers == live - 1);
    const Real& same = y;
    y = same;  // a passive variable assigned to itself changes nothing
    CHECK(y.value() == 7.0);
    CHECK_FALSE(y.is_active());
    // an active one still records: w = x again (one statement)
    Real v = x;
    w = v;
    CHECK(w.is_active());
    CHECK(r.statements() == s0 + 2);
    // d(y x + w)/dx with y the constant 7 and w = x: 7 + 1
    Real z = y * x + w;
    r.tape.register_output(z);
    r.tape.stop_recording();
    r.tape.set_adjoint(z, 1.0);
    r.tape.sweep();
    CHECK(r.tape.adjoint(x) == 8.0);
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

TEST_CASE("+= and -= of an active variable record an update: its operands alone, the identifier kept") {
    recording r;
    Real a = 2.0, b = 3.0;
    r.tape.register_input(a);
    r.tape.register_input(b);
    Real s = a * b;  // an assignment: 2 pairs
    const auto id = s.id();
    const auto before = r.tape.statistics();
    s += a * a * b;  // an update: pairs (2ab, a), (a^2, b); s's own partial 1 is not stored
    CHECK(s.id() == id);
    auto after = r.tape.statistics();
    CHECK(after.statements == before.statements + 1);
    CHECK(after.arguments == before.arguments + 2);
    CHECK(after.record_bytes == before.record_bytes + 28);  // 2 * (8 + 4) + 4
    s += 1.5;  // a passive operand: nothing to record
    s -= Real(4.0);
    ++s;
    CHECK(r.tape.statistics().statements == after.statements);
    CHECK(s.id() == id);
    s -= s * b;  // s (1 - b): the old s is an operand too
    s += s;      // 2 s
    r.tape.register_output(s);
    r.tape.stop_recording();
    // s = 2 (ab + a^2 b + 1.5 - 4 + 1) (1 - b)
    const double va = 2.0, vb = 3.0, inner = va * vb + va * va * vb - 1.5;
    CHECK(s.value() == 2 * inner * (1 - vb));
    r.tape.set_adjoint(s, 1.0);
    r.tape.sweep();
    CHECK(r.tape.adjoint(a) == Approx(2 * (vb + 2 * va * vb) * (1 - vb)).epsilon(1e-15));
    CHECK(r.tape.adjoint(b) == Approx(2 * ((va + va * va) * (1 - vb) - inner)).epsilon(1e-15));
}

TEST_CASE("an update of an input, of a passive variable and of a variable kept from the last recording") {
    recording r;
    Real kept = 1.0;
    r.tape.register_input(kept);
    kept = kept * 10.0;  // kept over the reset below: a constant of the next recording
    r.tape.stop_recording();
    r.tape.reset();
    r.tape.start_recording();
    Real x = 1.25, y = -0.5;
    r.tape.register_input(x);
    r.tape.register_input(y);
    const auto x_id = x.id();
    x += y * y;       // an input updated in place: x keeps its identifier
    CHECK(x.id() == x_id);
    Real p = 3.0;     // passive: as p = p + x * y, an assignment that takes an identifier
    p -= x * y;
    CHECK(p.is_active());
    const auto kept_id = kept.id();
    kept += x;        // an update of kept's identifier, which no record of this recording assigns
    CHECK(kept.id() == kept_id);
    Real f = p * kept;
    r.tape.register_output(f);
    r.tape.stop_recording();
    // x1 = x + y^2, p = 3 - x1 y, kept = 10 + x1 (its old value is a constant here), f = p kept;
    // like an input's, kept's adjoint is that of its old value: df/dkept_old = p
    const double x1 = 1.25 + 0.25, vp = 3 - x1 * -0.5, vk = 10 + x1;
    CHECK(f.value() == Approx(vp * vk).epsilon(1e-15));
    r.tape.set_adjoint(f, 1.0);
    r.tape.sweep();
    const double df_dx1 = -(-0.5) * vk + vp;
    CHECK(r.tape.adjoint(x) == Approx(df_dx1).epsilon(1e-15));
    CHECK(r.tape.adjoint(y) == Approx(df_dx1 * 2 * -0.5 - x1 * vk).epsilon(1e-15));
    CHECK(r.tape.adjoint(kept) == Approx(vp).epsilon(1e-15));
}

TEST_CASE("an update of 17 operands is a long record, swept like a short one") {
    recording r;
    std::vector<Real> x(17);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = 0.5 + 0.25 * double(i);
        r.tape.register_input(x[i]);
    }
    Real s = x[0] * x[1];
    const auto before = r.tape.statistics();
    s -= x[0] * 1.0 + x[1] * 2.0 + x[2] * 3.0 + x[3] * 4.0 + x[4] * 5.0 + x[5] * 6.0 + x[6] * 7.0 +
         x[7] * 8.0 + x[8] * 9.0 + x[9] * 10.0 + x[10] * 11.0 + x[11] * 12.0 + x[12] * 13.0 +
         x[13] * 14.0 + x[14] * 15.0 + x[15] * 16.0 + x[16] * 17.0;
    const auto after = r.tape.statistics();
    CHECK(after.statements == before.statements + 1);
    CHECK(after.arguments == before.arguments + 17);
    CHECK(after.record_bytes == before.record_bytes + 17 * 12 + 8);  // the count in a word of its own
    r.tape.register_output(s);
    r.tape.stop_recording();
    r.tape.set_adjoint(s, 1.0);
    r.tape.sweep();
    // s = x0 x1 - sum (i + 1) x_i
    CHECK(r.tape.adjoint(x[0]) == x[1].value() - 1.0);
    CHECK(r.tape.adjoint(x[1]) == x[0].value() - 2.0);
    for (std::size_t i = 2; i < x.size(); ++i) CHECK(r.tape.adjoint(x[i]) == -double(i + 1));
}

TEST_CASE("update records under vector reverse mode, against forward mode") {
    // Sums, differences and self-references through += and -=, as a Jacobian
    // of 10 outputs: reverse (lanes over update records) against forward.
    const auto F = [](const auto& v) {
        using T = std::decay_t<decltype(v[0])>;
        std::vector<T> out;
        T s = v[0] * v[1];
        for (int i = 0; i < 10; ++i) {
            s += v[i % 3] * v[(i + 1) % 3];
            s -= 0.25 * s * v[2];
            if (i % 2) s += s;
            T t = s;
            t -= v[1];
            out.push_back(t);
        }
        return out;
    };
    const std::vector<double> x{0.7, -1.1, 0.4};
    const auto reverse = tapeflow::jacobian(F, x);
    const auto forward = tapeflow::jacobian_forward(F, x);
    REQUIRE(reverse.size() == forward.size());
    for (std::size_t i = 0; i < reverse.size(); ++i)
        for (std::size_t j = 0; j < x.size(); ++j) {
            CAPTURE(i, j);
            CHECK(reverse[i][j] == Approx(forward[i][j]).epsilon(1e-13));
        }
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
