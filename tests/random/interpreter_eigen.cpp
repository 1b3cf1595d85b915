// tests/random/interpreter_eigen.cpp - runs the eigen statements of random
// programs (layout: program_eigen.hpp) on dynamic-size Eigen matrices of
// double, of the dual numbers (eigen_dual.hpp) and of tapeflow::Real.
//
// The same Eigen code runs for every type except where tapeflow has its own
// one-entry function, which Real uses and the others replace by Eigen's:
//   tapeflow::dot / squared_norm / norm     a.dot(b), a.squaredNorm(), a.norm()
//   tapeflow::llt(A).solve(b) (and ldlt,    Eigen::LLT<matrix<T>>(A).solve(B), ...
//     partial_piv_lu, householder_qr)
// and the products Real x double, double x Real, which the others compute on
// T after casting the double operand. Products with rows + cols + depth >= 20
// are one entry for Real automatically (tapeflow/eigen/products.hpp), the
// smaller ones are taped per scalar; mode 2 of the solves runs Eigen's own
// LLT and PartialPivLU on Real (taped per scalar, with the blocks of products
// inside them as entries).
//
// The double, dual and Real runs must compute bit-identical values. They do
// for every form here (measured with a separate program, 3000 random cases
// per form, zeros of both signs among them) because:
//   - Eigen does not vectorize (EIGEN_DONT_VECTORIZE, set by CMakeLists.txt):
//     its packet kernels for double sum in another order than the scalar
//     kernels that the dual type gets (with SSE2, 3% to 54% of the matrix
//     products, x^T A products, dot products, sums, squared norms and QR
//     solves differ in the last bits);
//     tapeflow's entries compute with Eigen's double kernels, so the same
//     flag makes them run the dual's scalar code;
//   - matrices are dynamic-size: for fixed sizes Eigen unrolls a reduction
//     (and then sums pairwise) when its NumTraits cost is below a limit, and
//     the costs differ by type (an add costs 1 for double, 2 for Real and the
//     dual): the sum of a fixed 7 x 7 matrix is unrolled for double only, and
//     73% of those sums differ;
//   - products are small (every dimension <= 12 here): below 48 Eigen uses
//     one cache block; for large products the block sizes depend on
//     sizeof(scalar), 8 bytes for double (and Real's entries) but 16 for the
//     dual, and split the sums differently (measured: identical up to
//     300 x 300, 89% of the elements differ at 600 x 600);
//   - the right side of the double and dual solves is a one-column dynamic
//     matrix, as in tapeflow::factorization::solve: a compile-time vector
//     takes Eigen's triangular-solve-vector kernel, which sums in another
//     order (80% of the LLT solves differ).
#ifndef EIGEN_DONT_VECTORIZE
#error "interpreter_eigen.cpp needs EIGEN_DONT_VECTORIZE (see the comment above; CMakeLists.txt sets it)"
#endif

#include "random/interpreter_eigen.hpp"

#include <cstddef>
#include <type_traits>
#include <vector>

#include <tapeflow/eigen.hpp>

#include "random/eigen_dual.hpp"
#include "random/fused.hpp"

namespace tapeflow_random {
namespace {

template <class T>
using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
using Eigen::Index;

template <class T>
class eigen_run {
public:
    eigen_run(const statement& s, const std::vector<const T*>& slots) : s_(s), slots_(slots) {}

    std::vector<T> run() {
        switch (eigen_op(s_.form)) {
        case eigen_op::product: return product();
        case eigen_op::mixed_product: return mixed_product();
        case eigen_op::array: return array();
        case eigen_op::reduce: return reduce();
        case eigen_op::solve: return solve();
        case eigen_op::count: break;
        }
        return {};
    }

private:
    static constexpr bool real = std::is_same_v<T, tapeflow::Real>;

    /// The next rows x cols leaves, column-major (Real: one copy record per active slot).
    matrix<T> take(Index rows, Index cols) {
        matrix<T> m(rows, cols);
        for (Index j = 0; j < cols; ++j)
            for (Index i = 0; i < rows; ++i) {
                const leaf& l = s_.leaves[leaf_at_++];
                if (l.slot >= 0)
                    m(i, j) = *slots_[std::size_t(l.slot)];
                else
                    m(i, j) = l.k;
            }
        return m;
    }
    /// The next rows x cols literals of ks, column-major.
    Eigen::MatrixXd literals(Index rows, Index cols) {
        Eigen::MatrixXd m(rows, cols);
        for (Index j = 0; j < cols; ++j)
            for (Index i = 0; i < rows; ++i) m(i, j) = s_.ks[k_at_++];
        return m;
    }
    /// A double operand as it enters a product with T: itself for Real (a
    /// mixed product), cast to T for the others.
    template <class M>
    static auto passive(const M& k) {
        if constexpr (real)
            return M(k);
        else
            return Eigen::Matrix<T, M::RowsAtCompileTime, M::ColsAtCompileTime>(k.template cast<T>());
    }

