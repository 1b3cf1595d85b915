// The drivers take the point as plain numbers and make the Reals themselves;
// a vector of Real as the input is refused with a message that says so.
#include <tapeflow/tapeflow.hpp>

#include <vector>

std::vector<double> g() {
#ifdef TAPEFLOW_CONTROL
    std::vector<double> x{1.0, 2.0};
#else
    std::vector<tapeflow::Real> x{1.0, 2.0};
#endif
    return tapeflow::gradient([](const std::vector<tapeflow::Real>& v) { return v[0] * v[1]; }, x);
}
