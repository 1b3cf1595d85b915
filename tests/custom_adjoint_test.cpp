// Custom adjoints (custom_adjoint.hpp, tape/external.hpp): a block of work
// taped as ONE external entry whose reverse rule is written by hand.
//
// Every derivative is checked against a reference computed without the
// entry: a formula written from calculus, central finite differences of the
// same program on doubles, or the same function recorded as ordinary scalar
// statements. The streaming configurations (small tiles, scratchpad, spill
// file, prefetch thread) must reproduce the gradient of the default
// in-memory tape bit for bit.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include "stream/stream_support.hpp"
#include "support/finite_difference.hpp"
#include "support/options.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using tapeflow::Real;
using tapeflow_test::mismatches;
using tapeflow_test::zeros;

namespace {

constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();

/// |a - b| <= rel * max(|a|, |b|) + abs (the support helper, spelled out so
/// that it is never confused with POSIX close()).
bool near(double a, double b, double rel, double abs = 0.0) { return tapeflow_test::close(a, b, rel, abs); }

/// Counts the captured objects alive through `live`: +1 when made, -1 when
/// destroyed; a moved-from tracker no longer counts. A reverse rule that
/// captures one lets a test see when the tape frees the entry.
class tracker {
public:
    explicit tracker(int& live, std::size_t payload_doubles = 0) : live_(&live), payload_(payload_doubles, 0.25) {
        ++*live_;
    }
    tracker(tracker&& other) noexcept : live_(std::exchange(other.live_, nullptr)), payload_(std::move(other.payload_)) {}
    tracker(const tracker&) = delete;
    tracker& operator=(const tracker&) = delete;
    tracker& operator=(tracker&&) = delete;
    ~tracker() {
        if (live_ != nullptr) --*live_;
    }

private:
    int* live_;
    std::vector<double> payload_;
};

/// What the reverse rules of the exception tests throw.
struct rule_failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// ---- a vector function R^3 -> R^2 and its Jacobian, from calculus -------------
//   y0 = x0 x1 sin(x2)
//   y1 = exp(x0) + x2^2 / x1

void two_outputs_forward(const double* x, double* y) {
    y[0] = x[0] * x[1] * std::sin(x[2]);
    y[1] = std::exp(x[0]) + x[2] * x[2] / x[1];
}

void two_outputs_reverse(const double* x, const double* /*y*/, const double* yb, double* xb) {
    xb[0] += yb[0] * x[1] * std::sin(x[2]) + yb[1] * std::exp(x[0]);
    xb[1] += yb[0] * x[0] * std::sin(x[2]) - yb[1] * x[2] * x[2] / (x[1] * x[1]);
    xb[2] += yb[0] * x[0] * x[1] * std::cos(x[2]) + yb[1] * 2 * x[2] / x[1];
}

/// The same function as ordinary statements (the reference on the tape).
std::vector<Real> two_outputs_statements(const std::vector<Real>& x) {
    std::vector<Real> y;
    y.emplace_back(x[0] * x[1] * sin(x[2]));
    y.emplace_back(exp(x[0]) + x[2] * x[2] / x[1]);
    return y;
}

std::vector<Real> two_outputs_entry(const std::vector<Real>& x) {
    return tapeflow::external_function(x, 2, two_outputs_forward, two_outputs_reverse);
}

// ---- the program of the configuration tests ----------------------------------------
//
// A nonlinear diffusion on `cells` cells with zero boundary values:
//   f_i = kappa (b - a) (1 + a b),   a = u_{i-1}, b = u_i   (i = 0..cells)
//   u_i <- u_i + dt (f_{i+1} - f_i) + 0.01 sin(u_i)
//   J = sum_i w_i u_i^2 after `steps` steps; inputs u(0) and kappa.
// The entries version tapes every flux as one external entry (every third
// through external_function, the others through custom_adjoint), so entries
// and ordinary statements alternate all along the tape.

constexpr std::size_t cells = 12;
constexpr std::size_t steps = 60;
constexpr double dt = 0.05;
constexpr double kappa0 = 0.4;

double initial_u(std::size_t i) { return 0.2 + 0.6 * std::sin(3.141592653589793 * double(i + 1) / double(cells + 1)); }
double weight(std::size_t i) { return 1.0 + 0.05 * double(i); }

double flux(double a, double b, double k) { return k * (b - a) * (1 + a * b); }
/// d flux / d(a, b, k).
std::array<double, 3> flux_partials(double a, double b, double k) {
    return {k * ((b - a) * b - (1 + a * b)), k * ((b - a) * a + (1 + a * b)), (b - a) * (1 + a * b)};
}

/// One step, written once for double and for Real (ordinary statements).
template <class T>
std::vector<T> diffusion_step(const std::vector<T>& u, const T& kappa) {
    using std::sin;
    const T zero = 0.0;
    std::vector<T> f;
    f.reserve(cells + 1);
    for (std::size_t i = 0; i <= cells; ++i) {
        const T& a = i == 0 ? zero : u[i - 1];
        const T& b = i == cells ? zero : u[i];
        f.emplace_back(kappa * (b - a) * (1.0 + a * b));
    }
    std::vector<T> next;
    next.reserve(cells);
    for (std::size_t i = 0; i < cells; ++i) next.emplace_back(u[i] + dt * (f[i + 1] - f[i]) + 0.01 * sin(u[i]));
    return next;
}

template <class T>
T diffusion_objective_of(const std::vector<T>& u) {
    T J = 0.0;
    for (std::size_t i = 0; i < u.size(); ++i) J = J + weight(i) * u[i] * u[i];
    return J;
}

/// x = u(0) then kappa.
template <class T>
T diffusion_program(const std::vector<T>& x) {
    std::vector<T> u(x.begin(), x.end() - 1);
    const T kappa = x.back();
    for (std::size_t s = 0; s < steps; ++s) u = diffusion_step(u, kappa);
    return diffusion_objective_of(u);
}

std::vector<double> diffusion_inputs() {
    std::vector<double> x;
    for (std::size_t i = 0; i < cells; ++i) x.push_back(initial_u(i));
    x.push_back(kappa0);
    return x;
}

/// One recording of the diffusion with entries on `tape`, keeping every
/// state alive so that the tape can be reset to the start of any step and
/// recorded again. marks[s] is the position before step s; each step is a
/// region. Every entry's rule captures a tracker counted in `live`; the entry
/// number `throw_at` (in recording order, s * (cells + 1) + i) gets a rule
/// that throws rule_failure.
class diffusion_recording {
public:
    static constexpr std::size_t entries_per_step = cells + 1;
    static constexpr long never = -1;

    diffusion_recording(tapeflow::tape& t, int& live, long throw_at = never)
        : tape_(t), live_(live), throw_at_(throw_at) {
        tape_.start_recording();
        for (std::size_t i = 0; i < cells; ++i) inputs_.emplace_back(initial_u(i));
        for (auto& x : inputs_) tape_.register_input(x);
        kappa_ = kappa0;
        tape_.register_input(kappa_);
        states_.push_back(inputs_);  // copies: one statement per cell
        marks_.resize(steps + 1);
        record_from(0);
    }

    /// Records steps s.. and the objective (the tape is recording).
    void record_from(std::size_t s) {
        states_.resize(s + 1);
        for (; s < steps; ++s) {
            marks_[s] = tape_.get_position();
            tapeflow::Region region(tape_, "step");
            states_.push_back(step(s, states_[s]));
        }
        marks_[steps] = tape_.get_position();
        objective_ = diffusion_objective_of(states_.back());
        tape_.register_output(objective_);
        tape_.stop_recording();
    }

    /// reset(marks[s]), then records steps s.. again.
    void rerecord_from(std::size_t s) {
        tape_.reset(marks_[s]);
        tape_.start_recording();
        record_from(s);
    }

    /// d J / d(u(0), kappa) from a full sweep.
    std::vector<double> gradient() {
        tape_.clear_adjoints();
        tape_.set_adjoint(objective_, 1.0);
        tape_.sweep();
        return input_adjoints();
    }
    /// The same, swept in two pieces at marks[s].
    std::vector<double> gradient_in_pieces(std::size_t s) {
        tape_.clear_adjoints();
        tape_.set_adjoint(objective_, 1.0);
        tape_.sweep(marks_[s]);
        tape_.sweep(marks_[s], tapeflow::position{});
        return input_adjoints();
    }
    std::vector<double> input_adjoints() const {
        std::vector<double> g;
        for (const auto& x : inputs_) g.push_back(tape_.adjoint(x));
        g.push_back(tape_.adjoint(kappa_));
        return g;
    }

    const std::vector<tapeflow::position>& marks() const noexcept { return marks_; }
    double objective() const noexcept { return objective_.value(); }

private:
    std::vector<Real> step(std::size_t s, const std::vector<Real>& u) {
        const Real zero = 0.0;
        std::vector<Real> f(cells + 1);
        for (std::size_t i = 0; i <= cells; ++i) {
            const Real& a = i == 0 ? zero : u[i - 1];
            const Real& b = i == cells ? zero : u[i];
            const bool thrower = long(s * entries_per_step + i) == throw_at_;
            if (i % 3 == 0) {
                std::vector<Real> x{a, b, kappa_};  // copies (statements) of the active ones
                std::vector<Real> y = tapeflow::external_function(
                    x, 1, [](const double* v, double* out) { out[0] = flux(v[0], v[1], v[2]); },
                    [thrower, tr = tracker(live_)](const double* v, const double*, const double* yb, double* xb) {
                        if (thrower) throw rule_failure("the flux rule failed");
                        const auto d = flux_partials(v[0], v[1], v[2]);
                        for (int j = 0; j < 3; ++j) xb[j] += yb[0] * d[j];
                    });
                f[i] = std::move(y[0]);
            } else {
                const double av = a.value(), bv = b.value(), kv = kappa_.value();
                tapeflow::custom_adjoint op(tape_);
                op.add_input(a);  // passive at i = 0
                op.add_input(b);  // passive at i = cells
                op.add_input(kappa_);
                op.add_output(f[i], flux(av, bv, kv));
                op.record(
                    [av, bv, kv, thrower, tr = tracker(live_)](const double* yb, double* xb) {
                        if (thrower) throw rule_failure("the flux rule failed");
                        const auto d = flux_partials(av, bv, kv);
                        for (int j = 0; j < 3; ++j) xb[j] += yb[0] * d[j];
                    },
                    3 * sizeof(double));
            }
        }
        std::vector<Real> next;
        next.reserve(cells);
        for (std::size_t i = 0; i < cells; ++i) next.emplace_back(u[i] + dt * (f[i + 1] - f[i]) + 0.01 * sin(u[i]));
        return next;
    }

