// reset(position) and recycled identifiers (tape/reset_boundary.hpp): a
// variable assigned after the position is a constant after the reset, and
// the adjoints kept by the reset reach the records before the position,
// not the new records that recycle their identifiers. Every expected value
// is the analytic derivative of the function the tape holds after the reset
// (the dropped records' results as constants).
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include "stream/stream_support.hpp"
#include "support/options.hpp"
#include "support/parallel_loop.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

using tapeflow::Real;

namespace {

// Where the tape keeps its tiles: memory, the scratchpad, or a budget so
// small that the dropped records are in the spill file.
struct storage {
    std::string name;
    std::size_t budget;  // 0: in memory
    bool scratchpad;
};

tapeflow::tape_options options_for(const storage& s, const std::string& directory) {
    if (s.budget == 0 && !s.scratchpad) return tapeflow::tape_options{};
    tapeflow::tape_options o = tapeflow_test::tape_options(
        1024, s.scratchpad, s.budget == 0 ? std::numeric_limits<std::size_t>::max() : s.budget);
    o.spill_directory = directory;
    return o;
}

// n chain records on `y` (y = y * c), to fill tiles.
void chain(Real& y, int n) {
    for (int i = 0; i < n; ++i) y = y * 1.0;
}

// 3 x, computed through a temporary that dies: its identifier is free
// afterwards, the lhs of a record on the tape (the next variable takes it).
Real three_times(const Real& x) {
    Real keep;
    {
        Real u = x * 3.0;
        keep = u * 1.0;
    }
    return keep;
}

// A tape that records, with x an input of value x0.
struct recording {
    tapeflow::tape tape;
    Real x;
    explicit recording(double x0, const tapeflow::tape_options& options = {}) : tape(options), x(x0) {
        tape.start_recording();
        tape.register_input(x);
    }
};

// Stops recording with output y, seeds it with 1, sweeps: dy/dx.
double gradient(tapeflow::tape& tape, Real& y, const Real& x) {
    tape.register_output(y);
    tape.stop_recording();
    tape.set_adjoint(y, 1.0);
    tape.sweep();
    return tape.adjoint(x);
}

}  // namespace

TEST_CASE("a variable assigned after the position is a constant after reset(position)") {
    const storage s = GENERATE(storage{"memory", 0, false}, storage{"scratchpad", 0, true},
                               storage{"spill file", 4 * 1024, false});
    INFO(s.name);
    tapeflow_test::temp_directory dir;
    const double x0 = 2.0;
    recording r(x0, options_for(s, dir.path()));
    tapeflow::tape& tape = r.tape;
    Real& x = r.x;
    Real keep = three_times(x);
    chain(keep, 200);  // several tiles before the position
    const tapeflow::position p = tape.get_position();
    Real v = x * 5.0;  // takes u's identifier
    Real w = x * x;
    chain(w, 200);  // several tiles after it: spilled with a budget
    tape.reset(p);
    CHECK(tape.get_position() == p);
    // v and w hold values of records that are gone: constants now
    Real y = v * keep + w * x;
    // y = 5 x0 (3 x) + x0^2 x: dy/dx = 15 x0 + x0^2
    CHECK(gradient(tape, y, x) == Approx(15 * x0 + x0 * x0).epsilon(1e-14));
    // a second gradient of the same recording passes the position again
    tape.clear_adjoints();
    tape.set_adjoint(y, 1.0);
    tape.sweep();
    CHECK(tape.adjoint(x) == Approx(15 * x0 + x0 * x0).epsilon(1e-14));
    if (s.budget != 0) CHECK(tape.statistics().tiles_spilled > 0);
}

TEST_CASE("reset(position): an update after the position keeps what the variable was") {
    recording r(2.0);
    tapeflow::tape& tape = r.tape;
    Real& x = r.x;
    Real s = x * x;
    const tapeflow::position p = tape.get_position();
    s += 5.0 * x;  // dropped: s = x^2 + (a constant) after the reset
    Real t = x * 7.0;
    t += x * x;  // t's value came from an assignment after p: a constant
    tape.reset(p);
    Real y = 2.0 * s + t * x;
    // dy/dx = 2 (2 x) + t = 8 + 18
    CHECK(gradient(tape, y, x) == Approx(8.0 + t.value()).epsilon(1e-14));
}

