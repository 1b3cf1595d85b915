// Eigen matrices of tapeflow::Real with tapeflow/eigen/num_traits.hpp alone
// (no solver functions: Eigen's own code on Real, taped per scalar, except
// dynamic-size products, which every tapeflow Eigen header makes one entry):
// NumTraits and numeric_limits, fixed and dynamic sizes,
// mixed Real/double expressions in both orders, reductions, array()
// functions, coefficient-wise products and quotients, transposes and blocks,
// comparisons with select(), and Eigen's own decompositions on Real.
// Gradients are checked against formulas or against central differences of
// the same code run on double.
#include <tapeflow/eigen/num_traits.hpp>

#include <Eigen/Cholesky>
#include <Eigen/Geometry>  // cross
#include <Eigen/LU>
#include <Eigen/QR>

#include "eigen/eigen_support.hpp"

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

using eigen_test::check_gradient;
using eigen_test::Index;
using eigen_test::MatrixX;
using eigen_test::phi;
using eigen_test::Real;
using eigen_test::record;
using eigen_test::take;
using eigen_test::taped;
using eigen_test::uniform;
using eigen_test::VectorX;

// ---- types ------------------------------------------------------------------

static_assert(std::is_same_v<Eigen::NumTraits<Real>::Real, Real>);
static_assert(std::is_same_v<Eigen::NumTraits<Real>::NonInteger, Real>);
static_assert(std::is_same_v<Eigen::NumTraits<Real>::Nested, Real>);
static_assert(std::is_same_v<Eigen::NumTraits<Real>::Literal, double>);
static_assert(Eigen::NumTraits<Real>::IsComplex == 0 && Eigen::NumTraits<Real>::IsInteger == 0 &&
              Eigen::NumTraits<Real>::IsSigned == 1);
static_assert(Eigen::NumTraits<Real>::RequireInitialization == 1, "a Real owns an identifier");
static_assert(std::is_same_v<Eigen::ScalarBinaryOpTraits<Real, double>::ReturnType, Real>);
static_assert(std::is_same_v<Eigen::ScalarBinaryOpTraits<double, Real>::ReturnType, Real>);
static_assert(std::is_same_v<Eigen::NumTraits<tapeflow::RealF>::Literal, float>);
// mixed expressions, both orders, are expressions of Real
static_assert(std::is_same_v<decltype(std::declval<const Eigen::Matrix<Real, 2, 2>&>() +
                                      std::declval<const Eigen::Matrix2d&>())::Scalar,
                             Real>);
static_assert(std::is_same_v<decltype(std::declval<const Eigen::Matrix2d&>() -
                                      std::declval<const Eigen::Matrix<Real, 2, 2>&>())::Scalar,
                             Real>);
static_assert(std::is_same_v<decltype(2.0 * std::declval<const MatrixX<Real>&>())::Scalar, Real>);
static_assert(std::is_same_v<decltype(std::declval<const MatrixX<Real>&>() * 2.0)::Scalar, Real>);

TEST_CASE("NumTraits<Real> gives the numbers of NumTraits<double>, as passive Reals") {
    using R = Eigen::NumTraits<Real>;
    using D = Eigen::NumTraits<double>;
    CHECK(R::epsilon().value() == D::epsilon());
    CHECK(R::epsilon().value() == std::numeric_limits<double>::epsilon());
    CHECK(R::dummy_precision().value() == D::dummy_precision());
    CHECK(R::highest().value() == D::highest());
    CHECK(R::lowest().value() == D::lowest());
    CHECK(R::lowest().value() == -std::numeric_limits<double>::max());
    CHECK(R::infinity().value() == std::numeric_limits<double>::infinity());
    CHECK(std::isnan(R::quiet_NaN().value()));
    CHECK(R::digits10() == D::digits10());
    CHECK(R::digits() == std::numeric_limits<double>::digits);
    CHECK(R::min_exponent() == D::min_exponent());
    CHECK(R::max_exponent() == D::max_exponent());
    CHECK(Eigen::NumTraits<tapeflow::RealF>::epsilon().value() == std::numeric_limits<float>::epsilon());

    tapeflow::tape tape;
    tape.start_recording();
    CHECK_FALSE(R::epsilon().is_active());
    CHECK_FALSE(R::highest().is_active());
    CHECK_FALSE(R::dummy_precision().is_active());
    tape.stop_recording();
    CHECK(tape.statistics().statements == 0);
}

