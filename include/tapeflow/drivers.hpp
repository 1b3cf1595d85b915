// tapeflow/drivers.hpp - gradient, value_and_gradient, jacobian.
//
// Each records f once on the calling thread's active tape and sweeps it.
// An input x is a std::vector, a std::array or (with <tapeflow/eigen.hpp>)
// an Eigen vector of float, double or long double; f receives the same
// container of Real (driver_arguments.hpp). f returns a Real or an
// expression of them (gradient), or a contiguous range of Real (jacobian:
// std::vector, std::array, an Eigen vector). A function returning anything
// else (a double from .value(), a vector of double) is a compile error: no
// derivative could flow through it.
//
// The tape is reset before recording and keeps its memory, so calling these
// in a loop does not allocate tape memory. Afterwards the tape still holds
// the recording (its statistics() describe f) with every adjoint 0; to
// record on it by hand, call reset() first (start_recording() on a swept
// recording throws usage_error).
//
// **Example**:
//   auto f = [](const std::vector<tapeflow::Real>& x) { return x[0] * x[1] + sin(x[0]); };
//   std::vector<double> g = tapeflow::gradient(f, {1.0, 2.0});   // {2 + cos 1, 1}
//
//   // several inputs: one range of Real each, one gradient each (a std::tuple)
//   auto h = [](const std::vector<tapeflow::Real>& w, const std::array<tapeflow::Real, 2>& b) {
//       return w[0] * b[0] + w[1] * b[1];
//   };
//   auto [gw, gb] = tapeflow::gradient(h, std::vector<double>{1, 2}, std::array<double, 2>{3, 4});
//
// \throws usage_error if the active tape is already recording: nested calls
// (a gradient inside the function being differentiated) are not supported.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "driver_arguments.hpp"
#include "error.hpp"
#include "real.hpp"

