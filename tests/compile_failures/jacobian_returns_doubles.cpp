// jacobian of a function that returns plain numbers: every row would be
// zero. Refused at compile time; the legal spelling returns the Reals.
#include <tapeflow/tapeflow.hpp>

#include <array>
#include <vector>

std::vector<std::vector<double>> j() {
    return tapeflow::jacobian(
        [](const std::vector<tapeflow::Real>& v) {
#ifdef TAPEFLOW_CONTROL
            return std::array<tapeflow::Real, 2>{v[0] * v[1], sin(v[0])};
#else
            return std::array<double, 2>{(v[0] * v[1]).value(), sin(v[0]).value()};
#endif
        },
        std::vector<double>{1.0, 2.0});
}
