// tapeflow/eigen/variables.hpp: register_inputs(tape, A) makes every element
// of A an input, adjoints(tape, A) reads their adjoints into a double matrix.
// Checked against the analytic gradient of f = sum(W .* A .* A) (2 W .* A)
// and against register_input / adjoint on each element, for column- and
// row-major matrices, vectors, maps and blocks given as temporaries.
#include <tapeflow/eigen/variables.hpp>

#include "eigen/eigen_support.hpp"

using eigen_test::Index;
using eigen_test::MatrixX;
using eigen_test::Real;
using eigen_test::RowMajorX;
using eigen_test::uniform;
using eigen_test::VectorX;

namespace {

template <class M>
M filled(Index rows, Index cols, unsigned seed) {
    const std::vector<double> v = uniform(std::size_t(rows * cols), seed);
    M m(rows, cols);
    for (Index j = 0; j < cols; ++j)
        for (Index i = 0; i < rows; ++i) m(i, j) = v[std::size_t(i + j * rows)];
    return m;
}

// f = sum(W .* A .* A), recorded; returns A's adjoints read both ways.
template <class M>
void check_quadratic(Index rows, Index cols) {
    tapeflow::tape t;
    const MatrixX<double> a0 = filled<MatrixX<double>>(rows, cols, 1);
    const MatrixX<double> w = filled<MatrixX<double>>(rows, cols, 2);
    M a = a0.cast<Real>();
    t.start_recording();
    tapeflow::register_inputs(t, a);
    Real f = 0.0;
    for (Index j = 0; j < cols; ++j)
        for (Index i = 0; i < rows; ++i) f += w(i, j) * a(i, j) * a(i, j);
    t.register_output(f);
    t.stop_recording();
    t.set_adjoint(f, 1.0);
    t.sweep();
    const auto g = tapeflow::adjoints(t, a);
    static_assert(std::is_same_v<typename std::decay_t<decltype(g)>::Scalar, double>);
    REQUIRE(g.rows() == rows);
    REQUIRE(g.cols() == cols);
    for (Index j = 0; j < cols; ++j)
        for (Index i = 0; i < rows; ++i) {
            CHECK(a(i, j).is_active());
            CHECK(g(i, j) == 2 * w(i, j) * a0(i, j));
            CHECK(g(i, j) == t.adjoint(a(i, j)));
        }
}

}  // namespace

TEST_CASE("register_inputs and adjoints of a matrix: the analytic gradient, column- and row-major") {
    check_quadratic<MatrixX<Real>>(5, 3);
    check_quadratic<RowMajorX<Real>>(4, 6);
    check_quadratic<VectorX<Real>>(7, 1);
    check_quadratic<Eigen::Matrix<Real, 1, Eigen::Dynamic>>(1, 5);
    check_quadratic<Eigen::Matrix<Real, 3, 2>>(3, 2);
    check_quadratic<MatrixX<Real>>(0, 4);  // empty: nothing to do
}

TEST_CASE("register_inputs on blocks and maps: only those elements become inputs") {
    tapeflow::tape t;
    MatrixX<Real> a = filled<MatrixX<double>>(4, 3, 3).cast<Real>();
    std::vector<Real> storage(6, Real(1.5));
    t.start_recording();
    tapeflow::register_inputs(t, a.topRows(2));     // a temporary block
    tapeflow::register_inputs(t, a.col(2).tail(1));  // and one element of the last column
    Eigen::Map<VectorX<Real>, 0, Eigen::InnerStride<2>> every_other(storage.data(), 3);
    tapeflow::register_inputs(t, every_other);       // storage[0], [2], [4]
    for (Index j = 0; j < 3; ++j)
        for (Index i = 0; i < 4; ++i) CHECK(a(i, j).is_active() == (i < 2 || (i == 3 && j == 2)));
    for (std::size_t k = 0; k < storage.size(); ++k) CHECK(storage[k].is_active() == (k % 2 == 0));

    Real f = a.sum() * 3.0 + storage[0] * storage[2] + storage[1];
    t.register_output(f);
    t.stop_recording();
    t.set_adjoint(f, 1.0);
    t.sweep();
    const MatrixX<double> g = tapeflow::adjoints(t, a);
    for (Index j = 0; j < 3; ++j)
        for (Index i = 0; i < 4; ++i) CHECK(g(i, j) == (a(i, j).is_active() ? 3.0 : 0.0));
    const VectorX<double> gs = tapeflow::adjoints(t, every_other);
    CHECK(gs(0) == 1.5);  // d(s0 s2)/ds0 = s2
    CHECK(gs(1) == 1.5);
    CHECK(gs(2) == 0.0);
    CHECK(tapeflow::adjoints(t, a.block(1, 2, 3, 1))(2, 0) == 3.0);  // a(3, 2)
}

