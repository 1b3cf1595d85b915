// Dense products of Eigen matrices of Real (tapeflow/eigen/products.hpp):
// Eigen's matrix-matrix and matrix-vector kernels, specialized for Real x
// Real, Real x double and double x Real, tape each product as ONE external
// entry. Every product shape is checked three ways: the gradient of a
// nonlinear scalar function of the result against the same code with
// lazyProduct() (evaluated coefficient by coefficient, so taped per scalar)
// to 1e-12, against central differences of the code on double, and by the
// number of external entries (one above Eigen's coefficient-based threshold
// rows + cols + depth < 20, none below it). Then: one entry per product, the
// O(n^2) tape of an n x n product, the documented error of (s * A) * v, and
// the streaming tape.
#include <tapeflow/eigen/products.hpp>

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
using eigen_test::RowMajorX;
using eigen_test::RowVectorX;
using eigen_test::take;
using eigen_test::taped;
using eigen_test::uniform;
using eigen_test::VectorX;

namespace {

using lazy = std::true_type;     // l.lazyProduct(r): taped per scalar, the reference
using direct = std::false_type;  // l * r: the path under test

template <class Path, class L, class R>
auto mul(const L& l, const R& r) {
    if constexpr (Path::value)
        return l.lazyProduct(r);
    else
        return l * r;
}

/// f(x, path) -> T computes a product by `path` and a nonlinear scalar of it.
/// Checks: the operator* path tapes `externals` external entries, the
/// lazyProduct path none; values and gradients of both agree to 1e-12;
/// central differences of the double code agree with the gradient.
template <class F>
void check_product(const std::vector<double>& x, F&& f, std::size_t externals) {
    tapeflow::tape tape;
    const taped got = record(tape, x, [&](const auto& in) { return f(in, direct{}); });
    const taped want = record(tape, x, [&](const auto& in) { return f(in, lazy{}); });
    CHECK(got.statistics.externals == externals);
    CHECK(want.statistics.externals == 0);
    INFO("operator* " << got.value << ", lazyProduct " << want.value);
    CHECK(tapeflow_test::close(got.value, want.value, 1e-12));
    EIGEN_TEST_CHECK_GRADIENTS(got.gradient, want.gradient, 1e-12);
    eigen_test::check_finite_differences([&](const std::vector<double>& v) { return f(v, direct{}); }, x,
                                         got.gradient);
}

/// phi(A * B), A m x k and B k x n dynamic, both inputs.
auto general(Index m, Index k, Index n) {
    return [=](const auto& x, auto path) {
        using T = SCALAR_OF(x);
        std::size_t at = 0;
        const MatrixX<T> a = take<MatrixX<T>>(x, at, m, k);
        const MatrixX<T> b = take<MatrixX<T>>(x, at, k, n);
        const MatrixX<T> c = mul<decltype(path)>(a, b);
        return phi(c);
    };
}

template <class LhsOf, class RhsOf, class ResOf>
auto typed_product(Index m, Index k, Index n) {
    // LhsOf<T> etc. are the matrix types; all inputs.
    return [=](const auto& x, auto path) {
        using T = SCALAR_OF(x);
        using L = typename LhsOf::template type<T>;
        using R = typename RhsOf::template type<T>;
        using C = typename ResOf::template type<T>;
        std::size_t at = 0;
        const L a = take<L>(x, at, m, k);
        const R b = take<R>(x, at, k, n);
        const C c = mul<decltype(path)>(a, b);
        return phi(c);
    };
}

struct col_major {
    template <class T>
    using type = MatrixX<T>;
};
struct row_major {
    template <class T>
    using type = RowMajorX<T>;
};
template <int Rows, int Cols>
struct fixed {
    template <class T>
    using type = Eigen::Matrix<T, Rows, Cols>;
};
template <int Rows>
struct fixed_rows {
    template <class T>
    using type = Eigen::Matrix<T, Rows, Eigen::Dynamic>;
};
template <int Cols>
struct fixed_cols {
    template <class T>
    using type = Eigen::Matrix<T, Eigen::Dynamic, Cols>;
};
struct column_vector {
    template <class T>
    using type = VectorX<T>;
};
struct row_vector {
    template <class T>
    using type = RowVectorX<T>;
};

std::size_t inputs(Index m, Index k, Index n) { return std::size_t(m * k + k * n); }

/// check_product() of phi(A * B) with A of type Lhs<T> (m x k), B of Rhs<T>
/// (k x n) and the result in Res<T>; the inputs are uniform numbers.
template <class Lhs, class Rhs, class Res>
void check_typed(Index m, Index k, Index n, unsigned seed, std::size_t externals) {
    check_product(uniform(inputs(m, k, n), seed), typed_product<Lhs, Rhs, Res>(m, k, n), externals);
}

}  // namespace

// ---- size combinations --------------------------------------------------------

TEST_CASE("dynamic x dynamic at or above the coefficient-based threshold is one entry") {
    const auto [m, k, n] = GENERATE(table<Index, Index, Index>(
        {{7, 7, 7}, {9, 7, 11}, {23, 17, 9}, {40, 3, 30}, {3, 40, 30}, {30, 30, 3}, {33, 29, 31}}));
    CAPTURE(m, k, n);
    check_product(uniform(inputs(m, k, n), 101), general(m, k, n), 1);
}

TEST_CASE("dynamic x dynamic below the threshold stays coefficient-wise (no entry)") {
    const auto [m, k, n] = GENERATE(table<Index, Index, Index>({{6, 6, 6}, {3, 4, 5}, {2, 9, 8}, {9, 9, 1}}));
    CAPTURE(m, k, n);
    check_product(uniform(inputs(m, k, n), 102), general(m, k, n), 0);
}

