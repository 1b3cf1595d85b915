// tapeflow/eigen/matrix_variable.hpp: a whole matrix as one variable with a
// range of identifiers. Every operation's gradient is checked against its
// analytic formula or central differences, and against the same function
// recorded on Real matrices (an independent path: per-element identifiers,
// products.hpp's entries); vector sweeps against scalar ones, a streaming
// tape against one in memory; the identifiers a loop of gradients takes stay
// bounded and go back when the variables die.
#include <tapeflow/checkpoint/checkpointed_loop.hpp>
#include <tapeflow/eigen/matrix_variable.hpp>
#include <tapeflow/eigen/variables.hpp>  // the Real-matrix path the tests compare with

#include "eigen/eigen_support.hpp"
#include "support/parallel_loop.hpp"

#include <memory>

using eigen_test::Index;
using eigen_test::MatrixX;
using eigen_test::random_matrix;
using eigen_test::Real;
using tapeflow::matrix_variable;

namespace {

using matrix = MatrixX<double>;

// A recorded gradient of y = f(A, B) with A, B matrix variables of a0, b0.
struct gradient {
    double value = 0;
    matrix a_bar, b_bar;
    tapeflow::tape_statistics statistics;  // after recording
};

// operand m of a recording: the values v, registered
void set_input(tapeflow::tape& t, matrix_variable& m, const matrix& v) {
    m = matrix_variable(v);
    tapeflow::register_input(t, m);
}
void set_input(tapeflow::tape& t, MatrixX<Real>& m, const matrix& v) {
    m = v.cast<Real>();  // every element an input
    tapeflow::register_inputs(t, m);
}

// A recorded gradient of y = f(A, B), A and B of type M (matrix variables,
// or Real matrices: the independent path) with the values a0, b0.
template <class M, class F>
gradient recorded_gradient(tapeflow::tape& t, const matrix& a0, const matrix& b0, F&& f) {
    M a, b;
    t.reset();
    t.start_recording();
    set_input(t, a, a0);
    set_input(t, b, b0);
    Real y = f(a, b);
    t.register_output(y);
    t.stop_recording();
    gradient g;
    g.value = y.value();
    g.statistics = t.statistics();
    t.set_adjoint(y, 1.0);
    t.sweep();
    g.a_bar = tapeflow::adjoints(t, a);
    g.b_bar = tapeflow::adjoints(t, b);
    return g;
}
template <class F>
gradient variables_gradient(tapeflow::tape& t, const matrix& a0, const matrix& b0, F&& f) {
    return recorded_gradient<matrix_variable>(t, a0, b0, f);
}
template <class F>
gradient reals_gradient(tapeflow::tape& t, const matrix& a0, const matrix& b0, F&& f) {
    return recorded_gradient<MatrixX<Real>>(t, a0, b0, f);
}

// Central differences of f_double(A, B) at (a0, b0), every element.
template <class F>
void check_finite_differences(const gradient& g, const matrix& a0, const matrix& b0, F&& f_double) {
    const double floor = 1e-6 * std::max(1.0, std::max(g.a_bar.cwiseAbs().maxCoeff(), g.b_bar.cwiseAbs().maxCoeff()));
    for (int which = 0; which < 2; ++which) {
        const matrix& x0 = which == 0 ? a0 : b0;
        const matrix& bar = which == 0 ? g.a_bar : g.b_bar;
        for (Index k = 0; k < x0.size(); ++k) {
            const double fd = tapeflow_test::central_difference(
                [&](double v) {
                    matrix a = a0, b = b0;
                    (which == 0 ? a : b).data()[k] = v;
                    return f_double(a, b);
                },
                x0.data()[k]);
            INFO("operand " << which << ", element " << k << ": tape " << bar.data()[k] << ", finite difference "
                            << fd);
            CHECK(tapeflow_test::close(bar.data()[k], fd, 1e-6, floor));
        }
    }
}

void check_equal(const matrix& got, const matrix& want, double rel = 1e-12) {
    REQUIRE(got.rows() == want.rows());
    REQUIRE(got.cols() == want.cols());
    const double scale = std::max(1.0, want.cwiseAbs().maxCoeff());
    INFO("got\n" << got << "\nwant\n" << want);
    CHECK((got - want).cwiseAbs().maxCoeff() <= rel * scale);
}

}  // namespace