TEST_CASE("the adjoints kept by reset(position) reach the records before it") {
    // A prefix w = x^2 on the tape, then pieces recorded after p one at a
    // time: record, seed, sweep back to p, reset(p). The adjoint of w kept
    // at p must reach w's record, whatever the next piece does with w's
    // identifier or the identifiers of variables that died.
    const double x0 = 2.0;
    recording r(x0);
    tapeflow::tape& tape = r.tape;
    Real& x = r.x;
    Real w = x * x;
    const tapeflow::position p = tape.get_position();

    // piece 1: y1 = 3 w, swept to p (adjoint of w: 3)
    {
        Real y1 = w * 3.0;
        tape.register_output(y1);
        tape.stop_recording();
        tape.set_adjoint(y1, 1.0);
        tape.sweep(p);
        CHECK(tape.adjoint(w) == 3.0);
    }
    tape.reset(p);
    // set aside until a sweep passes p
    CHECK(tape.adjoint(w) == 0.0);

    SECTION("the next piece assigns w again (y2 = 2 w, w's identifier kept)") {
        tape.start_recording();
        w = w * 2.0;
        Real y2 = w * 1.0;
        tape.register_output(y2);
        tape.stop_recording();
        tape.set_adjoint(y2, 1.0);
        tape.sweep();
        // d(3 x^2 + 2 x^2)/dx = 10 x
        CHECK(tape.adjoint(x) == Approx(10 * x0).epsilon(1e-14));
    }
    SECTION("w dies and a new record takes its identifier") {
        { Real gone = std::move(w); }
        tape.start_recording();
        Real z = x * 7.0;
        tape.register_output(z);
        tape.stop_recording();
        tape.set_adjoint(z, 1.0);
        tape.sweep();
        // d(3 x^2 + 7 x)/dx = 6 x + 7
        CHECK(tape.adjoint(x) == Approx(6 * x0 + 7).epsilon(1e-14));
    }
    SECTION("three pieces in turn, each swept to p and dropped, then the prefix") {
        for (int k = 1; k <= 3; ++k) {
            tape.start_recording();
            Real t = w * double(k);  // piece k: y = k w (t dies with the piece)
            Real y = t * x;          // y = k x^3
            tape.register_output(y);
            tape.stop_recording();
            tape.set_adjoint(y, 1.0);
            tape.sweep(p);
            CHECK(tape.adjoint(w) == Approx(3.0 + k * (k + 1) / 2.0 * x0).epsilon(1e-14));
            tape.reset(p);
        }
        tape.sweep(p, tapeflow::position{});
        // d(3 x^2 + (1 + 2 + 3) x^3)/dx = 6 x + 18 x^2
        CHECK(tape.adjoint(x) == Approx(6 * x0 + 18 * x0 * x0).epsilon(1e-14));
    }
    SECTION("clear_adjoints() drops what was set aside") {
        tape.clear_adjoints();
        tape.start_recording();
        Real z = x * 7.0;
        tape.register_output(z);
        tape.stop_recording();
        tape.set_adjoint(z, 1.0);
        tape.sweep();
        CHECK(tape.adjoint(x) == 7.0);
    }
    SECTION("reset() drops it with the other adjoints") {
        tape.reset();
        CHECK(tape.adjoint(w) == 0.0);
        CHECK(tape.adjoint(x) == 0.0);
    }
}

