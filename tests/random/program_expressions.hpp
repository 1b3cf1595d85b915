// tests/random/program_expressions.hpp - the expression rules of the random
// program generator (part of program.hpp): for each operation, how its
// operands are made and guarded, and the bound of its magnitude.
#pragma once

#include "program.hpp"

namespace tapeflow_random {

inline generator::info generator::build(expr& e, int depth) {
    // 40% unary, 48% binary, 12% fused
    const double roll = uniform(0, 1);
    const op o = roll < 0.4    ? static_cast<op>(between(int(op::neg), int(op::nearbyint)))
                 : roll < 0.88 ? static_cast<op>(between(int(op::add), int(op::ldexp)))
                               : op::fused;
    const double pi = 3.141592653589793;
    if (o >= op::neg && o <= op::nearbyint) {
        const info x = child(e, depth);
        switch (o) {
        case op::neg: return unary(e, o, x, x.m);
        case op::plus: return unary(e, o, x, x.m, x.p);
        case op::sqrt: {
            const info y = positive(e, x, 0.05);
            return unary(e, o, y, std::sqrt(y.m), std::sqrt(y.p));
        }
        case op::cbrt: {
            const info y = away_from_zero(e, x, 0.05);
            return unary(e, o, y, std::cbrt(y.m));
        }
        case op::exp: {
            const info y = bounded(e, x, 3);
            return unary(e, o, y, std::exp(y.m), std::exp(-y.m));
        }
        case op::exp2: {
            const info y = bounded(e, x, 3);
            return unary(e, o, y, std::exp2(y.m), std::exp2(-y.m));
        }
        case op::expm1: {
            const info y = bounded(e, x, 3);
            return unary(e, o, y, std::expm1(y.m));
        }
        case op::log:
        case op::log2:
        case op::log10: {
            const info y = positive(e, x, 0.05);
            return unary(e, o, y, std::max(std::fabs(std::log(y.p)), std::log(y.m)) + 1);
        }
        case op::log1p: {
            const info y = positive(e, x, 0.05);
            const info z = binary(e, op::add, of(y), lit(-0.9), y.m + 0.9);
            return unary(e, o, z, std::max(2.0, std::log1p(z.m)));
        }
        case op::tan: return unary(e, o, bounded(e, x, 1.3, true), std::tan(1.3));
        case op::asin: return unary(e, o, unit(e, x, 0.9), pi / 2);
        case op::acos: return unary(e, o, unit(e, x, 0.9), pi, std::acos(0.9));
        case op::atanh: return unary(e, o, unit(e, x, 0.9), std::atanh(0.9));
        case op::sinh: return unary(e, o, bounded(e, x, 3), std::sinh(3.0));
        case op::cosh: return unary(e, o, bounded(e, x, 3), std::cosh(3.0), 1);
        case op::acosh: {
            const info y = positive(e, x, 0.05);
            const info z = binary(e, op::add, lit(1.0), of(y), y.m + 1, 1 + y.p);
            return unary(e, o, z, std::acosh(z.m));
        }
        case op::asinh: return unary(e, o, x, std::asinh(x.m), std::asinh(x.p));
        case op::atan: return unary(e, o, x, pi / 2, std::atan(x.p));
        case op::sin:
        case op::cos:
        case op::tanh:
        case op::erf: return unary(e, o, x, 1);
        case op::erfc: return unary(e, o, x, 2);
        case op::abs:
        case op::fabs: return unary(e, o, x, x.m, x.p);
        case op::tgamma:
        case op::lgamma: {
            static const double centers[] = {2.3, 3.0, -0.5, -1.5};
            static const double halves[] = {1.9, 2.7, 0.35, 0.35};
            const int r = between(0, 3);
            return unary(e, o, interval(e, x, centers[r], halves[r]), 10);
        }
        default: return unary(e, o, x, x.m + 1);  // floor ceil round trunc rint nearbyint
        }
    }
    double ma = 0, mb = 0;
    switch (o) {
    case op::add:
    case op::sub:
    case op::mul:
    case op::atan2:
    case op::hypot:
    case op::fmin:
    case op::fmax:
    case op::min:
    case op::max:
    case op::copysign:
    case op::fdim: {
        operand a = maybe_literal(e, depth, ma), b;
        if (a.node < 0) {
            const info x = child(e, depth);
            b = of(x);
            mb = x.m;
        } else {
            b = maybe_literal(e, depth, mb);
        }
        if (o == op::atan2 && chance(0.5)) {  // x > 0: away from the branch cut
            const info x = positive(e, child(e, depth), 0.1);
            b = of(x);
            mb = x.m;
        }
        switch (o) {
        case op::add:
        case op::sub:
        case op::fdim: return binary(e, o, a, b, ma + mb);
        case op::mul: return binary(e, o, a, b, ma * mb);
        case op::atan2: return binary(e, o, a, b, pi);
        case op::hypot: return binary(e, o, a, b, std::hypot(ma, mb));
        case op::copysign: return binary(e, o, a, b, ma);
        default: return binary(e, o, a, b, std::max(ma, mb));
        }
    }
    case op::div: {
        const operand a = maybe_literal(e, depth, ma);
        if (a.node >= 0 && chance(0.25)) return binary(e, o, a, lit(nonzero_literal(0.5, 3)), ma / 0.5);
        const info b = away_from_zero(e, child(e, depth), 0.1);
        return binary(e, o, a, of(b), ma / std::max(0.1, b.p));
    }
    case op::fmod:
    case op::remainder: {  // |r| <= |a| for both (and <= |b| / 2 for remainder)
        const operand a = maybe_literal(e, depth, ma);
        if (a.node >= 0 && chance(0.3)) {
            const double k = nonzero_literal(0.5, 3);
            return binary(e, o, a, lit(k), std::min(ma, std::fabs(k)));
        }
        const info b = away_from_zero(e, child(e, depth), 0.3);
        return binary(e, o, a, of(b), std::min(ma, b.m));
    }
    case op::pow: {
        switch (between(0, 2)) {
        case 0: {  // positive base ^ bounded exponent
            const info b = positive(e, child(e, depth), 0.1), x = bounded(e, child(e, depth), 2.5);
            return binary(e, o, of(b), of(x), std::pow(std::max(b.m, 1 / b.p), 2.5), 0);
        }
        case 1: {  // positive base ^ literal
            const info b = positive(e, child(e, depth), 0.1);
            const double k = uniform(-2.5, 2.5);
            return binary(e, o, of(b), lit(k), std::pow(std::max(b.m, 1 / b.p), std::fabs(k)));
        }
        default: {  // literal ^ bounded exponent
            const double k = uniform(0.3, 3);
            const info x = bounded(e, child(e, depth), 3);
            return binary(e, o, lit(k), of(x), std::pow(std::max(k, 1 / k), 3));
        }
        }
    }
    case op::powi: {
        node n;
        n.code = o;
        n.index = between(-3, 4);
        const info x = n.index < 0 ? away_from_zero(e, child(e, depth), 0.3) : child(e, depth);
        n.a = of(x);
        const double m = n.index < 0 ? std::pow(std::max(x.p, 0.3), n.index) : std::pow(x.m, n.index);
        return {add(e, n), m};
    }
    case op::hypot3:
    case op::fma: {  // hypot(a, b, c), a b + c; c a node or a literal
        node n;
        n.code = o;
        const info x = child(e, depth), y = child(e, depth);
        n.a = of(x);
        n.b = of(y);
        double mc = 0;
        n.c = maybe_literal(e, depth, mc);
        return {add(e, n), o == op::hypot3 ? std::sqrt(x.m * x.m + y.m * y.m + mc * mc) : x.m * y.m + mc};
    }
    case op::ldexp: {  // x 2^e, e in -3 .. 3
        node n;
        n.code = o;
        n.index = between(-3, 3);
        const info x = child(e, depth);
        n.a = of(x);
        return {add(e, n), std::ldexp(x.m, n.index)};
    }
    default: {  // fused: one statement, many operands; operands |x| <= 4
        node n;
        n.code = op::fused;
        n.index = between(0, fused_patterns - 1);
        operand* slots[] = {&n.a, &n.b, &n.c, &n.d};
        for (operand* s : slots) *s = of(bounded(e, child(e, depth), 4));
        static const double bounds[fused_patterns] = {36, 5,   13, 19, 64, 24, 10, 116,
                                                      7,  120, 36, 16, 50, 60, 90, 70};
        return {add(e, n), bounds[n.index]};
    }
    }
}

}  // namespace tapeflow_random