TEST_CASE("matrix_variable product: the analytic gradient of dot(A B, R), rectangular") {
    tapeflow::tape t;
    const matrix a0 = random_matrix(4, 3, 1), b0 = random_matrix(3, 5, 2), r = random_matrix(4, 5, 3);
    const gradient g = variables_gradient(t, a0, b0, [&](const matrix_variable& a, const matrix_variable& b) {
        return tapeflow::dot(a * b, r);
    });
    CHECK(g.value == Approx((a0 * b0).cwiseProduct(r).sum()).epsilon(1e-14));
    check_equal(g.a_bar, r * b0.transpose());  // d/dA sum(R .* A B) = R B^T
    check_equal(g.b_bar, a0.transpose() * r);  //            d/dB    = A^T R
    CHECK(g.statistics.externals == 2);        // the product and the dot
    CHECK(g.statistics.statements == 2);
}

TEST_CASE("matrix_variable operations against finite differences and against Real matrices") {
    tapeflow::tape t;
    const matrix a0 = random_matrix(4, 4, 4), b0 = random_matrix(4, 4, 5), d = random_matrix(4, 4, 6);
    // the same function on matrix variables, on Real matrices and on doubles
    const auto on_variables = [&](const matrix_variable& a, const matrix_variable& b) {
        const matrix_variable c = a * b + 2.0 * transpose(a) - b * d - d * a + a * 0.5;
        const matrix_variable e = -(c * c) + b;
        return tapeflow::dot(e, d) + tapeflow::sum(a) * tapeflow::squared_norm(b) + tapeflow::dot(a, a * b);
    };
    const auto on_matrices = [&](const auto& a, const auto& b) {
        using M = std::decay_t<decltype(a)>;
        const M c = a * b + 2.0 * a.transpose() - b * d - d * a + a * 0.5;
        const M e = -(c * c) + b;
        return (e.array() * d.array()).sum() + a.sum() * b.squaredNorm() + (a.array() * (a * b).array()).sum();
    };
    const gradient g = variables_gradient(t, a0, b0, on_variables);
    const gradient h = reals_gradient(t, a0, b0, on_matrices);
    CHECK(g.value == Approx(on_matrices(a0, b0)).epsilon(1e-13));
    check_equal(g.a_bar, h.a_bar, 1e-12);
    check_equal(g.b_bar, h.b_bar, 1e-12);
    check_finite_differences(g, a0, b0, on_matrices);
}

TEST_CASE("matrix_variable: A * A with one variable adds both products into its one slice") {
    tapeflow::tape t;
    const matrix a0 = random_matrix(5, 5, 7), r = random_matrix(5, 5, 8);
    const gradient g = variables_gradient(t, a0, a0, [&](const matrix_variable& a, const matrix_variable&) {
        return tapeflow::dot(a * a, r);
    });
    check_equal(g.a_bar, r * a0.transpose() + a0.transpose() * r);
    CHECK(g.b_bar.isZero(0));  // B was not used
}

TEST_CASE("to_reals and back: elementwise functions through the Eigen integration of Real") {
    tapeflow::tape t;
    const matrix a0 = random_matrix(3, 4, 9), b0 = random_matrix(4, 2, 10);
    const auto on_variables = [](const matrix_variable& a, const matrix_variable& b) {
        const MatrixX<Real> e = tapeflow::to_reals(a * b);
        const MatrixX<Real> s = e.array().sin().matrix();
        const matrix_variable back(s);  // explicit: one entry over the Reals' identifiers
        return tapeflow::squared_norm(back) + eigen_test::phi(tapeflow::to_reals(b));
    };
    const auto on_doubles = [](const matrix& a, const matrix& b) {
        return matrix((a * b).array().sin().matrix()).squaredNorm() + eigen_test::phi(b);
    };
    const gradient g = variables_gradient(t, a0, b0, on_variables);
    CHECK(g.value == Approx(on_doubles(a0, b0)).epsilon(1e-13));
    check_finite_differences(g, a0, b0, on_doubles);
    // analytic: y = |sin(AB)|^2: Y_bar = 2 sin(AB) .* cos(AB) = sin(2 AB)
    const matrix y_bar = (2.0 * (a0 * b0)).array().sin().matrix();
    check_equal(g.a_bar, y_bar * b0.transpose(), 1e-12);
}

