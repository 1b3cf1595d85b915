// tests/random/interpreter.hpp - runs a random program (program.hpp) with
// any number type: tapeflow::Real, tapeflow::basic_dual, the tests' dual
// number, or double.
//
// The same code runs for every type, so the three runs compute the same
// primal values bit for bit and take the same branches. Math functions are
// called unqualified: argument-dependent lookup finds tapeflow's for Real and
// tapeflow_test's for the dual; the double overloads are in fused.hpp.
// Two statement kinds differ by type: custom statements are evaluated as a
// formula on T, but taped by Real as one custom-adjoint entry
// (interpreter_custom.hpp); eigen statements run Eigen on matrices of T
// (interpreter_eigen.cpp, its own translation unit).
//
// Besides the outputs a run reports
//   signature      hash of every discrete decision (branches, loop breaks,
//                  min/max picks, signs at abs/copysign/hypot kinks, floor/fmod
//                  integers, atan2 branch cut): two runs with the same
//                  signature evaluate the same smooth piece of the program;
//   finite, largest  whether every value was finite, the largest |value|;
//   regions        tapeflow::Region scopes opened;
//   uses, kinds    how often each operation / statement kind ran (coverage);
//   custom_uses, eigen_uses  ... and each form of custom and eigen statements.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <tapeflow/tapeflow.hpp>

#include "fused.hpp"
#include "interpreter_custom.hpp"
#include "program.hpp"
#include "support/dual.hpp"
#ifdef TAPEFLOW_RANDOM_EIGEN
#include "interpreter_eigen.hpp"
#endif

namespace tapeflow_random {

/// Thrown for a statement the interpreter cannot run with the number type
/// (eigen statements with tapeflow's Duals): the caller skips the program.
struct unsupported_statement : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// The number types interpreter_eigen.cpp is compiled for.
template <class T>
inline constexpr bool eigen_instantiated =
    std::is_same_v<T, double> || std::is_same_v<T, tapeflow_test::dual> ||
    std::is_same_v<T, tapeflow_test::dual_magnitude> || std::is_same_v<T, tapeflow::Real>;

template <class T>
class interpreter {
public:
    explicit interpreter(const program& p) : p_(p) {}

    std::uint64_t signature = 0xcbf29ce484222325ull;
    bool finite = true;
    double largest = 0;
    std::size_t regions = 0;
    std::array<std::uint64_t, std::size_t(op::count)> uses{};
    std::array<std::uint64_t, std::size_t(stmt::count)> kinds{};  ///< statements run, by kind
    std::array<std::uint64_t, std::size_t(custom_form_count)> custom_uses{};  ///< by family x api
    std::array<std::uint64_t, std::size_t(eigen_form_count)> eigen_uses{};    ///< by eigen_form_index
    /// Called after each top-level statement (e.g. to take tape positions).
    std::function<void()> after_statement;
    /// Called with every value computed (nodes, compound assignments), e.g.
    /// to drop tangents that a finite difference could not see.
    std::function<void(T&)> after_value;

    /// Runs the program on `inputs` (p.inputs values); returns its outputs.
    std::vector<T> run(const std::vector<T>& inputs) {
        read_.clear();
        write_.clear();
        for (const T& x : inputs) {
            read_.push_back(&x);
            write_.push_back(nullptr);
        }
        std::vector<T> vars;
        vars.reserve(p_.vars.size());
        for (const expr& e : p_.vars) {
            vars.push_back(make(e));  // may read the inputs and the variables before it
            read_.push_back(&vars.back());
            write_.push_back(&vars.back());
        }
        for (const statement& s : p_.body) {
            exec(s);
            if (after_statement) after_statement();
        }
        std::vector<T> out;
        out.reserve(p_.outputs.size());
        for (const expr& e : p_.outputs) out.push_back(make(e));
        return out;
    }

private:
    using region_scope = std::conditional_t<std::is_same_v<T, tapeflow::Real>, tapeflow::Region, int>;

    const T& slot(int i) const { return *read_[std::size_t(i)]; }
    T& target(int i) { return *write_[std::size_t(i)]; }

    void mix(std::uint64_t v) { signature = (signature ^ v) * 0x100000001b3ull; }
    void mix_bits(double v) {
        std::uint64_t u;
        std::memcpy(&u, &v, sizeof u);
        mix(u);
    }
    void note(double v) {
        if (!std::isfinite(v))
            finite = false;
        else if (std::fabs(v) > largest)
            largest = std::fabs(v);
    }

