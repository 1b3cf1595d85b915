// tests/random/program_statements.hpp - the statements of random programs
// (part of program.hpp: the generator's statement rules).
#pragma once

#include "program.hpp"

namespace tapeflow_random {

inline statement generator::statement_(int nesting) {
    statement s;
    const int slots = int(bound_.size());
    const int writable_slots = slots - inputs_;
    int roll = between(0, nesting > 0 ? 107 : 72);
    const auto depth = [&] { return between(1, o_.max_depth); };
    const auto body = [&](std::vector<statement>& out, int lo, int hi) {
        for (int n = between(lo, hi); n > 0; --n) out.push_back(statement_(nesting - 1));
    };

    // Rolls 65 .. 72: custom adjoints and Eigen statements (custom adjoints
    // only, without Eigen); rolls from 73 on are moved down by 8 to the
    // nested kinds below (blocks, branches, loops, regions).
    if (roll >= 65 && roll < 73) {
#ifdef TAPEFLOW_RANDOM_EIGEN
        if (roll >= 69 && o_.eigen) {
            eigen_(s);
            return s;
        }
#endif
        custom_(s);
        return s;
    }
    if (roll >= 73) roll -= 8;
    if (roll < 28 || ((roll >= 58 && roll < 65) && writable_slots < 2)) {
        s.kind = stmt::assign;
        s.target = writable();
        bound_[s.target] = expression(s.e, depth());
    } else if (roll < 46) {
        static const stmt kinds[] = {stmt::add_assign, stmt::sub_assign, stmt::mul_assign, stmt::div_assign};
        s.kind = kinds[between(0, 3)];
        s.target = writable();
        const bool scale = s.kind == stmt::mul_assign || s.kind == stmt::div_assign;
        if (chance(0.25)) {  // a literal right side
            s.k = scale ? uniform(0.6, 1.4) : constant();
            if (scale)
                bound_[s.target] *= s.kind == stmt::mul_assign ? s.k : 1 / s.k;
            else
                bound_[s.target] += std::fabs(s.k);
        } else {
            infos_.clear();
            const info x = gen(s.e, depth());
            if (scale) {  // 1 + u with |u| <= 0.3, whatever x
                const info u = bounded(s.e, x, 0.3, true);
                binary(s.e, op::add, lit(1.0), of(u), 1.3);
                bound_[s.target] /= 0.7;
            } else {
                bound_[s.target] += bounded(s.e, x, 2).m;
            }
            infos_.clear();
        }
    } else if (roll < 51) {
        s.kind = stmt::increment;
        s.target = writable();
        s.variant = between(0, 3);
        bound_[s.target] += 1;
    } else if (roll < 53) {
        s.kind = stmt::set_constant;
        s.target = writable();
        s.k = constant();
        bound_[s.target] = std::fabs(s.k);
    } else if (roll < 58) {
        s.kind = stmt::copy;
        s.target = writable();
        s.source = between(0, slots - 1);  // any slot, itself included
        bound_[s.target] = bound_[s.source];
    } else if (roll < 65) {
        s.kind = roll < 62 ? stmt::swap : stmt::rotate;
        s.target = writable();
        do s.source = writable();
        while (s.source == s.target);
        std::swap(bound_[s.target], bound_[s.source]);
    } else if (roll < 75) {
        s.kind = stmt::block;
        for (int n = between(1, 3); n > 0; --n) {
            s.temps.emplace_back();
            bound_.push_back(expression(s.temps.back(), depth()));
        }
        body(s.body, 1, 4);
        bound_.resize(std::size_t(slots));
    } else if (roll < 85) {
        s.kind = stmt::branch;
        expression(s.e, between(1, 3));
        expression(s.e2, between(0, 3));
        const std::vector<double> before = bound_;
        body(s.body, 1, 3);
        std::vector<double> then = bound_;
        bound_ = before;
        body(s.other, 0, 2);
        for (std::size_t i = 0; i < bound_.size(); ++i) bound_[i] = std::max(bound_[i], then[i]);
    } else if (roll < 93) {
        s.kind = stmt::loop;
        s.count = between(1, 4);
        s.variant = chance(0.4) ? 1 : 0;
        s.target = writable();
        s.k = uniform(-1, 2);
        body(s.body, 1, 3);
    } else {
        s.kind = stmt::region;
        body(s.body, 1, 4);
    }
    return s;
}

inline void generator::custom_(statement& s) {
    s.kind = stmt::custom;
    s.form = between(0, int(custom_family::count) - 1);
    s.api = between(0, int(custom_api::count) - 1);
    const int slots = int(bound_.size());
    const int n = between(1, 4);
    for (int i = 0; i < n; ++i) s.leaves.push_back({between(0, slots - 1), 0});  // repeats allowed
    s.outs = distinct_writable(3);
    // In place: an output that is also an input (taped with the input's identifier).
    if (chance(0.4)) {
        const int x = s.leaves[std::size_t(between(0, n - 1))].slot;
        const auto written = [&](const out_slot& o) { return o.slot == x; };
        if (x >= inputs_ && std::none_of(s.outs.begin(), s.outs.end(), written)) s.outs[0].slot = x;
    }
    // Per output j: b_j, s_j, then w_ji scaled by the bound of x_i, so that
    // u_j stays of order 1 (tanh and sin neither saturate nor oscillate fast).
    for (std::size_t j = 0; j < s.outs.size(); ++j) {
        s.ks.push_back(uniform(-1, 1));
        s.ks.push_back(nonzero_literal(0.5, 3));
        for (const leaf& x : s.leaves)
            s.ks.push_back(uniform(-1.5, 1.5) / std::fmax(1.0, bound_[std::size_t(x.slot)]));
    }
    const double peak = s.form == int(custom_family::rational) ? 0.5 : 1;  // of |g|
    for (std::size_t j = 0; j < s.outs.size(); ++j)
        bound_[std::size_t(s.outs[j].slot)] = std::fabs(s.ks[j * (s.leaves.size() + 2) + 1]) * peak;
}

}  // namespace tapeflow_random