TEST_CASE("fixed x fixed: small sizes coefficient-wise, 8 and more through the kernel") {
    SECTION("3x3 * 3x3") { check_typed<fixed<3, 3>, fixed<3, 3>, fixed<3, 3>>(3, 3, 3, 103, 0); }
    SECTION("2x3 * 3x4") { check_typed<fixed<2, 3>, fixed<3, 4>, fixed<2, 4>>(2, 3, 4, 104, 0); }
    SECTION("8x8 * 8x8") { check_typed<fixed<8, 8>, fixed<8, 8>, fixed<8, 8>>(8, 8, 8, 105, 1); }
    SECTION("12x10 * 10x9") {
        check_typed<fixed<12, 10>, fixed<10, 9>, fixed<12, 9>>(12, 10, 9, 106, 1);
    }
}

TEST_CASE("fixed x dynamic and dynamic x fixed") {
    SECTION("8x12 fixed * 12x9 dynamic") {
        check_typed<fixed<8, 12>, col_major, fixed_rows<8>>(8, 12, 9, 111, 1);
    }
    SECTION("20x16 dynamic * 16x2 fixed") {
        check_typed<col_major, fixed<16, 2>, fixed_cols<2>>(20, 16, 2, 112, 1);
    }
    SECTION("3x4 fixed * 4x20 dynamic (Eigen picks the coefficient-based product at compile time)") {
        check_typed<fixed<3, 4>, col_major, fixed_rows<3>>(3, 4, 20, 113, 0);
    }
    SECTION("10x3 dynamic * 3x3 fixed (coefficient-based at compile time)") {
        check_typed<col_major, fixed<3, 3>, fixed_cols<3>>(10, 3, 3, 114, 0);
    }
}

TEST_CASE("matrix x vector is one entry at every dynamic size") {
    SECTION("30x20 * 20") {
        check_typed<col_major, column_vector, column_vector>(30, 20, 1, 121, 1);
    }
    SECTION("3x4 * 4: the matrix-vector kernel has no size threshold") {
        check_typed<col_major, column_vector, column_vector>(3, 4, 1, 122, 1);
    }
    SECTION("row-major 25x18 * 18") {
        check_typed<row_major, column_vector, column_vector>(25, 18, 1, 123, 1);
    }
    SECTION("12x10 * 10x1 dynamic matrix: the matrix kernel hands over to the vector kernel") {
        check_product(uniform(inputs(12, 10, 1), 124), general(12, 10, 1), 1);
    }
    SECTION("5x5 * 5x1 dynamic matrix: below the threshold") {
        check_product(uniform(inputs(5, 5, 1), 125), general(5, 5, 1), 0);
    }
    SECTION("fixed 3x3 * 3: coefficient-wise") {
        check_typed<fixed<3, 3>, fixed<3, 1>, fixed<3, 1>>(3, 3, 1, 126, 0);
    }
    SECTION("transposed matrix, and vectors with a stride (rows of a matrix)") {
        auto f = [](const auto& x, auto path) {
            using T = SCALAR_OF(x);
            using P = decltype(path);
            std::size_t at = 0;
            const MatrixX<T> a = take<MatrixX<T>>(x, at, 14, 22);
            const MatrixX<T> b = take<MatrixX<T>>(x, at, 5, 14);
            const MatrixX<T> c = take<MatrixX<T>>(x, at, 5, 22);
            const VectorX<T> y = mul<P>(a.transpose(), b.row(2).transpose());  // 22x14 * 14
            const VectorX<T> z = mul<P>(a, c.row(3).transpose());              // 14x22 * 22
            return T(phi(y) + phi(z));
        };
        check_product(uniform(14 * 22 + 5 * 14 + 5 * 22, 127), f, 2);
    }
}

TEST_CASE("row vector x matrix is one entry, also into a row of a matrix") {
    SECTION("20 * 20x30") {
        check_typed<row_vector, col_major, row_vector>(1, 20, 30, 131, 1);
    }
    SECTION("20 * row-major 20x30") {
        check_typed<row_vector, row_major, row_vector>(1, 20, 30, 132, 1);
    }
    SECTION("v^T * A written into row 1 of a matrix (result with a stride)") {
        auto f = [](const auto& x, auto path) {
            using T = SCALAR_OF(x);
            std::size_t at = 0;
            const VectorX<T> v = take<VectorX<T>>(x, at, 20, 1);
            const MatrixX<T> a = take<MatrixX<T>>(x, at, 20, 30);
            MatrixX<T> c = take<MatrixX<T>>(x, at, 4, 30);
            c.row(1).noalias() = mul<decltype(path)>(v.transpose(), a);
            return phi(c);
        };
        check_product(uniform(20 + 600 + 120, 133), f, 1);
    }
}

TEST_CASE("outer products") {
    SECTION("vector * row vector: Eigen's outer product, coefficient-wise") {
        check_typed<column_vector, row_vector, col_major>(25, 1, 30, 141, 0);
    }
    SECTION("25x1 * 1x30 dynamic matrices: the matrix kernel with depth 1") {
        check_product(uniform(55, 142), general(25, 1, 30), 1);
    }
}

