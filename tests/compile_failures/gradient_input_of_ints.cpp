// Integer inputs (issue 19.9): a gradient needs floating-point inputs, and
// the message says how to convert (the control passes doubles).
#include <tapeflow/tapeflow.hpp>

#include <vector>

std::vector<double> g() {
#ifdef TAPEFLOW_CONTROL
    std::vector<double> x{3.0, 2.0};
#else
    std::vector<int> x{3, 2};
#endif
    return tapeflow::gradient([](const std::vector<tapeflow::Real>& v) { return v[0] * v[1]; }, x);
}
