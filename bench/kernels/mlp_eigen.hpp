// bench/kernels/mlp_eigen.hpp - the mlp kernel (mlp.hpp) written with Eigen.
//
// Same network, data, targets, parameter layout and loss as mlp.hpp:
//
//   H   = tanh(W1 X + b1 1^T)        X: 64 x 256 (the batch, one column per sample)
//   out = w2 H + b2                  w2: 1 x 128
//   f   = (1/B) sum_b (out_b - y_b)^2
//
// but with matrices instead of loops, as Eigen users write it. For T = double
// it runs Eigen's vectorized kernels; for T = tapeflow::Real the products
// W1 X and w2 H are taped as ONE entry each (tapeflow/eigen/products.hpp),
// and the elementwise bias, tanh and loss per scalar: 0.13 M statements where
// mlp.hpp records 2.2 M (4 per hidden activation: the bias add, tanh, and two
// copies Eigen makes of a Real while evaluating colwise() + b1 and assigning
// H). Needs Eigen 3.4 (TAPEFLOW_BENCH_EIGEN).
//
// ADOL-C, Sacado, CoDiPack, Adept and XAD do not run it: none ships
// Eigen::NumTraits for its reverse-mode type, Eigen 3.4 cannot multiply a
// custom scalar matrix by a double one (the blocked kernel needs packet
// arithmetic between the two types), so X would have to be converted to the AD type, and Eigen's kernel
// would then tape the same 2.1 M multiply-adds one by one that they already
// tape in the mlp kernel: nothing new would be measured.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include <Eigen/Core>
#include <tapeflow/eigen.hpp>

#include "mlp.hpp"

namespace bench {

struct mlp_eigen {
    static constexpr const char* name = "mlp_eigen";
    static constexpr bool adolc = false;
    static constexpr const char* adolc_note =
        "needs Eigen::NumTraits<adouble> and a conversion of the batch to adouble; would tape what mlp tapes";
    static constexpr bool sacado = false;
    static constexpr const char* sacado_note =
        "needs Eigen::NumTraits<ADvar> and a conversion of the batch to ADvar; would tape what mlp tapes";
    static constexpr bool codipack = false;
    static constexpr const char* codipack_note =
        "needs Eigen::NumTraits for its types and a conversion of the batch; would tape what mlp tapes";
    static constexpr bool adept = false;
    static constexpr const char* adept_note =
        "needs Eigen::NumTraits<aReal> and a conversion of the batch to aReal; would tape what mlp tapes";
    static constexpr bool xad = false;
    static constexpr const char* xad_note =
        "needs Eigen::NumTraits<AReal> and a conversion of the batch to AReal; would tape what mlp tapes";
    mlp net;  // sizes, data, targets and parameter layout

    /// The scalar-loop kernel with the same f: main.cpp checks that both
    /// hand-written adjoints agree.
    const mlp& reference() const { return net; }

    std::vector<double> inputs() const { return net.inputs(); }

    template <class T>
    T operator()(const std::vector<T>& x) const {
        using Eigen::Dynamic;
        using Index = Eigen::Index;
        const Index hidden = Index(net.n_hidden), in = Index(net.n_in), batch = Index(net.batch);
        const Eigen::Map<const Eigen::Matrix<T, Dynamic, Dynamic, Eigen::RowMajor>> w1(&x[net.w1_at()], hidden, in);
        const Eigen::Map<const Eigen::Matrix<T, Dynamic, 1>> b1(&x[net.b1_at()], hidden);
        const Eigen::Map<const Eigen::Matrix<T, 1, Dynamic>> w2(&x[net.w2_at()], hidden);
        const T& b2 = x[net.b2_at()];
        const Eigen::Map<const Eigen::MatrixXd> data(net.data.data(), in, batch);  // column b = x_b
        const Eigen::Map<const Eigen::RowVectorXd> targets(net.targets.data(), batch);

        const Eigen::Matrix<T, Dynamic, Dynamic> h = ((w1 * data).colwise() + b1).array().tanh();
        const Eigen::Matrix<T, 1, Dynamic> out = w2 * h;
        T loss = ((out.array() + b2) - targets.array()).square().sum();
        return loss / double(batch);
    }

    // Reverse mode by hand, with Eigen on doubles: the whole batch at once.
    double adjoint(const std::vector<double>& x, std::vector<double>& g) const {
        using Eigen::Dynamic;
        using Index = Eigen::Index;
        using row_major = Eigen::Matrix<double, Dynamic, Dynamic, Eigen::RowMajor>;
        const Index hidden = Index(net.n_hidden), in = Index(net.n_in), batch = Index(net.batch);
        const Eigen::Map<const row_major> w1(&x[net.w1_at()], hidden, in);
        const Eigen::Map<const Eigen::VectorXd> b1(&x[net.b1_at()], hidden);
        const Eigen::Map<const Eigen::RowVectorXd> w2(&x[net.w2_at()], hidden);
        const double b2 = x[net.b2_at()];
        const Eigen::Map<const Eigen::MatrixXd> data(net.data.data(), in, batch);
        const Eigen::Map<const Eigen::RowVectorXd> targets(net.targets.data(), batch);

        Eigen::MatrixXd h = w1 * data;
        h.colwise() += b1;
        h = h.array().tanh();
        const Eigen::RowVectorXd d = (w2 * h).array() + b2 - targets.array();  // residuals
        const double f = d.squaredNorm() / double(batch);

        g.assign(net.size(), 0.0);
        const Eigen::RowVectorXd out_bar = (2.0 / double(batch)) * d;
        g[net.b2_at()] = out_bar.sum();
        Eigen::Map<Eigen::VectorXd>(&g[net.w2_at()], hidden) = h * out_bar.transpose();
        // z_bar = (w2^T out_bar) .* (1 - h^2), tanh' = 1 - tanh^2
        const Eigen::MatrixXd z_bar = (w2.transpose() * out_bar).array() * (1.0 - h.array().square());
        Eigen::Map<Eigen::VectorXd>(&g[net.b1_at()], hidden) = z_bar.rowwise().sum();
        Eigen::Map<row_major>(&g[net.w1_at()], hidden, in).noalias() = z_bar * data.transpose();
        return f;
    }
};

}  // namespace bench