TEST_CASE("clear_adjoints() zeroes the kept adjoints a sweep added back where no record names them") {
    // y is an input registered after p and read only by the dropped piece:
    // after reset(p) no record on the tape names it, yet the sweep through p
    // gives it back its kept adjoint. clear_adjoints() must zero it although
    // the tape would rather zero what its records name than the whole
    // adjoint vector, made long here by 10 000 earlier variables.
    const double x0 = 2.0, y0 = 5.0;
    tapeflow::tape tape;
    {
        std::vector<Real> many(10000, Real(1.0));
        tape.start_recording();
        tape.register_inputs(many.begin(), many.end());
        tape.stop_recording();
        tape.set_adjoint(many.back(), 1.0);
        tape.sweep();
    }
    tape.reset();
    tape.start_recording();
    Real x(x0);
    tape.register_input(x);
    Real w = x * x;
    const tapeflow::position p = tape.get_position();
    Real y(y0);
    tape.register_input(y);
    {
        Real v = w * y;  // the piece reset(p) drops: v = x^2 y
        tape.register_output(v);
        tape.stop_recording();
        tape.set_adjoint(v, 1.0);
        tape.sweep(p);
        CHECK(tape.adjoint(y) == x0 * x0);
        CHECK(tape.adjoint(w) == y0);
    }
    tape.reset(p);
    tape.start_recording();
    Real z = w * 3.0;
    tape.register_output(z);
    tape.stop_recording();
    tape.set_adjoint(z, 1.0);
    tape.sweep();
    // d(x^2 y0 + 3 x^2)/dx, and y's kept adjoint back
    CHECK(tape.adjoint(x) == Approx(2 * x0 * (y0 + 3)).epsilon(1e-14));
    CHECK(tape.adjoint(y) == x0 * x0);

    tape.clear_adjoints();
    CHECK(tape.adjoint(y) == 0.0);
    CHECK(tape.adjoint(w) == 0.0);
    CHECK(tape.adjoint(x) == 0.0);
    // the next gradient of z alone: d(3 x^2)/dx, nothing for y
    tape.set_adjoint(z, 1.0);
    tape.sweep();
    CHECK(tape.adjoint(x) == Approx(6 * x0).epsilon(1e-14));
    CHECK(tape.adjoint(y) == 0.0);
}

TEST_CASE("a sweep in two pieces at the position: the kept adjoints join once") {
    // q = x^2 before p; piece 1 assigns q again (q = 3 q, y1 = q), is swept
    // to p (the adjoint of the old q: 3) and dropped: q is a constant now,
    // holding the identifier whose adjoint 3 waits at p for q's record.
    const double x0 = 2.0;
    recording r(x0);
    tapeflow::tape& tape = r.tape;
    Real& x = r.x;
    Real q = x * x;
    const tapeflow::position p = tape.get_position();
    q = q * 3.0;
    Real y1 = q * 1.0;
    tape.register_output(y1);
    tape.stop_recording();
    tape.set_adjoint(y1, 1.0);
    tape.sweep(p);
    tape.reset(p);
    // piece 2: y2 = q x, q the constant 3 x0^2
    tape.start_recording();
    Real y2 = q * x;
    tape.register_output(y2);
    tape.stop_recording();
    tape.set_adjoint(y2, 1.0);
    tape.sweep(p);  // passes the boundary: q's adjoint from y2 dropped, the kept 3 back
    SECTION("nothing in between") {}
    SECTION("a seed on the constant q in between goes nowhere") { tape.set_adjoint(q, 100.0); }
    tape.sweep(p, tapeflow::position{});  // starts at it: q's adjoint as the first pass left it
    // d(3 x^2)/dx + 3 x0^2 = 6 x0 + 3 x0^2
    CHECK(tape.adjoint(x) == Approx(6 * x0 + 3 * x0 * x0).epsilon(1e-14));
    // once more in one sweep, after clear_adjoints()
    tape.clear_adjoints();
    tape.set_adjoint(y2, 1.0);
    tape.sweep();
    CHECK(tape.adjoint(x) == Approx(3 * x0 * x0).epsilon(1e-14));
}