    tapeflow::tape& tape_;
    int& live_;
    long throw_at_;
    std::vector<Real> inputs_;
    Real kappa_;
    std::vector<std::vector<Real>> states_;
    std::vector<tapeflow::position> marks_;
    Real objective_;
};

/// The reference: the entries program on the default tape (tiles in memory,
/// default tile size, no scratchpad, no thread).
const std::vector<double>& diffusion_reference() {
    static const std::vector<double> g = [] {
        int live = 0;
        tapeflow::tape t;
        diffusion_recording r(t, live);
        return r.gradient();
    }();
    return g;
}

struct configuration {
    const char* name;
    std::size_t tile_bytes;
    bool scratchpad;
    std::size_t budget_tiles;  // 0: unlimited
    bool prefetch;
};

tapeflow::tape_options options_of(const configuration& c, const std::string& directory) {
    auto o = tapeflow_test::tape_options(c.tile_bytes, c.scratchpad,
                                         c.budget_tiles == 0 ? unlimited : c.budget_tiles * c.tile_bytes,
                                         c.prefetch);
    o.spill_directory = directory;
    return o;
}

}  // namespace

// =====================================================================================
// Derivatives
// =====================================================================================

TEST_CASE("external_function: gradient against the formula, finite differences and scalar statements") {
    const std::vector<double> x0{0.7, 1.3, -0.4};
    auto with_entry = [](const std::vector<Real>& x) {
        std::vector<Real> y = two_outputs_entry(x);
        return Real(y[0] * y[1] + sin(y[0]));
    };
    auto with_statements = [](const std::vector<Real>& x) {
        std::vector<Real> y = two_outputs_statements(x);
        return Real(y[0] * y[1] + sin(y[0]));
    };
    auto plain = [](const std::vector<double>& x) {
        double y[2];
        two_outputs_forward(x.data(), y);
        return y[0] * y[1] + std::sin(y[0]);
    };

    const auto [value, g] = tapeflow::value_and_gradient(with_entry, x0);
    const auto s = tapeflow::tape::active().statistics();
    CHECK(s.externals == 1);
    CHECK(s.statements == 2);  // the entry and J
    CHECK(value == Approx(plain(x0)).epsilon(1e-15));

    // J = y0 y1 + sin y0: dJ/dx = (y1 + cos y0) dy0/dx + y0 dy1/dx
    const double a = x0[0], b = x0[1], c = x0[2];
    const double y0 = a * b * std::sin(c), y1 = std::exp(a) + c * c / b;
    const double j0 = y1 + std::cos(y0), j1 = y0;
    const std::vector<double> formula{j0 * b * std::sin(c) + j1 * std::exp(a),
                                      j0 * a * std::sin(c) - j1 * c * c / (b * b),
                                      j0 * a * b * std::cos(c) + j1 * 2 * c / b};
    const auto fd = tapeflow_test::central_gradient(plain, x0);
    const auto statements = tapeflow::gradient(with_statements, x0);
    REQUIRE(g.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        INFO("component " << i << ": entry " << g[i] << ", formula " << formula[i] << ", finite difference "
                          << fd[i] << ", statements " << statements[i]);
        CHECK(near(g[i], formula[i], 1e-14));
        CHECK(near(g[i], fd[i], 1e-7, 1e-9));
        CHECK(near(g[i], statements[i], 1e-14));
    }
}

TEST_CASE("custom_adjoint: slots follow the order of the add_ calls, the input adjoints start at 0") {
    // p = a b + c^2 and q = b / c, declared in a scattered order:
    // inputs c, a, b (slots 0, 1, 2), outputs q, p (slots 0, 1).
    tapeflow::tape t;
    t.start_recording();
    Real a = 1.5, b = -0.8, c = 2.5;
    t.register_input(a);
    t.register_input(b);
    t.register_input(c);
    const double av = a.value(), bv = b.value(), cv = c.value();

    Real p, q;
    std::vector<double> seen_out_bar;
    bool in_bar_was_zero = true;
    int calls = 0;
    tapeflow::custom_adjoint op;
    CHECK(op.add_input(c) == 0);
    CHECK(op.add_input(a) == 1);
    CHECK(op.add_input(b) == 2);
    CHECK(op.add_output(q, bv / cv) == 0);
    CHECK(op.add_output(p, av * bv + cv * cv) == 1);
    CHECK(op.inputs() == 3);
    CHECK(op.outputs() == 2);
    op.record([&, av, bv, cv](const double* yb, double* xb) {
        ++calls;
        seen_out_bar.assign(yb, yb + 2);
        for (int j = 0; j < 3; ++j) in_bar_was_zero &= xb[j] == 0.0;
        xb[0] += yb[0] * (-bv / (cv * cv)) + yb[1] * 2 * cv;  // c
        xb[1] += yb[1] * bv;                                   // a
        xb[2] += yb[0] / cv + yb[1] * av;                      // b
    });
    CHECK(p.is_active());
    CHECK(q.is_active());
    CHECK(p.value() == av * bv + cv * cv);
    CHECK(q.value() == bv / cv);
    t.register_output(p);
    t.register_output(q);
    t.stop_recording();

    SECTION("seeding p alone") {
        t.set_adjoint(p, 1.0);
        t.sweep();
        CHECK(calls == 1);
        CHECK(seen_out_bar == std::vector<double>{0.0, 1.0});
        CHECK(t.adjoint(a) == Approx(bv).epsilon(1e-15));
        CHECK(t.adjoint(b) == Approx(av).epsilon(1e-15));
        CHECK(t.adjoint(c) == Approx(2 * cv).epsilon(1e-15));
    }
    SECTION("seeding q alone") {
        t.set_adjoint(q, 1.0);
        t.sweep();
        CHECK(seen_out_bar == std::vector<double>{1.0, 0.0});
        CHECK(t.adjoint(a) == 0.0);
        CHECK(t.adjoint(b) == Approx(1 / cv).epsilon(1e-15));
        CHECK(t.adjoint(c) == Approx(-bv / (cv * cv)).epsilon(1e-15));
    }
    SECTION("seeding both: adjoints are linear in the seeds") {
        t.set_adjoint(p, 2.0);
        t.set_adjoint(q, -3.0);
        t.sweep();
        CHECK(seen_out_bar == std::vector<double>{-3.0, 2.0});
        CHECK(t.adjoint(a) == Approx(2 * bv).epsilon(1e-15));
        CHECK(t.adjoint(b) == Approx(2 * av - 3 / cv).epsilon(1e-15));
        CHECK(t.adjoint(c) == Approx(4 * cv + 3 * bv / (cv * cv)).epsilon(1e-15));
    }
    CHECK(in_bar_was_zero);
    // The rule zeroes the output adjoints (as a record does with its lhs).
    CHECK(t.adjoint(p) == 0.0);
    CHECK(t.adjoint(q) == 0.0);
}

TEST_CASE("add_inputs: the same slots and gradient as add_input on each, and a foreign input adds none") {
    // p = sum_k w_k x_k^2 over inputs declared in two blocks plus one single
    // input; the rule is written against the slots add_inputs returned.
    tapeflow::tape t;
    t.start_recording();
    std::vector<Real> x = {0.5, -1.5, 2.25, 0.75, -0.25};
    for (Real& xi : x) t.register_input(xi);
    const std::vector<double> w = {1.0, 2.0, -3.0, 0.5, 4.0};
    Real passive = 9.0;
    std::vector<double> xv;
    for (const Real& xi : x) xv.push_back(xi.value());

    tapeflow::custom_adjoint op;
    CHECK(op.add_inputs(2, [&](std::size_t k) -> const Real& { return x[k]; }) == 0);
    CHECK(op.add_input(x[2]) == 2);
    // the last block holds x3, a passive variable and x4: slots 3, 4, 5
    const Real* block[3] = {&x[3], &passive, &x[4]};
    CHECK(op.add_inputs(3, [&](std::size_t k) -> const Real& { return *block[k]; }) == 3);
    CHECK(op.add_inputs(0, [&](std::size_t) -> const Real& { return passive; }) == 6);
    CHECK(op.inputs() == 6);
    double p_value = 0;
    for (std::size_t k = 0; k < x.size(); ++k) p_value += w[k] * xv[k] * xv[k];
    Real p;
    op.add_output(p, p_value);
    op.record([&](const double* yb, double* xb) {
        const std::size_t slot[5] = {0, 1, 2, 3, 5};
        for (std::size_t k = 0; k < 5; ++k) xb[slot[k]] += yb[0] * 2 * w[k] * xv[k];
        xb[4] += 1000.0;  // the passive variable's slot: discarded
    });
    t.register_output(p);
    t.stop_recording();
    t.set_adjoint(p, 1.0);
    t.sweep();
    for (std::size_t k = 0; k < x.size(); ++k) CHECK(t.adjoint(x[k]) == 2 * w[k] * xv[k]);
    CHECK(t.adjoint(passive) == 0.0);

    // a block with a variable of another tape: usage_error, and the block is not added
    tapeflow::tape other;
    other.start_recording();
    Real y = 2.0;
    other.register_input(y);
    other.stop_recording();
    t.reset();
    t.start_recording();
    Real a = 1.0;
    t.register_input(a);
    tapeflow::custom_adjoint op2(t);
    op2.add_input(a);
    const Real* mixed[2] = {&a, &y};
    CHECK_THROWS_WITH(op2.add_inputs(2, [&](std::size_t k) -> const Real& { return *mixed[k]; }),
                      Catch::Contains("another tape"));
    CHECK(op2.inputs() == 1);
    t.stop_recording();
}