TEST_CASE("isApprox and isZero compare Real matrices with NumTraits<Real>::dummy_precision") {
    Eigen::Matrix<Real, 3, 3> a, b;
    for (Index j = 0; j < 3; ++j)
        for (Index i = 0; i < 3; ++i) a(i, j) = 1.0 + double(i + 3 * j);
    b = a;
    b(1, 2) = b(1, 2) * (1 + 1e-14);  // well inside dummy_precision (1e-12)
    CHECK(a.isApprox(b));
    b(1, 2) = b(1, 2) * (1 + 1e-6);   // well outside
    CHECK_FALSE(a.isApprox(b));
    CHECK((a - a).isZero());
    CHECK_FALSE(a.isZero());
    CHECK(Eigen::Matrix<Real, 3, 3>::Identity().isIdentity());
}

TEST_CASE("std::numeric_limits<Real> mirrors std::numeric_limits<double>") {
    using L = std::numeric_limits<Real>;
    using D = std::numeric_limits<double>;
    static_assert(L::is_specialized && !L::is_integer && L::is_signed);
    static_assert(L::digits == D::digits && L::digits10 == D::digits10 && L::max_exponent == D::max_exponent);
    static_assert(L::has_infinity && L::has_quiet_NaN && L::is_iec559 == D::is_iec559);
    CHECK(L::epsilon().value() == D::epsilon());
    CHECK(L::min().value() == D::min());
    CHECK(L::max().value() == D::max());
    CHECK(L::lowest().value() == D::lowest());
    CHECK(L::infinity().value() == D::infinity());
    CHECK(L::denorm_min().value() == D::denorm_min());
    CHECK(std::isnan(L::quiet_NaN().value()));
    CHECK_FALSE(L::max().is_active());
}

// ---- fixed sizes ------------------------------------------------------------

TEST_CASE("2x2 matrices of Real: arithmetic, product, inverse, determinant") {
    auto f = [](const auto& x) {
        using T = SCALAR_OF(x);
        using M = Eigen::Matrix<T, 2, 2>;
        std::size_t at = 0;
        const M a = take<M>(x, at, 2, 2);
        const M b = take<M>(x, at, 2, 2);
        M c = a * b - b.transpose() * 0.5 + a / 3.0;
        c += a.cwiseProduct(b);
        c -= 2.0 * b;
        const M d = -c + a.inverse();
        return T(d.trace() * c(0, 1) + d.determinant() + c.squaredNorm());
    };
    std::vector<double> x = uniform(8, 11);
    x[0] += 2;  // a well away from singular
    x[3] += 2;
    const taped r = check_gradient(f, x);
    CHECK(r.statistics.externals == 0);
}

TEST_CASE("3x3 matrices and 3-vectors of Real: products, cross, dot, blocks") {
    auto f = [](const auto& x) {
        using T = SCALAR_OF(x);
        using M = Eigen::Matrix<T, 3, 3>;
        using V = Eigen::Matrix<T, 3, 1>;
        std::size_t at = 0;
        const M a = take<M>(x, at, 3, 3);
        const V v = take<V>(x, at, 3, 1);
        const V w = take<V>(x, at, 3, 1);
        const V u = a * v + v.cross(w) - 0.5 * w;
        M s = a.transpose() * a + u * w.transpose();
        s.template block<2, 2>(1, 0) *= 2.0;
        M t = s;
        t.transposeInPlace();
        return T(u.dot(w) + 0.1 * s.determinant() + s.trace() + a.row(1).dot(a.col(2).transpose()) +
                 s.template block<2, 2>(1, 0).sum() + t(0, 2) * t(2, 0));
    };
    check_gradient(f, uniform(15, 12));
}

