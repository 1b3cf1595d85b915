// Reductions and linear solves taped as ONE entry each
// (tapeflow/eigen/linear_algebra.hpp): tapeflow::dot / squared_norm / norm
// and the solves of tapeflow::llt / ldlt / partial_piv_lu / householder_qr.
// References: the same computation through Eigen's own code on Real
// (a.dot(b), A.llt().solve(b), ...), which is taped per scalar except for
// the dynamic-size products inside Eigen's algorithms (one entry each, as
// with every tapeflow Eigen header), to 1e-12 (reductions) and 1e-10
// (solves), and central differences of the code on double.
//
// Eigen's run-time checks are on in this file and throw (as in Eigen's own
// test suite): a precondition the header lets through to Eigen fails a test
// instead of aborting, or of reading out of bounds in a release build.
#include <stdexcept>
#include <string>

namespace eigen_test {
struct eigen_assertion : std::logic_error {
    using std::logic_error::logic_error;
};
}  // namespace eigen_test
#define eigen_assert(x)                                                                \
    do {                                                                               \
        if (!(x)) throw ::eigen_test::eigen_assertion("eigen_assert failed: " #x);     \
    } while (false)

#include <tapeflow/eigen/linear_algebra.hpp>

#include "eigen/eigen_support.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

using eigen_test::Index;
using eigen_test::MatrixX;
using eigen_test::phi;
using eigen_test::Real;
using eigen_test::record;
using eigen_test::take;
using eigen_test::taped;
using eigen_test::uniform;
using eigen_test::VectorX;

// ---- dot, squared_norm, norm ------------------------------------------------------

TEST_CASE("dot, squared_norm and norm are one entry each and match Eigen's scalar-taped a.dot(b)") {
    const Index n = 50;
    auto f = [](bool ours) {
        return [=](const auto& x) {
            using T = SCALAR_OF(x);
            using std::sin;
            std::size_t at = 0;
            const VectorX<T> a = take<VectorX<T>>(x, at, n, 1);
            const VectorX<T> b = take<VectorX<T>>(x, at, n, 1);
            if constexpr (std::is_same_v<T, Real>) {
                if (ours)
                    return Real(sin(tapeflow::dot(a, b)) + 0.3 * tapeflow::squared_norm(a) + tapeflow::norm(b) *
                                tapeflow::dot(a, a));
            }
            return T(sin(a.dot(b)) + 0.3 * a.squaredNorm() + b.norm() * a.dot(a));
        };
    };
    const std::vector<double> x = uniform(2 * n, 301);
    tapeflow::tape tape;
    const taped got = record(tape, x, f(true));
    const taped want = record(tape, x, f(false));
    CHECK(got.statistics.externals == 4);
    CHECK(want.statistics.externals == 0);
    CHECK(tapeflow_test::close(got.value, want.value, 1e-12));
    EIGEN_TEST_CHECK_GRADIENTS(got.gradient, want.gradient, 1e-12);
    eigen_test::check_finite_differences(f(false), x, got.gradient);
}

TEST_CASE("dot and squared_norm of one statement each: the formulas") {
    // y = dot(a, b): dy/da = b, dy/db = a; z = squared_norm(a): dz/da = 2a;
    // w = norm(a): dw/da = a / |a|
    const Index n = 9;
    const std::vector<double> x = uniform(2 * n, 302);
    const Eigen::Map<const Eigen::VectorXd> ad(x.data(), n), bd(x.data() + n, n);
    tapeflow::tape tape;
    auto split = [&](const std::vector<Real>& in) {
        std::size_t at = 0;
        VectorX<Real> a = take<VectorX<Real>>(in, at, n, 1);
        VectorX<Real> b = take<VectorX<Real>>(in, at, n, 1);
        return std::make_pair(a, b);
    };
    SECTION("dot") {
        const taped r = record(tape, x, [&](const auto& in) {
            auto [a, b] = split(in);
            return tapeflow::dot(a, b);
        });
        CHECK(r.statistics.externals == 1);
        CHECK(tapeflow_test::close(r.value, ad.dot(bd), 1e-14));
        std::vector<double> want;
        eigen_test::append(want, bd);
        eigen_test::append(want, ad);
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want, 1e-15);
    }
    SECTION("squared_norm and norm") {
        const taped r = record(tape, x, [&](const auto& in) {
            auto [a, b] = split(in);
            return Real(tapeflow::squared_norm(a) + tapeflow::norm(b));
        });
        CHECK(r.statistics.externals == 2);
        CHECK(tapeflow_test::close(r.value, ad.squaredNorm() + bd.norm(), 1e-14));
        std::vector<double> want;
        eigen_test::append(want, 2 * ad);
        eigen_test::append(want, bd / bd.norm());
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want, 1e-14);
    }
}

TEST_CASE("dot, squared_norm and norm of matrices, rows, transposed columns and blocks") {
    auto f = [](bool ours) {
        return [=](const auto& x) {
            using T = SCALAR_OF(x);
            std::size_t at = 0;
            // not const: a transpose of a block of a const matrix is not an
            // lvalue (expression operands have a test of their own)
            MatrixX<T> a = take<MatrixX<T>>(x, at, 5, 4);
            MatrixX<T> b = take<MatrixX<T>>(x, at, 5, 4);
            if constexpr (std::is_same_v<T, Real>) {
                if (ours)
                    return Real(tapeflow::dot(a, b) * tapeflow::squared_norm(a.bottomRows(3)) +
                                tapeflow::norm(a.row(1)) + tapeflow::dot(a.col(0).transpose(), b.col(3).transpose()) +
                                tapeflow::squared_norm(b.block(1, 1, 3, 2)));
            }
            return T((a.array() * b.array()).sum() * a.bottomRows(3).squaredNorm() + a.row(1).norm() +
                     a.col(0).dot(b.col(3)) + b.block(1, 1, 3, 2).squaredNorm());
        };
    };
    const std::vector<double> x = uniform(40, 303);
    tapeflow::tape tape;
    const taped got = record(tape, x, f(true));
    const taped want = record(tape, x, f(false));
    CHECK(got.statistics.externals == 5);
    CHECK(tapeflow_test::close(got.value, want.value, 1e-12));
    EIGEN_TEST_CHECK_GRADIENTS(got.gradient, want.gradient, 1e-12);
    eigen_test::check_finite_differences(f(false), x, got.gradient);
}