TEST_CASE("add_outputs: the same slots, values and gradient as add_output on each") {
    // y_k = (k + 1) x^2 for k = 0..3, declared as one add_output and a block
    // of three; the rule reads the slots add_outputs returned.
    tapeflow::tape t;
    t.start_recording();
    Real x = 1.25;
    t.register_input(x);
    const double xv = x.value();
    std::vector<Real> y(4);
    tapeflow::custom_adjoint op;
    op.add_input(x);
    CHECK(op.add_output(y[0], xv * xv) == 0);
    CHECK(op.add_outputs(
              3, [&](std::size_t k) -> Real& { return y[k + 1]; },
              [&](std::size_t k) { return double(k + 2) * xv * xv; }) == 1);
    CHECK(op.add_outputs(0, [&](std::size_t) -> Real& { return y[0]; }, [](std::size_t) { return 0.0; }) == 4);
    CHECK(op.outputs() == 4);
    op.record([xv](const double* yb, double* xb) {
        for (int k = 0; k < 4; ++k) xb[0] += yb[k] * double(k + 1) * 2 * xv;
    });
    for (std::size_t k = 0; k < 4; ++k) {
        CHECK(y[k].is_active());
        CHECK(y[k].value() == double(k + 1) * xv * xv);
    }
    Real f = y[0] + 10.0 * y[2] + 100.0 * y[3];  // df/dx = (1 + 30 + 400) 2 x
    t.register_output(f);
    t.stop_recording();
    t.set_adjoint(f, 1.0);
    t.sweep();
    CHECK(t.adjoint(x) == Approx(431.0 * 2 * xv).epsilon(1e-15));
}

TEST_CASE("many outputs: new variables take their identifiers at once, one of this tape keeps its own") {
    // y_k = (k + 1) x for k < n, then f = sum_k w_k y_k with w_k = 1 / (k + 1)
    // + k: df/dx = sum_k (1 + k (k + 1)). With `keep`, output 7 is a variable
    // this tape already gave an identifier to (so not every output is new).
    const bool keep = GENERATE(false, true);
    INFO((keep ? "one output active already" : "every output new"));
    const std::size_t n = 600;
    tapeflow::tape t;
    t.start_recording();
    Real x = 0.75;
    t.register_input(x);
    std::vector<Real> y(n);
    if (keep) y[7] = x * 2.0;
    const tapeflow::identifier y7 = y[7].id();
    tapeflow::custom_adjoint op;
    op.add_input(x);
    op.add_outputs(
        n, [&](std::size_t k) -> Real& { return y[k]; }, [&](std::size_t k) { return double(k + 1) * x.value(); });
    op.assume_distinct_outputs();
    op.record([n](const double* yb, double* xb) {
        for (std::size_t k = 0; k < n; ++k) xb[0] += yb[k] * double(k + 1);
    });
    std::set<tapeflow::identifier> ids;
    for (std::size_t k = 0; k < n; ++k) {
        CHECK(y[k].value() == double(k + 1) * 0.75);
        ids.insert(y[k].id());
    }
    CHECK(ids.size() == n);
    CHECK(ids.count(0) == 0);
    CHECK(ids.count(x.id()) == 0);
    if (keep) CHECK(y[7].id() == y7);
    Real f = 0.0;
    for (std::size_t k = 0; k < n; ++k) f += (1.0 / double(k + 1) + double(k)) * y[k];
    t.register_output(f);
    t.stop_recording();
    t.set_adjoint(f, 1.0);
    t.sweep();
    double expected = 0;
    for (std::size_t k = 0; k < n; ++k) expected += 1.0 + double(k) * double(k + 1);
    CHECK(t.adjoint(x) == Approx(expected).epsilon(1e-13));
}

TEST_CASE("add_inputs / add_outputs: an accessor that throws leaves nothing declared") {
    tapeflow::tape t;
    t.start_recording();
    std::vector<Real> x = {1.0, 2.0, 3.0};
    for (Real& xi : x) t.register_input(xi);
    std::vector<Real> y(3);
    tapeflow::custom_adjoint op;
    op.add_input(x[0]);
    op.add_output(y[0], 5.0);
    auto throws_at_2 = [&](std::size_t k) -> Real& {
        if (k == 2) throw std::runtime_error("accessor");
        return x[k];
    };
    CHECK_THROWS_WITH(op.add_inputs(3, throws_at_2), "accessor");
    CHECK(op.inputs() == 1);
    CHECK_THROWS_WITH(op.add_outputs(3, throws_at_2, [](std::size_t) { return 0.0; }), "accessor");
    CHECK_THROWS_WITH(op.add_outputs(
                          3, [&](std::size_t k) -> Real& { return y[k]; },
                          [](std::size_t k) { return k == 1 ? throw std::runtime_error("value") : 1.0; }),
                      "value");
    CHECK(op.outputs() == 1);
    // the entry is still the one declared before: y0 = 5 x0, with its rule
    op.record([](const double* yb, double* xb) { xb[0] += 5.0 * yb[0]; });
    CHECK(y[0].value() == 5.0);
    CHECK_FALSE(y[1].is_active());
    t.register_output(y[0]);
    t.stop_recording();
    t.set_adjoint(y[0], 1.0);
    t.sweep();
    CHECK(t.adjoint(x[0]) == 5.0);
    CHECK(t.adjoint(x[1]) == 0.0);
}

TEST_CASE("passive inputs are discarded, a repeated input gets the sum of its slots") {
    // w = x^3 (entry 0); y = w k w + 3 w with slots (w, k, w, 3.0), k and 3.0
    // passive (entry 1); z = y^2 + w. The rule of entry 1 writes huge numbers
    // into the passive slots: they must go nowhere (in particular not to the
    // passive identifier 0, whose adjoint the sweep relies on being 0 to find
    // entry 0).
    const double xv = 0.9, kv = 1.7;
    auto program = [](double x, double k) {
        const double w = x * x * x, y = w * k * w + 3 * w;
        return y * y + w;
    };
    tapeflow::tape t;
    t.start_recording();
    Real x = xv;
    t.register_input(x);

    Real w;
    {
        tapeflow::custom_adjoint e0;
        e0.add_input(x);
        e0.add_output(w, xv * xv * xv);
        e0.record([xv](const double* yb, double* xb) { xb[0] += yb[0] * 3 * xv * xv; });
    }
    const Real k = kv;  // passive
    const double wv = w.value();
    Real y;
    {
        tapeflow::custom_adjoint e1;
        e1.add_input(w);
        e1.add_input(k);
        e1.add_input(w);
        e1.add_input(Real(3.0));  // a passive temporary
        e1.add_output(y, wv * kv * wv + 3 * wv);
        e1.record([wv, kv](const double* yb, double* xb) {
            xb[0] += yb[0] * kv * wv;        // d/d(first w)
            xb[1] += 1e300;                  // k: passive
            xb[2] += yb[0] * (kv * wv + 3);  // d/d(second w)
            xb[3] += 2e300;                  // 3.0: passive
        });
    }
    Real z = y * y + w;
    t.register_output(z);
    t.stop_recording();
    CHECK_FALSE(k.is_active());

    t.set_adjoint(z, 1.0);
    t.sweep();
    const double yv = y.value();
    const double expected = (2 * yv * (2 * kv * wv + 3) + 1) * 3 * xv * xv;
    const double fd = tapeflow_test::central_difference([&](double v) { return program(v, kv); }, xv);
    CHECK(t.adjoint(x) == Approx(expected).epsilon(1e-14));
    CHECK(near(t.adjoint(x), fd, 1e-7));
    CHECK(t.adjoint(k) == 0.0);
    CHECK(t.adjoint(tapeflow::identifier(0)) == 0.0);

    // The same with the entry as the first record of a tape: nothing after it
    // in the sweep could hide a contribution to identifier 0.
    tapeflow::tape first;
    first.start_recording();
    Real u = xv;
    first.register_input(u);
    Real v;
    tapeflow::custom_adjoint op(first);
    op.add_input(Real(kv));
    op.add_input(u);
    op.add_output(v, kv * xv);
    op.record([kv](const double* yb, double* xb) {
        xb[0] += 1e300;  // passive
        xb[1] += yb[0] * kv;
    });
    Real r = v * v;
    first.register_output(r);
    first.stop_recording();
    first.set_adjoint(r, 1.0);
    first.sweep();
    CHECK(first.adjoint(u) == Approx(2 * kv * xv * kv).epsilon(1e-15));
    CHECK(first.adjoint(tapeflow::identifier(0)) == 0.0);
}