TEST_CASE("row-major operands and row-major results") {
    const Index m = 13, k = 11, n = 9;
    const std::vector<double> x = uniform(inputs(m, k, n), 151);
    SECTION("row x col -> col") { check_product(x, typed_product<row_major, col_major, col_major>(m, k, n), 1); }
    SECTION("col x row -> col") { check_product(x, typed_product<col_major, row_major, col_major>(m, k, n), 1); }
    SECTION("row x row -> row") { check_product(x, typed_product<row_major, row_major, row_major>(m, k, n), 1); }
    SECTION("col x col -> row") { check_product(x, typed_product<col_major, col_major, row_major>(m, k, n), 1); }
    SECTION("row x col -> row") { check_product(x, typed_product<row_major, col_major, row_major>(m, k, n), 1); }
}

TEST_CASE("transposed operands, and one matrix on both sides") {
    const Index m = 12, k = 10, n = 14;
    auto transposed = [=](bool ta, bool tb) {
        return [=](const auto& x, auto path) {
            using T = SCALAR_OF(x);
            using P = decltype(path);
            std::size_t at = 0;
            const MatrixX<T> a = ta ? take<MatrixX<T>>(x, at, k, m) : take<MatrixX<T>>(x, at, m, k);
            const MatrixX<T> b = tb ? take<MatrixX<T>>(x, at, n, k) : take<MatrixX<T>>(x, at, k, n);
            MatrixX<T> c;
            if (ta && tb)
                c = mul<P>(a.transpose(), b.transpose());
            else if (ta)
                c = mul<P>(a.transpose(), b);
            else if (tb)
                c = mul<P>(a, b.transpose());
            else
                c = mul<P>(a, b);
            return phi(c);
        };
    };
    const std::vector<double> x = uniform(inputs(m, k, n), 161);
    SECTION("A^T B") { check_product(x, transposed(true, false), 1); }
    SECTION("A B^T") { check_product(x, transposed(false, true), 1); }
    SECTION("A^T B^T") { check_product(x, transposed(true, true), 1); }
    SECTION("A^T A and A A (the same inputs on both sides)") {
        auto f = [](const auto& x, auto path) {
            using T = SCALAR_OF(x);
            using P = decltype(path);
            std::size_t at = 0;
            const MatrixX<T> a = take<MatrixX<T>>(x, at, 11, 11);
            const MatrixX<T> g = mul<P>(a.transpose(), a);
            const MatrixX<T> s = mul<P>(a, a);
            return T(phi(g) + phi(s));
        };
        check_product(uniform(121, 162), f, 2);
    }
}


TEST_CASE("blocks of matrices as operands and as the result") {
    SECTION("block * block") {
        auto f = [](const auto& x, auto path) {
            using T = SCALAR_OF(x);
            using P = decltype(path);
            std::size_t at = 0;
            const MatrixX<T> a = take<MatrixX<T>>(x, at, 24, 20);
            const MatrixX<T> b = take<MatrixX<T>>(x, at, 18, 16);
            const MatrixX<T> c = mul<P>(a.block(2, 1, 20, 15), b.block(1, 3, 15, 12));  // 20x12
            const MatrixX<T> d = mul<P>(a.topRows(10).leftCols(16), b.bottomRows(16));  // 10x16
            return T(phi(c) + phi(d));
        };
        check_product(uniform(24 * 20 + 18 * 16, 171), f, 2);
    }
    SECTION("the result written into a block of an active matrix, = and +=") {
        auto f = [](const auto& x, auto path) {
            using T = SCALAR_OF(x);
            using P = decltype(path);
            std::size_t at = 0;
            const MatrixX<T> a = take<MatrixX<T>>(x, at, 15, 11);
            const MatrixX<T> b = take<MatrixX<T>>(x, at, 11, 13);
            MatrixX<T> c = take<MatrixX<T>>(x, at, 18, 17);
            c.block(1, 2, 15, 13).noalias() = mul<P>(a, b);
            c.block(3, 4, 15, 13).noalias() += mul<P>(a, b);  // overlaps the first: the adds see its result
            return phi(c);
        };
        check_product(uniform(15 * 11 + 11 * 13 + 18 * 17, 172), f, 2);
    }
}

TEST_CASE("scaled products: a double factor, an active Real factor, a passive Real factor") {
    const Index m = 13, k = 12, n = 11;
    // inputs: A (m x k), B (k x n), s, t
    auto scaled = [=](int form) {
        return [=](const auto& x, auto path) {
            using T = SCALAR_OF(x);
            using P = decltype(path);
            std::size_t at = 0;
            const MatrixX<T> a = take<MatrixX<T>>(x, at, m, k);
            const MatrixX<T> b = take<MatrixX<T>>(x, at, k, n);
            const T s = x.at(at++);
            const T t = x.at(at++);
            const T passive = 1.5;
            MatrixX<T> c;
            switch (form) {
                case 0: c = mul<P>(2.0 * a, b); break;
                case 1: c = mul<P>(s * a, b); break;
                case 2: c = mul<P>(a, s * b); break;
                case 3: c = s * mul<P>(a, b); break;  // Eigen rewrites s * (A * B) as (s * A) * B
                case 4: c = mul<P>(s * a, t * b); break;
                case 5: c = mul<P>(passive * a, b); break;
                case 6: c = mul<P>(a * s, b); break;
                case 7: c = mul<P>(-a, b * 0.5); break;
            }
            return T(phi(c) + s * t);
        };
    };
    const std::vector<double> x = uniform(inputs(m, k, n) + 2, 181);
    SECTION("(2.0 * A) * B") { check_product(x, scaled(0), 1); }
    SECTION("(s * A) * B, s active") { check_product(x, scaled(1), 1); }
    SECTION("A * (s * B), s active") { check_product(x, scaled(2), 1); }
    SECTION("s * (A * B), s active") { check_product(x, scaled(3), 1); }
    SECTION("(s * A) * (t * B), both active") { check_product(x, scaled(4), 1); }
    SECTION("(p * A) * B, p a passive Real") { check_product(x, scaled(5), 1); }
    SECTION("(A * s) * B") { check_product(x, scaled(6), 1); }
    SECTION("(-A) * (B * 0.5)") { check_product(x, scaled(7), 1); }
}

