// A function that returns a plain number has no second derivative: the
// Hessian drivers refuse it instead of returning zeros. (With basic_real<Dual>
// .value() is a Dual and .value().value() the double.)
#include <tapeflow/tapeflow.hpp>

#include <vector>

std::vector<std::vector<double>> curvature() {
#ifdef TAPEFLOW_CONTROL
    auto f = [](const auto& x) { return x[0] * x[0]; };
#else
    auto f = [](const auto& x) { return (x[0] * x[0]).value().value(); };
#endif
    return tapeflow::hessian(f, {1.0});
}