TEST_CASE("fixed-size Real times fixed-size double, both orders") {
    const Eigen::Matrix3d c = eigen_test::random_matrix(3, 3, 13);
    const Eigen::Vector3d d = eigen_test::random_matrix(3, 1, 14);
    auto f = [&](const auto& x) {
        using T = SCALAR_OF(x);
        using M = Eigen::Matrix<T, 3, 3>;
        std::size_t at = 0;
        const M a = take<M>(x, at, 3, 3);
        const M p = a * c;             // Real x double
        const M q = c * a;             // double x Real
        const Eigen::Matrix<T, 3, 1> y = a * d;
        const Eigen::Matrix<T, 1, 3> z = d.transpose() * a;
        return T(phi(p) + phi(q) + phi(y) + phi(z));
    };
    check_gradient(f, uniform(9, 15));
}

// ---- mixed Real / double ----------------------------------------------------

TEST_CASE("mixed Real/double expressions in both orders have the derivatives of the Real operand") {
    const MatrixX<double> b = eigen_test::random_matrix(4, 3, 21);
    SECTION("a linear combination: every partial is the net coefficient") {
        // y = sum(2 a + b - 0.5 a + b.cast<Real>() - (b - a) + a * 3 - a / 4)
        //   dy/da_ij = 2 - 0.5 + 1 + 3 - 0.25 = 5.25
        auto f = [&](const std::vector<Real>& x) {
            std::size_t at = 0;
            const MatrixX<Real> a = take<MatrixX<Real>>(x, at, 4, 3);
            const MatrixX<Real> c = 2.0 * a + b - a * 0.5 + b.cast<Real>() - (b - a) + a * 3 - a / 4.0;
            return Real(c.sum());
        };
        const std::vector<double> x = uniform(12, 22);
        tapeflow::tape tape;
        const taped r = record(tape, x, f);
        double want_value = 0;
        for (std::size_t k = 0; k < 12; ++k) want_value += 5.25 * x[k] + b.data()[k];
        CHECK(tapeflow_test::close(r.value, want_value, 1e-13));
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, std::vector<double>(12, 5.25), 1e-14);
    }
    SECTION("nonlinear, with arrays and coefficient-wise operations") {
        auto f = [&](const auto& x) {
            using T = SCALAR_OF(x);
            std::size_t at = 0;
            const MatrixX<T> a = take<MatrixX<T>>(x, at, 4, 3);
            MatrixX<T> c = a + b;       // Real + double
            c = b + c;                  // double + Real
            c = b - c.cwiseProduct(b);  // double - Real .* double
            const MatrixX<T> d =
                b.cwiseProduct(a) + a.cwiseQuotient(b.array().abs().matrix() + MatrixX<double>::Ones(4, 3));
            const Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic> e =
                b.array() * a.array() + a.array() / (b.array() + 3.0) + 1.5 - a.array() * 2.0;
            const MatrixX<T> g = b.template cast<T>() * 0.5 + a;
            return T(phi(c) + phi(d) + phi(e.matrix()) + phi(g));
        };
        check_gradient(f, uniform(12, 23));
    }
}

// ---- reductions -------------------------------------------------------------

