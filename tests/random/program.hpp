// tests/random/program.hpp - random straight-line-and-loops programs for
// differential testing of tapeflow (see interpreter.hpp to run them).
//
// A program is plain data: inputs, variables, a list of statements, outputs.
//
//   slots:  [ inputs (read-only) | variables | temporaries of open blocks ]
//   statement kinds: assign, compound (+= -= *= /=), ++/--, assign a
//   constant, copy, swap, rotate (moves), block (temporaries that die at its
//   end, so identifiers get reused), branch on values, loop (optional break
//   on a value), region (tapeflow::Region scope), custom (1-3 slots = a
//   smooth function of 1-4 slots, taped by tapeflow as ONE custom-adjoint
//   entry with a hand-written reverse rule: custom_form below), eigen (a
//   small Eigen computation on matrices of slots and literals: products,
//   coefficient functions, reductions, solves, see eigen_op; only when the
//   test is built with Eigen, TAPEFLOW_RANDOM_EIGEN).
//   expression: a DAG of nodes; children come before parents, the root is the
//   last node; an operand is a node or a literal double (a passive number).
//
// The generator is deterministic for a seed (std::mt19937_64, no std::
// distributions, whose output is implementation-defined), or for a string of
// bytes (choice_source: the fuzzer's input decides the first choices). Arguments stay in
// each function's domain by construction, whatever the values: log gets
// x*x + c, |x| + c, exp(...), ... (a structural positive lower bound), asin gets
// 0.9 tanh(x), tgamma an interval between poles, and so on. Magnitudes are
// tracked as upper bounds; a node whose bound exceeds `squash_above` is passed
// through asinh or atan. Loops can still grow values beyond the bounds, so
// callers reject runs whose values are not finite or too large (the
// interpreter reports both).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tapeflow_random {

// clang-format off
enum class op : std::uint8_t {
    var, constant,
    // unary
    neg, plus, sqrt, cbrt, exp, exp2, expm1, log, log2, log10, log1p, sin, cos, tan, asin, acos,
    atan, sinh, cosh, tanh, asinh, acosh, atanh, abs, fabs, erf, erfc, tgamma, lgamma, floor, ceil,
    round, trunc, rint, nearbyint,
    // binary (operands may be literals), then the rest
    add, sub, mul, div, pow, atan2, hypot, fmin, fmax, min, max, fmod, copysign, remainder, fdim,
    powi, hypot3, fma, ldexp, fused,
    count
};
inline constexpr int fused_patterns = 16;

inline const char* name(op o) {
    static const char* const names[] = {
        "var", "const", "-", "+", "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10",
        "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
        "acosh", "atanh", "abs", "fabs", "erf", "erfc", "tgamma", "lgamma", "floor", "ceil",
        "round", "trunc", "rint", "nearbyint", "+", "-", "*", "/", "pow", "atan2", "hypot", "fmin",
        "fmax", "min", "max", "fmod", "copysign", "remainder", "fdim", "pow", "hypot", "fma", "ldexp",
        "fused"};
    return names[static_cast<int>(o)];
}
// clang-format on

/// A child of a node: node index, or the literal `k` when node < 0.
struct operand {
    int node = -1;
    double k = 0;
};

struct node {
    op code = op::constant;
    operand a, b, c, d;
    int index = 0;  ///< var: slot; powi, ldexp: exponent; fused: pattern
    double k = 0;   ///< constant: value
};

struct expr {
    std::vector<node> nodes;  ///< children before parents; the root is last
    bool empty() const { return nodes.empty(); }
};

// clang-format off
enum class stmt : std::uint8_t {
    assign, add_assign, sub_assign, mul_assign, div_assign, increment, set_constant, copy, swap,
    rotate, block, branch, loop, region, custom, eigen,
    count
};
// clang-format on

