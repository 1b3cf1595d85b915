// tapeflow/eigen/assignment.hpp: Eigen moves a computed coefficient into its
// destination (one statement per coefficient of C = A + B, not two), copies
// a coefficient read from a matrix (the source keeps its identifier), and
// the gradients are those of the same code on double (central differences)
// and of the scalar formulas.
#include <tapeflow/eigen/num_traits.hpp>

#include "eigen/eigen_support.hpp"

#include <cmath>
#include <type_traits>
#include <vector>

using eigen_test::check_gradient;
using eigen_test::Index;
using eigen_test::MatrixX;
using eigen_test::phi;
using eigen_test::Real;
using eigen_test::take;
using eigen_test::uniform;
using eigen_test::VectorX;

// An expression's coefficient is a non-const value (so it can be moved from);
// a matrix's is a const reference.
static_assert(Eigen::internal::is_arithmetic<Real>::value);
static_assert(std::is_same_v<decltype(std::declval<MatrixX<Real>>() + std::declval<MatrixX<Real>>())::CoeffReturnType,
                             Real>);
static_assert(std::is_same_v<MatrixX<Real>::CoeffReturnType, const Real&>);

namespace {

constexpr Index rows = 3, cols = 4, size = rows * cols;

/// Input matrices A and B (rows x cols) and a vector v (rows), registered on
/// `tape`, and the number of statements recorded so far.
struct operands {
    tapeflow::tape& tape;
    MatrixX<Real> a{rows, cols}, b{rows, cols};
    VectorX<Real> v{rows};
    explicit operands(tapeflow::tape& t) : tape(t) {
        const std::vector<double> x = uniform(2 * size + rows, 7);
        std::size_t at = 0;
        for (Index i = 0; i < size; ++i) a(i) = x[at++];
        for (Index i = 0; i < size; ++i) b(i) = x[at++];
        for (Index i = 0; i < rows; ++i) v(i) = x[at++];
        for (Index i = 0; i < size; ++i) tape.register_input(a(i));
        for (Index i = 0; i < size; ++i) tape.register_input(b(i));
        for (Index i = 0; i < rows; ++i) tape.register_input(v(i));
    }
    std::size_t statements() const { return std::size_t(tape.statistics().statements); }
};

}  // namespace

TEST_CASE("statements per coefficient: a computed coefficient is moved, a stored one copied") {
    tapeflow::tape tape;
    tape.start_recording();
    operands in(tape);

    std::size_t before = in.statements();
    MatrixX<Real> sum = in.a + in.b;  // one record per coefficient: the sum
    CHECK(in.statements() - before == std::size_t(size));

    before = in.statements();
    MatrixX<Real> t = in.a.array().tanh();
    CHECK(in.statements() - before == std::size_t(size));

    before = in.statements();
    // Each Eigen functor returns a Real: one record per operation (2.0 * b,
    // the difference, the product, exp), none for the store.
    MatrixX<Real> nested = ((in.a - 2.0 * in.b).array() * in.a.array()).exp();
    CHECK(in.statements() - before == std::size_t(4 * size));

    before = in.statements();
    sum = in.a.cwiseProduct(in.b);  // assignment into an existing matrix
    CHECK(in.statements() - before == std::size_t(size));

    before = in.statements();
    MatrixX<Real> copy = in.a;  // a copy: the source keeps its identifier, the copy gets its own
    CHECK(in.statements() - before == std::size_t(size));
    for (Index i = 0; i < size; ++i) {
        CHECK(in.a(i).is_active());
        CHECK(copy(i).is_active());
    }

    // colwise() + v reads v through Replicate, whose coefficients are values:
    // each is a copy of v(i) (a record), then the sum (a record).
    before = in.statements();
    MatrixX<Real> shifted = in.a.colwise() + in.v;
    CHECK(in.statements() - before == std::size_t(2 * size));
    tape.stop_recording();
}

TEST_CASE("gradients through moved coefficients equal the formulas") {
    tapeflow::tape tape;
    tape.start_recording();
    operands in(tape);
    // f = sum_ij w_ij sin(tanh(a_ij + b_ij) * a_ij), with phi's weights
    MatrixX<Real> s = in.a + in.b;
    s = s.array().tanh();          // in place: the old coefficients' identifiers go
    s = s.cwiseProduct(in.a);      // again in place
    Real f = phi(s);
    tape.register_output(f);
    tape.stop_recording();
    tape.set_adjoint(f, 1.0);
    tape.sweep();
    for (Index j = 0; j < cols; ++j)
        for (Index i = 0; i < rows; ++i) {
            const double a = in.a(i, j).value(), b = in.b(i, j).value();
            const double w = 1.0 + 0.25 * double((3 * i + 5 * j) % 7);
            const double th = std::tanh(a + b), u = th * a;
            const double dth = 1.0 - th * th;
            const double df_du = w * std::cos(u);
            INFO("element (" << i << ", " << j << ")");
            CHECK(tape.adjoint(in.a(i, j)) == Approx(df_du * (dth * a + th)).epsilon(1e-13));
            CHECK(tape.adjoint(in.b(i, j)) == Approx(df_du * dth * a).epsilon(1e-13));
        }
}

TEST_CASE("moved coefficients against finite differences: aliasing, blocks, reductions, mixed double") {
    const std::vector<double> x = uniform(2 * size + rows, 11);
    check_gradient(
        [](const auto& x) {
            using T = SCALAR_OF(x);
            std::size_t at = 0;
            MatrixX<T> a = take<MatrixX<T>>(x, at, rows, cols);
            const MatrixX<T> b = take<MatrixX<T>>(x, at, rows, cols);
            const VectorX<T> v = take<VectorX<T>>(x, at, rows, 1);
            const MatrixX<double> d = MatrixX<double>::Constant(rows, cols, 0.5);
            a = a + b;                                    // the destination is an operand
            a.block(0, 1, 2, 2) = a.block(1, 0, 2, 2).array().sin();  // overlapping blocks (Eigen evaluates into a temporary first)
            a.col(0) = a.col(0) + v;
            a = (a.array() * d.array()).matrix() + b;     // mixed Real/double
            MatrixX<T> r = a.transpose() * 1.0;           // transpose of an expression
            return (r.array().square().sum() + a.rowwise().sum().dot(v)) * 1.0;
        },
        x);
}