TEST_CASE("accumulating products: C += A * B, C -= A * B, C.noalias() = A * B") {
    const Index m = 14, k = 9, n = 12;
    auto accumulate = [=](int form) {
        return [=](const auto& x, auto path) {
            using T = SCALAR_OF(x);
            using P = decltype(path);
            std::size_t at = 0;
            const MatrixX<T> a = take<MatrixX<T>>(x, at, m, k);
            const MatrixX<T> b = take<MatrixX<T>>(x, at, k, n);
            MatrixX<T> c = take<MatrixX<T>>(x, at, m, n);  // active before the product
            c = c.array().sin().matrix();
            const T s = x.at(at++);
            switch (form) {
                case 0: c.noalias() += mul<P>(a, b); break;
                case 1: c.noalias() -= mul<P>(a, b); break;
                case 2: c += mul<P>(a, b); break;  // Eigen evaluates A * B into a temporary first
                case 3: c -= mul<P>(a, b); break;
                case 4: c.noalias() = mul<P>(a, b); break;  // the old c is dropped
                case 5: c.noalias() += s * mul<P>(a, b); break;
                case 6: {  // A and B passive Reals: only the old C is an input of the entry
                    const MatrixX<T> pa = eigen_test::random_matrix(m, k, 193).template cast<T>();
                    const MatrixX<T> pb = eigen_test::random_matrix(k, n, 194).template cast<T>();
                    c.noalias() += mul<P>(pa, pb);
                    break;
                }
            }
            return phi(c);
        };
    };
    const std::vector<double> x = uniform(inputs(m, k, n) + std::size_t(m * n) + 1, 191);
    SECTION("C.noalias() += A * B") { check_product(x, accumulate(0), 1); }
    SECTION("C.noalias() -= A * B") { check_product(x, accumulate(1), 1); }
    SECTION("C += A * B") { check_product(x, accumulate(2), 1); }
    SECTION("C -= A * B") { check_product(x, accumulate(3), 1); }
    SECTION("C.noalias() = A * B") { check_product(x, accumulate(4), 1); }
    SECTION("C.noalias() += s * (A * B), s active") { check_product(x, accumulate(5), 1); }
    SECTION("C.noalias() += A * B, A and B passive") { check_product(x, accumulate(6), 1); }
}

TEST_CASE("C.noalias() += A * B dropped by reset(position) updates C as s += e does, one entry or per scalar") {
    // A prefix sets C(0, 0) = 2 a; the piece C += A B (-=, or v += M w) is
    // dropped by reset(p); then J = C(0, 0)^2. As for s += e, C(0, 0) after
    // the reset is its value at p plus a constant: dJ/da = 4 C(0, 0). n = 6
    // is below the coefficient-based threshold (taped per scalar), n = 7 is
    // one entry; a matrix-vector product is one entry at every size.
    const Index n = GENERATE(Index(6), Index(7));
    const int form = GENERATE(0, 1, 2);
    INFO("n " << n << ", form " << form);
    const double a0 = 0.5;
    tapeflow::tape tape;
    tape.start_recording();
    Real a = a0;
    tape.register_input(a);
    MatrixX<Real> c = MatrixX<Real>::Constant(n, n, 0.0);
    const MatrixX<Real> ma = MatrixX<Real>::Constant(n, n, 0.1), mb = MatrixX<Real>::Constant(n, n, 0.2);
    VectorX<Real> v = VectorX<Real>::Constant(n, 0.0);
    const VectorX<Real> w = VectorX<Real>::Constant(n, 0.3);
    c(0, 0) = 2.0 * a;
    v(0) = 2.0 * a;
    const tapeflow::position p = tape.get_position();
    const std::size_t externals = tape.statistics().externals;
    switch (form) {
        case 0: c.noalias() += ma * mb; break;
        case 1: c.noalias() -= ma * mb; break;
        default: v.noalias() += ma * w; break;
    }
    CHECK((tape.statistics().externals > externals) == (n == 7 || form == 2));
    tape.reset(p);
    const Real& y = form == 2 ? v(0) : c(0, 0);
    const double expected_y = 2 * a0 + (form == 0 ? 0.02 : form == 1 ? -0.02 : 0.03) * double(n);
    CHECK(y.value() == Approx(expected_y).epsilon(1e-14));
    Real J = y * y;
    tape.register_output(J);
    tape.stop_recording();
    tape.set_adjoint(J, 1.0);
    tape.sweep();
    CHECK(tape.adjoint(a) == Approx(4 * expected_y).epsilon(1e-14));
}

// ---- the three scalar pairings ---------------------------------------------------

