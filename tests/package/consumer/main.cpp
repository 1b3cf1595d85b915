// Consumer of an installed (or add_subdirectory'd) tapeflow: one gradient,
// checked against the analytic one. Exit status 0 only if it matches.
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

// f(x, y) = x y + sin(x) + exp(x / y)
template <class T>
T f(const T& x, const T& y) {
    using std::exp;
    using std::sin;
    return x * y + sin(x) + exp(x / y);
}

bool close(double got, double want) {
    return std::fabs(got - want) <= 1e-12 * (1.0 + std::fabs(want));
}

}  // namespace

int main() {
    const double x = 1.0, y = 2.0;
    const auto result = tapeflow::value_and_gradient(
        [](const std::vector<tapeflow::Real>& v) -> tapeflow::Real { return f(v[0], v[1]); },
        std::vector<double>{x, y});

    const double want_value = f(x, y);
    const double want_dx = y + std::cos(x) + std::exp(x / y) / y;
    const double want_dy = x - x / (y * y) * std::exp(x / y);

    std::printf("f = %.17g (want %.17g)\n", result.value, want_value);
    if (result.gradient.size() != 2) {
        std::printf("FAIL: gradient has %zu entries, want 2\n", result.gradient.size());
        return 1;
    }
    std::printf("df/dx = %.17g (want %.17g)\n", result.gradient[0], want_dx);
    std::printf("df/dy = %.17g (want %.17g)\n", result.gradient[1], want_dy);

    if (!close(result.value, want_value) || !close(result.gradient[0], want_dx) ||
        !close(result.gradient[1], want_dy)) {
        std::printf("FAIL: tapeflow result differs from the analytic value\n");
        return 1;
    }
    std::printf("OK\n");
    return 0;
}
