// tapeflow/drivers.hpp - gradient, value_and_gradient, jacobian.
//
// Each records f once on the calling thread's active tape and sweeps it.
// f is called as f(const std::vector<Real>&); it returns a Real (gradient)
// or a std::vector<Real> (jacobian). The tape is reset before recording and
// keeps its memory, so calling these in a loop does not allocate tape memory.
// Afterwards the tape still holds the recording (its statistics() describe
// f) with every adjoint 0; to record on it by hand, call reset() first
// (start_recording() on a swept recording throws usage_error).
//
// **Example**:
//   auto f = [](const std::vector<tapeflow::Real>& x) { return x[0] * x[1] + sin(x[0]); };
//   std::vector<double> g = tapeflow::gradient(f, {1.0, 2.0});   // {2 + cos 1, 1}
//
// \throws usage_error if the active tape is already recording: nested calls
// (a gradient inside the function being differentiated) are not supported.
#pragma once

#include <initializer_list>
#include <type_traits>
#include <utility>
#include <vector>

#include "error.hpp"
#include "real.hpp"

namespace tapeflow {

/// Result of value_and_gradient.
template <class Scalar>
struct value_and_gradient_result {
    Scalar value;
    std::vector<Scalar> gradient;
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
        if (tape_.is_recording()) {  // left by an exception
            tape_.stop_recording();
            tape_.reset();
        }
    }
    recording_scope(const recording_scope&) = delete;
    recording_scope& operator=(const recording_scope&) = delete;

private:
    basic_tape<Scalar>& tape_;
};

template <class Scalar>
std::vector<basic_real<Scalar>> make_inputs(basic_tape<Scalar>& tape, const std::vector<Scalar>& x) {
    std::vector<basic_real<Scalar>> inputs(x.begin(), x.end());
    for (auto& xi : inputs) tape.register_input(xi);
    return inputs;
}

template <class Scalar>
std::vector<Scalar> read_adjoints(const basic_tape<Scalar>& tape,
                                  const std::vector<basic_real<Scalar>>& inputs) {
    std::vector<Scalar> g(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) g[i] = tape.adjoint(inputs[i]);
    return g;
}

}  // namespace detail

/// Value f(x) and gradient of f at x.
template <class F, class Scalar>
value_and_gradient_result<Scalar> value_and_gradient(F&& f, const std::vector<Scalar>& x) {
    static_assert(std::is_floating_point_v<Scalar>, "x must be a vector of float, double or long double");
    auto& tape = basic_tape<Scalar>::active();
    std::vector<basic_real<Scalar>> inputs;
    basic_real<Scalar> y;
    {
        detail::recording_scope<Scalar> scope(tape, "value_and_gradient");
        inputs = detail::make_inputs(tape, x);
        y = std::forward<F>(f)(std::as_const(inputs));
        tape.register_output(y);
        tape.stop_recording();
    }
    tape.set_adjoint(y, Scalar(1));
    tape.sweep();
    value_and_gradient_result<Scalar> result{y.value(), detail::read_adjoints(tape, inputs)};
    tape.clear_adjoints();  // the recording stays (for statistics), no adjoint is left behind
    return result;
}

/// Gradient of f at x.
template <class F, class Scalar>
std::vector<Scalar> gradient(F&& f, const std::vector<Scalar>& x) {
    return value_and_gradient(std::forward<F>(f), x).gradient;
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

/// Jacobian of F at x: row i is the gradient of output i. One recording,
/// one sweep per output.
template <class F, class Scalar>
std::vector<std::vector<Scalar>> jacobian(F&& f, const std::vector<Scalar>& x) {
    static_assert(std::is_floating_point_v<Scalar>, "x must be a vector of float, double or long double");
    auto& tape = basic_tape<Scalar>::active();
    std::vector<basic_real<Scalar>> inputs;
    std::vector<basic_real<Scalar>> outputs;
    {
        detail::recording_scope<Scalar> scope(tape, "jacobian");
        inputs = detail::make_inputs(tape, x);
        outputs = std::forward<F>(f)(std::as_const(inputs));
        for (auto& y : outputs) tape.register_output(y);
        tape.stop_recording();
    }
    std::vector<std::vector<Scalar>> rows;
    rows.reserve(outputs.size());
    for (const auto& y : outputs) {
        tape.clear_adjoints();
        tape.set_adjoint(y, Scalar(1));
        tape.sweep();
        rows.push_back(detail::read_adjoints(tape, inputs));
    }
    tape.clear_adjoints();
    return rows;
}

template <class F, class Scalar>
std::vector<std::vector<Scalar>> jacobian(F&& f, std::initializer_list<Scalar> x) {
    return jacobian(std::forward<F>(f), std::vector<Scalar>(x));
}

}  // namespace tapeflow
