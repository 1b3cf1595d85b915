// Every tapeflow Eigen header gives the same Eigen: this file is compiled once
// per public header (tests/eigen/CMakeLists.txt), each time including THAT
// header alone, and checks that a 40 x 40 product of Real matrices is one
// tape entry, with the gradient of the formula.
//
// Before: with <tapeflow/eigen/variables.hpp> (or num_traits.hpp,
// linear_algebra.hpp) the product ran Eigen's own kernel on Real and taped
// 249 600 statements; with assignment.hpp alone Eigen did not even know that
// a Real must be constructed. Two translation units of one program that
// include different headers then hold two definitions of the same Eigen
// templates (an ODR violation: which one the program runs depends on the
// linker and on inlining).
//
// TAPEFLOW_TEST_EIGEN_HEADER selects the header:
//   0 tapeflow/eigen.hpp          3 tapeflow/eigen/products.hpp
//   1 tapeflow/eigen/num_traits.hpp   4 tapeflow/eigen/linear_algebra.hpp
//   2 tapeflow/eigen/assignment.hpp   5 tapeflow/eigen/variables.hpp
//                                     6 tapeflow/eigen/matrix_variable.hpp
#if TAPEFLOW_TEST_EIGEN_HEADER == 0
#include <tapeflow/eigen.hpp>
#elif TAPEFLOW_TEST_EIGEN_HEADER == 1
#include <tapeflow/eigen/num_traits.hpp>
#elif TAPEFLOW_TEST_EIGEN_HEADER == 2
#include <tapeflow/eigen/assignment.hpp>
#elif TAPEFLOW_TEST_EIGEN_HEADER == 3
#include <tapeflow/eigen/products.hpp>
#elif TAPEFLOW_TEST_EIGEN_HEADER == 4
#include <tapeflow/eigen/linear_algebra.hpp>
#elif TAPEFLOW_TEST_EIGEN_HEADER == 5
#include <tapeflow/eigen/variables.hpp>
#elif TAPEFLOW_TEST_EIGEN_HEADER == 6
#include <tapeflow/eigen/matrix_variable.hpp>
#else
#error "TAPEFLOW_TEST_EIGEN_HEADER: 0 to 6"
#endif

#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <vector>

TEST_CASE("a 40 x 40 product of Real matrices is one tape entry whichever Eigen header is included") {
    // f(A) = sum(A A): df/dA(p, q) = (row sum q of A) + (column sum p of A)
    using matrix = Eigen::Matrix<tapeflow::Real, Eigen::Dynamic, Eigen::Dynamic>;
    const Eigen::Index n = 40;
    const Eigen::MatrixXd a0 = Eigen::MatrixXd::Random(n, n);
    tapeflow::tape tape;
    matrix a = a0.cast<tapeflow::Real>();
    tape.start_recording();
    for (Eigen::Index j = 0; j < n; ++j)
        for (Eigen::Index i = 0; i < n; ++i) tape.register_input(a(i, j));
    const tapeflow::tape_statistics before = tape.statistics();
    const matrix c = a * a;
    const tapeflow::tape_statistics product = tape.statistics();
    tapeflow::Real y = c.sum();
    tape.register_output(y);
    tape.stop_recording();

    CHECK(product.externals - before.externals == 1);
    CHECK(product.statements - before.statements == 1);  // the entry's record alone
    const Eigen::MatrixXd c0 = a0 * a0;
    CHECK(std::abs(y.value() - c0.sum()) <= 1e-12 * c0.cwiseAbs().sum());

    tape.set_adjoint(y, 1.0);
    tape.sweep();
    const Eigen::VectorXd row_sums = a0.rowwise().sum(), column_sums = a0.colwise().sum().transpose();
    double worst = 0;
    for (Eigen::Index q = 0; q < n; ++q)
        for (Eigen::Index p = 0; p < n; ++p)
            worst = std::fmax(worst, std::abs(tape.adjoint(a(p, q)) - (row_sums(q) + column_sums(p))));
    CHECK(worst <= 1e-12);
}