TEST_CASE("Real x double and double x Real products, matrix-matrix and matrix-vector") {
    const Index m = 16, k = 13, n = 10;
    const MatrixX<double> dl = eigen_test::random_matrix(m, k, 201);  // a double left operand
    const MatrixX<double> dr = eigen_test::random_matrix(k, n, 202);  // a double right operand
    const RowMajorX<double> dl_row = dl;
    const VectorX<double> dv = eigen_test::random_matrix(k, 1, 203);
    const VectorX<double> dw = eigen_test::random_matrix(m, 1, 204);
    const std::vector<double> xl = uniform(std::size_t(m * k) + 1, 205);  // a Real left operand, then s
    const std::vector<double> xr = uniform(std::size_t(k * n) + 1, 206);  // a Real right operand, then s
    const std::vector<double> xv = uniform(std::size_t(k), 207);          // a Real vector

    // phi of the product of an input matrix of type M (rows x cols) with a fixed double operand
    auto real_left = [&](auto tag, auto&& product) {
        using M = typename decltype(tag)::type;
        return [&, product](const auto& x, auto path) {
            using T = SCALAR_OF(x);
            std::size_t at = 0;
            const auto a = take<typename M::template type<T>>(x, at, m, k);
            const T s = x.at(at++);
            return T(phi(product(a, s, path)) + s);
        };
    };
    auto real_right = [&](auto tag, auto&& product) {
        using M = typename decltype(tag)::type;
        return [&, product](const auto& x, auto path) {
            using T = SCALAR_OF(x);
            std::size_t at = 0;
            const auto b = take<typename M::template type<T>>(x, at, k, n);
            const T s = x.at(at++);
            return T(phi(product(b, s, path)) + s);
        };
    };
    struct col_tag { using type = col_major; };
    struct row_tag { using type = row_major; };

    SECTION("MatrixX<Real> * MatrixXd") {
        check_product(xl, real_left(col_tag{}, [&](const auto& a, const auto&, auto path) {
            using T = typename std::decay_t<decltype(a)>::Scalar;
            return MatrixX<T>(mul<decltype(path)>(a, dr));
        }), 1);
    }
    SECTION("MatrixXd * MatrixX<Real>") {
        check_product(xr, real_right(col_tag{}, [&](const auto& b, const auto&, auto path) {
            using T = typename std::decay_t<decltype(b)>::Scalar;
            return MatrixX<T>(mul<decltype(path)>(dl, b));
        }), 1);
    }
    SECTION("row-major Real * double, into a row-major result") {
        check_product(xl, real_left(row_tag{}, [&](const auto& a, const auto&, auto path) {
            using T = typename std::decay_t<decltype(a)>::Scalar;
            return RowMajorX<T>(mul<decltype(path)>(a, dr));
        }), 1);
    }
    SECTION("row-major double * Real, into a row-major result") {
        check_product(xr, real_right(col_tag{}, [&](const auto& b, const auto&, auto path) {
            using T = typename std::decay_t<decltype(b)>::Scalar;
            return RowMajorX<T>(mul<decltype(path)>(dl_row, b));
        }), 1);
    }
    SECTION("(s * A_real) * B_double and A_double * (s * B_real), s active") {
        check_product(xl, real_left(col_tag{}, [&](const auto& a, const auto& s, auto path) {
            using T = typename std::decay_t<decltype(a)>::Scalar;
            return MatrixX<T>(mul<decltype(path)>(s * a, dr));
        }), 1);
        check_product(xr, real_right(col_tag{}, [&](const auto& b, const auto& s, auto path) {
            using T = typename std::decay_t<decltype(b)>::Scalar;
            return MatrixX<T>(mul<decltype(path)>(dl, s * b));
        }), 1);
    }
    SECTION("MatrixX<Real> * VectorXd, col-major and row-major matrix") {
        check_product(xl, real_left(col_tag{}, [&](const auto& a, const auto&, auto path) {
            using T = typename std::decay_t<decltype(a)>::Scalar;
            return VectorX<T>(mul<decltype(path)>(a, dv));
        }), 1);
        check_product(xl, real_left(row_tag{}, [&](const auto& a, const auto&, auto path) {
            using T = typename std::decay_t<decltype(a)>::Scalar;
            return VectorX<T>(mul<decltype(path)>(a, dv));
        }), 1);
    }
    SECTION("VectorXd^T * MatrixX<Real>") {
        check_product(xl, real_left(col_tag{}, [&](const auto& a, const auto&, auto path) {
            using T = typename std::decay_t<decltype(a)>::Scalar;
            return RowVectorX<T>(mul<decltype(path)>(dw.transpose(), a));
        }), 1);
    }
    SECTION("MatrixXd * VectorX<Real>, col-major and row-major matrix; VectorX<Real>^T * MatrixXd") {
        auto with_vector = [&](int form) {
            return [&, form](const auto& x, auto path) {
                using T = SCALAR_OF(x);
                using P = decltype(path);
                std::size_t at = 0;
                const VectorX<T> v = take<VectorX<T>>(x, at, k, 1);
                if (form == 0) return phi(VectorX<T>(mul<P>(dl, v)));
                if (form == 1) return phi(VectorX<T>(mul<P>(dl_row, v)));
                return phi(RowVectorX<T>(mul<P>(v.transpose(), dr)));
            };
        };
        check_product(xv, with_vector(0), 1);
        check_product(xv, with_vector(1), 1);
        check_product(xv, with_vector(2), 1);
    }
    SECTION("MatrixX<Real> * VectorX<Real>") {
        auto f = [&](const auto& x, auto path) {
            using T = SCALAR_OF(x);
            std::size_t at = 0;
            const MatrixX<T> a = take<MatrixX<T>>(x, at, m, k);
            const VectorX<T> v = take<VectorX<T>>(x, at, k, 1);
            return phi(VectorX<T>(mul<decltype(path)>(a, v)));
        };
        check_product(uniform(std::size_t(m * k + k), 208), f, 1);
    }
}