TEST_CASE("register_inputs and adjoints on strided views: a block of a row-major matrix, a transpose, an outer-stride map") {
    // f = sum over the registered elements of (element index + 1) * element^2
    tapeflow::tape t;
    RowMajorX<Real> r = filled<MatrixX<double>>(5, 4, 4).cast<Real>();
    MatrixX<Real> c = filled<MatrixX<double>>(3, 5, 5).cast<Real>();
    std::vector<Real> storage(4 * 6);
    for (std::size_t k = 0; k < storage.size(); ++k) storage[k] = 0.1 * double(k) - 1.0;
    Eigen::Map<MatrixX<Real>, 0, Eigen::OuterStride<6>> strided(storage.data(), 4, 3);  // rows 0..3 of columns 0..2

    t.start_recording();
    tapeflow::register_inputs(t, r.block(1, 1, 3, 2));
    tapeflow::register_inputs(t, c.transpose());
    tapeflow::register_inputs(t, strided);
    for (Index i = 0; i < 5; ++i)
        for (Index j = 0; j < 4; ++j) CHECK(r(i, j).is_active() == (i >= 1 && i <= 3 && j >= 1 && j <= 2));
    for (std::size_t k = 0; k < storage.size(); ++k) CHECK(storage[k].is_active() == (k % 6 < 4 && k / 6 < 3));

    Real f = 0.0;
    auto add = [&f](const auto& m) {
        for (Index j = 0; j < m.cols(); ++j)
            for (Index i = 0; i < m.rows(); ++i) f += double(i + 10 * j + 1) * m(i, j) * m(i, j);
    };
    add(r.block(1, 1, 3, 2));
    add(c.transpose());
    add(strided);
    t.register_output(f);
    t.stop_recording();
    t.set_adjoint(f, 1.0);
    t.sweep();
    auto check = [&t](const auto& m) {
        const auto g = tapeflow::adjoints(t, m);
        REQUIRE(g.rows() == m.rows());
        REQUIRE(g.cols() == m.cols());
        for (Index j = 0; j < m.cols(); ++j)
            for (Index i = 0; i < m.rows(); ++i) CHECK(g(i, j) == 2 * double(i + 10 * j + 1) * m(i, j).value());
    };
    check(r.block(1, 1, 3, 2));
    check(c.transpose());
    check(strided);
    // a piece of a row of a row-major matrix: one run
    const auto segment = tapeflow::adjoints(t, r.row(2).segment(1, 2));
    const auto block = tapeflow::adjoints(t, r.block(1, 1, 3, 2));
    CHECK(segment(0) == block(1, 0));
    CHECK(segment(1) == block(1, 1));
    CHECK(tapeflow::adjoints(t, r)(0, 0) == 0.0);  // not registered
}

TEST_CASE("register_inputs and adjoints: misuse gives usage_error") {
    tapeflow::tape t;
    MatrixX<Real> a = MatrixX<double>::Ones(2, 2).cast<Real>();
    CHECK_THROWS_WITH(tapeflow::register_inputs(t, a), Catch::Contains("not recording"));
    CHECK_FALSE(a(0, 0).is_active());

    tapeflow::tape other;
    other.start_recording();
    tapeflow::register_inputs(other, a);
    other.stop_recording();
    CHECK_THROWS_WITH(tapeflow::adjoints(t, a), Catch::Contains("another tape"));
}