TEST_CASE("in place: y = f(y), an output that is also an input") {
    SECTION("one variable updated in place, read through the identifier it had") {
        // y1 = y0^3 + a y0 in place, then J = y1 sin(y1).
        const double y0 = 0.6, av = 1.7;
        tapeflow::tape t;
        t.start_recording();
        Real y = y0, a = av;
        t.register_input(y);
        t.register_input(a);
        const tapeflow::identifier y_in = y.id();
        tapeflow::custom_adjoint op;
        op.add_input(y);
        op.add_input(a);
        op.add_output(y, y0 * y0 * y0 + av * y0);
        op.record([y0, av](const double* yb, double* xb) {
            xb[0] += yb[0] * (3 * y0 * y0 + av);
            xb[1] += yb[0] * y0;
        });
        CHECK(y.value() == y0 * y0 * y0 + av * y0);
        Real J = y * sin(y);
        t.register_output(J);
        t.stop_recording();
        t.set_adjoint(J, 1.0);
        t.sweep();
        const double y1 = y0 * y0 * y0 + av * y0;
        const double dJ_dy1 = std::sin(y1) + y1 * std::cos(y1);
        CHECK(t.adjoint(y_in) == Approx(dJ_dy1 * (3 * y0 * y0 + av)).epsilon(1e-14));
        CHECK(t.adjoint(a) == Approx(dJ_dy1 * y0).epsilon(1e-14));
    }
    SECTION("two variables that swap roles: (a, b) <- (a b, a - b), three times") {
        // Each output is also an input, in the other slot order: the rule must
        // see the output adjoints before any input adjoint is added.
        auto with_entries = [](const std::vector<Real>& x) {
            Real a = x[0], b = x[1];
            for (int n = 0; n < 3; ++n) {
                const double av = a.value(), bv = b.value();
                tapeflow::custom_adjoint op;
                op.add_input(a);
                op.add_input(b);
                op.add_output(b, av - bv);  // output slot 0 is input slot 1
                op.add_output(a, av * bv);  // output slot 1 is input slot 0
                op.record([av, bv](const double* yb, double* xb) {
                    xb[0] += yb[1] * bv + yb[0];  // a
                    xb[1] += yb[1] * av - yb[0];  // b
                });
            }
            return Real(a + 2.0 * b * b);
        };
        auto with_statements = [](const std::vector<Real>& x) {
            Real a = x[0], b = x[1];
            for (int n = 0; n < 3; ++n) {
                Real na = a * b;
                b = a - b;
                a = na;
            }
            return Real(a + 2.0 * b * b);
        };
        auto plain = [](const std::vector<double>& x) {
            double a = x[0], b = x[1];
            for (int n = 0; n < 3; ++n) {
                const double na = a * b;
                b = a - b;
                a = na;
            }
            return a + 2.0 * b * b;
        };
        const std::vector<double> x0{1.1, 0.45};
        const auto g = tapeflow::gradient(with_entries, x0);
        CHECK(tapeflow::tape::active().statistics().externals == 3);
        const auto ref = tapeflow::gradient(with_statements, x0);
        const auto fd = tapeflow_test::central_gradient(plain, x0);
        CHECK(zeros(g) == 0);
        for (std::size_t i = 0; i < 2; ++i) {
            INFO("component " << i << ": entries " << g[i] << ", statements " << ref[i] << ", fd " << fd[i]);
            CHECK(near(g[i], ref[i], 1e-14));
            CHECK(near(g[i], fd[i], 1e-7, 1e-9));
        }
    }
}

TEST_CASE("outputs that are never used: the rule sees 0 for them, their identifiers are reused") {
    // (o0, o1, o2) = (x^2, sin x, exp x); only o1 is used:
    // t1 = o1 x, J = t1^2 + o1, so dJ/do1 = 2 t1 x + 1 and
    // dJ/dx = (2 t1 x + 1) cos x + 2 t1 o1.
    const double xv = 0.8;
    tapeflow::tape t;
    t.start_recording();
    Real x = xv;
    t.register_input(x);
    std::vector<double> seen;
    Real kept;
    {
        Real o0, o1, o2;
        tapeflow::custom_adjoint op;
        op.add_input(x);
        op.add_output(o0, xv * xv);
        op.add_output(o1, std::sin(xv));
        op.add_output(o2, std::exp(xv));
        op.record([&seen, xv](const double* yb, double* xb) {
            seen.assign(yb, yb + 3);
            xb[0] += yb[0] * 2 * xv + yb[1] * std::cos(xv) + yb[2] * std::exp(xv);
        });
        kept = std::move(o1);
    }  // o0 and o2 die here: their identifiers go back to the pool
    const auto before = t.statistics();
    Real t1 = kept * x;  // these reuse the identifiers of o0 and o2
    Real J = t1 * t1 + kept;
    t.register_output(J);
    t.stop_recording();
    CHECK(t.statistics().peak_identifiers == before.peak_identifiers);

    t.set_adjoint(J, 1.0);
    t.sweep();
    const double o1 = std::sin(xv), t1v = o1 * xv;
    REQUIRE(seen.size() == 3);
    CHECK(seen[0] == 0.0);
    CHECK(seen[1] == Approx(2 * t1v * xv + 1).epsilon(1e-15));
    CHECK(seen[2] == 0.0);
    const double expected = (2 * t1v * xv + 1) * std::cos(xv) + 2 * t1v * o1;
    const double fd = tapeflow_test::central_difference(
        [](double v) {
            const double a = std::sin(v), b = a * v;
            return b * b + a;
        },
        xv);
    CHECK(t.adjoint(x) == Approx(expected).epsilon(1e-14));
    CHECK(near(t.adjoint(x), fd, 1e-7));
}

TEST_CASE("chains: entries feed ordinary statements and other entries, inside jacobian() and gradient()") {
    // y = F(x) (entry); s = y0 x2 + y1; r = s exp(y1) - x0^2 (custom_adjoint);
    // (v0, v1) = (r s, r + s) (entry); outputs (v0, v1 + y0, r).
    auto with_entries = [](const std::vector<Real>& x) {
        std::vector<Real> y = two_outputs_entry(x);
        Real s = y[0] * x[2] + y[1];
        Real r;
        {
            const double sv = s.value(), y1 = y[1].value(), x0 = x[0].value();
            tapeflow::custom_adjoint op;
            op.add_input(s);
            op.add_input(y[1]);
            op.add_input(x[0]);
            op.add_output(r, sv * std::exp(y1) - x0 * x0);
            op.record([sv, y1, x0](const double* yb, double* xb) {
                xb[0] += yb[0] * std::exp(y1);
                xb[1] += yb[0] * sv * std::exp(y1);
                xb[2] -= yb[0] * 2 * x0;
            });
        }
        std::vector<Real> v = tapeflow::external_function(
            std::vector<Real>{r, s}, 2,
            [](const double* in, double* out) {
                out[0] = in[0] * in[1];
                out[1] = in[0] + in[1];
            },
            [](const double* in, const double*, const double* yb, double* xb) {
                xb[0] += yb[0] * in[1] + yb[1];
                xb[1] += yb[0] * in[0] + yb[1];
            });
        std::vector<Real> out;
        out.push_back(std::move(v[0]));
        out.emplace_back(v[1] + y[0]);
        out.push_back(std::move(r));
        return out;
    };
    auto with_statements = [](const std::vector<Real>& x) {
        std::vector<Real> y = two_outputs_statements(x);
        Real s = y[0] * x[2] + y[1];
        Real r = s * exp(y[1]) - x[0] * x[0];
        std::vector<Real> out;
        out.emplace_back(r * s);
        out.emplace_back(r + s + y[0]);
        out.push_back(std::move(r));
        return out;
    };
    auto plain = [](const std::vector<double>& x) {
        double y[2];
        two_outputs_forward(x.data(), y);
        const double s = y[0] * x[2] + y[1];
        const double r = s * std::exp(y[1]) - x[0] * x[0];
        return std::vector<double>{r * s, r + s + y[0], r};
    };
    const std::vector<double> x0{0.3, 1.2, 0.9};

    const auto J = tapeflow::jacobian(with_entries, x0);
    CHECK(tapeflow::tape::active().statistics().externals == 3);
    const auto ref = tapeflow::jacobian(with_statements, x0);
    REQUIRE(J.size() == 3);
    for (std::size_t row = 0; row < 3; ++row) {
        const auto fd = tapeflow_test::central_gradient(
            [&](const std::vector<double>& v) { return plain(v)[row]; }, x0);
        CHECK(zeros(J[row]) == 0);
        for (std::size_t col = 0; col < 3; ++col) {
            INFO("d out" << row << " / d x" << col << ": entries " << J[row][col] << ", statements "
                         << ref[row][col] << ", fd " << fd[col]);
            CHECK(near(J[row][col], ref[row][col], 1e-13));
            CHECK(near(J[row][col], fd[col], 1e-6, 1e-8));
        }
    }

    // gradient() of the sum of the outputs: the sum of the rows.
    auto sum = [&](const std::vector<Real>& x) {
        std::vector<Real> out = with_entries(x);
        return Real(out[0] + out[1] + out[2]);
    };
    const auto g = tapeflow::gradient(sum, x0);
    for (std::size_t col = 0; col < 3; ++col)
        CHECK(near(g[col], ref[0][col] + ref[1][col] + ref[2][col], 1e-13));
}

// =====================================================================================
// When the rule runs, and when nothing is taped
// =====================================================================================