TEST_CASE("a matrix variable of Reals keeps constants constant, and seeds set with set_adjoints") {
    tapeflow::tape t;
    const matrix a0 = random_matrix(3, 3, 11), w = random_matrix(3, 3, 12);
    MatrixX<Real> a = a0.cast<Real>();
    t.start_recording();
    t.register_input(a(0, 0));
    t.register_input(a(2, 1));
    const matrix_variable m(a);  // 7 of its 9 elements constant
    const matrix_variable c = m * m;
    t.stop_recording();
    REQUIRE(c.is_active());
    tapeflow::set_adjoints(t, c, w);  // c is an output: its adjoints are W
    t.sweep();
    const matrix m_bar = w * a0.transpose() + a0.transpose() * w;  // d sum(W .* M M)/dM
    CHECK(t.adjoint(a(0, 0)) == Approx(m_bar(0, 0)).epsilon(1e-14));
    CHECK(t.adjoint(a(2, 1)) == Approx(m_bar(2, 1)).epsilon(1e-14));
    CHECK(t.adjoint(a(1, 1)) == 0.0);  // a constant
}

TEST_CASE("a matrix variable of an expression of Reals: every element keeps its own identifier") {
    // matrix_variable(e + e) read each coefficient as a temporary Real that
    // gave its identifier back before the next was made (a red-team run:
    // [0 0; 0 8] where [2 2; 2 2] is right)
    tapeflow::tape t;
    const matrix a0 = random_matrix(3, 2, 60);
    const matrix ones = matrix::Ones(3, 2);
    matrix_variable a(a0);
    t.start_recording();
    tapeflow::register_input(t, a);
    const MatrixX<Real> e = tapeflow::to_reals(a);
    Real y = tapeflow::dot(matrix_variable(e + e), ones) +            // d/dA: 2
             tapeflow::sum(matrix_variable(e.array().square().matrix())) +  //      2 A
             tapeflow::sum(matrix_variable(e.transpose()));                 //      1 (an lvalue expression)
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    check_equal(tapeflow::adjoints(t, a), 3.0 * ones + 2.0 * a0);
}

TEST_CASE("a matrix variable whose last copy dies on a parallel region's thread gives its identifiers back") {
    tapeflow::tape t;
    const matrix a0 = random_matrix(10, 10, 61), r = random_matrix(10, 10, 62);
    std::size_t first_peak = 0;
    for (int k = 0; k < 20; ++k) {
        t.reset();
        t.start_recording();
        auto a = std::make_unique<matrix_variable>(a0);
        tapeflow::register_input(t, *a);
        std::vector<Real> y(1);
        tapeflow_test::loop(t, 1, tapeflow::region_sweep::serial, 0, 1, [&](long) {
            y[0] = tapeflow::dot(*a, r);
            a.reset();  // the last copy dies on the worker
        });
        t.stop_recording();
        t.set_adjoint(y[0], 1.0);
        t.sweep();
        CHECK(y[0].value() == Approx(a0.cwiseProduct(r).sum()).epsilon(1e-14));
        if (k == 0) first_peak = t.statistics().peak_identifiers;
        CHECK(t.statistics().peak_identifiers == first_peak);  // grew by 100 per region before
    }
}

