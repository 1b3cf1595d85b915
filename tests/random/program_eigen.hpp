// tests/random/program_eigen.hpp - the rule for eigen statements (part of
// program.hpp; interpreter_eigen.cpp runs them).
//
// What an eigen statement holds (matrices column-major; see eigen_op):
//   product        leaves: A (rows x depth), then B (depth x cols). Shape 1:
//                  cols = 1 and B is a vector x; shape 2: rows = 1 and A is x^T.
//   mixed_product  leaves: the slot operand; ks: the double one (literals).
//                  Kind 0: A (rows x depth) * K (depth x cols); 1: K * B;
//                  2: A * k (cols = 1, k a VectorXd); 3: K * x (cols = 1).
//   array          leaves: A, then B (both rows x cols); ks[0] = c > 0.
//   reduce         leaves: a (rows x cols; cols = 1 for the dot products),
//                  then b (dot, tapeflow::dot); ks: the double vector k of
//                  api 7 and 8. Norms: the last element of a is a literal
//                  >= 0.5, so a != 0 (the norm has no derivative at 0).
//   solve          leaves: M (rows x cols), then b (rows) unless mode 1 (b in
//                  ks). ks[0] = c in [0.5, 2], ks[1] = +-1. The interpreter
//                  makes A well conditioned from T = tanh(M), n = cols:
//                    llt   A = T T^T + c I              (eigenvalues >= c)
//                    ldlt  A = +-(T T^T + c I)          (definite either sign)
//                    lu    A = T +- (n + 1) I           (diagonally dominant)
//                    qr    A = T + (n + 1) [I; 0]       (rows >= cols)
// The result is rows x cols (product, mixed, array), 1 x 1 (reduce) or
// cols x 1 (solve); each written slot takes one element of it, or the sum,
// squashed when its bound is large.
#pragma once

#include "program.hpp"

namespace tapeflow_random {

inline void generator::eigen_(statement& s) {
    s.kind = stmt::eigen;
    s.form = between(0, int(eigen_op::count) - 1);
    s.api = between(0, eigen_forms[s.form] - 1);
    const auto leaves = [&](int n) {  // appends n leaves; the largest bound
        double m = 0;
        for (int i = 0; i < n; ++i) m = std::fmax(m, random_leaf(s.leaves));
        return m;
    };
    const auto literals = [&](int n) {
        for (int i = 0; i < n; ++i) s.ks.push_back(uniform(-2, 2));
        return 2.0;
    };
    // Sizes of a product: large ones have rows + cols + depth >= 20 (tapeflow
    // tapes them as one entry), all are at most 12 (Eigen splits much larger
    // products into cache blocks whose size depends on the scalar type, and
    // the values would differ: interpreter_eigen.cpp).
    const auto sizes = [&](bool large, bool vector_rhs, bool row_lhs) {
        do {
            s.rows = row_lhs ? 1 : between(1, large ? 12 : 4);
            s.cols = vector_rhs ? 1 : between(1, large ? 12 : 4);
            s.depth = between(1, large ? 12 : 4);
        } while (large && s.rows + s.cols + s.depth < 20);
    };

    double element = 0;  // bound of an element of the result
    int result_rows = 1, result_cols = 1;
    switch (eigen_op(s.form)) {
    case eigen_op::product: {
        const int shape = s.api / 2;
        sizes(s.api % 2 == 1, shape == 1, shape == 2);
        const double a = leaves(s.rows * s.depth), b = leaves(s.depth * s.cols);
        element = s.depth * a * b;
        result_rows = s.rows, result_cols = s.cols;
        break;
    }
    case eigen_op::mixed_product: {
        const int kind = s.api / 2;
        sizes(s.api % 2 == 1, kind >= 2, false);
        const int left = s.rows * s.depth, right = s.depth * s.cols;
        const bool slots_left = kind == 0 || kind == 2;
        const double m = slots_left ? leaves(left) : leaves(right);
        const double k = slots_left ? literals(right) : literals(left);
        element = s.depth * m * k;
        result_rows = s.rows, result_cols = s.cols;
        break;
    }
    case eigen_op::array: {
        s.rows = between(1, 5);
        s.cols = between(1, 5);
        const double a = leaves(s.rows * s.cols), b = leaves(s.rows * s.cols);
        const double c = uniform(0.5, 2);
        s.ks.push_back(c);
        const double bounds[] = {b, 2, std::sqrt(a * a + c), a / c, 2.718281828459045 * 1.5707963267948966,
                                 std::fmax(std::fabs(std::log(c)), std::log(a * a + c)) + 1};
        element = bounds[s.api];
        result_rows = s.rows, result_cols = s.cols;
        break;
    }
    case eigen_op::reduce: {
        const bool dot = s.api == 1 || s.api == 2 || s.api >= 7;
        const bool norm = s.api == 5 || s.api == 6;
        s.rows = between(norm ? 2 : 1, 6);
        s.cols = dot ? 1 : between(1, 3);
        const int n = s.rows * s.cols;
        double a = leaves(norm ? n - 1 : n);
        if (norm) {
            s.leaves.push_back({-1, uniform(0.5, 2)});
            a = std::fmax(a, 2);
        }
        double b = 0;
        if (s.api == 1 || s.api == 2) b = leaves(n);
        if (s.api >= 7) b = literals(n);
        const double bounds[] = {n * a, n * a * b, n * a * b, n * a * a, n * a * a, std::sqrt(n) * a,
                                 std::sqrt(n) * a, n * a * b, n * a * b};
        element = bounds[s.api];
        break;
    }
    case eigen_op::solve: {
        const int decomposition = solve_decomposition(s.api), mode = solve_mode(s.api);
        s.cols = between(1, 8);
        s.rows = decomposition == 3 ? s.cols + between(0, 3) : s.cols;
        leaves(s.rows * s.cols);
        const double c = uniform(0.5, 2);
        s.ks.push_back(c);
        s.ks.push_back(decomposition == 1 || decomposition == 2 ? (chance(0.5) ? 1.0 : -1.0) : 1.0);
        const double b = mode == 1 ? literals(s.rows) : leaves(s.rows);
        // |x| <= |b|_2 / (smallest singular value of A): >= c for llt and
        // ldlt, about 1 or more for the diagonally dominant lu and qr.
        element = std::sqrt(double(s.rows)) * b / (decomposition <= 1 ? c : 1.0);
        result_rows = s.cols;
        break;
    }
    case eigen_op::count: break;
    }

    s.outs = distinct_writable(3);
    for (out_slot& o : s.outs) {
        const bool sum = chance(0.3);
        o.element = sum ? -1 : between(0, result_rows * result_cols - 1);
        const double m = sum ? element * result_rows * result_cols : element;
        if (m <= o_.squash_above && chance(0.6)) {
            o.squash = 0;
        } else if (chance(0.5)) {
            o.squash = 1;  // asinh
        } else {
            o.squash = 2;  // scale * tanh(v / scale): about v where |v| < scale
            o.scale = std::fmax(1.0, std::fmin(m, o_.squash_above)) * uniform(0.5, 1);
        }
        bound_[std::size_t(o.slot)] = o.squash == 0 ? m : o.squash == 1 ? std::asinh(m) : o.scale;
    }
}

}  // namespace tapeflow_random
