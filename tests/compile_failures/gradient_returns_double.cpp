// A function that returns a plain number (here through .value()) cuts every
// derivative: the gradient would silently be zero. The drivers refuse it at
// compile time; the legal spelling returns the Real.
#include <tapeflow/tapeflow.hpp>

#include <vector>

std::vector<double> g() {
    return tapeflow::gradient(
        [](const std::vector<tapeflow::Real>& v) {
            tapeflow::Real y = v[0] * v[1];
#ifdef TAPEFLOW_CONTROL
            return y;
#else
            return y.value();
#endif
        },
        std::vector<double>{1.0, 2.0});
}