/// custom statement: y_j = s_j g(u_j), u_j = b_j + sum_i w_ji x_i (summed in
/// the order of i), with g one of the families below, bounded whatever u.
enum class custom_family : std::uint8_t { tanh, sin, rational /* u / (1 + u^2) */, count };
/// custom statement: how tapeflow::Real tapes it (always ONE entry).
enum class custom_api : std::uint8_t {
    external_function,  ///< copies of the inputs in a vector, new outputs, then assigned to the slots
    in_place,           ///< custom_adjoint: add_input(slot) ..., add_output(slot, value): writes the slots
    shuffled,           ///< the same on the explicit tape, reserve(), a passive input first and the
                        ///< outputs declared in reverse order (the rule's indices move)
    count
};

/// eigen statement: the operation; `api` picks among its forms (see
/// eigen_forms). Matrices are dynamic-size (for fixed sizes Eigen unrolls
/// reductions depending on NumTraits costs, which differ between double and
/// Real, and the values would differ: interpreter_eigen.cpp).
enum class eigen_op : std::uint8_t {
    product,        ///< api = 2 shape + large; shape 0 A*B, 1 A*x, 2 x^T*B; large: rows+cols+depth >= 20
    mixed_product,  ///< api = 2 kind + large; kind 0 A*K, 1 K*B, 2 A*k, 3 K*x (K, k literal double)
    array,          ///< api = pattern of array() coefficient functions of A and B (program_eigen.hpp)
    reduce,         ///< api: sum, dot, tapeflow::dot, squaredNorm, tapeflow::squared_norm, norm,
                    ///< tapeflow::norm, tapeflow::dot(a, k), tapeflow::dot(k, a)
    solve,          ///< api: solve_decomposition (llt ldlt partial_piv_lu householder_qr) and
                    ///< solve_mode (0 tapeflow's, 1 tapeflow's with a double right side, 2 Eigen's
                    ///< own decomposition on Real, for llt and partial_piv_lu only: compile time)
    count
};
/// How many forms (api values) each eigen_op has, and their index in a
/// table of all forms (coverage).
inline constexpr int eigen_forms[] = {6, 8, 6, 9, 10};
inline constexpr int eigen_form_count = 6 + 8 + 6 + 9 + 10;
inline int eigen_form_index(int op, int api) {
    int at = 0;
    for (int o = 0; o < op; ++o) at += eigen_forms[o];
    return at + api;
}
/// The forms of eigen_op::solve: api 0-3 and 4-7 the four decompositions in
/// modes 0 and 1, api 8 and 9 llt and partial_piv_lu in mode 2.
inline int solve_decomposition(int api) { return api < 8 ? api % 4 : api == 8 ? 0 : 2; }
inline int solve_mode(int api) { return api < 8 ? api / 4 : 2; }
inline constexpr int custom_form_count = int(custom_family::count) * int(custom_api::count);

/// A value read by a custom or eigen statement: slot `slot`, or the literal k when slot < 0.
struct leaf {
    int slot = -1;
    double k = 0;
};

/// A slot written by a custom or eigen statement. eigen: slot = squash(element
/// `element` (column-major) of the result, or the sum of all when < 0).
struct out_slot {
    int slot = 0;
    int element = -1;
    int squash = 0;  ///< eigen: 0 as is, 1 asinh(v), 2 scale * tanh(v / scale)
    double scale = 1;
};

struct statement {
    stmt kind = stmt::assign;
    int target = 0;
    int source = 0;                      ///< copy/swap/rotate: the other slot
    int variant = 0;                     ///< increment: ++x x++ --x x--; loop: 1 = break when target > k
    double k = 0;                        ///< constant; compound with empty `e`: literal right side
    expr e, e2;                          ///< right side; branch: `e < e2`
    std::vector<expr> temps;             ///< block: initial values of its temporaries
    std::vector<statement> body, other;  ///< branch: then / else
    int count = 0;                       ///< loop: trip count
    // custom and eigen statements
    int form = 0;                        ///< custom: custom_family; eigen: eigen_op
    int api = 0;                         ///< custom: custom_api; eigen: the form of the operation
    int rows = 0, cols = 0, depth = 0;   ///< eigen: sizes of the operands (program_eigen.hpp)
    std::vector<leaf> leaves;            ///< custom: the inputs x_i; eigen: matrix elements, column-major
    std::vector<out_slot> outs;          ///< the slots written, distinct
    std::vector<double> ks;              ///< literal coefficients (custom: b_j, s_j, w_j0 .. per output)
};

