// tapeflow/forward_drivers.hpp - derivative, value_and_derivative,
// jacobian_forward: forward mode with basic_dual, no tape.
//
// f is generic (`[](const auto& x) { ... }`) and is called with a
// `const std::vector<basic_dual<S, N>>&`. It returns one active value (a
// Dual, or an expression of Duals) or a std::vector of Duals; anything else
// (a double, a Real) is a compile error that names the driver.
//
//   derivative(f, x, v)        J v, the derivative of f at x along v: one
//                              run of f with N = 1 (about 1-5x a run on
//                              doubles on the bench kernels, docs/modes.md)
//   jacobian_forward<N>(f, x)  the whole Jacobian, N columns per run of f:
//                              ceil(n / N) runs for n inputs. Rows as
//                              tapeflow::jacobian: J[i][j] = d f_i / d x_j.
//   jacobian_by_shape(f, x)    forward or reverse, whichever suits the
//                              shape (or the mode asked for); says which
//
// Use these when f has few inputs and many outputs; tapeflow::gradient and
// tapeflow::jacobian (reverse mode) when it has many inputs and few outputs.
//
// **Example**:
//   auto f = [](const auto& x) { return x[0] * x[1] + sin(x[0]); };
//   double d = tapeflow::derivative(f, {1.0, 2.0}, {1.0, 0.0});     // 2 + cos 1
//   auto F = [](const auto& x) {
//       using T = typename std::decay_t<decltype(x)>::value_type;   // the Dual
//       return std::vector<T>{x[0] * x[1], x[0] + x[1]};
//   };
//   auto J = tapeflow::jacobian_forward(F, {1.0, 2.0});             // {{2, 1}, {1, 1}}
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "drivers.hpp"
#include "dual.hpp"
#include "error.hpp"