TEST_CASE("dot of Real and double operands, both orders") {
    const Index n = 12;
    const VectorX<double> d = eigen_test::random_matrix(n, 1, 304);
    const std::vector<double> x = uniform(std::size_t(n), 305);
    const Eigen::Map<const Eigen::VectorXd> ad(x.data(), n);
    tapeflow::tape tape;
    auto a_of = [&](const std::vector<Real>& in) {
        std::size_t at = 0;
        return take<VectorX<Real>>(in, at, n, 1);
    };
    std::vector<double> want;
    eigen_test::append(want, d);
    SECTION("dot(Real, double)") {
        const taped r = record(tape, x, [&](const auto& in) { return tapeflow::dot(a_of(in), d); });
        CHECK(r.statistics.externals == 1);
        CHECK(tapeflow_test::close(r.value, ad.dot(d), 1e-14));
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want, 1e-15);
    }
    SECTION("dot(double, Real)") {
        const taped r = record(tape, x, [&](const auto& in) { return tapeflow::dot(d, a_of(in)); });
        CHECK(r.statistics.externals == 1);
        CHECK(tapeflow_test::close(r.value, ad.dot(d), 1e-14));
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want, 1e-15);
    }
    SECTION("double operands only: a passive value, no entry") {
        tape.start_recording();
        const Real y = tapeflow::dot(d, d);
        const Real z = tapeflow::norm(d);
        tape.stop_recording();
        CHECK_FALSE(y.is_active());
        CHECK_FALSE(z.is_active());
        CHECK(tapeflow_test::close(y.value(), d.squaredNorm(), 1e-14));
        CHECK(tapeflow_test::close(z.value(), d.norm(), 1e-14));
        CHECK(tape.statistics().statements == 0);
    }
}

namespace {
MatrixX<double> test_matrix_for_expressions(Index n) {
    return eigen_test::random_matrix(n, n, 308) + 2.0 * MatrixX<double>::Identity(n, n);
}
}  // namespace

TEST_CASE("operands whose coefficients are computed (a - d, 2 * a, transposes of const blocks) get their gradient") {
    // For an operand that is not an lvalue, coeff() returns a temporary Real
    // whose identifier dies with it: the header must evaluate such operands
    // first (this test found that it did not: the whole gradient landed on
    // the last element).
    const Index n = 6;
    const VectorX<double> d = eigen_test::random_matrix(n, 1, 306);
    const std::vector<double> x = uniform(std::size_t(2 * n), 307);
    const Eigen::Map<const Eigen::VectorXd> ad(x.data(), n), bd(x.data() + n, n);
    tapeflow::tape tape;
    auto split = [&](const std::vector<Real>& in) {
        std::size_t at = 0;
        VectorX<Real> a = take<VectorX<Real>>(in, at, n, 1);
        VectorX<Real> b = take<VectorX<Real>>(in, at, n, 1);
        return std::make_pair(a, b);
    };
    std::vector<double> want;
    SECTION("squared_norm(a - d), d double: 2 (a - d), 0") {
        const taped r = record(tape, x, [&](const auto& in) { return tapeflow::squared_norm(split(in).first - d); });
        CHECK(tapeflow_test::close(r.value, (ad - d).squaredNorm(), 1e-14));
        eigen_test::append(want, 2 * (ad - d));
        eigen_test::append(want, VectorX<double>::Zero(n));
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want, 1e-14);
    }
    SECTION("dot(2 a, b): 2 b, 2 a") {
        const taped r = record(tape, x, [&](const auto& in) {
            auto [a, b] = split(in);
            return tapeflow::dot(2.0 * a, b);
        });
        CHECK(tapeflow_test::close(r.value, 2 * ad.dot(bd), 1e-14));
        eigen_test::append(want, 2 * bd);
        eigen_test::append(want, 2 * ad);
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want, 1e-14);
    }
    SECTION("norm(a + b): (a + b) / |a + b| twice") {
        const taped r = record(tape, x, [&](const auto& in) {
            auto [a, b] = split(in);
            return tapeflow::norm(a + b);
        });
        eigen_test::append(want, (ad + bd) / (ad + bd).norm());
        eigen_test::append(want, (ad + bd) / (ad + bd).norm());
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want, 1e-14);
    }
    SECTION("dot(a.transpose(), b.transpose()) of const vectors: b, a") {
        const taped r = record(tape, x, [&](const auto& in) {
            const auto [a, b] = split(in);
            return tapeflow::dot(a.transpose(), b.transpose());
        });
        CHECK(tapeflow_test::close(r.value, ad.dot(bd), 1e-14));
        eigen_test::append(want, bd);
        eigen_test::append(want, ad);
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want, 1e-14);
    }
    SECTION("partial_piv_lu(A).solve(2 b), A double: 2 A^-T 1 for b, a gets 0") {
        const MatrixX<double> m = test_matrix_for_expressions(n);
        const taped r = record(tape, x, [&](const auto& in) {
            auto [a, b] = split(in);
            return Real(tapeflow::partial_piv_lu(m).solve(2.0 * b).sum());
        });
        eigen_test::append(want, VectorX<double>::Zero(n));
        eigen_test::append(want, 2.0 * m.transpose().partialPivLu().solve(VectorX<double>::Ones(n)));
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want, 1e-12);
    }
}