    /// The written slots' values: an element of r, or the sum of r, squashed.
    template <class R>
    std::vector<T> results(const R& r) {
        std::vector<T> out;
        for (const out_slot& o : s_.outs) {
            T v = o.element >= 0 ? T(r(o.element % r.rows(), o.element / r.rows())) : T(r.sum());
            if (o.squash == 1) v = asinh(v);
            if (o.squash == 2) v = o.scale * tanh(v / o.scale);
            out.push_back(std::move(v));
        }
        return out;
    }

    std::vector<T> product() {
        const matrix<T> a = take(s_.rows, s_.depth), b = take(s_.depth, s_.cols);
        switch (s_.api / 2) {
        case 0: {
            const matrix<T> r = a * b;
            return results(r);
        }
        case 1: {  // a compile-time vector: Eigen's matrix-vector kernel
            const vector<T> x = b.col(0);
            const vector<T> r = a * x;
            return results(r);
        }
        default: {  // x^T B: the transposed (row-major) matrix-vector kernel
            const vector<T> x = a.row(0).transpose();
            const Eigen::Matrix<T, 1, Eigen::Dynamic> r = x.transpose() * b;
            return results(r);
        }
        }
    }

    std::vector<T> mixed_product() {
        switch (s_.api / 2) {
        case 0: {
            const matrix<T> a = take(s_.rows, s_.depth);
            const matrix<T> r = a * passive(literals(s_.depth, s_.cols));
            return results(r);
        }
        case 1: {
            const Eigen::MatrixXd k = literals(s_.rows, s_.depth);
            const matrix<T> b = take(s_.depth, s_.cols);
            const matrix<T> r = passive(k) * b;
            return results(r);
        }
        case 2: {
            const matrix<T> a = take(s_.rows, s_.depth);
            const Eigen::VectorXd k = literals(s_.depth, 1);
            const vector<T> r = a * passive(k);
            return results(r);
        }
        default: {
            const Eigen::MatrixXd k = literals(s_.rows, s_.depth);
            const vector<T> x = take(s_.depth, 1);
            const vector<T> r = passive(k) * x;
            return results(r);
        }
        }
    }

    std::vector<T> array() {
        const matrix<T> a = take(s_.rows, s_.cols), b = take(s_.rows, s_.cols);
        const T c = s_.ks[0];
        matrix<T> r;
        switch (s_.api) {
        case 0: r = (a.array().tanh() * b.array()).matrix(); break;
        case 1: r = (a.array().sin() + b.array().cos()).matrix(); break;
        case 2: r = (a.array().square() + c).sqrt().matrix(); break;
        case 3: r = (a.array() / (b.array().square() + c)).matrix(); break;
        case 4: r = (a.array().tanh().exp() * b.array().atan()).matrix(); break;
        default: r = ((a.array().square() + c).log() - b.array().cos().square()).matrix(); break;
        }
        return results(r);
    }

    std::vector<T> reduce() {
        const matrix<T> a = take(s_.rows, s_.cols);
        T v;
        switch (s_.api) {
        case 0: v = a.sum(); break;
        case 1:
        case 2: {
            const matrix<T> b = take(s_.rows, 1);
            if constexpr (real)
                if (s_.api == 2) {
                    v = tapeflow::dot(a, b);  // one entry
                    break;
                }
            v = a.col(0).dot(b.col(0));
            break;
        }
        case 3: v = a.squaredNorm(); break;
        case 4:
            if constexpr (real)
                v = tapeflow::squared_norm(a);
            else
                v = a.squaredNorm();
            break;
        case 5: v = a.norm(); break;
        case 6:
            if constexpr (real)
                v = tapeflow::norm(a);
            else
                v = a.norm();
            break;
        default: {  // 7: dot(a, k), 8: dot(k, a) with a double vector k
            const Eigen::VectorXd k = literals(s_.rows, 1);
            if constexpr (real)
                v = s_.api == 7 ? tapeflow::dot(a.col(0), k) : tapeflow::dot(k, a.col(0));
            else
                v = s_.api == 7 ? a.col(0).dot(passive(k)) : passive(k).dot(a.col(0));
            break;
        }
        }
        const matrix<T> r = matrix<T>::Constant(1, 1, v);
        return results(r);
    }