namespace {

// The reductions of a vector type V of Real with n elements, against their
// formulas. x: positive, pairwise distinct.
template <class V>
void check_reductions(const std::vector<double>& x) {
    const std::size_t n = x.size();
    const Eigen::Map<const Eigen::VectorXd> xd(x.data(), Index(n));
    auto as_vector = [&](const std::vector<Real>& in) {
        std::size_t at = 0;
        return take<V>(in, at, Index(n), 1);
    };
    auto expect = [&](auto&& reduction, const std::vector<double>& want_gradient, double want_value) {
        tapeflow::tape tape;
        const taped r = record(tape, x, [&](const std::vector<Real>& in) { return Real(reduction(as_vector(in))); });
        CHECK(tapeflow_test::close(r.value, want_value, 1e-14));
        EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want_gradient, 1e-13);
    };
    std::vector<double> g(n);
    Index imin = 0, imax = 0;
    const double lo = xd.minCoeff(&imin), hi = xd.maxCoeff(&imax);
    const double product = xd.prod(), length = xd.norm();
    const Eigen::VectorXd w = eigen_test::random_matrix(Index(n), 1, 31);

    SECTION("sum") { expect([](const V& v) { return v.sum(); }, std::vector<double>(n, 1.0), xd.sum()); }
    SECTION("mean") {
        expect([](const V& v) { return v.mean(); }, std::vector<double>(n, 1.0 / double(n)), xd.mean());
    }
    SECTION("prod") {
        for (std::size_t i = 0; i < n; ++i) g[i] = product / x[i];
        expect([](const V& v) { return v.prod(); }, g, product);
    }
    SECTION("minCoeff and maxCoeff") {
        std::vector<double> e(n, 0.0);
        e[std::size_t(imin)] = 1;
        expect([](const V& v) { return v.minCoeff(); }, e, lo);
        e.assign(n, 0.0);
        e[std::size_t(imax)] = 1;
        expect([](const V& v) { return v.maxCoeff(); }, e, hi);
        // the index versions pick the same element as on double
        V v;
        v.resize(Index(n));
        for (Index i = 0; i < Index(n); ++i) v(i) = x[std::size_t(i)];
        Index i_lo = -1, i_hi = -1;
        CHECK(v.minCoeff(&i_lo).value() == lo);
        CHECK(v.maxCoeff(&i_hi).value() == hi);
        CHECK(i_lo == imin);
        CHECK(i_hi == imax);
    }
    SECTION("squaredNorm and norm") {
        for (std::size_t i = 0; i < n; ++i) g[i] = 2 * x[i];
        expect([](const V& v) { return v.squaredNorm(); }, g, length * length);
        for (std::size_t i = 0; i < n; ++i) g[i] = x[i] / length;
        expect([](const V& v) { return v.norm(); }, g, length);
    }
    SECTION("dot with a double vector and with itself") {
        for (std::size_t i = 0; i < n; ++i) g[i] = w(Index(i));
        expect([&](const V& v) { return v.dot(w); }, g, xd.dot(w));
        expect([&](const V& v) { return w.dot(v); }, g, xd.dot(w));
        for (std::size_t i = 0; i < n; ++i) g[i] = 2 * x[i] + w(Index(i));
        expect([&](const V& v) { return Real(v.dot(v) + v.dot(w.cast<Real>())); }, g, xd.squaredNorm() + xd.dot(w));
    }
}

}  // namespace

TEST_CASE("reductions of a fixed-size vector of Real match their formulas") {
    check_reductions<Eigen::Matrix<Real, 6, 1>>({0.7, 1.9, 0.35, 1.2, 1.55, 0.9});
}

TEST_CASE("reductions of a dynamic-size vector of Real match their formulas") {
    check_reductions<VectorX<Real>>({1.3, 0.45, 1.75, 0.6, 1.05, 0.8, 1.5});
}

TEST_CASE("reductions of a dynamic matrix of Real (trace, colwise, rowwise) against finite differences") {
    auto f = [](const auto& x) {
        using T = SCALAR_OF(x);
        std::size_t at = 0;
        const MatrixX<T> a = take<MatrixX<T>>(x, at, 5, 4);
        const VectorX<T> row_norms = a.rowwise().norm();
        const Eigen::Matrix<T, 1, Eigen::Dynamic> col_sums = a.colwise().sum();
        return T(a.topLeftCorner(4, 4).trace() * a.prod() + phi(row_norms) + phi(col_sums) + a.maxCoeff() -
                 a.minCoeff() + a.mean());
    };
    check_gradient(f, uniform(20, 32, 0.5, 1.5));
}