TEST_CASE("dot of operands of different sizes throws usage_error") {
    const VectorX<Real> a = VectorX<double>::Ones(3).cast<Real>();
    const VectorX<double> b = VectorX<double>::Ones(4);
    const MatrixX<Real> m23 = MatrixX<double>::Ones(2, 3).cast<Real>();
    const MatrixX<Real> m32 = MatrixX<double>::Ones(3, 2).cast<Real>();
    const MatrixX<Real> m16 = MatrixX<double>::Ones(1, 6).cast<Real>();
    CHECK_THROWS_AS(tapeflow::dot(a, b), tapeflow::usage_error);
    CHECK_THROWS_AS(tapeflow::dot(b, a), tapeflow::usage_error);
    CHECK_THROWS_AS(tapeflow::dot(m23, m32), tapeflow::usage_error);  // same size, different shape
    CHECK_THROWS_AS(tapeflow::dot(m23, m16), tapeflow::usage_error);  // a row and a matrix of its size
    CHECK_THROWS_AS(tapeflow::dot(a.transpose(), b), tapeflow::usage_error);  // a row and a longer column
    CHECK_NOTHROW(tapeflow::dot(m23, m23));
}

TEST_CASE("dot of a row and a column of one length, as Eigen's a.dot(b) takes them") {
    // y = a . b for a a row (1 x n) and b a column (n x 1), or the other way
    // round: dy/da = b, dy/db = a, and y equals Eigen's a.dot(b) on doubles.
    const Index n = 7;
    const std::vector<double> x = uniform(2 * n, 311);
    const Eigen::Map<const Eigen::VectorXd> ad(x.data(), n), bd(x.data() + n, n);
    std::vector<double> want;  // in the order of the inputs: a, then b
    eigen_test::append(want, bd);
    eigen_test::append(want, ad);
    tapeflow::tape tape;
    auto check = [&](auto&& f) {
        const taped r = record(tape, x, f);
        CHECK(r.statistics.externals == 1);
        CHECK(tapeflow_test::close(r.value, ad.dot(bd), 1e-14));
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want, 1e-15);
    };
    using RowX = Eigen::Matrix<Real, 1, Eigen::Dynamic>;
    SECTION("RowVectorX<Real> . VectorX<Real>") {
        check([&](const std::vector<Real>& in) {
            std::size_t at = 0;
            const RowX a = take<RowX>(in, at, 1, n);
            const VectorX<Real> b = take<VectorX<Real>>(in, at, n, 1);
            return tapeflow::dot(a, b);
        });
    }
    SECTION("VectorX<Real> . a 1 x n MatrixX<Real> (shapes known at run time only)") {
        check([&](const std::vector<Real>& in) {
            std::size_t at = 0;
            const VectorX<Real> a = take<VectorX<Real>>(in, at, n, 1);
            const MatrixX<Real> b = take<MatrixX<Real>>(in, at, 1, n);
            return tapeflow::dot(a, b);
        });
    }
    SECTION("a.transpose() . b, a and b columns") {
        check([&](const std::vector<Real>& in) {
            std::size_t at = 0;
            const VectorX<Real> a = take<VectorX<Real>>(in, at, n, 1);
            const VectorX<Real> b = take<VectorX<Real>>(in, at, n, 1);
            return tapeflow::dot(a.transpose(), b);
        });
    }
    SECTION("a row of a Real matrix . a column of a double matrix") {
        const MatrixX<double> bm = bd;  // n x 1
        const taped r = record(tape, x, [&](const std::vector<Real>& in) {
            std::size_t at = 0;
            const MatrixX<Real> a = take<MatrixX<Real>>(in, at, 1, n);
            return tapeflow::dot(a.row(0), bm.col(0));
        });
        CHECK(r.statistics.externals == 1);
        CHECK(tapeflow_test::close(r.value, ad.dot(bd), 1e-14));
        std::vector<double> want_a(want.begin(), want.begin() + n);
        want_a.resize(x.size(), 0.0);  // b's inputs are not used
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want_a, 1e-15);
    }
}

TEST_CASE("norm at 0 has a derivative that is not finite, like sqrt") {
    tapeflow::tape tape;
    const taped r = record(tape, {0.0, 0.0, 0.0}, [](const std::vector<Real>& in) {
        std::size_t at = 0;
        return tapeflow::norm(take<VectorX<Real>>(in, at, 3, 1));
    });
    CHECK(r.value == 0.0);
    for (double g : r.gradient) CHECK_FALSE(std::isfinite(g));
}

// ---- solves ---------------------------------------------------------------------------

