// tests/expr/expr_test_support.hpp - helpers shared by the expression tests.
//
//   differentiate<S>(f, x0, x1, ...)  records y = f(x0, x1, ...) on the active
//       basic_tape<S> with every x registered as an input, sweeps once with
//       adjoint(y) = 1 and returns the value, the adjoints of the inputs and
//       how many statements / arguments the recording produced.
//   richardson(f, x, step)  central difference of tests/support, extrapolated
//       from steps h and h/2 (error O(h^4)), for double.
//   fd_long<S>(f, x, step)  the same in long double, for float / long double.
//   CHECK_CLOSE(actual, expected, rel, abs)  |a - e| <= rel max(|a|,|e|) + abs,
//       printing both values with full precision; equal infinities pass.
#pragma once

#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "support/finite_difference.hpp"
#include <tapeflow/tapeflow.hpp>

namespace expr_test {

template <class S>
struct sweep_result {
    S value;
    std::vector<S> d;  // d y / d x_i
    std::uint64_t statements;
    std::uint64_t arguments;
};

template <class S, class F, class... X>
sweep_result<S> differentiate(F&& f, X... x0) {
    using real = tapeflow::basic_real<S>;
    auto& t = tapeflow::basic_tape<S>::active();
    t.reset();
    t.start_recording();
    std::array<real, sizeof...(X)> xs{real(static_cast<S>(x0))...};
    for (real& xi : xs) t.register_input(xi);
    const auto before = t.statistics();
    real y = std::apply([&](const auto&... xi) { return real(f(xi...)); }, std::as_const(xs));
    const auto after = t.statistics();
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, S(1));
    t.sweep();
    sweep_result<S> r{y.value(), {}, after.statements - before.statements,
                      after.arguments - before.arguments};
    for (const real& xi : xs) r.d.push_back(t.adjoint(xi));
    return r;
}

/// Richardson-extrapolated central difference (double, via tests/support).
inline double richardson(const std::function<double(double)>& f, double x, double step = 1e-5) {
    const double coarse = tapeflow_test::central_difference(f, x, step);
    const double fine = tapeflow_test::central_difference(f, x, step / 2);
    return (4 * fine - coarse) / 3;
}

/// Richardson-extrapolated central-difference gradient (double, via tests/support).
inline std::vector<double> richardson_gradient(
    const std::function<double(const std::vector<double>&)>& f, const std::vector<double>& x,
    double step = 1e-5) {
    const auto coarse = tapeflow_test::central_gradient(f, x, step);
    const auto fine = tapeflow_test::central_gradient(f, x, step / 2);
    std::vector<double> g(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) g[i] = (4 * fine[i] - coarse[i]) / 3;
    return g;
}

/// The same difference quotient carried out in long double.
template <class F>
long double fd_long(F f, long double x, long double step = 1e-4L) {
    auto cd = [&](long double s) {
        const long double h = s * std::fmax(1.0L, std::fabs(x));
        return (f(x + h) - f(x - h)) / (2 * h);
    };
    return (4 * cd(step / 2) - cd(step)) / 3;
}

inline bool close_l(long double a, long double e, long double rel, long double abs) {
    if (std::isinf(a) || std::isinf(e)) return a == e;
    return std::fabs(a - e) <= rel * std::fmax(std::fabs(a), std::fabs(e)) + abs;
}

inline std::string show(long double v) {
    std::ostringstream s;
    s << std::setprecision(std::numeric_limits<long double>::max_digits10) << v;
    return s.str();
}

/// Same value, treating NaN as equal to NaN and telling -0 from +0.
template <class S>
bool same(S a, S b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

/// Digamma at the integers and half-integers, from closed forms:
/// psi(1) = -gamma, psi(1/2) = -gamma - 2 ln 2 and psi(x + 1) = psi(x) + 1/x.
/// Only for x a nonzero integer or half-integer (not a pole).
inline long double psi_closed_form(long double x) {
    const long double gamma = 0.577215664901532860606512090082402431L;
    const long double ln2 = 0.693147180559945309417232121458176568L;
    if (x < 1) return psi_closed_form(x + 1) - 1 / x;
    const bool integer = x == std::floor(x);
    long double psi = integer ? -gamma : -gamma - 2 * ln2;
    for (long double k = integer ? 1.0L : 0.5L; k < x; k += 1) psi += 1 / k;
    return psi;
}

/// Relative tolerance of an analytic derivative computed in S.
template <class S>
constexpr long double rel_tol() {
    return 64 * static_cast<long double>(std::numeric_limits<S>::epsilon());
}

}  // namespace expr_test

#define CHECK_CLOSE(actual, expected, rel, abs)                                              \
    do {                                                                                     \
        const long double check_close_a_ = (actual);                                         \
        const long double check_close_e_ = (expected);                                       \
        INFO(#actual " = " << expr_test::show(check_close_a_) << ", expected " #expected " = " \
                           << expr_test::show(check_close_e_));                              \
        CHECK(expr_test::close_l(check_close_a_, check_close_e_, (rel), (abs)));             \
    } while (0)