// ---- array functions ----------------------------------------------------------

namespace {

// y = sum_i w_i F(x_i) through the array function `apply`; dy/dx_i = w_i F'(x_i).
template <class Apply, class Derivative>
void check_array_function(const std::vector<double>& x, Apply&& apply, Derivative&& derivative) {
    const std::size_t n = x.size();
    const Eigen::ArrayXd w = eigen_test::random_matrix(Index(n), 1, 41).array() + 2.0;
    auto f = [&](const auto& in) {
        using T = SCALAR_OF(in);
        using A = Eigen::Array<T, Eigen::Dynamic, 1>;
        std::size_t at = 0;
        const A a = take<A>(in, at, Index(n), 1);
        const A r = apply(a);
        return T((w * r).sum());
    };
    tapeflow::tape tape;
    const taped r = record(tape, x, f);
    CHECK(tapeflow_test::close(r.value, f(x), 1e-14));
    std::vector<double> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = w(Index(i)) * derivative(x[i]);
    EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want, 1e-13);
}

}  // namespace

TEST_CASE("array() functions of Real have their derivatives") {
    const std::vector<double> pos{0.21, 0.47, 0.83, 1.15, 1.62, 1.94, 0.66, 1.31};
    const std::vector<double> mixed{-0.79, -0.53, -0.17, 0.15, 0.62, 0.94, -0.34, 0.31};
    SECTION("exp") {
        check_array_function(mixed, [](const auto& a) { return a.exp(); }, [](double v) { return std::exp(v); });
    }
    SECTION("log") {
        check_array_function(pos, [](const auto& a) { return a.log(); }, [](double v) { return 1 / v; });
    }
    SECTION("sin") {
        check_array_function(mixed, [](const auto& a) { return a.sin(); }, [](double v) { return std::cos(v); });
    }
    SECTION("cos") {
        check_array_function(mixed, [](const auto& a) { return a.cos(); }, [](double v) { return -std::sin(v); });
    }
    SECTION("sqrt") {
        check_array_function(pos, [](const auto& a) { return a.sqrt(); },
                             [](double v) { return 0.5 / std::sqrt(v); });
    }
    SECTION("square and cube") {
        check_array_function(mixed, [](const auto& a) { return a.square(); }, [](double v) { return 2 * v; });
        check_array_function(mixed, [](const auto& a) { return a.cube(); }, [](double v) { return 3 * v * v; });
    }
    SECTION("abs") {
        check_array_function(mixed, [](const auto& a) { return a.abs(); },
                             [](double v) { return v > 0 ? 1.0 : -1.0; });
    }
    SECTION("pow with a double exponent") {
        check_array_function(pos, [](const auto& a) { return a.pow(2.5); },
                             [](double v) { return 2.5 * std::pow(v, 1.5); });
    }
    SECTION("tanh") {
        check_array_function(mixed, [](const auto& a) { return a.tanh(); },
                             [](double v) { return 1 - std::tanh(v) * std::tanh(v); });
    }
    SECTION("max and min with a scalar") {
        check_array_function(pos, [](const auto& a) { return a.max(0.7); },
                             [](double v) { return v > 0.7 ? 1.0 : 0.0; });
        check_array_function(pos, [](const auto& a) { return a.min(0.7); },
                             [](double v) { return v < 0.7 ? 1.0 : 0.0; });
    }
    SECTION("inverse") {
        check_array_function(pos, [](const auto& a) { return a.inverse(); }, [](double v) { return -1 / (v * v); });
    }
}