namespace {

enum class method { llt, ldlt, lu, qr };

const char* name(method how) {
    switch (how) {
        case method::llt: return "llt";
        case method::ldlt: return "ldlt";
        case method::lu: return "partial_piv_lu";
        case method::qr: return "householder_qr";
    }
    return "?";
}

// v(f) with f = tapeflow::llt(a), ... (a factorization object)
template <class A, class Visit>
auto visit_tapeflow(method how, const A& a, Visit&& v) {
    switch (how) {
        case method::llt: return v(tapeflow::llt(a));
        case method::ldlt: return v(tapeflow::ldlt(a));
        case method::lu: return v(tapeflow::partial_piv_lu(a));
        case method::qr: break;
    }
    return v(tapeflow::householder_qr(a));
}

// v(d) with d = a.llt(), ... (Eigen's decomposition of the matrix a, of any scalar)
template <class A, class Visit>
auto visit_eigen(method how, const A& a, Visit&& v) {
    switch (how) {
        case method::llt: return v(a.llt());
        case method::ldlt: return v(a.ldlt());
        case method::lu: return v(a.partialPivLu());
        case method::qr: break;
    }
    return v(a.householderQr());
}

// A factorizes: symmetric positive definite for llt and ldlt (negative
// definite for ldlt with negate), well-conditioned otherwise.
MatrixX<double> test_matrix(method how, Index rows, Index cols, unsigned seed, bool negate = false) {
    const MatrixX<double> m = eigen_test::random_matrix(rows, cols, seed);
    if (how == method::llt || how == method::ldlt) {
        MatrixX<double> s = m * m.transpose() / double(rows) + MatrixX<double>::Identity(rows, rows);
        return negate ? MatrixX<double>(-s) : s;
    }
    if (how == method::lu || rows == cols) return m + 2.0 * MatrixX<double>::Identity(rows, cols);
    return m;  // least squares: full column rank
}

struct solve_case {
    method how;
    Index rows, cols, k;  // A rows x cols; B rows x k
    bool vector_rhs;      // B a VectorX (k == 1)
};

/// phi(A^-1 B): inputs A then B; through tapeflow's factorization (ours) or Eigen's.
auto solve_objective(solve_case c, bool ours) {
    return [=](const auto& x) {
        using T = SCALAR_OF(x);
        std::size_t at = 0;
        const MatrixX<T> a = take<MatrixX<T>>(x, at, c.rows, c.cols);
        auto finish = [&](const auto& b) {
            if constexpr (std::is_same_v<T, Real>) {
                if (ours) return visit_tapeflow(c.how, a, [&](const auto& f) { return phi(f.solve(b)); });
            }
            return visit_eigen(c.how, a, [&](const auto& d) {
                return phi(typename std::decay_t<decltype(b)>::PlainObject(d.solve(b)));
            });
        };
        if (c.vector_rhs) return finish(take<VectorX<T>>(x, at, c.rows, 1));
        return finish(take<MatrixX<T>>(x, at, c.rows, c.k));
    };
}

std::vector<double> solve_inputs(const solve_case& c, unsigned seed, bool negate = false) {
    std::vector<double> x;
    eigen_test::append(x, test_matrix(c.how, c.rows, c.cols, seed, negate));
    eigen_test::append(x, eigen_test::random_matrix(c.rows, c.vector_rhs ? 1 : c.k, seed + 1));
    return x;
}

/// The solve through tapeflow is one entry and agrees with Eigen's
/// scalar-taped solve to 1e-10 and with central differences.
void check_solve(const solve_case& c, const std::vector<double>& x) {
    INFO(name(c.how) << ": A " << c.rows << "x" << c.cols << ", B " << c.rows << "x" << c.k
                     << (c.vector_rhs ? " (vector)" : ""));
    tapeflow::tape tape;
    const taped got = record(tape, x, solve_objective(c, true));
    const taped want = record(tape, x, solve_objective(c, false));
    CHECK(got.statistics.externals == 1);
    // the reference is Eigen's factorization taped per scalar (its products
    // are entries of their own): more statements than the one-entry solve
    CHECK(want.statistics.statements > got.statistics.statements);
    CHECK(tapeflow_test::close(got.value, want.value, 1e-10));
    EIGEN_TEST_CHECK_GRADIENTS(got.gradient, want.gradient, 1e-10);
    eigen_test::check_finite_differences(solve_objective(c, false), x, got.gradient, 40, 1e-6);
    if (c.how == method::llt || c.how == method::ldlt) {
        // only the lower triangle is read: no gradient on the strict upper one
        std::size_t upper_nonzero = 0, lower_nonzero = 0;
        for (Index j = 0; j < c.cols; ++j)
            for (Index i = 0; i < c.rows; ++i) {
                const double g = got.gradient[std::size_t(i + j * c.rows)];
                (i < j ? upper_nonzero : lower_nonzero) += g != 0.0;
            }
        CHECK(upper_nonzero == 0);
        CHECK(lower_nonzero == std::size_t(c.rows * (c.rows + 1) / 2));
    }
}

}  // namespace

TEST_CASE("solves with a vector right-hand side") {
    const method how = GENERATE(method::llt, method::ldlt, method::lu, method::qr);
    const Index n = GENERATE(Index(1), Index(6), Index(40));
    const solve_case c{how, n, n, 1, true};
    check_solve(c, solve_inputs(c, 311));
}

TEST_CASE("solves with a matrix right-hand side") {
    const method how = GENERATE(method::llt, method::ldlt, method::lu, method::qr);
    const solve_case c{how, 7, 7, 3, false};
    check_solve(c, solve_inputs(c, 321));
}

TEST_CASE("ldlt of a negative definite matrix") {
    const solve_case c{method::ldlt, 6, 6, 2, false};
    check_solve(c, solve_inputs(c, 331, true));
}

TEST_CASE("householder_qr least squares, rows > cols") {
    const auto [rows, cols, k, vector_rhs] =
        GENERATE(table<Index, Index, Index, bool>({{9, 5, 1, true}, {12, 4, 2, false}, {30, 7, 1, true}}));
    const solve_case c{method::qr, rows, cols, k, vector_rhs};
    // the residual is not 0: the A_bar term r z^T matters
    const std::vector<double> x = solve_inputs(c, 341);
    check_solve(c, x);
}