TEST_CASE("matrix variables are constants when nothing is recorded or nothing is active") {
    tapeflow::tape t;
    const matrix a0 = random_matrix(3, 3, 13);
    const matrix_variable a(a0), b(a0);
    const matrix_variable c = a * b + a;  // no recording
    CHECK_FALSE(c.is_active());
    check_equal(c.values(), a0 * a0 + a0);
    t.start_recording();
    const matrix_variable d = a * b;  // recording, but no operand is an input
    const Real y = tapeflow::sum(d);
    t.stop_recording();
    CHECK_FALSE(d.is_active());
    CHECK_FALSE(y.is_active());
    CHECK(t.statistics().statements == 0);
    CHECK(y.value() == Approx((a0 * a0).sum()).epsilon(1e-14));
}

TEST_CASE("matrix_variable: a copy is the same variable, an assignment a new one") {
    tapeflow::tape t;
    const matrix a0 = random_matrix(2, 2, 14);
    t.start_recording();
    matrix_variable a(a0);
    tapeflow::register_input(t, a);
    const matrix_variable same = a;
    CHECK(same.first_identifier() == a.first_identifier());
    matrix_variable moved_from = a * a;
    matrix_variable c = std::move(moved_from);
    CHECK(moved_from.size() == 0);  // a 0 x 0 constant now
    CHECK_FALSE(moved_from.is_active());
    const tapeflow::identifier old_c = c.first_identifier();
    c = c * a;  // C = C A: a new variable
    CHECK(c.first_identifier() != old_c);
    Real y = tapeflow::sum(c);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    // y = sum(A^3): dy/dA = sum over the three places of A: 1 (A^2)^T + A^T 1 A^T + (A^2)^T 1
    const matrix ones = matrix::Ones(2, 2);
    const matrix want = ones * (a0 * a0).transpose() + a0.transpose() * ones * a0.transpose() +
                        (a0 * a0).transpose() * ones;
    check_equal(tapeflow::adjoints(t, same), want);
}

TEST_CASE("a loop of gradients reuses the matrix variables' identifiers, and they go back when the variables die") {
    tapeflow::tape t;
    const matrix a0 = random_matrix(6, 6, 15), b0 = random_matrix(6, 6, 16), r = random_matrix(6, 6, 17);
    const auto f = [&](const matrix_variable& a, const matrix_variable& b) {
        const MatrixX<Real> e = tapeflow::to_reals(a * b - b);
        return tapeflow::dot(matrix_variable(MatrixX<Real>(e.array().tanh().matrix())), r) +
               tapeflow::squared_norm(transpose(a));
    };
    std::size_t first_peak = 0;
    for (int k = 0; k < 30; ++k) {
        const gradient g = variables_gradient(t, a0, b0, f);
        if (k == 0) first_peak = g.statistics.peak_identifiers;
        CHECK(g.statistics.peak_identifiers == first_peak);
    }
    // every variable of the loop is gone: no identifier is held
    CHECK(t.statistics().live_identifiers == 0);
    // a variable of this tape dying while another tape is active gives its
    // identifiers to this one
    auto* held = new matrix_variable(a0);
    t.reset();
    t.start_recording();
    tapeflow::register_input(t, *held);
    t.stop_recording();
    CHECK(t.statistics().live_identifiers == 36);
    tapeflow::tape other;
    other.activate();
    delete held;
    CHECK(t.statistics().live_identifiers == 0);
}

TEST_CASE("a vector sweep gives each lane the gradient a scalar sweep gives") {
    tapeflow::tape t;
    const matrix a0 = random_matrix(4, 3, 18), b0 = random_matrix(3, 4, 19);
    matrix_variable a(a0), b(b0);
    t.start_recording();
    tapeflow::register_input(t, a);
    tapeflow::register_input(t, b);
    const matrix_variable c = a * b;
    const MatrixX<Real> e = tapeflow::to_reals(transpose(c) - 3.0 * c.values());
    std::vector<Real> y;
    for (int l = 0; l < 4; ++l) y.push_back(tapeflow::dot(matrix_variable(e), random_matrix(4, 4, 20 + l)) + e(l, 0) * e(l, 0));
    t.stop_recording();
    tapeflow::lane_adjoints<double, 4> bar(t);
    for (std::size_t l = 0; l < 4; ++l) bar.set(y[l], l, 1.0);
    t.sweep(bar);
    for (std::size_t l = 0; l < 4; ++l) {
        t.clear_adjoints();
        t.set_adjoint(y[l], 1.0);
        t.sweep();
        const matrix a_bar = tapeflow::adjoints(t, a), b_bar = tapeflow::adjoints(t, b);
        CHECK_FALSE(a_bar.isZero(0));
        for (Index k = 0; k < a.size(); ++k)
            CHECK(bar.get(tapeflow::identifier(a.first_identifier() + k), l) == Approx(a_bar.data()[k]).epsilon(1e-13));
        for (Index k = 0; k < b.size(); ++k)
            CHECK(bar.get(tapeflow::identifier(b.first_identifier() + k), l) == Approx(b_bar.data()[k]).epsilon(1e-13));
    }
}