TEST_CASE("reset(position) to the start keeps the adjoints of the variables alive, for the next sweep") {
    // No record before p (x is an input): each piece registers its start
    // value u as an input, is swept to p and dropped. The pieces' adjoints
    // of x add up; each piece's u gets only its own (the identifiers that
    // the reset frees become inputs' again).
    const double x0 = 1.5;
    recording r(x0);
    tapeflow::tape& tape = r.tape;
    Real& x = r.x;
    REQUIRE(tape.get_position().statements == 0);
    const tapeflow::position p{};  // the start (a position taken there is stale after the first reset)
    Real u;
    for (int k = 1; k <= 3; ++k) {
        if (k > 1) tape.start_recording();
        tape.register_input(u, double(k));
        Real t = u * x;
        Real y = t * x;  // k x^2
        tape.register_output(y);
        tape.stop_recording();
        tape.set_adjoint(y, 1.0);
        tape.sweep(p);
        CHECK(tape.adjoint(u) == Approx(x0 * x0).epsilon(1e-14));
        tape.reset(p);
    }
    tape.sweep(p, tapeflow::position{});  // no record: passes the boundary at the start
    CHECK(tape.adjoint(x) == Approx((2 + 4 + 6) * x0).epsilon(1e-14));
}

TEST_CASE("reset(position) at the end sets a seed aside too") {
    const double x0 = 2.0;
    recording r(x0);
    tapeflow::tape& tape = r.tape;
    Real& x = r.x;
    Real w = x * x;
    const tapeflow::position p = tape.get_position();
    tape.stop_recording();
    tape.set_adjoint(w, 1.0);  // the seed of the old w, at p
    tape.sweep(p);             // nothing to sweep
    tape.reset(p);
    tape.start_recording();
    w = x * 5.0;  // w assigned again: its record must not read the old seed
    Real y = w * 1.0;
    // d(x^2)/dx (the seed at p) + d(5 x)/dx (y)
    CHECK(gradient(tape, y, x) == Approx(2 * x0 + 5).epsilon(1e-14));
}

TEST_CASE("a reset to an earlier position drops a later boundary and gives its adjoints back") {
    const double x0 = 1.5;
    recording r(x0);
    tapeflow::tape& tape = r.tape;
    Real& x = r.x;
    Real a = x * x;  // before p1
    const tapeflow::position p1 = tape.get_position();
    Real b = a * x;  // between p1 and p2: b = x^3
    const tapeflow::position p2 = tape.get_position();
    Real y = b * 2.0;
    Real late = x * 4.0;  // assigned after p2, alive
    tape.register_output(y);
    tape.stop_recording();
    tape.set_adjoint(y, 1.0);
    tape.sweep(p2);  // adjoint of b: 2
    tape.reset(p2);  // a boundary at p2 keeps b's 2 and fences late
    tape.reset(p1);  // drops it: b's adjoint is back, and b is a constant now
    tape.start_recording();
    Real z = late * a;  // late is a constant (4 x0), a is active
    tape.register_output(z);
    tape.stop_recording();
    tape.set_adjoint(z, 1.0);
    tape.sweep();
    // z = 4 x0 a: 4 x0 (2 x); b's kept 2 has no record left to reach
    CHECK(tape.adjoint(x) == Approx(4 * x0 * 2 * x0).epsilon(1e-14));
    CHECK(tape.adjoint(b) == 2.0);  // given back, not swept: b has no record
}

TEST_CASE("reset(position): a custom adjoint's output assigned after the position is a constant") {
    const double x0 = 0.7;
    recording r(x0);
    tapeflow::tape& tape = r.tape;
    Real& x = r.x;
    Real keep = three_times(x);
    const tapeflow::position p = tape.get_position();
    Real s;
    {
        tapeflow::custom_adjoint op(tape);
        op.add_input(x);
        op.add_output(s, std::sin(x0));
        op.record([x0](const double* yb, double* xb) { xb[0] += yb[0] * std::cos(x0); });
    }
    tape.reset(p);
    CHECK(tape.statistics().externals == 0);
    Real y = s * keep;
    CHECK(gradient(tape, y, x) == Approx(3 * std::sin(x0)).epsilon(1e-14));
}