TEST_CASE("D A + A D + M D with M a Map over the inputs from the second one (the gradient driver)") {
    // The program of issue 17, failure 5 (reported wrong by 8.7e8 at -O3
    // -DNDEBUG only): x holds 1 + n^2 inputs, A(i, j) = x[i + j n] (a Real
    // matrix, copies), M(i, j) = x[1 + i + j n] (a Map<const> over the inputs
    // themselves, so A and M overlap shifted by one), D a MatrixXd:
    //   f = |C|^2,  C = D A + A D + M D  (three products summed in one
    //   assignment: Eigen evaluates C = D A, C += A D, C += M D)
    //   df/dA = D^T W + W D^T,  df/dM = W D^T,  W = 2 C.
    // Sizes on both sides of Eigen's coefficient-based threshold (n <= 6
    // is taped per scalar, n >= 7 is three entries) and several kernel blocks.
    const Index n = GENERATE(Index(3), Index(6), Index(7), Index(20), Index(41), Index(97));
    INFO("n = " << n);
    const MatrixX<double> d = eigen_test::random_matrix(n, n, 221);
    auto f = [&](const auto& x) {
        using T = SCALAR_OF(x);
        const Eigen::Map<const MatrixX<T>> m(x.data() + 1, n, n);
        const MatrixX<T> a = Eigen::Map<const MatrixX<T>>(x.data(), n, n);
        const MatrixX<T> c = d * a + a * d + m * d;
        return T(c.squaredNorm());
    };
    const std::vector<double> x = uniform(std::size_t(1 + n * n), 222);
    for (int run = 0; run < 2; ++run) {  // the second takes the tape's pooled buffers
        const std::vector<double> g = tapeflow::gradient([&](const std::vector<Real>& v) { return f(v); }, x);
        if (n >= 7) CHECK(tapeflow::tape::active().statistics().externals == 3);

        const Eigen::Map<const MatrixX<double>> a(x.data(), n, n), m(x.data() + 1, n, n);
        const MatrixX<double> w = 2.0 * (d * a + a * d + m * d);
        const MatrixX<double> a_bar = d.transpose() * w + w * d.transpose(), m_bar = w * d.transpose();
        std::vector<double> want(x.size(), 0.0);
        for (Index k = 0; k < n * n; ++k) {
            want[std::size_t(k)] += a_bar(k % n, k / n);
            want[std::size_t(k + 1)] += m_bar(k % n, k / n);
        }
        EIGEN_TEST_CHECK_GRADIENTS(g, want, 1e-12);
        eigen_test::check_finite_differences(f, x, g);
    }
}

// ---- tape size -------------------------------------------------------------------

namespace {

// A recording with an n x n Real matrix A and B (inputs) and a double matrix D.
struct product_recording {
    tapeflow::tape tape;
    MatrixX<Real> a, b;
    MatrixX<double> ad, bd;
    explicit product_recording(Index n)
        : ad(eigen_test::random_matrix(n, n, 211)), bd(eigen_test::random_matrix(n, n, 212)) {
        a = ad.cast<Real>();
        b = bd.cast<Real>();
        tape.start_recording();
        for (Index j = 0; j < n; ++j)
            for (Index i = 0; i < n; ++i) {
                tape.register_input(a(i, j));
                tape.register_input(b(i, j));
            }
    }
    ~product_recording() { tape.stop_recording(); }
    // (statements, externals, bytes) that `step` adds to the tape
    template <class Step>
    std::array<std::uint64_t, 3> growth(Step&& step) {
        const tapeflow::tape_statistics before = tape.statistics();
        step();
        const tapeflow::tape_statistics after = tape.statistics();
        return {after.statements - before.statements, after.externals - before.externals,
                (after.record_bytes + after.external_bytes) - (before.record_bytes + before.external_bytes)};
    }
};

}  // namespace

TEST_CASE("a 64x64 product is ONE tape entry and its reverse is W B^T, A^T W") {
    const Index n = 64;
    product_recording r(n);
    MatrixX<Real> c;
    auto g = r.growth([&] { c = MatrixX<Real>(r.a * r.b); });
    CHECK(g[0] == 1);  // one statement, which is the external entry
    CHECK(g[1] == 1);

    // each pairing and the matrix-vector kernel: one entry each
    const VectorX<double> vd = VectorX<double>::LinSpaced(n, -1, 1);
    const VectorX<Real> v = r.a.col(3);  // n copies, active
    g = r.growth([&] { MatrixX<Real> t(r.a * r.bd); });
    CHECK((g[0] == 1 && g[1] == 1));
    g = r.growth([&] { MatrixX<Real> t(r.ad * r.b); });
    CHECK((g[0] == 1 && g[1] == 1));
    g = r.growth([&] { VectorX<Real> t(r.a * vd); });
    CHECK((g[0] == 1 && g[1] == 1));
    g = r.growth([&] { VectorX<Real> t(r.ad * v); });
    CHECK((g[0] == 1 && g[1] == 1));
    g = r.growth([&] { VectorX<Real> t(r.a * v); });
    CHECK((g[0] == 1 && g[1] == 1));

    // the reverse: seed C_bar = W, expect A_bar = W B^T and B_bar = A^T W
    r.tape.stop_recording();
    const MatrixX<double> w = eigen_test::random_matrix(n, n, 213);
    for (Index j = 0; j < n; ++j)
        for (Index i = 0; i < n; ++i) r.tape.set_adjoint(c(i, j), w(i, j));
    r.tape.sweep();
    const MatrixX<double> a_bar = w * r.bd.transpose(), b_bar = r.ad.transpose() * w;
    std::vector<double> got, want;
    for (Index j = 0; j < n; ++j)
        for (Index i = 0; i < n; ++i) {
            got.push_back(r.tape.adjoint(r.a(i, j)));
            got.push_back(r.tape.adjoint(r.b(i, j)));
            want.push_back(a_bar(i, j));
            want.push_back(b_bar(i, j));
        }
    EIGEN_TEST_CHECK_GRADIENTS(got, want, 1e-13);
    // the values
    const MatrixX<double> cd = r.ad * r.bd;
    double worst = 0;
    for (Index j = 0; j < n; ++j)
        for (Index i = 0; i < n; ++i) worst = std::max(worst, std::fabs(c(i, j).value() - cd(i, j)));
    CHECK(worst <= 1e-13 * cd.cwiseAbs().maxCoeff());
}

