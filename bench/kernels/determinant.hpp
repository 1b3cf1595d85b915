// bench/kernels/determinant.hpp - determinant of a 9 x 9 matrix by cofactor
// (Laplace) expansion along the first row, recursively, memoizing nothing.
//
//   det(M) = sum_j (-1)^j m_0j det(M without row 0 and column j)
//
// down to 2 x 2 minors (a d - b c). The inputs are the 81 entries, row by
// row; f = det. The recursion visits 9!/2 = 181 440 2 x 2 minors and 79 210
// larger ones, whose expansions have 260 649 terms: about 0.44 M statements
// (one per 2 x 2 minor, one per term), and each minor's determinant is a
// short-lived temporary, used once and dropped.
#pragma once

#include <cstddef>
#include <vector>

#include "../harness/kernel.hpp"

namespace bench {

struct determinant {
    static constexpr const char* name = "determinant";
    static constexpr bool adolc = true;
    static constexpr const char* adolc_note = "";
    static constexpr std::size_t n = 9;

    std::vector<double> inputs() const { return uniform(n * n, -1.0, 1.0, 51); }

    template <class T>
    T operator()(const std::vector<T>& x) const {
        return minor(x, 0, (1u << n) - 1);
    }

    // Determinant of the minor made of rows row .. n-1 and the columns whose
    // bits are set in `cols` (n - row of them), expanded along its first row.
    template <class T>
    T minor(const std::vector<T>& a, std::size_t row, unsigned cols) const {
        const T* m = &a[row * n];
        if (row + 2 == n) {
            std::size_t c0 = 0;
            while (!(cols >> c0 & 1u)) ++c0;
            std::size_t c1 = c0 + 1;
            while (!(cols >> c1 & 1u)) ++c1;
            T d = m[c0] * m[n + c1] - m[c1] * m[n + c0];
            return d;
        }
        T s = 0.0;
        bool plus = true;
        for (std::size_t c = 0; c < n; ++c) {
            if (!(cols >> c & 1u)) continue;
            T sub = minor(a, row + 1, cols & ~(1u << c));
            if (plus)
                s += m[c] * sub;
            else
                s -= m[c] * sub;
            plus = !plus;
        }
        return s;
    }

    // Reverse mode by hand. det is linear in each minor's determinant, and
    // the adjoint a minor receives (sign * bar * m_rc) is known before the
    // minor is evaluated, so one recursion does both sweeps: a minor returns
    // its value (the forward sweep) and pushes its own bar into the entries
    // below it (the reverse sweep of its subtree); the caller then adds
    // sign * bar * value to the adjoint of m_rc. The result, at the root, is
    // d det / d m_ij = the cofactor C_ij, exactly.
    double adjoint(const std::vector<double>& x, std::vector<double>& g) const {
        g.assign(n * n, 0.0);
        return minor_adjoint(x, 0, (1u << n) - 1, 1.0, g.data());
    }

    double minor_adjoint(const std::vector<double>& a, std::size_t row, unsigned cols, double bar,
                         double* g) const {
        const double* m = &a[row * n];
        double* gm = &g[row * n];
        if (row + 2 == n) {
            std::size_t c0 = 0;
            while (!(cols >> c0 & 1u)) ++c0;
            std::size_t c1 = c0 + 1;
            while (!(cols >> c1 & 1u)) ++c1;
            const double d = m[c0] * m[n + c1] - m[c1] * m[n + c0];
            gm[c0] += bar * m[n + c1];
            gm[n + c1] += bar * m[c0];
            gm[c1] -= bar * m[n + c0];
            gm[n + c0] -= bar * m[c1];
            return d;
        }
        double s = 0.0;
        bool plus = true;
        for (std::size_t c = 0; c < n; ++c) {
            if (!(cols >> c & 1u)) continue;
            const double sign_bar = plus ? bar : -bar;
            const double sub = minor_adjoint(a, row + 1, cols & ~(1u << c), sign_bar * m[c], g);
            if (plus)
                s += m[c] * sub;
            else
                s -= m[c] * sub;
            gm[c] += sign_bar * sub;
            plus = !plus;
        }
        return s;
    }
};

}  // namespace bench