namespace tapeflow {

/// Result of value_and_gradient: f(x) and the gradient (for several inputs,
/// a std::tuple with one gradient per input, in the order of the inputs).
template <class Scalar, class Gradient = std::vector<Scalar>>
struct value_and_gradient_result {
    Scalar value;
    Gradient gradient;
};

namespace detail {

/// Stops recording and resets the tape if the recording is abandoned by an exception.
template <class Scalar>
class recording_scope {
public:
    explicit recording_scope(basic_tape<Scalar>& tape, const char* caller) : tape_(tape) {
        if (tape.is_sweeping())
            throw usage_error(std::string(caller) +
                              "() called while the active tape is sweeping (from a reverse rule?): "
                              "it would reset the tape being swept; differentiate inside a rule "
                              "on a tape of its own (tapeflow::tape inner; inner.activate();)");
        if (tape.is_recording())
            throw usage_error(std::string(caller) +
                              "() called while the active tape is recording: nested calls are not "
                              "supported; compute the inner derivative before or after the outer "
                              "recording");
        tape.reset();
        tape.start_recording();
    }
    ~recording_scope() {
        if (tape_.is_recording()) {  // left by an exception: that one goes on, not what stopping finds
            try {
                tape_.stop_recording();
                tape_.reset();
            } catch (...) {
            }
        }
    }
    recording_scope(const recording_scope&) = delete;
    recording_scope& operator=(const recording_scope&) = delete;

private:
    basic_tape<Scalar>& tape_;
};

template <class X>
using argument_t = driver_argument<std::decay_t<X>>;

/// The checks every driver makes on its inputs, with messages that say what to pass.
template <class X, class... Xs>
constexpr bool check_inputs() {
    constexpr bool supported = argument_t<X>::supported && (argument_t<Xs>::supported && ...);
    static_assert(supported,
                  "tapeflow driver: each input must be a std::vector or std::array of float, double or "
                  "long double (or, with <tapeflow/eigen.hpp>, an Eigen vector of them); pass the plain "
                  "numbers, not Reals; integers: convert them first, e.g. "
                  "std::vector<double>(v.begin(), v.end()) or {3.0, 2.0}");
    if constexpr (supported) {
        using S = typename argument_t<X>::scalar;
        constexpr bool same = (std::is_same_v<S, typename argument_t<Xs>::scalar> && ...);
        static_assert(same, "tapeflow driver: every input must have the same scalar type (all double, "
                            "or all float, ...): they are recorded on one tape");
        return same;
    }
    return false;
}

/// Stands for f's result when f cannot be called (that was reported already).
struct not_callable {};

/// f's result type when f is callable with the active inputs; a message otherwise.
template <class F, class... Actives>
struct call_result {
    static constexpr bool callable = std::is_invocable_v<F&, const Actives&...>;
    static_assert(callable,
                  "tapeflow driver: f cannot be called with the inputs as Reals; it must take one "
                  "argument per input, each as the input's container of tapeflow::Real (for a "
                  "std::vector<double> x: const std::vector<tapeflow::Real>&), or a generic const auto&");
    using type = typename std::conditional_t<callable, std::invoke_result<F&, const Actives&...>,
                                             std::enable_if<true, not_callable>>::type;
};

/// What gradient and value_and_gradient accept from f: a Real or an expression.
template <class R, class Scalar>
constexpr bool check_scalar_result() {
    using T = std::decay_t<R>;
    if constexpr (std::is_same_v<T, not_callable>) {
        return false;
    } else {
        static_assert(!std::is_arithmetic_v<T>,
                      "tapeflow::gradient / value_and_gradient: f returns a plain number (such as "
                      "x.value() or a double), through which no derivative flows: the gradient would be "
                      "zero. Return the tapeflow::Real (or the expression) itself");
        constexpr bool active = is_real<T>::value || is_node_v<T>;
        static_assert(std::is_arithmetic_v<T> || active,
                      "tapeflow::gradient / value_and_gradient: f must return a tapeflow::Real (or an "
                      "expression of Reals); for several outputs use tapeflow::jacobian");
        if constexpr (active) {
            constexpr bool same = std::is_same_v<typename T::scalar_type, Scalar>;
            static_assert(same, "tapeflow::gradient / value_and_gradient: f returns an active number of "
                                "another scalar type than the inputs (RealF for double inputs?)");
            return same;
        }
        return false;
    }
}

// The element type of a contiguous range R (void when R has no data()).
template <class R, class = void>
struct range_element {
    using type = void;
};
template <class R>
struct range_element<R, std::void_t<decltype(std::declval<R&>().data()), decltype(std::declval<R&>().size())>> {
    using type = std::remove_cv_t<std::remove_pointer_t<decltype(std::declval<R&>().data())>>;
};

/// What jacobian accepts from f: a contiguous range of Real.
template <class R, class Scalar>
constexpr bool check_range_result() {
    using T = std::decay_t<R>;
    using E = typename range_element<T>::type;
    if constexpr (std::is_same_v<T, not_callable>) {
        return false;
    } else {
        static_assert(!is_real<T>::value && !is_node_v<T>,
                      "tapeflow::jacobian: f returns one Real; return a range of them (std::vector, "
                      "std::array, an Eigen vector), or use tapeflow::gradient for a single output");
        static_assert(!std::is_arithmetic_v<T> && !std::is_arithmetic_v<E>,
                      "tapeflow::jacobian: f returns plain numbers (such as x.value() or doubles), through "
                      "which no derivative flows: the Jacobian would be zero. Return the tapeflow::Reals");
        constexpr bool ok = std::is_same_v<E, basic_real<Scalar>>;
        static_assert(ok || is_real<T>::value || is_node_v<T> || std::is_arithmetic_v<T> ||
                          std::is_arithmetic_v<E>,
                      "tapeflow::jacobian: f must return a contiguous range (data(), size()) of "
                      "tapeflow::Real of the inputs' scalar type: a std::vector, a std::array, an Eigen "
                      "vector (call .eval() on an Eigen expression)");
        return ok;
    }
}

template <class Scalar, class Active>
void register_all(basic_tape<Scalar>& tape, Active& a) {
    tape.register_inputs(a.data(), a.data() + a.size());
}

template <class Scalar, class Active, class Gradient>
void read_adjoints(const basic_tape<Scalar>& tape, const Active& a, Gradient& g) {
    tape.adjoints(a.data(), a.data() + a.size(), g.data());
}

// The active inputs of one call: built and registered in place (a Real
// moved keeps its identifier, but a copy would record a new one).
template <class Scalar, class... Xs>
struct active_inputs {
    std::tuple<typename argument_t<Xs>::active...> values;