TEST_CASE("the reverse rule is not called when every output adjoint is 0") {
    tapeflow::tape t;
    t.start_recording();
    Real x = 0.4, z = 1.9;
    t.register_input(x);
    t.register_input(z);
    int calls = 0;
    Real y;
    tapeflow::custom_adjoint op;
    op.add_input(x);
    op.add_output(y, 2 * x.value());
    op.record([&calls](const double* yb, double* xb) {
        ++calls;
        xb[0] += 2 * yb[0];
    });
    Real unrelated = z * z;  // does not depend on y
    Real times_zero = y * 0.0 + z;  // depends on y with a partial of 0
    Real used = y * z;
    t.register_output(unrelated);
    t.register_output(times_zero);
    t.register_output(used);
    t.stop_recording();

    t.set_adjoint(unrelated, 1.0);
    t.sweep();
    CHECK(calls == 0);
    CHECK(t.adjoint(z) == Approx(2 * 1.9).epsilon(1e-15));
    CHECK(t.adjoint(x) == 0.0);

    t.clear_adjoints();
    t.set_adjoint(times_zero, 1.0);
    t.sweep();
    CHECK(calls == 0);
    CHECK(t.adjoint(z) == 1.0);

    for (int n = 1; n <= 2; ++n) {  // each sweep that reaches it calls it once
        t.clear_adjoints();
        t.set_adjoint(used, 1.0);
        t.sweep();
        CHECK(calls == n);
        CHECK(t.adjoint(x) == Approx(2 * 1.9).epsilon(1e-15));
        CHECK(t.adjoint(z) == Approx(0.8).epsilon(1e-15));
    }
}

TEST_CASE("not recording, or no active input: outputs become passive and nothing is taped") {
    int live = 0;  // before the tape: its entries count down when it is destroyed
    tapeflow::tape t;
    t.start_recording();
    Real x = 1.25;
    t.register_input(x);
    Real y = x * 3.0;  // active
    SECTION("the tape is not recording") {
        t.stop_recording();
        const auto before = t.statistics();
        tapeflow::custom_adjoint op;
        op.add_input(x);  // active, but nothing records
        op.add_output(y, 42.0);
        op.record([tr = tracker(live)](const double*, double*) { FAIL("rule of an entry never taped"); });
        CHECK(live == 0);  // the rule was dropped at once
        CHECK(y.value() == 42.0);
        CHECK_FALSE(y.is_active());
        const auto after = t.statistics();
        CHECK(after.statements == before.statements);
        CHECK(after.externals == 0);
        CHECK(after.record_bytes == before.record_bytes);
        CHECK(after.live_identifiers == before.live_identifiers - 1);  // y gave its identifier back

        // external_function too, with an active input (moving keeps its identifier)
        std::vector<Real> in;
        in.push_back(std::move(x));
        REQUIRE(in[0].is_active());
        std::vector<Real> v = tapeflow::external_function(in, 2,
                                                          [](const double* in, double* out) {
                                                              out[0] = in[0] + 1;
                                                              out[1] = in[0] * in[0];
                                                          },
                                                          [](const double*, const double*, const double*, double*) {});
        CHECK(v[0].value() == 2.25);
        CHECK(v[1].value() == 1.5625);
        CHECK_FALSE(v[0].is_active());
        CHECK_FALSE(v[1].is_active());
        CHECK(t.statistics().statements == before.statements);
    }
    SECTION("recording, but every input is passive") {
        const auto before = t.statistics();
        const Real c = 2.0;
        tapeflow::custom_adjoint op;
        op.add_input(c);
        op.add_input(Real(5.0));
        op.add_output(y, 7.0);
        op.record([tr = tracker(live)](const double*, double*) { FAIL("rule of an entry never taped"); });
        CHECK(live == 0);
        CHECK(y.value() == 7.0);
        CHECK_FALSE(y.is_active());
        CHECK(t.statistics().statements == before.statements);
        CHECK(t.statistics().externals == 0);

        std::vector<Real> v = tapeflow::external_function(
            std::vector<Real>{c, Real(1.0)}, 1, [](const double* in, double* out) { out[0] = in[0] - in[1]; },
            [](const double*, const double*, const double*, double*) {});
        CHECK(v[0].value() == 1.0);
        CHECK_FALSE(v[0].is_active());
        CHECK(t.statistics().statements == before.statements);
        t.stop_recording();
    }
}

TEST_CASE("run_in_every_sweep: taped without active inputs, called with output adjoints of 0, every lane") {
    // what tapeflow/mpi.hpp needs: a rule that communicates runs in every sweep
    tapeflow::tape t;
    t.start_recording();
    Real x = 0.4, z = 1.9;
    t.register_input(x);
    t.register_input(z);
    int calls = 0;
    std::vector<std::size_t> lane_counts;
    Real y;
    {
        tapeflow::custom_adjoint op;
        op.add_input(x);
        op.add_output(y, 2 * x.value());
        op.run_in_every_sweep();
        op.record([&calls](const double* yb, double* xb) {
            ++calls;
            xb[0] += 2 * yb[0];
        });
    }
    Real w;  // an entry whose inputs are all passive: taped anyway, w active
    {
        tapeflow::custom_adjoint op;
        op.add_input(Real(3.0));
        op.add_output(w, 5.0);
        op.run_in_every_sweep();
        op.record([&lane_counts](const double*, double*, std::size_t lanes) { lane_counts.push_back(lanes); });
    }
    CHECK(w.is_active());
    CHECK(t.statistics().externals == 2);
    Real unrelated = z * z;
    Real used = y * z + w;
    t.register_output(unrelated);
    t.register_output(used);
    t.stop_recording();

    t.set_adjoint(unrelated, 1.0);  // y's adjoint stays 0: the rule runs all the same
    t.sweep();
    CHECK(calls == 1);
    CHECK(lane_counts == std::vector<std::size_t>{1});
    CHECK(t.adjoint(x) == 0.0);
    CHECK(t.adjoint(z) == Approx(2 * 1.9).epsilon(1e-15));

    t.clear_adjoints();
    t.set_adjoint(used, 1.0);
    t.sweep();
    CHECK(calls == 2);
    CHECK(t.adjoint(x) == Approx(2 * 1.9).epsilon(1e-15));

    // a vector sweep: the one-lane rule runs for each of the 4 lanes (only
    // lane 1 is seeded), the rule of lanes once for all of them
    tapeflow::lane_adjoints<double, 4> bar(t);
    bar.set(used, 1, 1.0);
    t.sweep(bar);
    CHECK(calls == 6);
    CHECK(lane_counts == std::vector<std::size_t>{1, 1, 4});
    CHECK(bar.get(x, 1) == Approx(2 * 1.9).epsilon(1e-15));
    CHECK(bar.get(x, 0) == 0.0);
}

TEST_CASE("the reverse rule runs on the thread that calls sweep(), also with the prefetch thread") {
    const bool streaming = GENERATE(false, true);
    CAPTURE(streaming);
    tapeflow_test::temp_directory dir;
    auto o = tapeflow_test::tape_options(1024, streaming, streaming ? 2 * 1024 : unlimited, true);
    o.spill_directory = dir.path();
    tapeflow::tape t(o);
    t.start_recording();
    Real x = 0.5;
    t.register_input(x);
    std::vector<std::thread::id> threads;
    Real y = x;
    for (int n = 0; n < 200; ++n) {  // entries spread over many (spilled) tiles
        const double v = y.value();
        tapeflow::custom_adjoint op;
        op.add_input(y);
        op.add_output(y, v + 0.01 * v * v);
        op.record([&threads, v](const double* yb, double* xb) {
            threads.push_back(std::this_thread::get_id());
            xb[0] += yb[0] * (1 + 0.02 * v);
        });
        y = y * 1.0;  // and a statement between entries
    }
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    if (streaming) CHECK(t.statistics().tiles_read_back > 0);
    REQUIRE(threads.size() == 200);
    for (const auto& id : threads) CHECK(id == std::this_thread::get_id());
    // d y_200 / d x = prod (1 + 0.02 y_n)
    double v = 0.5, d = 1.0;
    for (int n = 0; n < 200; ++n) {
        d *= 1 + 0.02 * v;
        v = v + 0.01 * v * v;
    }
    CHECK(t.adjoint(x) == Approx(d).epsilon(1e-13));
}

// =====================================================================================
// Statistics
// =====================================================================================