TEST_CASE("llt and ldlt of a symmetric A built from its lower triangle, against finite differences") {
    // Inputs: the lower triangle of A (A(i,j) = A(j,i) = x), then b. The
    // finite differences move both A(i,j) and A(j,i); the taped gradient of
    // the lower entry must be A_bar(i,j) + A_bar(j,i).
    const method how = GENERATE(method::llt, method::ldlt);
    const Index n = 7;
    auto f = [=](bool ours) {
        return [=](const auto& x) {
            using T = SCALAR_OF(x);
            MatrixX<T> a(n, n);
            std::size_t at = 0;
            for (Index j = 0; j < n; ++j)
                for (Index i = j; i < n; ++i) a(i, j) = a(j, i) = x[at++];
            const VectorX<T> b = take<VectorX<T>>(x, at, n, 1);
            if constexpr (std::is_same_v<T, Real>) {
                if (ours) return visit_tapeflow(how, a, [&](const auto& fz) { return phi(fz.solve(b)); });
            }
            return visit_eigen(how, a, [&](const auto& d) { return phi(VectorX<T>(d.solve(b))); });
        };
    };
    const MatrixX<double> a = test_matrix(how, n, n, 351);
    std::vector<double> x;
    for (Index j = 0; j < n; ++j)
        for (Index i = j; i < n; ++i) x.push_back(a(i, j));
    eigen_test::append(x, eigen_test::random_matrix(n, 1, 352));
    tapeflow::tape tape;
    const taped got = record(tape, x, f(true));
    const taped want = record(tape, x, f(false));
    CHECK(got.statistics.externals == 1);
    EIGEN_TEST_CHECK_GRADIENTS(got.gradient, want.gradient, 1e-10);
    eigen_test::check_finite_differences(f(false), x, got.gradient);
}

TEST_CASE("A Real with b double, and A double with b Real") {
    const method how = GENERATE(method::llt, method::ldlt, method::lu, method::qr);
    const Index rows = how == method::qr ? 10 : 8, cols = 8;
    const MatrixX<double> ad = test_matrix(how, rows, cols, 361);
    const MatrixX<double> bd = eigen_test::random_matrix(rows, 2, 362);
    INFO(name(how));
    SECTION("A Real, b double") {
        auto f = [&](bool ours) {
            return [&, ours](const auto& x) {
                using T = SCALAR_OF(x);
                std::size_t at = 0;
                const MatrixX<T> a = take<MatrixX<T>>(x, at, rows, cols);
                if constexpr (std::is_same_v<T, Real>) {
                    if (ours) return visit_tapeflow(how, a, [&](const auto& fz) { return phi(fz.solve(bd)); });
                }
                return visit_eigen(how, a, [&](const auto& d) { return phi(MatrixX<T>(d.solve(bd.cast<T>()))); });
            };
        };
        std::vector<double> x;
        eigen_test::append(x, ad);
        tapeflow::tape tape;
        const taped got = record(tape, x, f(true));
        const taped want = record(tape, x, f(false));
        CHECK(got.statistics.externals == 1);
        EIGEN_TEST_CHECK_GRADIENTS(got.gradient, want.gradient, 1e-10);
        eigen_test::check_finite_differences(f(false), x, got.gradient);
    }
    SECTION("A double, b Real") {
        auto f = [&](bool ours) {
            return [&, ours](const auto& x) {
                using T = SCALAR_OF(x);
                std::size_t at = 0;
                const MatrixX<T> b = take<MatrixX<T>>(x, at, rows, 2);
                if constexpr (std::is_same_v<T, Real>) {
                    if (ours) return visit_tapeflow(how, ad, [&](const auto& fz) { return phi(fz.solve(b)); });
                }
                const MatrixX<T> a = ad.cast<T>();
                return visit_eigen(how, a, [&](const auto& d) { return phi(MatrixX<T>(d.solve(b))); });
            };
        };
        std::vector<double> x;
        eigen_test::append(x, bd);
        tapeflow::tape tape;
        const taped got = record(tape, x, f(true));
        const taped want = record(tape, x, f(false));
        CHECK(got.statistics.externals == 1);
        EIGEN_TEST_CHECK_GRADIENTS(got.gradient, want.gradient, 1e-10);
        eigen_test::check_finite_differences(f(false), x, got.gradient);
    }
}

TEST_CASE("several solves share one factorization") {
    const method how = GENERATE(method::llt, method::ldlt, method::lu, method::qr);
    const Index rows = how == method::qr ? 11 : 9, cols = 9;
    auto f = [=](bool ours) {
        return [=](const auto& x) {
            using T = SCALAR_OF(x);
            std::size_t at = 0;
            const MatrixX<T> a = take<MatrixX<T>>(x, at, rows, cols);
            const VectorX<T> b1 = take<VectorX<T>>(x, at, rows, 1);
            const VectorX<T> b2 = take<VectorX<T>>(x, at, rows, 1);
            const MatrixX<T> b3 = take<MatrixX<T>>(x, at, rows, 3);
            auto three = [&](const auto& d) {
                const VectorX<T> x1 = d.solve(b1);
                const VectorX<T> x2 = d.solve(b2);
                const MatrixX<T> x3 = d.solve(b3);
                return T(phi(x1) + 2.0 * phi(x2) + phi(MatrixX<T>(x1 * x2.transpose())) + phi(x3));
            };
            if constexpr (std::is_same_v<T, Real>) {
                if (ours) return visit_tapeflow(how, a, three);
            }
            return visit_eigen(how, a, three);
        };
    };
    std::vector<double> x;
    eigen_test::append(x, test_matrix(how, rows, cols, 371));
    eigen_test::append(x, eigen_test::random_matrix(rows, 5, 372));
    INFO(name(how));
    tapeflow::tape tape;
    const taped got = record(tape, x, f(true));
    const taped want = record(tape, x, f(false));
    CHECK(got.statistics.externals == 3);
    CHECK(tapeflow_test::close(got.value, want.value, 1e-10));
    EIGEN_TEST_CHECK_GRADIENTS(got.gradient, want.gradient, 1e-10);
    eigen_test::check_finite_differences(f(false), x, got.gradient);
}

