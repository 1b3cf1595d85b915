// tapeflow/hessian_drivers.hpp - second derivatives by forward over reverse:
// hessian_vector_product, hessian, hessian_diagonal, value_gradient_and_hessian.
//
// f is recorded with basic_real<basic_dual<S, N>>: a Real whose value,
// partials and adjoints are Duals. The inputs carry N directions as their
// tangents; the reverse sweep then gives, for each input j, the adjoint
//
//   adjoint(x_j) = ( df/dx_j ,  sum_i H[j][i] v_0[i], ..., sum_i H[j][i] v_{N-1}[i] )
//                    gradient   (H v_0)_j             ...  (H v_{N-1})_j
//
// so one recording and one sweep give the gradient and N Hessian-vector
// products (about 1.3-4x a gradient for N = 1 on the bench kernels; docs/modes.md). A dense
// Hessian of n inputs takes ceil(n / N) of them, seeding unit vectors.
//
// f is generic (`[](const auto& x) { ... }` or a template on the scalar)
// and is called with a `const std::vector<basic_real<basic_dual<S, N>>>&`;
// it returns one active value (the element type of its argument, or an
// expression of them). It is recorded on the calling thread's active tape of
// that type, basic_tape<basic_dual<S, N>>::active(), which the driver resets.
//
// **Example**:
//   auto f = [](const auto& x) { return x[0] * x[0] * x[1] + exp(x[1]); };
//   std::vector<double> hv = tapeflow::hessian_vector_product(f, {1.0, 2.0}, {1.0, 0.0});
//   // {2 x1, 2 x0} = {4, 2}: the first column of H = {{2 x1, 2 x0}, {2 x0, e^x1}}
//   auto H = tapeflow::hessian(f, {1.0, 2.0});     // {{4, 2}, {2, e^2}}
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
#include "forward_drivers.hpp"
#include "real.hpp"