TEST_CASE("cwiseProduct and cwiseQuotient of Real matrices have their derivatives") {
    // y = sum(a .* b) + sum(a ./ b): dy/da = b + 1/b, dy/db = a - a/b^2
    const std::size_t n = 12;
    std::vector<double> x = uniform(2 * n, 51, 0.5, 2.0);
    auto f = [&](const std::vector<Real>& in) {
        std::size_t at = 0;
        const MatrixX<Real> a = take<MatrixX<Real>>(in, at, 3, 4);
        const MatrixX<Real> b = take<MatrixX<Real>>(in, at, 3, 4);
        return Real(a.cwiseProduct(b).sum() + a.cwiseQuotient(b).sum());
    };
    tapeflow::tape tape;
    const taped r = record(tape, x, f);
    std::vector<double> want(2 * n);
    double value = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double a = x[i], b = x[n + i];
        value += a * b + a / b;
        want[i] = b + 1 / b;
        want[n + i] = a - a / (b * b);
    }
    CHECK(tapeflow_test::close(r.value, value, 1e-14));
    EIGEN_TEST_CHECK_GRADIENTS(r.gradient, want, 1e-13);
}

TEST_CASE("transpose, block, row, col and assignments into blocks") {
    auto f = [](const auto& x) {
        using T = SCALAR_OF(x);
        std::size_t at = 0;
        MatrixX<T> a = take<MatrixX<T>>(x, at, 6, 5);
        const MatrixX<T> s = a.block(1, 1, 3, 3) + a.topLeftCorner(3, 3).transpose();
        const VectorX<T> c = a.col(2);
        const Eigen::Matrix<T, 1, Eigen::Dynamic> r = a.row(4);
        a.row(0) = a.row(5) * 2.0;
        a.block(2, 2, 2, 2) *= 3.0;
        a.col(4) += a.col(3).cwiseProduct(a.col(1));
        const MatrixX<T> at_ = a.transpose();
        return T(phi(s) + c.head(5).dot(r.transpose()) + phi(at_.bottomRows(2)) + a.rightCols(2).sum());
    };
    check_gradient(f, uniform(30, 61));
}

// ---- comparisons ---------------------------------------------------------------

TEST_CASE("comparisons through array() and select() take the derivative of the branch taken") {
    // values away from the switching points (a == b, a == 0, a == 0.2) by
    // more than the finite-difference step
    std::vector<double> x = uniform(16, 71);
    for (std::size_t i = 0; i < 8; ++i) {
        if (std::fabs(x[i] - x[8 + i]) < 1e-3) x[8 + i] += 0.01;
        if (std::fabs(x[i]) < 1e-3 || std::fabs(x[i] - 0.2) < 1e-3) x[i] += 0.01;
    }
    auto f = [](const auto& in) {
        using T = SCALAR_OF(in);
        using A = Eigen::Array<T, Eigen::Dynamic, 1>;
        std::size_t at = 0;
        const A a = take<A>(in, at, 8, 1);
        const A b = take<A>(in, at, 8, 1);
        const A r = (a > b).select(a * b, a - 2.0 * b) + (a < 0.0).select(-a, a.square());
        const A m = (a >= 0.2).select(a, A::Zero(8));
        return T((r * r.sin()).sum() + m.sum());
    };
    check_gradient(f, x);

    // counts, any() and all() on Real arrays see the values
    std::vector<Real> in(x.begin(), x.end());
    std::size_t at = 0;
    const Eigen::Array<Real, Eigen::Dynamic, 1> a = take<Eigen::Array<Real, Eigen::Dynamic, 1>>(in, at, 8, 1);
    const Eigen::Array<Real, Eigen::Dynamic, 1> b = take<Eigen::Array<Real, Eigen::Dynamic, 1>>(in, at, 8, 1);
    Index greater = 0, negative = 0;
    for (std::size_t i = 0; i < 8; ++i) {
        greater += x[i] > x[8 + i];
        negative += x[i] < 0;
    }
    CHECK((a > b).count() == greater);
    CHECK((a < 0.0).count() == negative);
    CHECK((a <= b).count() == 8 - greater);
    CHECK((a.abs() < 1.01).all());  // uniform in [-1, 1), nudged by at most 0.01
    CHECK_FALSE((a > 2.0).any());
    CHECK((a == a).all());
    CHECK(((a != b) == (a < b || a > b)).all());
}