TEST_CASE("a streaming tape gives the gradient of a tape in memory") {
    const matrix a0 = random_matrix(8, 8, 30), b0 = random_matrix(8, 8, 31), r = random_matrix(8, 8, 32);
    const auto f = [&](const matrix_variable& a, const matrix_variable& b) {
        Real y = 0.0;
        matrix_variable c = a;
        for (int step = 0; step < 200; ++step) {  // 200 entries and 12 800 statements between them
            c = 0.5 * (c * b) + a;
            const MatrixX<Real> e = tapeflow::to_reals(c);
            for (Index k = 0; k < e.size(); ++k) y += 1e-3 * e.data()[k] * e.data()[k];
            c = matrix_variable(MatrixX<Real>(e.array().sin().matrix()));
        }
        return y + tapeflow::dot(c, r);
    };
    tapeflow::tape memory;
    const gradient want = variables_gradient(memory, a0, b0, f);
    // 1 KiB tiles, the scratchpad, a 16 KiB budget: the tape spills
    tapeflow::tape streaming(tapeflow_test::tape_options(1024, true, 16 * 1024));
    const gradient got = variables_gradient(streaming, a0, b0, f);
    CHECK(got.value == want.value);
    check_equal(got.a_bar, want.a_bar, 0);
    check_equal(got.b_bar, want.b_bar, 0);
    CHECK(streaming.statistics().tiles_spilled > 0);
}

// A recording with the 3 x 3 inputs A and B registered, and a 3 x 3 R.
struct recording_two_inputs {
    tapeflow::tape t;
    const matrix a0 = random_matrix(3, 3, 40), b0 = random_matrix(3, 3, 41), r = random_matrix(3, 3, 42);
    matrix_variable a{a0}, b{b0};
    recording_two_inputs() {
        t.start_recording();
        tapeflow::register_input(t, a);
        tapeflow::register_input(t, b);
    }
};

TEST_CASE_METHOD(recording_two_inputs, "reset(position) drops matrix entries like records: the pieces pattern") {
    // y = dot(A B, R) recorded twice from one position, the first piece
    // swept to the position and reset there: the second gradient is exact
    const tapeflow::position p = t.get_position();
    {
        Real y = tapeflow::dot(a * b, r);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        t.sweep(p);
    }
    check_equal(tapeflow::adjoints(t, a), r * b0.transpose());
    t.reset(p);
    t.clear_adjoints();
    t.start_recording();
    Real y = tapeflow::dot(b * a, r);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    check_equal(tapeflow::adjoints(t, a), b0.transpose() * r);
    check_equal(tapeflow::adjoints(t, b), r * a0.transpose());
}

TEST_CASE_METHOD(recording_two_inputs,
                 "reset(position): a matrix variable computed after the position is a constant then") {
    // D = A B is recorded before p and dies: its identifiers are free, and a
    // record before p assigns them. C, computed after p, takes them back.
    // After reset(p) C holds them still; the sweep must not carry C's
    // adjoints into D's entry (A and B would get R B^T and A^T R).
    tapeflow::identifier d_first = 0;
    {
        const matrix_variable d = a * b;
        d_first = d.first_identifier();
    }
    const tapeflow::position p = t.get_position();
    const matrix_variable c = a * b;
    REQUIRE(c.first_identifier() == d_first);  // the recycled range
    t.reset(p);
    Real y = tapeflow::dot(c, r) + tapeflow::dot(a, r);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    check_equal(tapeflow::adjoints(t, a), r);  // only through dot(A, R)
    CHECK(tapeflow::adjoints(t, b).isZero(0));
}