struct program {
    std::uint64_t seed = 0;
    int inputs = 0;
    std::vector<expr> vars;  ///< initial values of the variables (slots inputs ..)
    std::vector<statement> body;
    std::vector<expr> outputs;
};

/// Where the generator's choices come from: std::mt19937_64 for a seed, or
/// the bytes of a fuzzer input, 8 per choice (little-endian, zero-padded).
/// Once the bytes run out, a splitmix64 sequence seeded by them takes over, so
/// every byte string decodes to a finite program (a source that returned 0
/// forever would loop in rules such as "pick another slot").
class choice_source {
public:
    explicit choice_source(std::uint64_t seed) : rng_(seed) {}
    choice_source(const std::uint8_t* data, std::size_t size) : data_(data), size_(size), bytes_(true) {
        for (std::size_t i = 0; i < size; ++i) state_ = (state_ ^ data[i]) * 0x100000001b3ull;
    }

    std::uint64_t operator()() {
        if (!bytes_) return rng_();
        if (at_ < size_) {
            std::uint64_t v = 0;
            for (int b = 0; b < 8 && at_ < size_; ++b, ++at_) v |= std::uint64_t(data_[at_]) << (8 * b);
            return v;
        }
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);  // splitmix64
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }

private:
    std::mt19937_64 rng_;
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0, at_ = 0;
    std::uint64_t state_ = 0xcbf29ce484222325ull;
    bool bytes_ = false;
};

struct generator_options {
    int min_inputs = 1, max_inputs = 6;
    int min_vars = 1, max_vars = 6;
    int min_statements = 3, max_statements = 24;
    int max_depth = 4;    ///< expression depth
    int max_nesting = 3;  ///< blocks, branches, loops, regions inside each other
    int outputs = 1;
    double passive_output = 0.03;  ///< chance that an output is a constant
    double squash_above = 100;
    bool eigen = true;  ///< eigen statements (when built with Eigen); off: custom ones in their place
};

class generator {
public:
    explicit generator(std::uint64_t seed, generator_options o = {}) : rng_(seed), o_(o), seed_(seed) {}
    /// A program decoded from bytes (the fuzzer); `seed` only labels it.
    generator(const std::uint8_t* data, std::size_t size, std::uint64_t seed, generator_options o = {})
        : rng_(data, size), o_(o), seed_(seed) {}

    program make() {
        program p;
        p.seed = seed_;
        p.inputs = between(o_.min_inputs, o_.max_inputs);
        bound_.assign(p.inputs, 2.0);  // callers draw inputs from [-2, 2]
        inputs_ = p.inputs;
        const int vars = between(o_.min_vars, o_.max_vars);
        for (int v = 0; v < vars; ++v) {
            expr e;
            const double m = v < p.inputs && chance(0.5) ? leaf_var(e, v) : expression(e, o_.max_depth);
            p.vars.push_back(std::move(e));
            bound_.push_back(m);
        }
        const int n = between(o_.min_statements, o_.max_statements);
        for (int s = 0; s < n; ++s) p.body.push_back(statement_(o_.max_nesting));
        for (int k = 0; k < o_.outputs; ++k) {
            expr e;
            if (chance(o_.passive_output))
                constant_leaf(e);
            else if (chance(0.25))
                expression(e, o_.max_depth);
            else
                with_every_variable(e);
            p.outputs.push_back(std::move(e));
        }
        return p;
    }

    // ---- random numbers (portable: only raw 64-bit choices are used) ----
    double uniform(double lo, double hi) { return lo + (hi - lo) * double(rng_() >> 11) * 0x1.0p-53; }
    int between(int lo, int hi) { return lo + int(rng_() % std::uint64_t(hi - lo + 1)); }
    bool chance(double p) { return uniform(0, 1) < p; }

private:
    struct info {
        int node;
        double m;      ///< |value| <= m, an estimate (loops can exceed the bounds of variables)
        double p = 0;  ///< p > 0: value > 0 for ANY input (structural), and about >= p
    };
    static operand of(const info& i) { return {i.node, 0}; }
    static operand lit(double k) { return {-1, k}; }