// ---- dynamic sizes and Eigen's own algorithms, taped per scalar --------------------

TEST_CASE("with num_traits.hpp alone a dynamic product of Real is one entry, lazyProduct per scalar") {
    auto f = [](const auto& x) {
        using T = SCALAR_OF(x);
        std::size_t at = 0;
        const MatrixX<T> a = take<MatrixX<T>>(x, at, 12, 10);
        const MatrixX<T> b = take<MatrixX<T>>(x, at, 10, 11);
        const VectorX<T> v = take<VectorX<T>>(x, at, 10, 1);
        const MatrixX<T> c = a * b;              // 12 + 11 + 10 >= 20: the matrix kernel, one entry
        const VectorX<T> y = a * v;              // the matrix-vector kernel, one entry
        const MatrixX<T> d = a.lazyProduct(b);  // coefficient by coefficient, per scalar
        return T(phi(c) + phi(y) + phi(d));
    };
    const taped r = check_gradient(f, uniform(120 + 110 + 10, 81), 60);
    CHECK(r.statistics.externals == 2);
    // the streaming tape, spilling, gives the same bits
    eigen_test::check_streaming_identical(uniform(120 + 110 + 10, 81), f);
}

TEST_CASE("Eigen's own decompositions of a Real matrix are taped per scalar and are right") {
    const int n = 5;
    auto spd = [&](const auto& x) {  // inputs: the lower triangle of a symmetric A, then b
        using T = SCALAR_OF(x);
        MatrixX<T> a(n, n);
        std::size_t at = 0;
        for (Index j = 0; j < n; ++j)
            for (Index i = j; i < n; ++i) a(i, j) = a(j, i) = x[at++] + (i == j ? 3.0 : 0.0);
        const VectorX<T> b = take<VectorX<T>>(x, at, n, 1);
        return std::make_pair(a, b);
    };
    const std::vector<double> x = uniform(n * (n + 1) / 2 + n, 91);
    SECTION("LLT") {
        check_gradient(
            [&](const auto& in) {
                const auto [a, b] = spd(in);
                return phi(VectorX<SCALAR_OF(in)>(a.llt().solve(b)));
            },
            x);
    }
    SECTION("LDLT") {
        check_gradient(
            [&](const auto& in) {
                const auto [a, b] = spd(in);
                return phi(VectorX<SCALAR_OF(in)>(a.ldlt().solve(b)));
            },
            x);
    }
    SECTION("PartialPivLU, inverse and determinant") {
        check_gradient(
            [&](const auto& in) {
                using T = SCALAR_OF(in);
                auto [a, b] = spd(in);
                a(0, n - 1) = a(0, n - 1) * 1.5;  // not symmetric
                const VectorX<T> y = a.partialPivLu().solve(b);
                const MatrixX<T> inv = a.inverse();
                return T(phi(y) + phi(inv) + a.determinant());
            },
            x);
    }
    SECTION("HouseholderQR, least squares") {
        check_gradient(
            [&](const auto& in) {
                using T = SCALAR_OF(in);
                std::size_t at = 0;
                const MatrixX<T> a = take<MatrixX<T>>(in, at, 5, 3);
                const VectorX<T> b = take<VectorX<T>>(in, at, 5, 1);
                const VectorX<T> y = a.householderQr().solve(b);
                return phi(y);
            },
            uniform(20, 92));
    }
}