    /// A fresh value of expression e (a copy when e is a single variable).
    T make(const expr& e) {
        const node& root = e.nodes.back();
        if (root.code == op::var) return T(slot(root.index));
        T r;
        eval_into(e, r);
        return r;
    }

    /// out = e; the root is assigned to `out` directly (out may appear in e).
    void eval_into(const expr& e, T& out) {
        std::vector<T> vals(e.nodes.size() - 1);  // die at the end: identifiers are reused
        const expr* saved_expr = expr_;
        std::vector<T>* saved_vals = vals_;
        expr_ = &e;
        vals_ = &vals;
        for (std::size_t i = 0; i + 1 < e.nodes.size(); ++i)
            if (e.nodes[i].code != op::var) compute(e.nodes[i], vals[i]);
        compute(e.nodes.back(), out);
        expr_ = saved_expr;
        vals_ = saved_vals;
    }

    const T& get(const operand& a) const {
        const node& n = expr_->nodes[std::size_t(a.node)];
        return n.code == op::var ? slot(n.index) : (*vals_)[std::size_t(a.node)];
    }
    double value(const operand& a) const { return a.node < 0 ? a.k : primal(get(a)); }

    /// out = f(a, b) with either operand possibly a literal double.
    template <class F>
    void binary(const node& n, T& out, F f) {
        if (n.a.node < 0)
            out = f(n.a.k, get(n.b));
        else if (n.b.node < 0)
            out = f(get(n.a), n.b.k);
        else
            out = f(get(n.a), get(n.b));
    }

    void compute(const node& n, T& out);
    void exec(const statement& s);
    void custom(const statement& s);
    void eigen(const statement& s);
    /// Writes the value of out.slot (moved from v); reports it like a node.
    void put(const out_slot& o, T&& v) {
        T& x = target(o.slot);
        x = std::move(v);
        if (after_value) after_value(x);
        note(primal(x));
    }

    template <class F>
    void compound(const statement& s, F f) {
        T& x = target(s.target);
        if (s.e.empty()) {
            f(x, s.k);
        } else if (s.e.nodes.back().code == op::var) {
            f(x, slot(s.e.nodes.back().index));  // possibly x itself: x += x
        } else {
            T r;
            eval_into(s.e, r);
            f(x, r);
        }
        if (after_value) after_value(x);
        note(primal(x));
    }