    int add(expr& e, node n) {
        e.nodes.push_back(n);
        return int(e.nodes.size()) - 1;
    }
    info unary(expr& e, op o, const info& x, double m, double p = 0) {
        node n;
        n.code = o;
        n.a = of(x);
        return {add(e, n), m, p};
    }
    info binary(expr& e, op o, operand a, operand b, double m, double p = 0) {
        node n;
        n.code = o;
        n.a = a;
        n.b = b;
        return {add(e, n), m, p};
    }

    double leaf_var(expr& e, int slot) {
        node n;
        n.code = op::var;
        n.index = slot;
        add(e, n);
        return bound_[slot];
    }
    info var_leaf(expr& e) {
        const double m = leaf_var(e, between(0, int(bound_.size()) - 1));
        return {int(e.nodes.size()) - 1, m};
    }
    info constant_leaf(expr& e) {
        node n;
        n.code = op::constant;
        n.k = constant();
        return {add(e, n), std::fabs(n.k), n.k > 0 ? n.k : 0};
    }
    double constant() { return chance(0.2) ? double(between(-2, 3)) : uniform(-3, 3); }

    // ---- guards: structural ranges, whatever the operand's value ------------
    info squash(expr& e, const info& x) {
        if (chance(0.5)) return unary(e, op::asinh, x, std::asinh(x.m), std::asinh(x.p));
        return unary(e, op::atan, x, std::atan(x.m), std::atan(x.p));
    }
    /// |value| <= s; `strict`: whatever the operand (bounds of variables are
    /// estimates only: loops may exceed them), else only where the estimate holds.
    info bounded(expr& e, const info& x, double s, bool strict = false) {
        if (!strict && x.m <= s && chance(0.3)) return x;
        static const op f[] = {op::tanh, op::sin, op::erf, op::cos, op::atan};
        const op g = f[between(0, 4)];
        const info y = unary(e, g, x, 1);
        return binary(e, op::mul, of(y), lit(g == op::atan ? s / 1.5707963267948966 : s), s);
    }
    /// |value| <= r whatever the operand (r < 1 for asin, acos, atanh).
    info unit(expr& e, const info& x, double r) { return bounded(e, x, r, true); }
    /// value >= lo > 0.
    info positive(expr& e, const info& x, double lo) {
        if (x.p >= lo && chance(0.5)) return x;
        switch (between(0, 7)) {
        case 0: {
            const info sq = binary(e, op::mul, of(x), of(x), x.m * x.m);
            return binary(e, op::add, of(sq), lit(lo), sq.m + lo, lo);
        }
        case 1: {
            const info a = unary(e, chance(0.5) ? op::abs : op::fabs, x, x.m);
            return binary(e, op::add, lit(lo), of(a), a.m + lo, lo);
        }
        case 2: {
            const info ex = unary(e, op::exp, bounded(e, x, 2), std::exp(2.0), std::exp(-2.0));
            return binary(e, op::add, of(ex), lit(lo), ex.m + lo, lo);
        }
        case 3: return binary(e, op::hypot, of(x), lit(std::max(lo, 0.1)), std::hypot(x.m, lo) + 0.1, lo);
        case 4: return unary(e, op::cosh, bounded(e, x, 2), std::cosh(2.0), 1);
        case 5: {
            const info ec = unary(e, op::erfc, bounded(e, x, 2), 2);
            return binary(e, op::add, of(ec), lit(lo), 2 + lo, lo);
        }
        case 6: {
            const info sq = binary(e, op::mul, of(x), of(x), x.m * x.m);
            const info s = binary(e, op::add, of(sq), lit(lo * lo), sq.m + lo * lo, lo * lo);
            return unary(e, op::sqrt, s, std::sqrt(s.m), lo);
        }
        default: return unary(e, op::exp2, bounded(e, x, 2), 4, 0.25);
        }
    }
    /// Nonzero: positive, sometimes negated. |value| >= lo.
    info away_from_zero(expr& e, const info& x, double lo) {
        const info y = positive(e, x, lo);
        return chance(0.5) ? y : unary(e, op::neg, y, y.m);
    }
    /// center + half * u with |u| <= 1.
    info interval(expr& e, const info& x, double center, double half) {
        const info u = unit(e, x, half);
        return binary(e, op::add, lit(center), of(u), std::fabs(center) + half);
    }
    double nonzero_literal(double lo, double hi) { return (chance(0.5) ? 1 : -1) * uniform(lo, hi); }