    active_inputs(basic_tape<Scalar>& tape, const Xs&... xs) : values(argument_t<Xs>::to_active(xs)...) {
        std::apply([&](auto&... a) { (register_all(tape, a), ...); }, values);
    }
    template <class F>
    decltype(auto) call(F& f) const {
        return std::apply([&](const auto&... a) -> decltype(auto) { return f(a...); }, values);
    }
    // One gradient per input, read from the tape's adjoints.
    auto gradients(const basic_tape<Scalar>& tape, const Xs&... xs) const {
        // braces: clang 14 reads the parenthesized form as a function declaration
        std::tuple<typename argument_t<Xs>::gradient...> g{argument_t<Xs>::gradient_like(xs)...};
        read_all(tape, g, std::index_sequence_for<Xs...>{});
        return g;
    }

private:
    template <class G, std::size_t... I>
    void read_all(const basic_tape<Scalar>& tape, G& g, std::index_sequence<I...>) const {
        (read_adjoints(tape, std::get<I>(values), std::get<I>(g)), ...);
    }
};

template <class X>
using scalar_t = typename argument_t<X>::scalar;

// The gradient type for inputs Xs: one container, or a tuple of several.
template <class... Xs>
struct gradient_of {
    using type = std::tuple<typename argument_t<Xs>::gradient...>;
};
template <class X>
struct gradient_of<X> {
    using type = typename argument_t<X>::gradient;
};

}  // namespace detail

/// Value f(x...) and gradient of f at x... (one gradient per input: for a
/// single input its container, for several a std::tuple of them).
///
/// **Example**:
///   auto [y, g] = tapeflow::value_and_gradient(f, x);          // g: like x
///   auto [y2, gs] = tapeflow::value_and_gradient(f2, x, w);    // gs: std::tuple
///   auto& [gx, gw] = gs;
template <class F, class X, class... Xs>
auto value_and_gradient(F&& f, const X& x, const Xs&... xs) {
    if constexpr (detail::check_inputs<X, Xs...>()) {
        using Scalar = detail::scalar_t<X>;
        using inputs_type = detail::active_inputs<Scalar, X, Xs...>;
        using R = typename detail::call_result<F, typename detail::argument_t<X>::active,
                                               typename detail::argument_t<Xs>::active...>::type;
        using gradient_type = typename detail::gradient_of<X, Xs...>::type;
        using result_type = value_and_gradient_result<Scalar, gradient_type>;
        if constexpr (detail::check_scalar_result<R, Scalar>()) {
            auto& tape = basic_tape<Scalar>::active();
            std::optional<inputs_type> inputs;
            basic_real<Scalar> y;
            {
                detail::recording_scope<Scalar> scope(tape, "value_and_gradient");
                inputs.emplace(tape, x, xs...);
                y = inputs->call(f);
                tape.register_output(y);
                tape.stop_recording();
            }
            tape.set_adjoint(y, Scalar(1));
            tape.sweep();
            auto g = inputs->gradients(tape, x, xs...);
            tape.clear_adjoints();  // the recording stays (for statistics), no adjoint is left behind
            if constexpr (sizeof...(Xs) == 0)
                return result_type{y.value(), std::move(std::get<0>(g))};
            else
                return result_type{y.value(), std::move(g)};
        } else {
            return result_type{};
        }
    } else {
        return value_and_gradient_result<double>{};
    }
}

/// Gradient of f at x... (for several inputs, a std::tuple with one gradient
/// per input: `auto [gx, gw] = tapeflow::gradient(f, x, w);`).
template <class F, class X, class... Xs>
auto gradient(F&& f, const X& x, const Xs&... xs) {
    return value_and_gradient(std::forward<F>(f), x, xs...).gradient;
}

/// The same for a braced list: tapeflow::gradient(f, {1.0, 2.0}).
template <class F, class Scalar>
value_and_gradient_result<Scalar> value_and_gradient(F&& f, std::initializer_list<Scalar> x) {
    return value_and_gradient(std::forward<F>(f), std::vector<Scalar>(x));
}
template <class F, class Scalar>
std::vector<Scalar> gradient(F&& f, std::initializer_list<Scalar> x) {
    return gradient(std::forward<F>(f), std::vector<Scalar>(x));
}

namespace detail {

/// Calls body(std::integral_constant<std::size_t, L>{}) with L = Lanes when it
/// is given (not 0), else with the fewest of 1, 2, 4 and Most that hold
/// `count` directions (Most when none does): how jacobian and the Hessian
/// drivers choose their lane count.
template <std::size_t Lanes, std::size_t Most, class F>
decltype(auto) with_lanes(std::size_t count, F&& body) {
    if constexpr (Lanes != 0)
        return body(std::integral_constant<std::size_t, Lanes>{});
    else if (count <= 1)
        return body(std::integral_constant<std::size_t, 1>{});
    else if (count <= 2)
        return body(std::integral_constant<std::size_t, 2>{});
    else if (count <= 4)
        return body(std::integral_constant<std::size_t, 4>{});
    else
        return body(std::integral_constant<std::size_t, Most>{});
}

// Rows of the Jacobian by vector sweeps: outputs [first, first + Lanes) are
// seeded in lanes 0 .. Lanes-1, and one sweep gives their rows.
template <std::size_t Lanes, class Scalar, class In, class Out>
void jacobian_rows_by_lanes(basic_tape<Scalar>& tape, const In& in, const Out& out,
                            std::vector<std::vector<Scalar>>& rows) {
    const std::size_t n = std::size_t(in.size()), m = std::size_t(out.size());
    lane_adjoints<Scalar, Lanes> bar(tape);
    for (std::size_t first = 0; first < m; first += Lanes) {
        const std::size_t count = std::min(Lanes, m - first);
        bar.clear();
        for (std::size_t l = 0; l < count; ++l) bar.set(out.data()[first + l], l, Scalar(1));
        tape.sweep(bar);
        for (std::size_t l = 0; l < count; ++l) {
            Scalar* row = rows[first + l].data();
            for (std::size_t j = 0; j < n; ++j) row[j] = bar.get(in.data()[j], l);
        }
    }
}

// Rows of the Jacobian by one scalar sweep per output.
template <class Scalar, class In, class Out>
void jacobian_rows_by_sweeps(basic_tape<Scalar>& tape, const In& in, const Out& out,
                             std::vector<std::vector<Scalar>>& rows) {
    const std::size_t n = std::size_t(in.size()), m = std::size_t(out.size());
    for (std::size_t i = 0; i < m; ++i) {
        tape.clear_adjoints();
        tape.set_adjoint(out.data()[i], Scalar(1));
        tape.sweep();
        tape.adjoints(in.data(), in.data() + n, rows[i].data());
    }
    tape.clear_adjoints();
}

}  // namespace detail

/// Largest number of lanes jacobian() chooses by itself.
inline constexpr std::size_t jacobian_default_lanes = 8;

/// Jacobian of F at x: row i is the gradient of output i. One recording;
/// then vector reverse sweeps (tape/lane_adjoints.hpp) that carry `Lanes`
/// outputs at once, ceil(m / Lanes) sweeps for m outputs. `Lanes` = 0 (the
/// default) chooses: one scalar sweep for one output, else 2, 4 or 8 lanes
/// (the fewest that hold every output, at most jacobian_default_lanes).
/// `jacobian<1>(f, x)` sweeps once per output with the tape's scalar
/// adjoints. The rows are the same either way, bit for bit (unless the
/// compiler contracts the sweeps' multiply-adds differently).
///
/// **Example**:
///   auto F = [](const std::vector<tapeflow::Real>& v) {
///       return std::array<tapeflow::Real, 2>{v[0] * v[1], sin(v[0])};
///   };
///   auto J = tapeflow::jacobian(F, std::vector<double>{1.0, 2.0});   // {{2, 1}, {cos 1, 0}}
///   auto J16 = tapeflow::jacobian<16>(F, x);                          // 16 outputs per sweep
template <std::size_t Lanes = 0, class F, class X>
auto jacobian(F&& f, const X& x) {
    static_assert(Lanes <= 64, "tapeflow::jacobian<Lanes>: at most 64 lanes (0 chooses, 1 is scalar sweeps)");
    if constexpr (detail::check_inputs<X>()) {
        using Scalar = detail::scalar_t<X>;
        using rows_type = std::vector<std::vector<Scalar>>;
        using R = typename detail::call_result<F, typename detail::argument_t<X>::active>::type;
        if constexpr (detail::check_range_result<R, Scalar>()) {
            auto& tape = basic_tape<Scalar>::active();
            std::optional<detail::active_inputs<Scalar, X>> inputs;
            std::optional<std::decay_t<R>> outputs;
            {
                detail::recording_scope<Scalar> scope(tape, "jacobian");
                inputs.emplace(tape, x);
                outputs.emplace(inputs->call(f));
                for (std::size_t i = 0; i < std::size_t(outputs->size()); ++i)
                    tape.register_output(outputs->data()[i]);
                tape.stop_recording();
            }
            const auto& in = std::get<0>(inputs->values);
            const auto& out = *outputs;
            const std::size_t n = std::size_t(in.size()), m = std::size_t(out.size());
            rows_type rows(m, std::vector<Scalar>(n));
            detail::with_lanes<Lanes, jacobian_default_lanes>(m, [&](auto lanes) {
                constexpr std::size_t L = decltype(lanes)::value;
                if constexpr (L == 1)
                    detail::jacobian_rows_by_sweeps(tape, in, out, rows);
                else
                    detail::jacobian_rows_by_lanes<L>(tape, in, out, rows);
            });
            return rows;
        } else {
            return rows_type{};
        }
    } else {
        return std::vector<std::vector<double>>{};
    }
}

template <std::size_t Lanes = 0, class F, class Scalar>
std::vector<std::vector<Scalar>> jacobian(F&& f, std::initializer_list<Scalar> x) {
    return jacobian<Lanes>(std::forward<F>(f), std::vector<Scalar>(x));
}

}  // namespace tapeflow