    const program& p_;
    std::vector<const T*> read_;  // visible slots
    std::vector<T*> write_;       // nullptr for the inputs
    const expr* expr_ = nullptr;
    std::vector<T>* vals_ = nullptr;
};

// clang-format off
template <class T>
void interpreter<T>::compute(const node& n, T& out) {
    ++uses[std::size_t(n.code)];
    const auto x = [&]() -> const T& { return get(n.a); };
    switch (n.code) {
    case op::var: out = slot(n.index); break;
    case op::constant: out = n.k; break;
    case op::neg: out = -x(); break;
    case op::plus: out = +x(); break;
    case op::sqrt: out = sqrt(x()); break;
    case op::cbrt: out = cbrt(x()); break;
    case op::exp: out = exp(x()); break;
    case op::exp2: out = exp2(x()); break;
    case op::expm1: out = expm1(x()); break;
    case op::log: out = log(x()); break;
    case op::log2: out = log2(x()); break;
    case op::log10: out = log10(x()); break;
    case op::log1p: out = log1p(x()); break;
    case op::sin: out = sin(x()); break;
    case op::cos: out = cos(x()); break;
    case op::tan: out = tan(x()); break;
    case op::asin: out = asin(x()); break;
    case op::acos: out = acos(x()); break;
    case op::atan: out = atan(x()); break;
    case op::sinh: out = sinh(x()); break;
    case op::cosh: out = cosh(x()); break;
    case op::tanh: out = tanh(x()); break;
    case op::asinh: out = asinh(x()); break;
    case op::acosh: out = acosh(x()); break;
    case op::atanh: out = atanh(x()); break;
    case op::abs: mix(primal(x()) > 0 ? 1 : primal(x()) < 0 ? 2 : 3); out = abs(x()); break;
    case op::fabs: mix(primal(x()) > 0 ? 1 : primal(x()) < 0 ? 2 : 3); out = fabs(x()); break;
    case op::erf: out = erf(x()); break;
    case op::erfc: out = erfc(x()); break;
    case op::tgamma: out = tgamma(x()); break;
    case op::lgamma: out = lgamma(x()); break;
    case op::floor: out = floor(x()); mix_bits(primal(out)); break;
    case op::ceil: out = ceil(x()); mix_bits(primal(out)); break;
    case op::round: out = round(x()); mix_bits(primal(out)); break;
    case op::trunc: out = trunc(x()); mix_bits(primal(out)); break;
    case op::rint: out = rint(x()); mix_bits(primal(out)); break;
    case op::nearbyint: out = nearbyint(x()); mix_bits(primal(out)); break;
    case op::add: binary(n, out, [](const auto& a, const auto& b) { return a + b; }); break;
    case op::sub: binary(n, out, [](const auto& a, const auto& b) { return a - b; }); break;
    case op::mul: binary(n, out, [](const auto& a, const auto& b) { return a * b; }); break;
    case op::div: binary(n, out, [](const auto& a, const auto& b) { return a / b; }); break;
    case op::pow: binary(n, out, [](const auto& a, const auto& b) { return pow(a, b); }); break;
    case op::atan2: {
        const double y = value(n.a), xv = value(n.b);
        mix(xv < 0 ? (std::signbit(y) ? 1 : 2) : 3);  // the jump across the negative x axis
        binary(n, out, [](const auto& a, const auto& b) { return atan2(a, b); });
        break;
    }
    case op::hypot:  // a kink at the origin only; the signs of the operands flag it
        mix(std::signbit(value(n.a)) * 2 + std::signbit(value(n.b)) + 16);
        binary(n, out, [](const auto& a, const auto& b) { return hypot(a, b); });
        break;
    // min and max: which operand is picked (the rules tapeflow documents)
    case op::fmin:
        mix(value(n.a) <= value(n.b));
        binary(n, out, [](const auto& a, const auto& b) { return fmin(a, b); });
        break;
    case op::fmax:
        mix(value(n.a) >= value(n.b));
        binary(n, out, [](const auto& a, const auto& b) { return fmax(a, b); });
        break;
    case op::min:
        mix(value(n.b) < value(n.a));
        binary(n, out, [](const auto& a, const auto& b) { return min(a, b); });
        break;
    case op::max:
        mix(value(n.a) < value(n.b));
        binary(n, out, [](const auto& a, const auto& b) { return max(a, b); });
        break;
    case op::fmod: {
        const double a = value(n.a), b = value(n.b);
        mix_bits(std::round((a - std::fmod(a, b)) / b));  // the integer quotient
        binary(n, out, [](const auto& u, const auto& v) { return fmod(u, v); });
        break;
    }
    case op::copysign:
        mix(std::signbit(value(n.a)) * 2 + std::signbit(value(n.b)));
        binary(n, out, [](const auto& a, const auto& b) { return copysign(a, b); });
        break;
    case op::remainder: {
        const double a = value(n.a), b = value(n.b);
        mix_bits(std::round((a - std::remainder(a, b)) / b));  // the quotient rounded to nearest
        binary(n, out, [](const auto& u, const auto& v) { return remainder(u, v); });
        break;
    }
    case op::fdim:  // a kink where a == b
        mix(64 + (value(n.a) > value(n.b)));
        binary(n, out, [](const auto& a, const auto& b) { return fdim(a, b); });
        break;
    case op::powi: out = pow(x(), n.index); break;
    case op::hypot3:
        mix(32 + std::signbit(primal(x())) * 4 + std::signbit(primal(get(n.b))) * 2 +
            std::signbit(value(n.c)));
        if (n.c.node < 0) out = hypot(x(), get(n.b), n.c.k);
        else out = hypot(x(), get(n.b), get(n.c));
        break;
    case op::fma:
        if (n.c.node < 0) out = fma(x(), get(n.b), n.c.k);
        else out = fma(x(), get(n.b), get(n.c));
        break;
    case op::ldexp: out = ldexp(x(), n.index); break;
    case op::fused: {
        const T &a = get(n.a), &b = get(n.b), &c = get(n.c), &d = get(n.d);
        mix(fused_kinks(n.index, primal(a), primal(b), primal(c), primal(d)));
        fused(n.index, out, a, b, c, d);
        break;
    }
    case op::count: break;
    }
    if (after_value) after_value(out);
    note(primal(out));
}
// clang-format on

template <class T>
void interpreter<T>::exec(const statement& s) {
    ++kinds[std::size_t(s.kind)];
    switch (s.kind) {
    case stmt::assign:
        eval_into(s.e, target(s.target));
        note(primal(target(s.target)));
        break;
    case stmt::add_assign: compound(s, [](T& x, const auto& r) { x += r; }); break;
    case stmt::sub_assign: compound(s, [](T& x, const auto& r) { x -= r; }); break;
    case stmt::mul_assign: compound(s, [](T& x, const auto& r) { x *= r; }); break;
    case stmt::div_assign: compound(s, [](T& x, const auto& r) { x /= r; }); break;
    case stmt::increment: {
        T& x = target(s.target);
        if (s.variant == 0)
            ++x;
        else if (s.variant == 1)
            x++;
        else if (s.variant == 2)
            --x;
        else
            x--;
        if (after_value) after_value(x);
        break;
    }
    case stmt::set_constant: target(s.target) = s.k; break;
    case stmt::copy: target(s.target) = slot(s.source); break;  // may be x = x
    case stmt::swap: {
        using std::swap;  // moves
        swap(target(s.target), target(s.source));
        break;
    }
    case stmt::rotate: {  // a swap by copies
        const T t = target(s.target);
        target(s.target) = target(s.source);
        target(s.source) = t;
        break;
    }
    case stmt::block: {
        const std::size_t visible = read_.size();
        std::vector<T> temps;
        temps.reserve(s.temps.size());
        for (const expr& e : s.temps) {
            temps.push_back(make(e));
            read_.push_back(&temps.back());
            write_.push_back(&temps.back());
        }
        for (const statement& b : s.body) exec(b);
        read_.resize(visible);
        write_.resize(visible);
        break;  // the temporaries die here
    }
    case stmt::branch: {
        bool taken;
        {
            const T l = make(s.e), r = make(s.e2);
            taken = l < r;
        }
        mix(taken ? 5 : 6);
        for (const statement& b : taken ? s.body : s.other) exec(b);
        break;
    }
    case stmt::loop:
        for (int i = 0; i < s.count; ++i) {
            for (const statement& b : s.body) exec(b);
            if (s.variant == 1) {
                const bool stop = primal(slot(s.target)) > s.k;
                mix(stop ? 7 : 8);
                if (stop) break;
            }
        }
        break;
    case stmt::region: {
        [[maybe_unused]] const region_scope scope{};
        ++regions;
        for (const statement& b : s.body) exec(b);
        break;
    }
    case stmt::custom: custom(s); break;
    case stmt::eigen: eigen(s); break;
    case stmt::count: break;
    }
}

template <class T>
void interpreter<T>::custom(const statement& s) {
    ++custom_uses[std::size_t(s.form * int(custom_api::count) + s.api)];
    if constexpr (std::is_same_v<T, tapeflow::Real>) {
        tape_custom(
            s, [this](int i) -> const T& { return slot(i); }, [this](int i) -> T& { return target(i); });
        for (const out_slot& o : s.outs) {
            if (after_value) after_value(target(o.slot));
            note(primal(target(o.slot)));
        }
    } else {
        std::vector<T> y;  // every output first: an output slot may be an input
        for (std::size_t j = 0; j < s.outs.size(); ++j)
            y.push_back(custom_value<T>(s, j, [&](std::size_t i) -> const T& {
                return slot(s.leaves[i].slot);
            }));
        for (std::size_t j = 0; j < s.outs.size(); ++j) put(s.outs[j], std::move(y[j]));
    }
}

template <class T>
void interpreter<T>::eigen([[maybe_unused]] const statement& s) {
#ifdef TAPEFLOW_RANDOM_EIGEN
    if constexpr (eigen_instantiated<T>) {
        ++eigen_uses[std::size_t(eigen_form_index(s.form, s.api))];
        std::vector<T> y = eigen_results<T>(s, read_);
        for (std::size_t j = 0; j < s.outs.size(); ++j) put(s.outs[j], std::move(y[j]));
    } else {
        throw unsupported_statement("an eigen statement with a number type that interpreter_eigen.cpp "
                                    "does not instantiate");
    }
#else
    throw std::logic_error("an eigen statement in a test built without Eigen (TAPEFLOW_RANDOM_EIGEN)");
#endif
}

}  // namespace tapeflow_random