TEST_CASE("the tape of an n x n product grows as n^2, that of lazyProduct as n^3") {
    auto product_bytes = [](Index n, bool lazy_path) {
        product_recording r(n);
        const auto g = r.growth([&] {
            if (lazy_path) {
                MatrixX<Real> c = r.a.lazyProduct(r.b);
            } else {
                MatrixX<Real> c = r.a * r.b;
            }
        });
        return double(g[2]);
    };
    const double p32 = product_bytes(32, false), p64 = product_bytes(64, false), p128 = product_bytes(128, false);
    INFO("operator*: " << p32 << ", " << p64 << ", " << p128 << " bytes");
    CHECK(p64 / p32 > 3);
    CHECK(p64 / p32 < 5);
    CHECK(p128 / p64 > 3);
    CHECK(p128 / p64 < 5);
    // lazyProduct: 16, 32, 64 (128 would take ~100 MB of tape)
    const double l16 = product_bytes(16, true), l32 = product_bytes(32, true), l64 = product_bytes(64, true);
    INFO("lazyProduct: " << l16 << ", " << l32 << ", " << l64 << " bytes");
    CHECK(l32 / l16 > 6);
    CHECK(l64 / l32 > 6);
    CHECK(p64 < l64 / 10);
}

// ---- (s * A) * v -------------------------------------------------------------------

TEST_CASE("(s * A) * v with an active Real s, a Real A and a double v throws usage_error") {
    const Index m = 12, k = 9;
    const VectorX<double> v = eigen_test::random_matrix(k, 1, 221);
    const std::vector<double> x = uniform(std::size_t(m * k) + 1, 222);
    auto f = [&](const std::vector<Real>& in) {
        std::size_t at = 0;
        const MatrixX<Real> a = take<MatrixX<Real>>(in, at, m, k);
        const Real s = in.at(at++);
        const VectorX<Real> y = (s * a) * v;
        return phi(y);
    };
    tapeflow::tape tape;
    CHECK_THROWS_AS(record(tape, x, f), tapeflow::usage_error);
    CHECK_FALSE(tape.is_recording());  // record() cleaned up
    // a passive s is fine
    auto passive = [&](const auto& in, auto path) {
        using T = SCALAR_OF(in);
        std::size_t at = 0;
        const MatrixX<T> a = take<MatrixX<T>>(in, at, m, k);
        const T s = 1.25;
        return phi(VectorX<T>(mul<decltype(path)>(s * a, v)));
    };
    check_product(uniform(std::size_t(m * k), 223), passive, 1);
}

TEST_CASE("(s * A) * v: the forms that keep the derivative of s") {
    const Index m = 12, k = 9;
    const VectorX<double> v = eigen_test::random_matrix(k, 1, 231);
    const std::vector<double> x = uniform(std::size_t(m * k) + 1, 232);
    auto form = [&](int which) {
        return [&, which](const auto& in, auto path) {
            using T = SCALAR_OF(in);
            using P = decltype(path);
            std::size_t at = 0;
            const MatrixX<T> a = take<MatrixX<T>>(in, at, m, k);
            const T s = in.at(at++);
            VectorX<T> y;
            if (which == 0) {
                y = mul<P>(s * a, v.template cast<T>());  // a Real vector: Real x Real kernel
            } else if (which == 1) {
                const VectorX<T> t = mul<P>(a, v);  // a named temporary, then the scale
                y = s * t;
            } else {
                const RowMajorX<T> ar = a;  // row-major A: Eigen passes s as a Real
                y = mul<P>(s * ar, v);
            }
            return phi(y);
        };
    };
    SECTION("(s * A) * v.cast<Real>()") { check_product(x, form(0), 1); }
    SECTION("t = A * v; y = s * t") { check_product(x, form(1), 1); }
    SECTION("(s * A_rowmajor) * v") { check_product(x, form(2), 1); }
}

TEST_CASE("s * (A * v) with an active s and a double v also throws usage_error (Eigen rewrites it)") {
    // Eigen evaluates s * (A * v) as (s * A) * v (an evaluator for
    // scalar * Product), so it reaches the same get_factor; the message names
    // the forms that work (tested above).
    const Index m = 12, k = 9;
    const VectorX<double> v = eigen_test::random_matrix(k, 1, 241);
    auto f = [&](const std::vector<Real>& in) {
        std::size_t at = 0;
        const MatrixX<Real> a = take<MatrixX<Real>>(in, at, m, k);
        const Real s = in.at(at++);
        const VectorX<Real> y = s * (a * v);
        return phi(y);
    };
    const std::vector<double> x = uniform(std::size_t(m * k) + 1, 242);
    CHECK_THROWS_AS(tapeflow::gradient(f, x), tapeflow::usage_error);
}

// ---- recording modes ------------------------------------------------------------------