TEST_CASE("reset(position): an entry that updates in place keeps what its output was, one that assigns does not") {
    // s = 2 x before p; after p an entry s += 3 x (s an input and an output,
    // the rule passes its adjoint on unchanged), dropped by reset(p); then
    // y = s^2. Updated in place, s after the reset is 2 x plus a constant:
    // dy/dx = 4 s. Without updates_in_place() the entry assigns s: a constant.
    const bool update = GENERATE(true, false);
    INFO((update ? "updates_in_place()" : "assigned in place"));
    const double x0 = 0.7;
    recording r(x0);
    tapeflow::tape& tape = r.tape;
    Real& x = r.x;
    Real s = x * 2.0;
    const tapeflow::position p = tape.get_position();
    {
        tapeflow::custom_adjoint op(tape);
        op.add_input(s);
        op.add_input(x);
        op.add_output(s, 2 * x0 + 3 * x0);
        if (update) op.updates_in_place();
        op.record([](const double* yb, double* xb) {
            xb[0] += yb[0];
            xb[1] += 3 * yb[0];
        });
    }
    tape.reset(p);
    CHECK(s.value() == 2 * x0 + 3 * x0);
    Real y = s * s;
    CHECK(gradient(tape, y, x) == Approx(update ? 4 * 5 * x0 : 0.0).epsilon(1e-14));
}

TEST_CASE("reset(position) to a position at the start of the recording keeps that position valid") {
    // p taken after the inputs, before any record: the pattern of
    // sweep_in_pieces with an empty prefix. Each piece J = a^2 is swept to p
    // and dropped; the adjoints kept at the start add up: 2 pieces x 2 a.
    tapeflow::tape tape;
    tape.start_recording();
    Real a = 0.5;
    tape.register_input(a);
    tape.stop_recording();
    const tapeflow::position p = tape.get_position();
    tapeflow::position inside;
    for (int piece = 0; piece < 2; ++piece) {
        tape.start_recording();
        Real J = a * a;
        inside = tape.get_position();  // past the start: dropped with the piece
        tape.register_output(J);
        tape.stop_recording();
        tape.set_adjoint(J, 1.0);
        tape.sweep(p);
        tape.reset(p);
    }
    CHECK_THROWS_WITH(tape.sweep(inside, tapeflow::position{}), Catch::Contains("no longer on the tape"));
    tape.sweep(p, tapeflow::position{});
    CHECK(tape.adjoint(a) == 2 * 2 * 0.5);
}

TEST_CASE("reset(position): variables a parallel region assigned after the position are constants") {
    const double x0 = 1.25;
    recording r(x0);
    tapeflow::tape& tape = r.tape;
    Real& x = r.x;
    std::vector<Real> keep(4);
    {
        std::vector<Real> u(4);
        for (int i = 0; i < 4; ++i) u[i] = x * double(i + 1);
        for (int i = 0; i < 4; ++i) keep[i] = u[i] * 1.0;  // u's identifiers are free after this
    }
    const tapeflow::position p = tape.get_position();
    std::vector<Real> v(4);
    tapeflow_test::loop(tape, 2, tapeflow::region_sweep::serial, 0, 4, [&](long i) { v[std::size_t(i)] = x * 5.0; });
    tape.reset(p);
    Real y = 0.0;
    for (int i = 0; i < 4; ++i) y += v[i] * keep[i];
    // y = sum 5 x0 (i + 1) x: dy/dx = 5 x0 (1 + 2 + 3 + 4)
    CHECK(gradient(tape, y, x) == Approx(50 * x0).epsilon(1e-14));
}