TEST_CASE("the factorization outlives A: the gradient is the one at factorization time") {
    const method how = GENERATE(method::llt, method::lu, method::qr);
    const Index rows = how == method::qr ? 10 : 8, cols = 8;
    INFO(name(how));
    std::vector<double> x;
    eigen_test::append(x, test_matrix(how, rows, cols, 381));
    eigen_test::append(x, eigen_test::random_matrix(rows, 2, 382));
    SECTION("A given new values (same identifiers) after factorizing") {
        auto f = [=](bool ours) {
            return [=](const auto& in) {
                using T = SCALAR_OF(in);
                std::size_t at = 0;
                MatrixX<T> a = take<MatrixX<T>>(in, at, rows, cols);
                const MatrixX<T> b = take<MatrixX<T>>(in, at, rows, 2);
                auto solve_after_change = [&](const auto& d) {
                    a = (a.array() * a.array() + 1.0).matrix();  // every element assigned again
                    const MatrixX<T> y = d.solve(b);
                    return T(phi(y) + 0.1 * phi(a));
                };
                if constexpr (std::is_same_v<T, Real>) {
                    if (ours) return visit_tapeflow(how, a, solve_after_change);
                }
                return visit_eigen(how, a, solve_after_change);
            };
        };
        tapeflow::tape tape;
        const taped got = record(tape, x, f(true));
        const taped want = record(tape, x, f(false));
        EIGEN_TEST_CHECK_GRADIENTS(got.gradient, want.gradient, 1e-10);
        eigen_test::check_finite_differences(f(false), x, got.gradient);
    }
    SECTION("A destroyed before the solve; matrix() keeps the values") {
        auto ours = [=](const std::vector<Real>& in) {
            std::size_t at = 0;
            const MatrixX<Real> b = take<MatrixX<Real>>(in, at, rows, 2);  // b first here
            auto solve_later = [&](const auto& factorized) {
                // A's elements are gone; their identifiers may be reused by b2
                const MatrixX<Real> b2 = (b.array() * 3.0).matrix();
                CHECK(factorized.matrix().rows() == rows);
                return Real(phi(factorized.solve(b)) + phi(factorized.solve(b2)));
            };
            std::size_t at_a = std::size_t(rows * 2);
            if (how == method::llt) {
                auto fz = [&] {
                    const MatrixX<Real> a = take<MatrixX<Real>>(in, at_a, rows, cols);
                    return tapeflow::llt(a);
                }();
                return solve_later(fz);
            }
            if (how == method::lu) {
                auto fz = [&] {
                    const MatrixX<Real> a = take<MatrixX<Real>>(in, at_a, rows, cols);
                    return tapeflow::partial_piv_lu(a);
                }();
                return solve_later(fz);
            }
            auto fz = [&] {
                const MatrixX<Real> a = take<MatrixX<Real>>(in, at_a, rows, cols);
                return tapeflow::householder_qr(a);
            }();
            for (Index j = 0; j < cols; ++j)
                for (Index i = 0; i < rows; ++i)
                    CHECK(fz.matrix()(i, j).value() == in[std::size_t(rows * 2 + i + j * rows)].value());
            return solve_later(fz);
        };
        auto reference = [=](const auto& in) {
            using T = SCALAR_OF(in);
            std::size_t at = 0;
            const MatrixX<T> b = take<MatrixX<T>>(in, at, rows, 2);
            const MatrixX<T> a = take<MatrixX<T>>(in, at, rows, cols);
            const MatrixX<T> b2 = (b.array() * 3.0).matrix();
            return visit_eigen(how, a, [&](const auto& d) {
                return T(phi(MatrixX<T>(d.solve(b))) + phi(MatrixX<T>(d.solve(b2))));
            });
        };
        // inputs: b, then A
        std::vector<double> xb(x.begin() + std::ptrdiff_t(rows * cols), x.end());
        xb.insert(xb.end(), x.begin(), x.begin() + std::ptrdiff_t(rows * cols));
        tapeflow::tape tape;
        const taped got = record(tape, xb, ours);
        const taped want = record(tape, xb, reference);
        CHECK(got.statistics.externals == 2);
        EIGEN_TEST_CHECK_GRADIENTS(got.gradient, want.gradient, 1e-10);
        eigen_test::check_finite_differences(reference, xb, got.gradient);
    }
}

// ---- errors -----------------------------------------------------------------------------

TEST_CASE("llt of a matrix that is not positive definite throws tapeflow::error") {
    MatrixX<double> ad = test_matrix(method::llt, 5, 5, 391);
    ad(3, 3) = -4.0;  // indefinite
    SECTION("double matrix") {
        CHECK_THROWS_AS(tapeflow::llt(ad), tapeflow::error);
        // the message names what each decomposition needs (it said "for llt" also for ldlt)
        CHECK_THROWS_WITH(tapeflow::llt(ad), Catch::Contains("llt needs a positive definite matrix") &&
                                                 Catch::Contains("ldlt a positive or negative semidefinite"));
    }
    SECTION("Real matrix while recording; the recording goes on") {
        tapeflow::tape tape;
        const taped r = record(tape, std::vector<double>(25, 0.0), [&](const std::vector<Real>& in) {
            std::size_t at = 0;
            MatrixX<Real> a = take<MatrixX<Real>>(in, at, 5, 5);
            a += ad;  // a = ad + inputs (0): active
            CHECK_THROWS_AS(tapeflow::llt(a), tapeflow::error);
            // partial_piv_lu of the same matrix works
            const VectorX<Real> y = tapeflow::partial_piv_lu(a).solve(VectorX<double>::Ones(5));
            return phi(y);
        });
        CHECK(r.statistics.externals == 1);
        // d phi / dA = -A^-T (w .* cos y) y^T
        const VectorX<double> y = ad.partialPivLu().solve(VectorX<double>::Ones(5));
        VectorX<double> ybar(5);
        for (Index i = 0; i < 5; ++i) ybar(i) = (1.0 + 0.25 * double((3 * i) % 7)) * std::cos(y(i));
        const MatrixX<double> abar = -ad.transpose().partialPivLu().solve(ybar) * y.transpose();
        std::vector<double> want;
        eigen_test::append(want, abar);
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want, 1e-12);
    }
}