TEST_CASE("statistics: an entry is one statement of 8 record bytes, no arguments, and holds external_bytes") {
    tapeflow::tape t;
    t.start_recording();
    Real x = 0.5, z = 2.0;
    t.register_input(x);
    t.register_input(z);
    Real a = x * z;  // an ordinary statement first
    const auto s0 = t.statistics();
    const auto p0 = t.get_position();
    CHECK(s0.externals == 0);
    CHECK(s0.external_bytes == 0);
    CHECK(p0.externals == 0);

    Real b;
    {
        tapeflow::custom_adjoint op;
        op.add_input(a);
        op.add_input(x);
        op.add_output(b, 1.0);
        op.record([](const double* yb, double* xb) { xb[0] += yb[0]; xb[1] += yb[0]; });
    }
    const auto s1 = t.statistics();
    const auto p1 = t.get_position();
    CHECK(s1.statements == s0.statements + 1);
    CHECK(s1.record_bytes == s0.record_bytes + 8);
    CHECK(s1.arguments == s0.arguments);
    CHECK(p1.arguments == p0.arguments);
    CHECK(p1.bytes == p0.bytes + 8);
    CHECK(p1.externals == 1);
    CHECK(s1.externals == 1);
    CHECK(s1.external_bytes > 0);

    Real c = b * a + x;  // an ordinary statement after: 3 arguments, counted as usual
    const auto s2 = t.statistics();
    CHECK(s2.arguments == s1.arguments + 3);
    CHECK(s2.record_bytes == s1.record_bytes + tapeflow::record_layout<double>::size(3));

    // external_bytes grows with the captured data: external_function keeps
    // copies of its inputs and outputs.
    std::vector<Real> small(2, x), large(1000, x);  // copies: statements
    auto identity = [](std::size_t n) {
        return [n](const double* in, double* out) { std::copy(in, in + n, out); };
    };
    auto identity_reverse = [](std::size_t n) {
        return [n](const double*, const double*, const double* yb, double* xb) {
            for (std::size_t i = 0; i < n; ++i) xb[i] += yb[i];
        };
    };
    const std::size_t e2 = t.statistics().external_bytes;
    auto ys = tapeflow::external_function(small, 2, identity(2), identity_reverse(2));
    const std::size_t e3 = t.statistics().external_bytes;
    auto yl = tapeflow::external_function(large, 1000, identity(1000), identity_reverse(1000));
    const std::size_t e4 = t.statistics().external_bytes;
    CHECK(e3 > e2);
    CHECK(e4 - e3 >= (e3 - e2) + 2 * 998 * sizeof(double));
    // custom_adjoint: what the caller reports in record(rule, captured_bytes)
    {
        std::vector<double> big(4096, 1.0);
        tapeflow::custom_adjoint op;
        op.add_input(x);
        Real d;
        op.add_output(d, 1.0);
        op.record([big = std::move(big)](const double* yb, double* xb) { xb[0] += yb[0] * big[7]; },
                  4096 * sizeof(double));
    }
    const auto s5 = t.statistics();
    CHECK(s5.external_bytes >= e4 + 4096 * sizeof(double));
    CHECK(s5.externals == 4);

    // A region around entries counts them as statements with 8 bytes each.
    std::size_t index;
    {
        tapeflow::Region region(t, "entries");
        index = region.index();
        for (int n = 0; n < 3; ++n) {
            Real e;
            tapeflow::custom_adjoint op;
            op.add_input(c);
            op.add_output(e, 2.0);
            op.record([](const double* yb, double* xb) { xb[0] += yb[0]; });
        }
    }
    t.stop_recording();
    const auto& r = t.regions()[index];
    CHECK(r.statements() == 3);
    CHECK(r.bytes() == 24);
    CHECK(r.arguments() == 0);
    CHECK(t.statistics().externals == 7);

    t.reset();
    const auto s6 = t.statistics();
    CHECK(s6.externals == 0);
    CHECK(s6.external_bytes == 0);
    CHECK(s6.statements == 0);
}

// =====================================================================================
// Tiles, regions, scratchpad, spill file, prefetch
// =====================================================================================

TEST_CASE("the diffusion program with entries agrees with finite differences and with scalar statements") {
    const auto& g = diffusion_reference();
    const auto x = diffusion_inputs();
    REQUIRE(g.size() == cells + 1);
    CHECK(zeros(g) == 0);
    const auto statements = tapeflow::gradient([](const std::vector<Real>& v) { return diffusion_program(v); }, x);
    for (std::size_t i = 0; i < g.size(); ++i) {
        INFO("component " << i << ": entries " << g[i] << ", statements " << statements[i]);
        CHECK(near(g[i], statements[i], 1e-12));
    }
    for (std::size_t i : {std::size_t(0), cells / 2, cells - 1, cells}) {
        std::vector<double> xi = x;
        const double fd = tapeflow_test::central_difference(
            [&](double v) {
                xi[i] = v;
                return diffusion_program(xi);
            },
            x[i]);
        INFO("component " << i << ": entries " << g[i] << ", finite difference " << fd);
        CHECK(near(g[i], fd, 1e-6, 1e-9));
    }
}

TEST_CASE("entries in small tiles, scratchpad, spill file, prefetch: gradients bit for bit those of the default tape") {
    const configuration c = GENERATE(configuration{"direct, 1 KiB tiles", 1024, false, 0, false},
                                     configuration{"direct, 4 KiB tiles", 4096, false, 0, false},
                                     configuration{"scratchpad, prefetch", 1024, true, 0, true},
                                     configuration{"scratchpad, no prefetch", 4096, true, 0, false},
                                     configuration{"all spilled, prefetch", 1024, true, 2, true},
                                     configuration{"all spilled, no prefetch", 4096, false, 2, false},
                                     configuration{"3-tile budget, prefetch", 4096, true, 3, true},
                                     configuration{"3-tile budget, no prefetch", 1024, false, 3, false});
    CAPTURE(c.name);
    tapeflow_test::watchdog dog(120, c.name);
    tapeflow_test::temp_directory dir;
    const auto& reference = diffusion_reference();
    int live = 0;
    {
        tapeflow::tape t(options_of(c, dir.path()));
        diffusion_recording r(t, live);
        const std::size_t entries = steps * diffusion_recording::entries_per_step;
        const auto recorded = t.statistics();
        CHECK(recorded.externals == entries);
        CHECK(live == int(entries));
        CHECK(recorded.tiles >= 6);
        CHECK(recorded.regions == steps);
        // every step records the same: entries and statements alike
        const auto& regions = t.regions();
        for (std::size_t s = 1; s < steps; ++s) {
            CHECK(regions[s].statements() == regions[0].statements());
            CHECK(regions[s].bytes() == regions[0].bytes());
        }
        CHECK(regions[0].statements() >= diffusion_recording::entries_per_step + cells);

        CHECK(mismatches(r.gradient(), reference) == 0);
        CHECK(mismatches(r.gradient(), reference) == 0);  // entries can be swept again
        CHECK(mismatches(r.gradient_in_pieces(steps / 2), reference) == 0);
        if (c.budget_tiles != 0) {
            CHECK(t.statistics().tiles_spilled > 0);
            CHECK(t.statistics().tiles_read_back > 0);
        }

        // Back to the start of step 20 (an earlier tile): the entries after it
        // go, with what their rules captured; then record steps 20.. again.
        const tapeflow::position& mark = r.marks()[20];
        t.reset(mark);
        CHECK(t.statistics().externals == mark.externals);
        CHECK(mark.externals == 20 * diffusion_recording::entries_per_step);
        CHECK(live == int(mark.externals));
        CHECK(t.statistics().statements == mark.statements);
        CHECK(t.statistics().record_bytes == mark.bytes);
        t.start_recording();
        r.record_from(20);
        CHECK(t.statistics().externals == entries);
        CHECK(live == int(entries));
        CHECK(t.statistics().regions == steps);
        CHECK(mismatches(r.gradient(), reference) == 0);

        t.reset();
        CHECK(live == 0);
        CHECK(t.statistics().externals == 0);
        // and the tape records entries again after reset()
        diffusion_recording again(t, live);
        CHECK(mismatches(again.gradient(), reference) == 0);
        CHECK(live == int(entries));
    }
    CHECK(live == 0);  // the tape's destructor freed every entry
    CHECK(dir.entries().empty());
}

// =====================================================================================
// sweep(from, to), reset(position), reset(), destruction
// =====================================================================================

TEST_CASE("sweep(from, to) and reset(position) with entries before and after the position") {
    // a = x^2 (entry A); 100 statements a *= 1.001; position p;
    // b = sin a (entry B); c = b x (entry C); 100 statements c *= 0.999; J = c.
    const bool streaming = GENERATE(false, true);
    const bool prefetch = GENERATE(false, true);
    if (!streaming && prefetch) return;  // the direct tape has no thread
    CAPTURE(streaming, prefetch);
    tapeflow_test::watchdog dog(60, "sweep and reset around entries");
    tapeflow_test::temp_directory dir;
    auto o = tapeflow_test::tape_options(1024, streaming, streaming ? 2 * 1024 : unlimited, prefetch);
    o.spill_directory = dir.path();
    int live = 0;
    const double xv = 0.7;
    {
        tapeflow::tape t(o);
        t.start_recording();
        Real x = xv;
        t.register_input(x);
        Real a;
        {
            tapeflow::custom_adjoint op;
            op.add_input(x);
            op.add_output(a, xv * xv);
            op.record([xv, tr = tracker(live, 100)](const double* yb, double* xb) { xb[0] += yb[0] * 2 * xv; });
        }
        const tapeflow::position q = t.get_position();  // right after entry A
        for (int n = 0; n < 100; ++n) a = a * 1.001;  // 1600 bytes: the position is in a later tile
        const double ap = a.value();
        const tapeflow::position p = t.get_position();
        CHECK(p.externals == 1);
        Real b, c;
        {
            tapeflow::custom_adjoint op;
            op.add_input(a);
            op.add_output(b, std::sin(ap));
            op.record([ap, tr = tracker(live, 100)](const double* yb, double* xb) { xb[0] += yb[0] * std::cos(ap); });
        }
        {
            const double bv = b.value();
            tapeflow::custom_adjoint op;
            op.add_input(b);
            op.add_input(x);
            op.add_output(c, bv * xv);
            op.record([bv, xv, tr = tracker(live, 100)](const double* yb, double* xb) {
                xb[0] += yb[0] * xv;
                xb[1] += yb[0] * bv;
            });
        }
        for (int n = 0; n < 100; ++n) c = c * 0.999;
        t.register_output(c);
        t.stop_recording();
        REQUIRE(t.statistics().tiles >= 3);
        CHECK(t.statistics().externals == 3);
        CHECK(live == 3);

        // J = 0.999^100 x sin(a_p), a_p = 1.001^100 x^2
        const double s = std::pow(0.999, 100), r = std::pow(1.001, 100);
        const double dJ_dap = s * xv * std::cos(ap);
        const double dJ_dx = s * std::sin(ap) + dJ_dap * r * 2 * xv;

        t.set_adjoint(c, 1.0);
        t.sweep(p);
        CHECK(t.adjoint(a) == Approx(dJ_dap).epsilon(1e-13));      // the adjoint of a at p
        CHECK(t.adjoint(x) == Approx(s * std::sin(ap)).epsilon(1e-13));  // the direct path through C
        t.sweep(p, q);  // down to just after entry A: A is not swept yet
        CHECK(t.adjoint(a) == Approx(dJ_dap * r).epsilon(1e-13));  // the adjoint of a at q
        CHECK(t.adjoint(x) == Approx(s * std::sin(ap)).epsilon(1e-13));
        t.sweep(q, tapeflow::position{});  // entry A alone
        const double pieces = t.adjoint(x);
        CHECK(pieces == Approx(dJ_dx).epsilon(1e-13));
        t.clear_adjoints();
        t.set_adjoint(c, 1.0);
        t.sweep();
        CHECK(t.adjoint(x) == pieces);  // bit for bit: the same records in the same order

        // reset(p): B and C go, with their captured data; A stays.
        const auto before = t.statistics();
        t.reset(p);
        const auto after = t.statistics();
        CHECK(after.externals == 1);
        CHECK(after.externals < before.externals);
        CHECK(after.external_bytes < before.external_bytes);
        CHECK(live == 1);
        CHECK(after.statements == p.statements);
        CHECK(t.get_position() == p);

        // record a different continuation after p: d = a^3 (entry D), J2 = d
        t.start_recording();
        Real d;
        {
            tapeflow::custom_adjoint op;
            op.add_input(a);
            op.add_output(d, ap * ap * ap);
            op.record([ap, tr = tracker(live, 100)](const double* yb, double* xb) { xb[0] += yb[0] * 3 * ap * ap; });
        }
        t.register_output(d);
        t.stop_recording();
        CHECK(t.statistics().externals == 2);
        CHECK(live == 2);
        t.clear_adjoints();
        t.set_adjoint(d, 1.0);
        t.sweep();
        CHECK(t.adjoint(x) == Approx(3 * ap * ap * r * 2 * xv).epsilon(1e-13));

        SECTION("reset() frees every entry") {
            t.reset();
            CHECK(live == 0);
            CHECK(t.statistics().externals == 0);
            CHECK(t.statistics().external_bytes == 0);
        }
        SECTION("reset(position at the start) frees every entry") {
            t.reset(tapeflow::position{});
            CHECK(live == 0);
            CHECK(t.statistics().externals == 0);
        }
        SECTION("the tape's destructor frees every entry") {}
    }
    CHECK(live == 0);
}