TEST_CASE("matrix_variable: a checkpointed step that captures one from outside throws and says what to do") {
    // The step runs on the loop's private tape; W is the outer recording's.
    tapeflow::tape t;
    matrix_variable w(random_matrix(2, 2, 51));
    t.start_recording();
    tapeflow::register_input(t, w);
    Real x = 0.5;
    t.register_input(x);
    std::vector<Real> u{x};
    CHECK_THROWS_WITH(tapeflow::checkpointed_loop(
                          3, u, [&](std::vector<Real>& s) { s[0] = s[0] * tapeflow::dot(w, w); }, 2),
                      Catch::Contains("a matrix variable of another tape") &&
                          Catch::Contains("put its elements into the step's state as Reals"));
    t.stop_recording();
    t.reset();
}

TEST_CASE("matrix_variable of floats: the gradient of sum(A B) on a float tape is the analytic one") {
    // d sum(A B) / dA = 1 B^T (every row the row sums of B), d / dB = A^T 1
    using fmatrix = MatrixX<float>;
    tapeflow::tape_f t;
    fmatrix a0(2, 3), b0(3, 2);
    a0 << 1, -2, 0.5f, 3, 0.25f, -1;
    b0 << 2, 1, -1, 4, 0.5f, -3;
    tapeflow::basic_matrix_variable<float> a(a0), b(b0);
    t.start_recording();
    tapeflow::register_input(t, a);
    tapeflow::register_input(t, b);
    tapeflow::RealF y = tapeflow::sum(a * b);
    t.register_output(y);
    t.stop_recording();
    CHECK(y.value() == Approx((a0 * b0).sum()));
    t.set_adjoint(y, 1.0f);
    t.sweep();
    const fmatrix a_bar = tapeflow::adjoints(t, a), b_bar = tapeflow::adjoints(t, b);
    const fmatrix ones_a = fmatrix::Ones(2, 2), ones_b = fmatrix::Ones(2, 2);
    CHECK((a_bar - ones_a * b0.transpose()).cwiseAbs().maxCoeff() == 0.0f);
    CHECK((b_bar - a0.transpose() * ones_b).cwiseAbs().maxCoeff() == 0.0f);
    CHECK(a_bar(0, 0) == 3.0f);  // 2 + 1: row 0 of B summed
}

TEST_CASE("matrix_variable misuse gets clear errors") {
    tapeflow::tape t;
    const matrix a0 = random_matrix(2, 3, 50);
    matrix_variable a(a0);
    t.start_recording();
    tapeflow::register_input(t, a);
    CHECK_THROWS_WITH(a * a, Catch::Contains("product of a 2 x 3 and a 2 x 3 matrix"));
    CHECK_THROWS_WITH(a + transpose(a), Catch::Contains("of different shapes (2 x 3 and 3 x 2)"));
    CHECK_THROWS_WITH(tapeflow::dot(a, matrix(matrix::Ones(3, 3))), Catch::Contains("dot of matrix variables"));
    CHECK_THROWS_WITH(tapeflow::set_adjoints(t, a, matrix::Ones(3, 2)), Catch::Contains("seeds of shape 3 x 2"));
    CHECK_THROWS_WITH(tapeflow::set_adjoints(t, matrix_variable(a0), a0), Catch::Contains("constant matrix variable"));
    t.stop_recording();
    CHECK_THROWS_WITH(tapeflow::register_input(t, a), Catch::Contains("while not recording"));
    tapeflow::tape other;
    other.start_recording();
    CHECK_THROWS_WITH(a * transpose(a), Catch::Contains("a matrix variable of another tape"));
    CHECK_THROWS_WITH(tapeflow::adjoints(other, a), Catch::Contains("belongs to another tape"));
    other.stop_recording();
}