TEST_CASE("products under a spilling streaming tape give the same bits") {
    auto f = [](const std::vector<Real>& x) {
        std::size_t at = 0;
        const MatrixX<Real> a = take<MatrixX<Real>>(x, at, 30, 24);
        const MatrixX<Real> b = take<MatrixX<Real>>(x, at, 24, 28);
        const VectorX<Real> v = take<VectorX<Real>>(x, at, 24, 1);
        const Real s = x.at(at++);
        MatrixX<Real> c = (s * a) * b;
        c.noalias() += a * MatrixX<Real>(b.array().cos().matrix());
        const VectorX<Real> y = a * v;
        const RowVectorX<Real> z = v.transpose() * b;
        return Real(phi(c) + phi(y) + phi(z));
    };
    eigen_test::check_streaming_identical(uniform(30 * 24 + 24 * 28 + 24 + 1, 251), f);
}

TEST_CASE("outside a recording, or with passive operands, a product computes values only") {
    const MatrixX<double> ad = eigen_test::random_matrix(30, 25, 261), bd = eigen_test::random_matrix(25, 20, 262);
    const MatrixX<double> cd = ad * bd;
    const MatrixX<Real> a = ad.cast<Real>(), b = bd.cast<Real>();
    auto check_values = [&](const MatrixX<Real>& c) {
        REQUIRE(c.rows() == 30);
        REQUIRE(c.cols() == 20);
        std::size_t active = 0;
        double worst = 0;
        for (Index j = 0; j < 20; ++j)
            for (Index i = 0; i < 30; ++i) {
                active += c(i, j).is_active();
                worst = std::max(worst, std::fabs(c(i, j).value() - cd(i, j)));
            }
        CHECK(active == 0);
        CHECK(worst <= 1e-13 * cd.cwiseAbs().maxCoeff());
    };
    SECTION("no recording") {
        tapeflow::tape tape;
        check_values(a * b);
        check_values(a * bd);
        check_values(ad * b);
        CHECK(tape.statistics().externals == 0);
    }
    SECTION("recording, operands passive") {
        tapeflow::tape tape;
        tape.start_recording();
        check_values(a * b);
        check_values(a * bd);
        check_values(ad * b);
        tape.stop_recording();
        CHECK(tape.statistics().externals == 0);
        CHECK(tape.statistics().statements == 0);
    }
}

// detail::add_product calls Eigen's double kernels directly (GEMM, GEMV for
// one column of either storage order, a loop for depth 1): each branch,
// storage order and padded stride against a plain triple loop.
template <int LhsOrder, int RhsOrder>
void check_add_product(Index rows, Index cols, Index depth, Index pad) {
    const Index a_stride = (LhsOrder == Eigen::ColMajor ? rows : depth) + pad;
    const Index b_stride = (RhsOrder == Eigen::ColMajor ? depth : cols) + pad;
    const Index a_outer = LhsOrder == Eigen::ColMajor ? depth : rows, b_outer = RhsOrder == Eigen::ColMajor ? cols : depth;
    const std::vector<double> a = uniform(std::size_t(std::max<Index>(a_stride * a_outer, 1)), 271),
                              b = uniform(std::size_t(std::max<Index>(b_stride * b_outer, 1)), 272);
    auto at = [](const std::vector<double>& m, int order, Index stride, Index i, Index j) {
        return m[std::size_t(order == Eigen::ColMajor ? i + j * stride : i * stride + j)];
    };
    std::vector<double> c = uniform(std::size_t(std::max<Index>(rows * cols, 1)), 273), want = c;
    const double alpha = -1.5;
    for (Index j = 0; j < cols; ++j)
        for (Index i = 0; i < rows; ++i) {
            long double sum = 0;
            for (Index k = 0; k < depth; ++k)
                sum += (long double)at(a, LhsOrder, a_stride, i, k) * at(b, RhsOrder, b_stride, k, j);
            want[std::size_t(i + j * rows)] += double(alpha * sum);
        }
    tapeflow::detail::add_product<double, LhsOrder, RhsOrder>(rows, cols, depth, a.data(), a_stride, b.data(),
                                                              b_stride, c.data(), alpha);
    double worst = 0;
    for (std::size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::fabs(c[i] - want[i]));
    INFO("rows " << rows << ", cols " << cols << ", depth " << depth << ", pad " << pad << ", orders " << LhsOrder
                 << RhsOrder);
    CHECK(worst <= 1e-13 * double(depth + 1));
}

TEST_CASE("the double kernels behind an entry: every branch and storage order against a triple loop") {
    const std::array<std::array<Index, 3>, 12> shapes{{{0, 3, 2},
                                                       {3, 0, 2},
                                                       {3, 2, 0},
                                                       {1, 1, 1},
                                                       {4, 3, 1},
                                                       {5, 1, 4},
                                                       {1, 1, 7},
                                                       {1, 6, 5},
                                                       {7, 6, 5},
                                                       {40, 1, 33},
                                                       {33, 17, 29},
                                                       {70, 65, 80}}};
    for (const auto& s : shapes)
        for (Index pad : {Index(0), Index(3)}) {
            check_add_product<Eigen::ColMajor, Eigen::ColMajor>(s[0], s[1], s[2], pad);
            check_add_product<Eigen::ColMajor, Eigen::RowMajor>(s[0], s[1], s[2], pad);
            check_add_product<Eigen::RowMajor, Eigen::ColMajor>(s[0], s[1], s[2], pad);
            check_add_product<Eigen::RowMajor, Eigen::RowMajor>(s[0], s[1], s[2], pad);
        }
}