TEST_CASE("many recordings on one tape: entries are freed by each reset and the table is reused") {
    int live = 0;  // before the tape: its entries count down when it is destroyed
    tapeflow::tape t(tapeflow_test::tape_options(1024));
    for (int n = 0; n < 50; ++n) {
        const double xv = 0.1 + 0.02 * n;
        t.reset();
        CHECK(live == 0);
        t.start_recording();
        Real x = xv;
        t.register_input(x);
        Real y = x;
        for (int k = 0; k <= n % 7; ++k) {  // a different number of entries each time
            const double v = y.value();
            tapeflow::custom_adjoint op;
            op.add_input(y);
            op.add_output(y, v * v);
            op.record([v, tr = tracker(live)](const double* yb, double* xb) { xb[0] += yb[0] * 2 * v; });
        }
        t.register_output(y);
        t.stop_recording();
        REQUIRE(live == n % 7 + 1);
        REQUIRE(t.statistics().externals == std::size_t(n % 7 + 1));
        t.set_adjoint(y, 1.0);
        t.sweep();
        // y = x^(2^(m+1)) with m = n % 7 after the copy: dy/dx = 2^(m+1) x^(2^(m+1) - 1)
        const double e = std::pow(2.0, n % 7 + 1);
        REQUIRE(t.adjoint(x) == Approx(e * std::pow(xv, e - 1)).epsilon(1e-12));
    }
}

// =====================================================================================
// Exceptions
// =====================================================================================

TEST_CASE("an exception thrown by a reverse rule reaches the caller of sweep(), and after reset() the tape works") {
    const configuration c = GENERATE(configuration{"direct", 1024, false, 0, false},
                                     configuration{"scratchpad, prefetch", 1024, true, 0, true},
                                     configuration{"all spilled, prefetch", 1024, true, 2, true},
                                     configuration{"all spilled, no prefetch", 1024, true, 2, false},
                                     configuration{"3-tile budget, prefetch", 4096, false, 3, true});
    // an external_function entry of step 1, and a custom_adjoint entry of step 5:
    // both near the start, so the sweep crosses many tiles before it fails
    const long throw_at = GENERATE(long(diffusion_recording::entries_per_step),
                                   long(5 * diffusion_recording::entries_per_step + 2));
    CAPTURE(c.name, throw_at);
    tapeflow_test::watchdog dog(120, c.name);
    tapeflow_test::temp_directory dir;
    const tapeflow_test::process_resources before;
    int live = 0;
    {
        tapeflow::tape t(options_of(c, dir.path()));
        diffusion_recording failing(t, live, throw_at);
        const auto& reference = diffusion_reference();
        SECTION("then reset() and record again") {
            CHECK_THROWS_AS(failing.gradient(), rule_failure);
            t.reset();
            CHECK(live == 0);
            diffusion_recording r(t, live);
            CHECK(mismatches(r.gradient(), reference) == 0);
            // the failing recording again, swept in pieces this time
            t.reset();
            diffusion_recording failing_again(t, live, throw_at);
            CHECK_THROWS_WITH(failing_again.gradient_in_pieces(steps / 2), "the flux rule failed");
            t.reset();
            diffusion_recording r2(t, live);
            CHECK(mismatches(r2.gradient(), reference) == 0);
        }
        SECTION("then the tape is destroyed without a reset") {
            CHECK_THROWS_AS(failing.gradient(), rule_failure);
        }
    }
    CHECK(live == 0);  // every entry (and what its rule captured) was freed
    // and the tape left no thread, descriptor or file behind
    CHECK(tapeflow_test::settled_thread_count(before.threads) == before.threads);
    CHECK(tapeflow_test::descriptor_count() == before.descriptors);
    CHECK(dir.entries().empty());
}

TEST_CASE("an exception from a rule inside jacobian() leaves the driver") {
    auto F = [](const std::vector<Real>& x) {
        return tapeflow::external_function(
            x, 1, [](const double* in, double* out) { out[0] = in[0] * in[1]; },
            [](const double*, const double*, const double*, double*) { throw rule_failure("rule"); });
    };
    CHECK_THROWS_AS(tapeflow::jacobian(F, std::vector<double>{1.0, 2.0}), rule_failure);
    // the active tape is usable again once reset, which the next driver does
    const auto g = tapeflow::gradient([](const std::vector<Real>& x) { return Real(x[0] * x[1]); },
                                      std::vector<double>{3.0, 4.0});
    CHECK(g == std::vector<double>{4.0, 3.0});
}

TEST_CASE("taping fails when the entry opens a tile (progress callback throws): no output changes") {
    // The progress callback runs when a tile is finished; make it throw on the
    // tile that the entry's record finishes. record() must leave its outputs
    // as they were, give the fresh identifiers back and free the rule.
    struct cancelled {};
    bool armed = false;
    auto o = tapeflow_test::tape_options(1024);
    o.progress = [&armed](const tapeflow::tape_progress& p) {
        if (p.stage == tapeflow::tape_progress::phase::recording && armed) {
            armed = false;
            throw cancelled{};
        }
    };
    int live = 0;  // before the tape: its entries count down when it is destroyed
    tapeflow::tape t(o);
    t.start_recording();
    Real x = 0.9;
    t.register_input(x);
    Real y = x * 2.0;  // an active output (keeps its identifier)
    Real z = 5.0;      // a passive output (would get a fresh identifier)
    // fill the first tile exactly: 16-byte statements
    while (t.get_position().tile == 0 && t.get_position().offset + 16 <= 1024) y = y * 1.0;
    REQUIRE(t.get_position().offset == 1024);
    const auto before = t.statistics();
    const tapeflow::identifier y_id = y.id();
    const double y_value = y.value();

    armed = true;
    {
        tapeflow::custom_adjoint op;
        op.add_input(x);
        op.add_input(y);
        op.add_output(y, 100.0);
        op.add_output(z, 200.0);
        CHECK_THROWS_AS(op.record([tr = tracker(live)](const double*, double*) {}), cancelled);
    }
    CHECK(live == 0);
    CHECK(y.id() == y_id);
    CHECK(y.value() == y_value);
    CHECK_FALSE(z.is_active());
    CHECK(z.value() == 5.0);
    const auto after = t.statistics();
    CHECK(after.externals == 0);
    CHECK(after.statements == before.statements);
    CHECK(after.live_identifiers == before.live_identifiers);

    // retry: the same entry, now taped
    {
        const double yv = y.value();
        tapeflow::custom_adjoint op;
        op.add_input(x);
        op.add_input(y);
        op.add_output(y, 0.9 * yv);  // y <- x y
        op.add_output(z, 0.9 + yv);  // z <- x + y
        op.record([yv, tr = tracker(live)](const double* yb, double* xb) {
            xb[0] += yb[0] * yv + yb[1];
            xb[1] += yb[0] * 0.9 + yb[1];
        });
    }
    CHECK(live == 1);
    Real J = y + z * z;
    t.register_output(J);
    t.stop_recording();
    t.set_adjoint(J, 1.0);
    t.sweep();
    // before the entry y = 2x; y' = x y = 2x^2, z = x + 2x = 3x; J = 2x^2 + 9x^2 = 11 x^2
    CHECK(t.adjoint(x) == Approx(22 * 0.9).epsilon(1e-13));
}

// =====================================================================================
// Misuse
// =====================================================================================