namespace tapeflow {

/// The active type f is recorded with for second derivatives: a Real of
/// Duals with N directions.
template <class S, std::size_t N = 1>
using second_order_real = basic_real<basic_dual<S, N>>;

/// Largest number of directions the dense Hessian drivers carry per
/// recording by themselves (their Lanes = 0).
inline constexpr std::size_t hessian_default_lanes = 8;

/// Result of value_gradient_and_hessian.
template <class Scalar>
struct value_gradient_and_hessian_result {
    Scalar value;
    std::vector<Scalar> gradient;
    std::vector<std::vector<Scalar>> hessian;  ///< hessian[i][j] = d^2 f / dx_i dx_j
};

namespace detail {

/// T is an expression of basic_real<D>s.
template <class T, class D, bool = is_node_v<T>>
struct is_second_order_node : std::false_type {};
template <class T, class D>
struct is_second_order_node<T, D, true> : std::is_same<typename T::scalar_type, D> {};

/// Checks f's result when it is called with second_order_real<S, N>s.
template <class S, std::size_t N, class F>
constexpr bool check_second_order_result() {
    using R = second_order_real<S, N>;
    constexpr bool callable = std::is_invocable_v<F&, const std::vector<R>&>;
    static_assert(callable,
                  "tapeflow Hessian drivers: f cannot be called with a const std::vector of "
                  "tapeflow::basic_real<tapeflow::basic_dual<S, N>> (a Real of Duals: forward over "
                  "reverse); write f generic, `[](const auto& x) { ... }`, or as a template on the scalar");
    if constexpr (callable) {
        using T = bare_t<std::invoke_result_t<F&, const std::vector<R>&>>;
        constexpr bool ok = std::is_same_v<T, R> || is_second_order_node<T, basic_dual<S, N>>::value;
        static_assert(ok,
                      "tapeflow Hessian drivers: f must return the active value it computes (the "
                      "element type of its argument, or an expression of them); it returns something "
                      "else (a double from .value()? a vector?), which has no second derivative");
        return ok;
    }
    return false;
}

/// One recording of f at x with the N directions seed(j, l) (input j, lane
/// l) as the inputs' tangents, and one sweep. Gives f(x) and, per input,
/// its adjoint: the gradient entry and N Hessian-vector product entries.
template <std::size_t N, class Scalar, class F, class Seed>
Scalar forward_over_reverse(F& f, const std::vector<Scalar>& x, Seed seed, std::vector<basic_dual<Scalar, N>>& adjoints,
                            const char* caller) {
    using D = basic_dual<Scalar, N>;
    using R = basic_real<D>;
    auto& tape = basic_tape<D>::active();
    const std::size_t n = x.size();
    std::vector<R> inputs(n);
    R y;
    {
        recording_scope<D> scope(tape, caller);
        for (std::size_t j = 0; j < n; ++j) {
            typename D::tangent_type t{};
            for (std::size_t l = 0; l < N; ++l) t[l] = seed(j, l);
            inputs[j] = D(x[j], t);
        }
        tape.register_inputs(inputs.data(), inputs.data() + n);
        y = f(std::as_const(inputs));
        tape.register_output(y);
        tape.stop_recording();
    }
    tape.set_adjoint(y, D(Scalar(1)));
    tape.sweep();
    adjoints.resize(n);
    tape.adjoints(inputs.data(), inputs.data() + n, adjoints.data());
    tape.clear_adjoints();
    return y.value().value();
}

/// Columns [first, first + N) of the Hessian, and the value and gradient.
template <std::size_t N, class Scalar, class F>
Scalar hessian_columns(F& f, const std::vector<Scalar>& x, std::size_t first,
                       std::vector<basic_dual<Scalar, N>>& adjoints, const char* caller) {
    return forward_over_reverse<N>(
        f, x, [first](std::size_t j, std::size_t l) { return j == first + l ? Scalar(1) : Scalar(0); },
        adjoints, caller);
}

}  // namespace detail

/// H v: the Hessian of f at x times v, by one recording and one sweep.
/// \throws usage_error if x and v differ in size.
template <class F, class Scalar>
std::vector<Scalar> hessian_vector_product(F&& f, const std::vector<Scalar>& x, const std::vector<Scalar>& v) {
    static_assert(std::is_floating_point_v<Scalar>, "x must be a vector of float, double or long double");
    std::vector<Scalar> hv;
    if constexpr (detail::check_second_order_result<Scalar, 1, F>()) {
        detail::check_direction(x, v, "hessian_vector_product");
        std::vector<basic_dual<Scalar, 1>> adjoints;
        detail::forward_over_reverse<1>(f, x, [&v](std::size_t j, std::size_t) { return v[j]; }, adjoints,
                                        "hessian_vector_product");
        hv.reserve(x.size());
        for (const auto& a : adjoints) hv.push_back(a.tangent());
    }
    return hv;
}

/// Value, gradient and dense Hessian of f at x: ceil(n / Lanes) recordings
/// and sweeps, each giving Lanes columns. Lanes = 0 chooses 1, 2, 4 or 8
/// (the fewest that hold all n inputs, at most hessian_default_lanes).
template <std::size_t Lanes = 0, class F, class Scalar>
value_gradient_and_hessian_result<Scalar> value_gradient_and_hessian(F&& f, const std::vector<Scalar>& x) {
    static_assert(std::is_floating_point_v<Scalar>, "x must be a vector of float, double or long double");
    static_assert(Lanes <= 64, "tapeflow::hessian<Lanes>: at most 64 lanes (0 chooses)");
    const std::size_t n = x.size();
    value_gradient_and_hessian_result<Scalar> r{Scalar(0), std::vector<Scalar>(n),
                                                std::vector<std::vector<Scalar>>(n, std::vector<Scalar>(n))};
    detail::with_lanes<Lanes, hessian_default_lanes>(n, [&](auto lanes) {
        constexpr std::size_t N = decltype(lanes)::value;
        if constexpr (detail::check_second_order_result<Scalar, N, F>()) {
            std::vector<basic_dual<Scalar, N>> adjoints;
            // One pass when n == 0 too: it gives the value.
            for (std::size_t first = 0; first == 0 || first < n; first += N) {
                r.value = detail::hessian_columns<N>(f, x, first, adjoints, "value_gradient_and_hessian");
                for (std::size_t i = 0; i < n; ++i) {
                    r.gradient[i] = adjoints[i].value();
                    for (std::size_t l = 0; l < N && first + l < n; ++l)
                        r.hessian[i][first + l] = adjoints[i].tangents()[l];
                }
            }
        }
    });
    return r;
}

/// The dense Hessian of f at x (rows as value_gradient_and_hessian).
template <std::size_t Lanes = 0, class F, class Scalar>
std::vector<std::vector<Scalar>> hessian(F&& f, const std::vector<Scalar>& x) {
    return value_gradient_and_hessian<Lanes>(std::forward<F>(f), x).hessian;
}

/// The diagonal of the Hessian of f at x: as hessian() (the same
/// recordings; no cheaper way exists in general), without keeping the rest.
template <std::size_t Lanes = 0, class F, class Scalar>
std::vector<Scalar> hessian_diagonal(F&& f, const std::vector<Scalar>& x) {
    static_assert(std::is_floating_point_v<Scalar>, "x must be a vector of float, double or long double");
    static_assert(Lanes <= 64, "tapeflow::hessian_diagonal<Lanes>: at most 64 lanes (0 chooses)");
    const std::size_t n = x.size();
    std::vector<Scalar> diagonal(n);
    detail::with_lanes<Lanes, hessian_default_lanes>(n, [&](auto lanes) {
        constexpr std::size_t N = decltype(lanes)::value;
        if constexpr (detail::check_second_order_result<Scalar, N, F>()) {
            std::vector<basic_dual<Scalar, N>> adjoints;
            for (std::size_t first = 0; first < n; first += N) {
                detail::hessian_columns<N>(f, x, first, adjoints, "hessian_diagonal");
                for (std::size_t l = 0; l < N && first + l < n; ++l)
                    diagonal[first + l] = adjoints[first + l].tangents()[l];
            }
        }
    });
    return diagonal;
}

template <class F, class Scalar>
std::vector<Scalar> hessian_vector_product(F&& f, std::initializer_list<Scalar> x, std::initializer_list<Scalar> v) {
    return hessian_vector_product(std::forward<F>(f), std::vector<Scalar>(x), std::vector<Scalar>(v));
}
template <std::size_t Lanes = 0, class F, class Scalar>
value_gradient_and_hessian_result<Scalar> value_gradient_and_hessian(F&& f, std::initializer_list<Scalar> x) {
    return value_gradient_and_hessian<Lanes>(std::forward<F>(f), std::vector<Scalar>(x));
}
template <std::size_t Lanes = 0, class F, class Scalar>
std::vector<std::vector<Scalar>> hessian(F&& f, std::initializer_list<Scalar> x) {
    return hessian<Lanes>(std::forward<F>(f), std::vector<Scalar>(x));
}
template <std::size_t Lanes = 0, class F, class Scalar>
std::vector<Scalar> hessian_diagonal(F&& f, std::initializer_list<Scalar> x) {
    return hessian_diagonal<Lanes>(std::forward<F>(f), std::vector<Scalar>(x));
}

}  // namespace tapeflow