TEST_CASE("reset(position) and vector sweeps") {
    const double x0 = 2.0;
    recording r(x0);
    tapeflow::tape& tape = r.tape;
    Real& x = r.x;
    Real keep = three_times(x);
    const tapeflow::position p = tape.get_position();
    Real v = x * 5.0;
    SECTION("the fenced variables are constants in every lane") {
        tape.reset(p);
        Real y = v * keep;
        Real z = v * x;
        tape.register_output(y);
        tape.register_output(z);
        tape.stop_recording();
        tapeflow::lane_adjoints<double, 2> bar(tape);
        bar.set(y, 0, 1.0);
        bar.set(z, 1, 1.0);
        tape.sweep(bar);
        CHECK(bar.get(x, 0) == Approx(3 * 5 * x0).epsilon(1e-14));
        CHECK(bar.get(x, 1) == Approx(5 * x0).epsilon(1e-14));
    }
    SECTION("a vector sweep stopped above the start before the reset: passing the position throws") {
        Real y = v * keep;
        tape.register_output(y);
        tape.stop_recording();
        tapeflow::lane_adjoints<double, 2> bar(tape);
        bar.set(y, 0, 1.0);
        tape.sweep(bar, p);
        tape.reset(p);
        CHECK_THROWS_WITH(tape.sweep(bar), Catch::Contains("clear() them after reading them"));
        bar.clear();
        CHECK_THROWS_WITH(tape.sweep(bar), Catch::Contains("sweep the lanes to the start"));
        // scalar sweeps are not affected
        tape.set_adjoint(keep, 1.0);
        tape.sweep();
        CHECK(tape.adjoint(x) == 3.0);
    }
    SECTION("lanes swept to the start before the reset: vector sweeps pass it") {
        Real y = v * keep;
        tape.register_output(y);
        tape.stop_recording();
        tapeflow::lane_adjoints<double, 2> bar(tape);
        bar.set(y, 0, 1.0);
        tape.sweep(bar, p);
        tape.sweep(bar, p, tapeflow::position{});
        CHECK(bar.get(x, 0) == Approx(2 * 15 * x0).epsilon(1e-14));  // y = 15 x^2
        tape.reset(p);
        tape.start_recording();
        Real z = v * keep;  // v a constant now: 5 x0 (3 x)
        tape.register_output(z);
        tape.stop_recording();
        tapeflow::lane_adjoints<double, 2> again(tape);
        again.set(z, 1, 1.0);
        tape.sweep(again);
        CHECK(again.get(x, 1) == Approx(15 * x0).epsilon(1e-14));
    }
    SECTION("lane adjoints swept before the reset: refused until cleared, then right") {
        // An input u of the piece dies after the sweep with its row still
        // dy/du = keep = 3 x0; the next piece's w takes u's identifier, and
        // a sweep of the same lane adjoints would read that row as w's.
        tapeflow::lane_adjoints<double, 2> bar(tape);
        {
            Real u = 0.7;
            tape.register_input(u);
            Real y = u * keep;
            tape.register_output(y);
            tape.stop_recording();
            bar.set(y, 0, 1.0);
            tape.sweep(bar);
            CHECK(bar.get(x, 0) == Approx(0.7 * 3).epsilon(1e-14));
        }
        tape.reset(p);
        tape.start_recording();
        Real w = keep * 5.0;
        Real z = w * 1.0;
        tape.register_output(z);
        tape.stop_recording();
        CHECK_THROWS_WITH(tape.sweep(bar), Catch::Contains("clear() them after reading them"));
        bar.clear();
        bar.set(z, 0, 1.0);
        tape.sweep(bar);
        CHECK(bar.get(x, 0) == Approx(15.0).epsilon(1e-14));  // d(5 (3 x))/dx
    }
}

namespace {
// An external entry of a user's that does not list what it assigns.
class silent_entry final : public tapeflow::external_entry<double> {
public:
    void reverse(double*, std::vector<double>&) override {}
    std::size_t bytes() const noexcept override { return sizeof(*this); }
};
}  // namespace

TEST_CASE("reset(position) past an external entry that cannot tell what it assigns throws") {
    tapeflow::tape tape;
    tape.start_recording();
    Real x = 1.0;
    tape.register_input(x);
    Real y = x * 2.0;
    const tapeflow::position p = tape.get_position();
    tape.push_external(std::make_unique<silent_entry>());
    Real z = y * 3.0;
    tape.stop_recording();
    const tapeflow::position end = tape.get_position();
    CHECK_THROWS_WITH(tape.reset(p), Catch::Contains("external_entry::assigned_identifiers"));
    CHECK(tape.get_position() == end);  // nothing dropped
    CHECK(tape.statistics().externals == 1);
    CHECK_NOTHROW(tape.reset());
}