TEST_CASE("partial_piv_lu of a singular matrix throws tapeflow::error instead of solving to NaN") {
    // Eigen's PartialPivLU does not fail: its solve gave NaN (an exactly
    // singular matrix) or numbers of order 1e15 (singular to rounding), and
    // so did the gradient, with no error.
    MatrixX<double> ad = test_matrix(method::lu, 5, 5, 431);
    const int which = GENERATE(0, 1);
    const char* what[] = {"a zero column", "a row the sum of two others"};
    INFO(what[which]);
    if (which == 0) ad.col(2).setZero();
    if (which == 1) ad.row(4) = ad.row(0) + ad.row(3);
    CHECK_THROWS_WITH(tapeflow::partial_piv_lu(ad), Catch::Contains("partial_piv_lu: the matrix is singular") &&
                                                        Catch::Contains("rcond()") &&
                                                        Catch::Contains("regularize"));
    SECTION("while recording: the tape records on, and a regular matrix solves") {
        tapeflow::tape tape;
        const taped r = record(tape, std::vector<double>(25, 0.0), [&](const std::vector<Real>& in) {
            std::size_t at = 0;
            MatrixX<Real> a = take<MatrixX<Real>>(in, at, 5, 5);
            MatrixX<Real> singular = a + ad;
            CHECK_THROWS_AS(tapeflow::partial_piv_lu(singular), tapeflow::error);
            const MatrixX<double> regular = test_matrix(method::lu, 5, 5, 433);
            MatrixX<Real> b = a + regular;
            return phi(VectorX<Real>(tapeflow::partial_piv_lu(b).solve(VectorX<double>::Ones(5))));
        });
        CHECK(r.statistics.externals == 1);
        for (double g : r.gradient) CHECK(std::isfinite(g));
    }
}

TEST_CASE("a matrix with a NaN or an inf throws tapeflow::error for every decomposition") {
    // Eigen's rcond() of a 1 x 1 [NaN] is 1, and maxCoeff() may skip a NaN
    // on R's diagonal: the elements are checked first.
    const method how = GENERATE(method::llt, method::ldlt, method::lu, method::qr);
    const int where = GENERATE(0, 1, 2);
    INFO(name(how) << ", case " << where);
    MatrixX<double> ad = test_matrix(how, how == method::qr ? 7 : 5, 5, 437);
    if (where == 0) ad(1, 1) = std::nan("");
    if (where == 1) ad(ad.rows() - 1, 4) = HUGE_VAL;  // the last column: R's last diagonal element
    if (where == 2) ad = MatrixX<double>::Constant(1, 1, std::nan(""));
    CHECK_THROWS_WITH(visit_tapeflow(how, ad, [](const auto&) { return 0; }),
                      Catch::Contains("the matrix has a NaN or an infinite element"));
}

TEST_CASE("householder_qr of a matrix of deficient column rank throws tapeflow::error") {
    // It gave a least-squares solution of order 1e14 without error.
    MatrixX<double> ad = test_matrix(method::qr, 9, 4, 441);
    const int which = GENERATE(0, 1);
    if (which == 0) ad.col(3) = 2.0 * ad.col(1);
    if (which == 1) ad.col(0) = ad.col(1) - 0.5 * ad.col(2);
    INFO((which == 0 ? "a column twice another" : "a column a combination of two others"));
    CHECK_THROWS_WITH(tapeflow::householder_qr(ad), Catch::Contains("householder_qr: the matrix is rank deficient"));
    CHECK_THROWS_WITH(tapeflow::householder_qr(ad.cast<Real>().eval()), Catch::Contains("rank deficient"));
}

TEST_CASE("rcond() of a factorization: exact for a diagonal matrix, and an ill-conditioned one still solves") {
    const method how = GENERATE(method::llt, method::ldlt, method::lu, method::qr);
    INFO(name(how));
    // diag(4, 1e-9, 2, 0.5): in the 1-norm, ||A|| ||A^-1|| = 4 / 1e-9, and
    // for householder_qr min |R_ii| / max |R_ii| is the same number
    VectorX<double> d(4);
    d << 4.0, 1e-9, 2.0, 0.5;
    const MatrixX<Real> a = MatrixX<double>(d.asDiagonal()).cast<Real>();
    visit_tapeflow(how, a, [&](const auto& f) {
        CHECK(f.rcond() == Approx(1e-9 / 4.0).epsilon(1e-12));
        // 9 digits lost of 16: accepted, and the solve is right to about 1e-7
        const VectorX<Real> x = f.solve(VectorX<double>::Ones(4));
        for (Index i = 0; i < 4; ++i) CHECK(x(i).value() == Approx(1.0 / d(i)).epsilon(1e-6));
        return 0;
    });
    // a well-conditioned matrix: Eigen's estimate is within a small factor
    // of the exact 1 / (||A||_1 ||A^-1||_1) (it estimates ||A^-1||_1 from below)
    if (how == method::lu) {
        const MatrixX<double> m = test_matrix(method::lu, 6, 6, 451);
        const double exact = 1.0 / (m.cwiseAbs().colwise().sum().maxCoeff() *
                                    m.inverse().cwiseAbs().colwise().sum().maxCoeff());
        const double estimate = tapeflow::partial_piv_lu(m).rcond();
        CHECK(estimate >= exact * (1 - 1e-12));
        CHECK(estimate <= 10 * exact);
    }
}