TEST_CASE("misuse from a reverse rule: sweeping, resetting, recording or seeding the tape being swept gives usage_error, then reset() recovers") {
    // Before the check, reset() from a rule freed the entry that was running
    // (a use after free) and a sweep from a rule overwrote the tiles being read.
    const std::string member = GENERATE(as<std::string>{}, "sweep", "reset", "reset(position)", "start_recording",
                                        "register_output", "set_adjoint");
    const bool streaming = GENERATE(false, true);
    CAPTURE(member, streaming);
    tapeflow_test::watchdog dog(120, "misuse from a rule");
    tapeflow_test::temp_directory dir;
    auto o = tapeflow_test::tape_options(1024, streaming, streaming ? 2 * 1024 : unlimited, true);
    o.spill_directory = dir.path();
    int live = 0;  // before the tape: its entries count down when it is destroyed
    tapeflow::tape t(o);
    bool sweeping_seen = false;
    auto record = [&](bool misuse) {
        t.start_recording();
        Real x = 0.5;
        t.register_input(x);
        Real y = x;
        for (int n = 0; n < 100; ++n) {  // entries and statements over many tiles
            const double v = y.value();
            tapeflow::custom_adjoint op(t);
            op.add_input(y);
            op.add_output(y, v * 1.01);
            const bool misuser = misuse && n == 50;
            op.record([&, misuser, tr = tracker(live)](const double* yb, double* xb) {
                if (misuser) {
                    sweeping_seen = t.is_sweeping();
                    if (member == "sweep") t.sweep();
                    if (member == "reset") t.reset();
                    if (member == "reset(position)") t.reset(tapeflow::position{});
                    if (member == "start_recording") t.start_recording();
                    Real passive = 1.0;  // would get a new identifier (and the adjoint vector grow)
                    if (member == "register_output") t.register_output(passive);
                    if (member == "set_adjoint") t.set_adjoint(passive, 1.0);
                }
                xb[0] += yb[0] * 1.01;
            });
            y = y * 1.0 + 0.0 * x;
        }
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        return x;
    };
    Real x = record(true);
    const std::string name = member == "reset(position)" ? "reset" : member;
    CHECK_THROWS_WITH(t.sweep(), Catch::StartsWith("tapeflow: " + name + "() called while this tape is sweeping") &&
                                     Catch::Contains("differentiate inside a rule on a tape of its own"));
    CHECK(sweeping_seen);
    CHECK_FALSE(t.is_sweeping());
    CHECK_FALSE(t.is_recording());
    CHECK(live == 100);  // no entry was freed by the refused call
    t.reset();
    CHECK(live == 0);
    Real x2 = record(false);
    t.sweep();
    CHECK(t.adjoint(x2) == Approx(std::pow(1.01, 100)).epsilon(1e-13));
}

TEST_CASE("misuse throws usage_error") {
    int live = 0;  // before the tape: its entries count down when it is destroyed
    tapeflow::tape t;
    t.start_recording();
    Real x = 0.5;
    t.register_input(x);

    SECTION("record() twice") {
        Real y;
        tapeflow::custom_adjoint op;
        op.add_input(x);
        op.add_output(y, 1.0);
        op.record([tr = tracker(live)](const double* yb, double* xb) { xb[0] += 2 * yb[0]; });
        const auto before = t.statistics();
        try {
            op.record([tr = tracker(live)](const double*, double*) {});
            FAIL("no exception");
        } catch (const tapeflow::usage_error& e) {
            CHECK(std::string(e.what()).find("record() called twice") != std::string::npos);
        }
        CHECK(live == 1);
        CHECK(t.statistics().externals == before.externals);
        CHECK(t.statistics().statements == before.statements);
        // the first entry is intact
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        t.sweep();
        CHECK(t.adjoint(x) == 2.0);
    }
    SECTION("the same variable as an output twice") {
        Real y = 7.0;
        const auto before = t.statistics();
        tapeflow::custom_adjoint op;
        op.add_input(x);
        op.add_output(y, 1.0);
        op.add_output(y, 2.0);
        CHECK_THROWS_WITH(op.record([tr = tracker(live)](const double*, double*) {}),
                          Catch::Contains("output twice"));
        CHECK(live == 0);
        CHECK(y.value() == 7.0);
        CHECK_FALSE(y.is_active());
        CHECK(t.statistics().externals == 0);
        CHECK(t.statistics().statements == before.statements);
        CHECK(t.statistics().live_identifiers == before.live_identifiers);
        t.stop_recording();
    }
    SECTION("an input of another tape") {
        t.stop_recording();
        tapeflow::tape other;
        other.start_recording();
        Real y = 2.0;
        other.register_input(y);
        other.stop_recording();

        t.start_recording();  // t is the active tape again
        tapeflow::custom_adjoint op;
        CHECK_THROWS_WITH(op.add_input(y), Catch::Contains("another tape"));
        CHECK(op.inputs() == 0);
        CHECK(op.add_input(x) == 0);
        // an entry built for `other` refuses t's variables
        tapeflow::custom_adjoint for_other(other);
        CHECK_THROWS_AS(for_other.add_input(x), tapeflow::usage_error);
        // external_function on t with y among the inputs (moving keeps its tape tag;
        // a copy would be a new variable of t)
        std::vector<Real> foreign;
        foreign.push_back(std::move(y));
        CHECK_THROWS_AS(tapeflow::external_function(
                            foreign, 1, [](const double* in, double* out) { out[0] = in[0]; },
                            [](const double*, const double*, const double* yb, double* xb) { xb[0] += yb[0]; }),
                        tapeflow::usage_error);
        CHECK(t.statistics().externals == 0);
        t.stop_recording();
    }
    SECTION("an input of a tape that no longer exists") {
        t.stop_recording();
        Real orphan = 3.0;
        {
            tapeflow::tape gone;
            gone.start_recording();
            gone.register_input(orphan);
            gone.stop_recording();
        }
        t.start_recording();
        tapeflow::custom_adjoint op(t);
        CHECK_THROWS_WITH(op.add_input(orphan), Catch::Contains("no longer exists"));
        t.stop_recording();
    }
    t.stop_recording();
}

TEST_CASE("the same variable as an output twice is refused also when nothing is taped") {
    // custom_adjoint.hpp: record() "\throws usage_error if called twice, or if
    // a variable is an output twice". The first check does not depend on
    // whether the tape records; the second must not either: otherwise a
    // program run with constant inputs (or outside a recording) silently keeps
    // the last value, and the same program throws once its inputs are active.
    // (Fails with the header of commit c2b1aa0: the check runs only when an
    // entry is taped.)
    int live = 0;  // before the tape: its entries count down when it is destroyed
    tapeflow::tape t;
    Real y = 7.0;
    tapeflow::custom_adjoint op(t);
    SECTION("the tape is not recording") {
        Real x = 0.5;
        t.start_recording();
        t.register_input(x);
        t.stop_recording();
        op.add_input(x);
    }
    SECTION("recording, every input passive") {
        t.start_recording();
        op.add_input(Real(0.5));
    }
    op.add_output(y, 1.0);
    op.add_output(y, 2.0);
    CHECK_THROWS_AS(op.record([tr = tracker(live)](const double*, double*) {}), tapeflow::usage_error);
    CHECK(live == 0);
    CHECK(t.statistics().externals == 0);
    t.stop_recording();
}

// =====================================================================================
// float and long double
// =====================================================================================

TEST_CASE("float: basic_custom_adjoint<float> on a tape_f") {
    tapeflow::tape_f t;
    t.start_recording();
    tapeflow::RealF x = 0.5f, z = 2.0f;
    t.register_input(x);
    t.register_input(z);
    const float xv = x.value(), zv = z.value();
    tapeflow::RealF y;
    const auto before = t.statistics();
    tapeflow::basic_custom_adjoint<float> op(t);
    op.add_input(x);
    op.add_input(z);
    op.add_output(y, xv * xv * zv);
    op.record([xv, zv](const float* yb, float* xb) {
        xb[0] += yb[0] * 2 * xv * zv;
        xb[1] += yb[0] * xv * xv;
    });
    const auto after = t.statistics();
    CHECK(after.record_bytes == before.record_bytes + 8);
    CHECK(after.statements == before.statements + 1);
    CHECK(after.externals == 1);
    tapeflow::RealF J = y * x;  // x^3 z
    t.register_output(J);
    t.stop_recording();
    t.set_adjoint(J, 1.0f);
    t.sweep();
    CHECK(t.adjoint(x) == Approx(3 * 0.25 * 2.0).epsilon(1e-6));
    CHECK(t.adjoint(z) == Approx(0.125).epsilon(1e-6));
}

TEST_CASE("long double: external_function in jacobian()") {
    // (u, v) = (x0^2 x1, x0 / x1)
    auto F = [](const std::vector<tapeflow::RealL>& x) {
        return tapeflow::external_function(
            x, 2,
            [](const long double* in, long double* out) {
                out[0] = in[0] * in[0] * in[1];
                out[1] = in[0] / in[1];
            },
            [](const long double* in, const long double*, const long double* yb, long double* xb) {
                xb[0] += yb[0] * 2 * in[0] * in[1] + yb[1] / in[1];
                xb[1] += yb[0] * in[0] * in[0] - yb[1] * in[0] / (in[1] * in[1]);
            });
    };
    const long double a = 1.25L, b = 0.8L;
    const auto J = tapeflow::jacobian(F, std::vector<long double>{a, b});
    const auto s = tapeflow::tape_l::active().statistics();
    CHECK(s.statements == 1);
    CHECK(s.externals == 1);
    CHECK(s.record_bytes == 8);
    CHECK(s.arguments == 0);
    REQUIRE(J.size() == 2);
    const long double expected[2][2] = {{2 * a * b, a * a}, {1 / b, -a / (b * b)}};
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
            INFO("J[" << i << "][" << j << "] = " << double(J[i][j]));
            CHECK(std::fabs(J[i][j] - expected[i][j]) <= 1e-17L * std::fabs(expected[i][j]));
        }
}