    // ---- expressions --------------------------------------------------------
    /// Appends a random expression to `e`; returns a bound on its magnitude.
    double expression(expr& e, int depth) {
        infos_.clear();
        const double m = gen(e, depth).m;
        infos_.clear();
        return m;
    }

    info gen(expr& e, int depth) {
        if (depth <= 0 || chance(0.1)) return chance(0.88) ? var_leaf(e) : constant_leaf(e);
        // A node built before in this expression: the expression becomes a DAG.
        if (!infos_.empty() && chance(0.12)) return infos_[between(0, int(infos_.size()) - 1)];
        info r = build(e, depth);
        if (r.m > o_.squash_above) r = squash(e, r);
        infos_.push_back(r);
        return r;
    }
    info child(expr& e, int depth) { return gen(e, chance(0.6) ? depth - 1 : between(0, depth - 1)); }
    /// An operand that is a literal with probability 1/4.
    operand maybe_literal(expr& e, int depth, double& m) {
        if (chance(0.25)) {
            const double k = constant();
            m = std::fabs(k);
            return lit(k);
        }
        const info x = child(e, depth);
        m = x.m;
        return of(x);
    }

    info build(expr& e, int depth);  // program_expressions.hpp

    /// expression + sum of w_i v_i over the variables: every variable reaches the output.
    void with_every_variable(expr& e) {
        infos_.clear();
        info x = gen(e, o_.max_depth);
        for (int v = inputs_; v < int(bound_.size()); ++v) {
            const double w = nonzero_literal(0.2, 1.5), m = leaf_var(e, v);
            const info leaf{int(e.nodes.size()) - 1, m};
            const info t = binary(e, op::mul, lit(w), of(leaf), std::fabs(w) * m);
            x = binary(e, op::add, of(x), of(t), x.m + t.m);
        }
        if (x.m > o_.squash_above) squash(e, x);
        infos_.clear();
    }

    // ---- statements ---------------------------------------------------------
    statement statement_(int nesting);  // program_statements.hpp
    void custom_(statement& s);         // program_statements.hpp
    void eigen_(statement& s);          // program_eigen.hpp
    int writable() { return between(inputs_, int(bound_.size()) - 1); }
    /// 1 to `most` distinct writable slots (fewer when there are fewer).
    std::vector<out_slot> distinct_writable(int most) {
        const int n = between(1, std::min(most, int(bound_.size()) - inputs_));
        std::vector<out_slot> w;
        while (int(w.size()) < n) {
            const int slot = writable();
            if (std::none_of(w.begin(), w.end(), [&](const out_slot& o) { return o.slot == slot; }))
                w.push_back({slot});
        }
        return w;
    }
    /// A slot of any kind (85%) or a literal; returns its magnitude bound.
    double random_leaf(std::vector<leaf>& out) {
        if (chance(0.85)) {
            const int slot = between(0, int(bound_.size()) - 1);
            out.push_back({slot, 0});
            return bound_[std::size_t(slot)];
        }
        out.push_back({-1, constant()});
        return std::fabs(out.back().k);
    }

    choice_source rng_;
    generator_options o_;
    std::uint64_t seed_;
    int inputs_ = 0;
    std::vector<double> bound_;  ///< magnitude bound of each visible slot
    std::vector<info> infos_;    ///< nodes of the expression being built, for sharing
};

}  // namespace tapeflow_random

#include "program_eigen.hpp"
#include "program_expressions.hpp"
#include "program_statements.hpp"
