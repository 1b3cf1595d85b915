// The headers under the warnings many users build with: tests/CMakeLists.txt
// reads this file with `g++ -fsyntax-only -Wshadow -Wconversion
// -Wsign-conversion ...` (the ctest strict_warnings:headers) and fails on a
// warning located in include/tapeflow. It is never linked or run.
//
// The umbrella header comes first, as in most programs: GCC reports a local
// that hides a name of namespace tapeflow (tapeflow::tape) only when that
// name was declared before. The calls below instantiate the templates that
// the two examples the other strict_warnings tests read do not: forward and
// second-order drivers, std::complex<Real>, custom adjoints, checkpointing,
// the rematerializer, vector reverse sweeps, the Eigen entries and solves,
// parallel regions.
#include <tapeflow/tapeflow.hpp>

#include <tapeflow/checkpoint/checkpointed_loop.hpp>
#include <tapeflow/checkpoint/rematerializer.hpp>
#include <tapeflow/eigen.hpp>
#include <tapeflow/hw/hardware_model.hpp>
#include <tapeflow/hw/report.hpp>

#include <complex>
#include <cstddef>
#include <vector>

namespace {

using tapeflow::Real;

template <class T>
T sum_of_squares(const std::vector<T>& x) {
    T s = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) s += x[i] * x[i];
    return s;
}

template <class T>
std::vector<T> two_outputs(const std::vector<T>& x) {
    return {x[0] * x[1], sin(x[0])};
}

Real taped_work(const std::vector<Real>& v) {
    std::complex<Real> z(v[0], v[1]);
    z = z * z / (z + 1.0);

    Real through_entry;
    tapeflow::custom_adjoint op;
    op.add_input(v[0]);
    op.add_output(through_entry, v[0].value());
    op.record([](const double* out_bar, double* in_bar) { in_bar[0] += out_bar[0]; }, 0);

    std::vector<Real> state = v;
    double time = 0;
    tapeflow::checkpointed_loop(
        10, state, time, [](auto& s, double& t) {
            s[0] = s[0] * s[1];
            t += 1;
        },
        3);
    tapeflow::rematerializer remat(1 << 20);
    remat.region(state, [](std::vector<Real>& s) { s[0] = exp(s[0]); });

    Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic> a(2, 2);
    a << v[0], v[1], v[1], v[0] + 3.0;
    const Eigen::VectorXd rhs = Eigen::VectorXd::Ones(2);
    const Eigen::Matrix<Real, Eigen::Dynamic, 1> solved = tapeflow::partial_piv_lu(a).solve(rhs);
    return std::abs(z) + through_entry + state[0] + tapeflow::squared_norm(solved) + (a * a).sum();
}

}  // namespace

void strict_warnings_instantiations() {
    const std::vector<double> x{1.0, 2.0};
    const auto jf = tapeflow::jacobian_forward([](const auto& v) { return two_outputs(v); }, x);
    const auto jr = tapeflow::jacobian([](const auto& v) { return two_outputs(v); }, x);
    const auto d = tapeflow::value_and_derivative([](const auto& v) { return sum_of_squares(v); }, x, x);
    const auto h = tapeflow::value_gradient_and_hessian([](const auto& v) { return sum_of_squares(v); }, x);
    const auto hv = tapeflow::hessian_vector_product([](const auto& v) { return sum_of_squares(v); }, x, x);
    const auto hd = tapeflow::hessian_diagonal([](const auto& v) { return sum_of_squares(v); }, x);
    const auto g = tapeflow::gradient([](const std::vector<Real>& v) { return taped_work(v); }, x);

    auto model = std::make_shared<tapeflow::hardware_model>();
    tapeflow::tape_options options;
    options.observer = model;
    options.memory_budget_bytes = std::size_t(1) << 20;
    tapeflow::tape tape(options);
    tape.start_recording();
    Eigen::Matrix<Real, 2, 2> m;
    m << 1.0, 2.0, 3.0, 4.0;
    tapeflow::register_inputs(tape, m);
    tapeflow::matrix_variable w(Eigen::MatrixXd::Ones(2, 3));
    tapeflow::register_input(tape, w);
    const tapeflow::matrix_variable wt = 2.0 * transpose(w) - Eigen::MatrixXd::Zero(3, 2);
    const tapeflow::matrix_variable ww = w * wt + w * w.values().transpose();
    const Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic> w_reals = tapeflow::to_reals(ww);
    Real y = tapeflow::dot(tapeflow::matrix_variable(w_reals), ww) + tapeflow::sum(-ww) + tapeflow::squared_norm(wt);
    {
        tapeflow::Region step("step");
        y += (m * m).sum();
    }
    tape.register_output(y);
    tape.stop_recording();
    tapeflow::lane_adjoints<double, 4> lanes(tape);
    lanes.set(y, 0, 1.0);
    tape.sweep(lanes);
    tape.set_adjoint(y, 1.0);
    tape.sweep();
    const Eigen::Matrix2d m_bar = tapeflow::adjoints(tape, m);
    const Eigen::MatrixXd w_bar = tapeflow::adjoints(tape, w);
    tapeflow::set_adjoints(tape, ww, w_bar * w_bar.transpose());
    tapeflow::print_totals(*model);
    (void)jf, (void)jr, (void)d, (void)h, (void)hv, (void)hd, (void)g, (void)m_bar;
    (void)w_bar;
}