TEST_CASE("a right-hand side with the wrong number of rows throws usage_error") {
    const method how = GENERATE(method::llt, method::ldlt, method::lu, method::qr);
    INFO(name(how));
    const Index rows = how == method::qr ? 7 : 5;
    const MatrixX<Real> a = test_matrix(how, rows, 5, 401).cast<Real>();
    visit_tapeflow(how, a, [&](const auto& f) {
        CHECK_THROWS_AS(f.solve(VectorX<double>::Ones(rows + 1)), tapeflow::usage_error);
        CHECK_THROWS_AS(f.solve(MatrixX<Real>::Zero(rows - 1, 2)), tapeflow::usage_error);
        CHECK_NOTHROW(f.solve(VectorX<double>::Ones(rows)));
        return 0;
    });
}

TEST_CASE("householder_qr of a matrix with fewer rows than columns throws usage_error") {
    const MatrixX<Real> a = eigen_test::random_matrix(3, 5, 411).cast<Real>();
    CHECK_THROWS_AS(tapeflow::householder_qr(a), tapeflow::usage_error);
}

TEST_CASE("partial_piv_lu, llt and ldlt of a non-square matrix throw usage_error before Eigen sees it") {
    // The header checks the shape after decomposition.compute(): Eigen's
    // eigen_assert fires first (here it throws eigen_assertion; in a debug
    // build it aborts), and without assertions rows > cols reads and writes
    // out of bounds (AddressSanitizer: heap-buffer-overflow in LLT/LDLT,
    // SEGV in PartialPivLU).
    for (const auto& shape : {std::array<Index, 2>{3, 5}, std::array<Index, 2>{5, 3}}) {
        INFO(shape[0] << "x" << shape[1]);
        const MatrixX<Real> a = eigen_test::random_matrix(shape[0], shape[1], 421).cast<Real>();
        CHECK_THROWS_AS(tapeflow::partial_piv_lu(a), tapeflow::usage_error);
        CHECK_THROWS_AS(tapeflow::llt(a), tapeflow::usage_error);
        CHECK_THROWS_AS(tapeflow::ldlt(a), tapeflow::usage_error);
    }
}

// ---- tape size, streaming ----------------------------------------------------------------

TEST_CASE("a solve is one entry and the tape of an n x n factorization and solve grows as n^2") {
    const method how = GENERATE(method::llt, method::lu, method::qr);
    INFO(name(how));
    // (statements, externals, bytes) of: factorize, then solve
    auto growth = [&](Index n) {
        const MatrixX<double> ad = test_matrix(how, n, n, 431);
        tapeflow::tape tape;
        tape.start_recording();
        MatrixX<Real> a = ad.cast<Real>();
        VectorX<Real> b = VectorX<double>::LinSpaced(n, -1, 1).cast<Real>();
        for (Index j = 0; j < n; ++j)
            for (Index i = 0; i < n; ++i) tape.register_input(a(i, j));
        for (Index i = 0; i < n; ++i) tape.register_input(b(i));
        const tapeflow::tape_statistics s0 = tape.statistics();
        std::array<std::uint64_t, 4> g{};
        visit_tapeflow(how, a, [&](const auto& f) {
            const tapeflow::tape_statistics s1 = tape.statistics();
            const VectorX<Real> y = f.solve(b);
            const tapeflow::tape_statistics s2 = tape.statistics();
            g = {s2.statements - s1.statements, s2.externals - s1.externals,
                 (s2.record_bytes + s2.external_bytes) - (s0.record_bytes + s0.external_bytes),
                 s1.externals - s0.externals};
            return 0;
        });
        tape.stop_recording();
        return g;
    };
    const auto g32 = growth(32), g64 = growth(64);
    CHECK(g64[0] == 1);  // the solve: one statement, the entry
    CHECK(g64[1] == 1);
    CHECK(g64[3] == 0);  // factorizing tapes no entry
    const double ratio = double(g64[2]) / double(g32[2]);
    INFO("bytes " << g32[2] << " -> " << g64[2]);
    CHECK(ratio > 3);
    CHECK(ratio < 5);
}

TEST_CASE("solves and reductions under a spilling streaming tape give the same bits") {
    const Index n = 24;
    auto f = [=](const std::vector<Real>& x) {
        std::size_t at = 0;
        const MatrixX<Real> a = take<MatrixX<Real>>(x, at, n, n);
        const VectorX<Real> b = take<VectorX<Real>>(x, at, n, 1);
        const auto lu = tapeflow::partial_piv_lu(a);
        const VectorX<Real> y = lu.solve(b);
        const VectorX<Real> z = lu.solve(y);
        // symmetric positive definite
        const MatrixX<Real> s = (a + a.transpose()) * 0.5 + 10.0 * MatrixX<double>::Identity(n, n);
        const VectorX<Real> w = tapeflow::llt(s).solve(z);
        return Real(phi(y) + tapeflow::dot(y, z) * tapeflow::norm(w) + tapeflow::squared_norm(a));
    };
    std::vector<double> x;
    eigen_test::append(x, test_matrix(method::lu, n, n, 441));
    eigen_test::append(x, eigen_test::random_matrix(n, 1, 442));
    eigen_test::check_streaming_identical(x, f);
}
