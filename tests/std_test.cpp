// What tapeflow/std.hpp provides: numeric_limits and std:: math names.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using tapeflow::Real;

TEST_CASE("numeric_limits<Real> mirrors numeric_limits<double>") {
    using L = std::numeric_limits<Real>;
    using D = std::numeric_limits<double>;
    STATIC_REQUIRE(L::is_specialized);
    STATIC_REQUIRE(L::digits == D::digits);
    STATIC_REQUIRE(L::has_infinity);
    CHECK(L::epsilon().value() == D::epsilon());
    CHECK(L::max().value() == D::max());
    CHECK(L::lowest().value() == D::lowest());
    CHECK(std::isnan(L::quiet_NaN().value()));
    CHECK(std::isinf(L::infinity().value()));
    CHECK(std::numeric_limits<tapeflow::RealF>::epsilon().value() == std::numeric_limits<float>::epsilon());
}

namespace {
// Templated code written against double with std:: qualified calls.
template <class T>
T user_kernel(const std::vector<T>& x) {
    T a = std::sqrt(x[0] * x[0] + 1.0);
    T b = std::pow(x[1], 3) + std::exp(-x[0]) * std::log(x[1]);
    T c = std::max(a, b);
    T d = std::min(x[0], x[1]);
    return std::abs(c - d) + std::tanh(b) + std::fmax(a, 0.0);
}
}  // namespace

TEST_CASE("std::-qualified math in templated code works on Real") {
    std::vector<double> x{0.3, 1.7};
    const auto g = tapeflow::gradient([](const std::vector<Real>& v) { return user_kernel(v); }, x);
    // Central differences on the double instantiation of the same kernel.
    for (std::size_t i = 0; i < 2; ++i) {
        auto up = x, down = x;
        const double h = 1e-6;
        up[i] += h;
        down[i] -= h;
        const double fd = (user_kernel(up) - user_kernel(down)) / (2 * h);
        CHECK(g[i] == Approx(fd).epsilon(1e-7));
    }
}

TEST_CASE("std::max and std::min of two Reals return one of them") {
    Real a = 1.0, b = 2.0;
    CHECK(std::max(a, b).value() == 2.0);
    CHECK(std::min(a, b).value() == 1.0);
    CHECK(std::max(a, 3.0).value() == 3.0);  // mixed: tapeflow::max
}
