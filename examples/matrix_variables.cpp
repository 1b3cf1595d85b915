// Fitting a linear model with matrix variables: each matrix is ONE variable
// (a range of identifiers), each product ONE tape entry whose reverse rule is
// two matrix products on slices of the adjoint vector.
//
//   Y ~ W2 tanh(W1 X)      X: 16 features x 256 samples, W1: 32 x 16, W2: 4 x 32
//   J(W1, W2) = 1/2 |W2 H - Y|^2 / samples,   H = tanh(W1 X)
//
// The products are matrix variables (tapeflow::matrix_variable); tanh goes
// elementwise through to_reals (the elements as Reals) and back. The program
// checks the taped gradient against the hand-derived one,
//   R = (W2 H - Y) / samples,  dJ/dW2 = R H^T,  dJ/dW1 = ((W2^T R) .* (1 - H.^2)) X^T,
// takes 200 steps of gradient descent, and returns 1 if the gradient is off
// or the misfit did not drop.
#include <tapeflow/eigen.hpp>

#include <Eigen/Dense>

#include <cstdio>

namespace {

using Eigen::MatrixXd;
using tapeflow::matrix_variable;
using tapeflow::Real;

struct model {
    MatrixXd x, y;  // the data
};

// J and its gradient, taped
double misfit(tapeflow::tape& tape, const model& m, const MatrixXd& w1_0, const MatrixXd& w2_0, MatrixXd& g1,
              MatrixXd& g2) {
    matrix_variable w1(w1_0), w2(w2_0);
    tape.reset();
    tape.start_recording();
    tapeflow::register_input(tape, w1);
    tapeflow::register_input(tape, w2);
    const Eigen::Matrix<Real, -1, -1> pre = tapeflow::to_reals(w1 * m.x);  // one entry each
    const matrix_variable h(Eigen::Matrix<Real, -1, -1>(pre.array().tanh().matrix()));
    const matrix_variable r = w2 * h - m.y;
    Real j = 0.5 / double(m.x.cols()) * tapeflow::squared_norm(r);
    tape.stop_recording();
    tape.set_adjoint(j, 1.0);
    tape.sweep();
    g1 = tapeflow::adjoints(tape, w1);
    g2 = tapeflow::adjoints(tape, w2);
    return j.value();
}

}  // namespace

int main() {
    const int features = 16, hidden = 32, outputs = 4, samples = 256;
    std::srand(7);
    model m{MatrixXd::Random(features, samples), MatrixXd()};
    const MatrixXd w1_true = MatrixXd::Random(hidden, features) * 0.5, w2_true = MatrixXd::Random(outputs, hidden);
    m.y = w2_true * (w1_true * m.x).array().tanh().matrix();

    MatrixXd w1 = MatrixXd::Random(hidden, features) * 0.25, w2 = MatrixXd::Random(outputs, hidden) * 0.25;
    tapeflow::tape tape;
    MatrixXd g1, g2;
    const double j0 = misfit(tape, m, w1, w2, g1, g2);

    // the hand-derived gradient at the start
    const MatrixXd h = (w1 * m.x).array().tanh().matrix();
    const MatrixXd r = (w2 * h - m.y) / double(samples);
    const MatrixXd want2 = r * h.transpose();
    const MatrixXd want1 = ((w2.transpose() * r).array() * (1.0 - h.array().square())).matrix() * m.x.transpose();
    const double error = std::max((g1 - want1).cwiseAbs().maxCoeff(), (g2 - want2).cwiseAbs().maxCoeff()) /
                         std::max(want1.cwiseAbs().maxCoeff(), want2.cwiseAbs().maxCoeff());
    std::printf("J = %.6f at the start; gradient against the hand-derived one: max relative error %.1e\n", j0,
                error);
    const tapeflow::tape_statistics s = tape.statistics();
    std::printf("one gradient: %llu tape entries (%llu of them external), %zu identifiers at most\n",
                static_cast<unsigned long long>(s.statements), static_cast<unsigned long long>(s.externals),
                s.peak_identifiers);

    double j = j0;
    for (int step = 0; step < 200; ++step) {
        j = misfit(tape, m, w1, w2, g1, g2);
        w1 -= 0.5 * g1;
        w2 -= 0.5 * g2;
    }
    std::printf("J = %.6f after 200 steps of gradient descent\n", j);
    const bool ok = error < 1e-12 && j < 0.5 * j0;
    if (!ok) std::printf("FAILED\n");
    return ok ? 0 : 1;
}
