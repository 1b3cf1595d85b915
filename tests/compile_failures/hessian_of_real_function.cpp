// The Hessian drivers call f with a vector of basic_real<basic_dual<double>>:
// a function written for tapeflow::Real only cannot be recorded for second
// derivatives, and the message says to make it generic.
#include <tapeflow/tapeflow.hpp>

#include <vector>

std::vector<double> curvature_along(const std::vector<double>& v) {
#ifdef TAPEFLOW_CONTROL
    auto f = [](const auto& x) { return x[0] * x[0]; };
#else
    auto f = [](const std::vector<tapeflow::Real>& x) { return x[0] * x[0]; };
#endif
    return tapeflow::hessian_vector_product(f, {1.0}, v);
}
