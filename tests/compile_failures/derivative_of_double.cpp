// A function that returns a double (e.g. through .value()) has no derivative:
// the forward drivers refuse it instead of returning 0.
#include <tapeflow/tapeflow.hpp>

double slope() {
#ifdef TAPEFLOW_CONTROL
    auto f = [](const auto& x) { return x[0] * x[0]; };
#else
    auto f = [](const auto& x) { return (x[0] * x[0]).value(); };
#endif
    return tapeflow::derivative(f, {1.0}, {1.0});
}