namespace tapeflow {

/// Default lane count of jacobian_forward: 4 doubles fill one AVX2 register.
inline constexpr std::size_t default_forward_lanes = 4;

/// Result of value_and_derivative: R is S when f returns one value,
/// std::vector<S> when it returns a vector.
template <class R>
struct value_and_derivative_result {
    R value;
    R derivative;
};

namespace detail {

template <class T>
struct is_std_vector : std::false_type {};
template <class T, class A>
struct is_std_vector<std::vector<T, A>> : std::true_type {};

/// What f returns when called with a vector of D (D = basic_dual<S, N>):
/// scalar (a D or an expression of them) or vector (std::vector<D>).
template <class D, class F>
struct forward_result {
    using type = std::invoke_result_t<F&, const std::vector<D>&>;
    using bare = bare_t<type>;
    static constexpr bool scalar = std::is_same_v<bare, D> || is_node_v<bare>;
    static constexpr bool vector = is_std_vector<bare>::value;
};

template <class D, class F>
constexpr void check_forward_result(const char*) {
    using r = forward_result<D, F>;
    if constexpr (r::vector) {
        static_assert(std::is_same_v<typename r::bare::value_type, D>,
                      "tapeflow forward drivers (derivative, value_and_derivative, jacobian_forward): "
                      "f returns a std::vector of something other than the Dual it is called with; "
                      "make f generic (`const auto& x`) and return std::vector of that type");
    } else {
        static_assert(r::scalar,
                      "tapeflow forward drivers (derivative, value_and_derivative, jacobian_forward): "
                      "f must return the active value it computes (a Dual, i.e. the element type of "
                      "its argument, or an expression of them) or a std::vector of them; it returns "
                      "something else (a double from .value()? a Real?), which has no derivative");
    }
}

template <class Scalar>
void check_direction(const std::vector<Scalar>& x, const std::vector<Scalar>& v, const char* caller) {
    if (x.size() != v.size())
        throw usage_error(std::string(caller) + ": the direction v has " + std::to_string(v.size()) +
                          " entries but x has " + std::to_string(x.size()) +
                          "; give one direction entry per input");
}

}  // namespace detail

/// Value of f at x and its derivative along v (J v). f is called once with
/// Duals seeded with x + v eps.
/// \throws usage_error if x and v differ in size.
template <class F, class Scalar>
auto value_and_derivative(F&& f, const std::vector<Scalar>& x, const std::vector<Scalar>& v) {
    static_assert(std::is_floating_point_v<Scalar>, "x must be a vector of float, double or long double");
    using D = basic_dual<Scalar, 1>;
    detail::check_forward_result<D, F>("value_and_derivative");
    detail::check_direction(x, v, "value_and_derivative");
    std::vector<D> inputs;
    inputs.reserve(x.size());
    for (std::size_t j = 0; j < x.size(); ++j) inputs.emplace_back(x[j], v[j]);
    if constexpr (detail::forward_result<D, F>::vector) {
        const std::vector<D> y = std::forward<F>(f)(std::as_const(inputs));
        value_and_derivative_result<std::vector<Scalar>> r;
        r.value.reserve(y.size());
        r.derivative.reserve(y.size());
        for (const D& yi : y) {
            r.value.push_back(yi.value());
            r.derivative.push_back(yi.tangent());
        }
        return r;
    } else {
        const D y = std::forward<F>(f)(std::as_const(inputs));
        return value_and_derivative_result<Scalar>{y.value(), y.tangent()};
    }
}

/// Derivative of f at x along v: a number when f returns one value, a vector
/// (J v) when it returns a vector.
template <class F, class Scalar>
auto derivative(F&& f, const std::vector<Scalar>& x, const std::vector<Scalar>& v) {
    return value_and_derivative(std::forward<F>(f), x, v).derivative;
}

template <class F, class Scalar>
auto value_and_derivative(F&& f, std::initializer_list<Scalar> x, std::initializer_list<Scalar> v) {
    return value_and_derivative(std::forward<F>(f), std::vector<Scalar>(x), std::vector<Scalar>(v));
}
template <class F, class Scalar>
auto derivative(F&& f, std::initializer_list<Scalar> x, std::initializer_list<Scalar> v) {
    return derivative(std::forward<F>(f), std::vector<Scalar>(x), std::vector<Scalar>(v));
}

/// Jacobian of F at x by vector forward mode: F runs ceil(n / N) times on
/// basic_dual<Scalar, N>, each run seeding N inputs (lane k of input
/// p N + k is 1). Row i holds the gradient of output i, as tapeflow::jacobian.
/// \throws usage_error if F returns a different number of outputs in two runs.
template <std::size_t N = default_forward_lanes, class F, class Scalar>
std::vector<std::vector<Scalar>> jacobian_forward(F&& f, const std::vector<Scalar>& x) {
    static_assert(std::is_floating_point_v<Scalar>, "x must be a vector of float, double or long double");
    using D = basic_dual<Scalar, N>;
    detail::check_forward_result<D, F>("jacobian_forward");
    static_assert(detail::forward_result<D, F>::vector,
                  "tapeflow::jacobian_forward: f must return a std::vector of Duals (one per output); "
                  "for a function with one output use derivative() or tapeflow::gradient");
    const std::size_t n = x.size();
    std::vector<D> inputs(x.begin(), x.end());
    std::vector<std::vector<Scalar>> rows;
    bool first = true;
    // One run when n == 0 too: the number of rows is that of the outputs.
    for (std::size_t begin = 0; first || begin < n; begin += N) {
        const std::size_t end = begin + N < n ? begin + N : n;
        for (std::size_t j = begin; j < end; ++j) inputs[j].set_tangent(Scalar(1), j - begin);
        const std::vector<D> y = f(std::as_const(inputs));
        if (first) {
            rows.assign(y.size(), std::vector<Scalar>(n));
            first = false;
        } else if (y.size() != rows.size()) {
            throw usage_error("jacobian_forward: f returned " + std::to_string(y.size()) +
                              " outputs after " + std::to_string(rows.size()) +
                              " in an earlier run; f must return the same number of outputs each time");
        }
        for (std::size_t i = 0; i < y.size(); ++i)
            for (std::size_t j = begin; j < end; ++j) rows[i][j] = y[i].tangents()[j - begin];
        for (std::size_t j = begin; j < end; ++j) inputs[j].set_tangent(Scalar(0), j - begin);
    }
    return rows;
}

template <std::size_t N = default_forward_lanes, class F, class Scalar>
std::vector<std::vector<Scalar>> jacobian_forward(F&& f, std::initializer_list<Scalar> x) {
    return jacobian_forward<N>(std::forward<F>(f), std::vector<Scalar>(x));
}

/// The mode of a Jacobian: chosen by shape, or vector forward, or vector reverse.
enum class jacobian_mode { automatic, forward, reverse };

/// Result of jacobian_by_shape: the rows and the mode that computed them.
template <class Scalar>
struct jacobian_result {
    std::vector<std::vector<Scalar>> rows;  ///< rows[i][j] = d f_i / d x_j, as tapeflow::jacobian
    jacobian_mode mode;                     ///< forward or reverse: the mode used
};

/// Jacobian of f at x in the mode that suits its shape, or in `mode`.
/// f is generic: it is called with a std::vector of Duals and, in reverse
/// mode, of Reals, and returns a std::vector of the same type. With
/// jacobian_mode::automatic, f first runs once on Duals without tangents
/// (about the cost of two runs on doubles) to count its m outputs; then
/// for n inputs:
///   n <= m: vector forward mode, jacobian_forward<8>: ceil(n / 8) runs of f;
///   n >  m: vector reverse mode, tapeflow::jacobian: one recording of f and
///           ceil(m / 8) sweeps.
/// The result says which was taken (docs/modes.md has the measured costs).
///
/// **Example**:
///   auto F = [](const auto& x) {
///       using T = typename std::decay_t<decltype(x)>::value_type;
///       return std::vector<T>{x[0] * x[1], sin(x[0]), x[1] * x[1]};
///   };
///   auto J = tapeflow::jacobian_by_shape(F, std::vector<double>{1.0, 2.0});
///   // J.mode == tapeflow::jacobian_mode::forward (2 inputs, 3 outputs)
template <class F, class Scalar>
jacobian_result<Scalar> jacobian_by_shape(F&& f, const std::vector<Scalar>& x,
                                          jacobian_mode mode = jacobian_mode::automatic) {
    static_assert(std::is_floating_point_v<Scalar>, "x must be a vector of float, double or long double");
    if (mode == jacobian_mode::automatic) {
        const std::vector<basic_dual<Scalar>> probe(x.begin(), x.end());
        const std::size_t m = std::size_t(f(probe).size());
        mode = x.size() <= m ? jacobian_mode::forward : jacobian_mode::reverse;
    }
    if (mode == jacobian_mode::forward) return {jacobian_forward<8>(f, x), mode};
    return {jacobian(f, x), jacobian_mode::reverse};
}

}  // namespace tapeflow