    /// A well-conditioned matrix for decomposition d (program_eigen.hpp).
    matrix<T> system(int d) {
        const Index n = s_.cols;
        const matrix<T> m = take(s_.rows, n);
        const matrix<T> t = m.array().tanh().matrix();
        const double c = s_.ks[0], sign = s_.ks[1];
        if (d <= 1) {  // llt, ldlt: +-(T T^T + c I)
            matrix<T> a = t * t.transpose();
            for (Index i = 0; i < n; ++i) a(i, i) += c;
            if (sign < 0) a = -a;
            return a;
        }
        matrix<T> a = t;  // lu: T +- (n + 1) I; qr: T + (n + 1) [I; 0]
        for (Index i = 0; i < n; ++i) a(i, i) += sign * double(n + 1);
        return a;
    }

    std::vector<T> solve() {
        const int d = solve_decomposition(s_.api), mode = solve_mode(s_.api);
        k_at_ = 2;  // ks: c, sign, then a double right side
        const matrix<T> a = system(d);
        if constexpr (real) {
            if (mode == 1) {  // Real A, double b
                const Eigen::VectorXd b = literals(s_.rows, 1);
                return tapeflow_solve(d, a, b);
            }
            const matrix<T> b = take(s_.rows, 1);
            if (mode == 0) return tapeflow_solve(d, a, vector<T>(b.col(0)));
            return eigen_solve(d, a, b);  // Eigen's own decomposition on Real
        } else {
            // A one-column dynamic matrix, as tapeflow's solve uses (see the top).
            const matrix<T> b =
                mode == 1 ? matrix<T>(literals(s_.rows, 1).template cast<T>()) : take(s_.rows, 1);
            return eigen_solve(d, a, b);
        }
    }
    template <class B>
    std::vector<T> tapeflow_solve(int d, const matrix<T>& a, const B& b) {
        switch (d) {
        case 0: return results(tapeflow::llt(a).solve(b));
        case 1: return results(tapeflow::ldlt(a).solve(b));
        case 2: return results(tapeflow::partial_piv_lu(a).solve(b));
        default: return results(tapeflow::householder_qr(a).solve(b));
        }
    }
    std::vector<T> eigen_solve(int d, const matrix<T>& a, const matrix<T>& b) {
        matrix<T> x;
        if constexpr (real) {  // mode 2: llt and partial_piv_lu only (each costs ~10 s of compilation)
            if (d == 0)
                x = Eigen::LLT<matrix<T>>(a).solve(b);
            else
                x = Eigen::PartialPivLU<matrix<T>>(a).solve(b);
        } else {
            switch (d) {
            case 0: x = Eigen::LLT<matrix<T>>(a).solve(b); break;
            case 1: x = Eigen::LDLT<matrix<T>>(a).solve(b); break;
            case 2: x = Eigen::PartialPivLU<matrix<T>>(a).solve(b); break;
            default: x = Eigen::HouseholderQR<matrix<T>>(a).solve(b); break;
            }
        }
        return results(x);
    }

    const statement& s_;
    const std::vector<const T*>& slots_;
    std::size_t leaf_at_ = 0, k_at_ = 0;
};

}  // namespace

template <class T>
std::vector<T> eigen_results(const statement& s, const std::vector<const T*>& slots) {
    return eigen_run<T>(s, slots).run();
}

// CMakeLists.txt compiles this file once per number type: four compilations
// of 0.5 to 1.2 minutes and 0.8 to 1.4 GB, which a parallel build runs side by
// side, instead of one of 3.5 minutes and 2.7 GB.
#if TAPEFLOW_RANDOM_EIGEN_TYPE == 0
template std::vector<double> eigen_results(const statement&, const std::vector<const double*>&);
#elif TAPEFLOW_RANDOM_EIGEN_TYPE == 1
template std::vector<tapeflow_test::dual> eigen_results(
    const statement&, const std::vector<const tapeflow_test::dual*>&);
#elif TAPEFLOW_RANDOM_EIGEN_TYPE == 2
template std::vector<tapeflow_test::dual_magnitude> eigen_results(
    const statement&, const std::vector<const tapeflow_test::dual_magnitude*>&);
#elif TAPEFLOW_RANDOM_EIGEN_TYPE == 3
template std::vector<tapeflow::Real> eigen_results(
    const statement&, const std::vector<const tapeflow::Real*>&);
#else
#error "TAPEFLOW_RANDOM_EIGEN_TYPE must be 0 (double), 1 (dual), 2 (dual_magnitude) or 3 (tapeflow::Real)"
#endif

}  // namespace tapeflow_random
