// tapeflow/checkpoint/binomial.hpp - the binomial (revolve) checkpointing
// schedule: which state to keep so that reversing l steps with c snapshots
// re-runs as few steps as possible (Griewank 1992; Griewank & Walther,
// "Algorithm 799: revolve", ACM TOMS 2000).
//
// With c snapshots (the one of the initial state included) and l steps, the
// fewest steps that must be run forward without taping ("advances") is
//
//   T(l, c) = r l - beta(c + 1, r - 1),   beta(c, r) = (c + r)! / (c! r!),
//
// where the repetition number r is the smallest with beta(c, r) >= l: no step
// is run more than r times. The schedule reverses [a, b) from a snapshot of
// state a: advance to a split point m, keep state m in a free snapshot,
// reverse [m, b) with one snapshot fewer, then [a, m) with the freed one:
//
//   T(l, c) = min over m of  m + T(l - m, c - 1) + T(m, c),   T(1, c) = 0.
//
// best_split() gives that m in closed form, O(r min(c, r)) operations.
// T(l, c) is convex in l, with slope r on (beta(c, r-1), beta(c, r)], so
// the cost of a split is lowest, and flat, where [0, m) has repetition
// number r - 1 and [m, l) has r with one snapshot fewer, i.e. for m in
//
//   [ max(beta(c, r-2), l - beta(c-1, r)),  min(beta(c, r-1), l - beta(c-1, r-1)) ]
//
// (r the repetition number of l with c snapshots), and grows outside. Of
// these points it takes l - 1 when it is one (no snapshot needed), else the
// smallest: the choice of the exhaustive scan over m it replaces, which
// cost O(l) per split (planning 10^5 steps took seconds: bench/checkpointing.cpp
// --mode=planning). tests/checkpoint/binomial_test.cpp checks both against
// the exhaustive minimum.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace tapeflow::checkpoint {

/// beta(c, r) = (c + r)! / (c! r!), saturating at UINT64_MAX; 0 for r < 0.
inline std::uint64_t binomial_beta(std::int64_t c, std::int64_t r) noexcept {
    if (r < 0 || c < 0) return 0;
    constexpr std::uint64_t cap = std::numeric_limits<std::uint64_t>::max();
    // C(c + r, min(c, r)), multiplying up and dividing exactly at each step
    const std::int64_t k = c < r ? c : r;
    std::uint64_t result = 1;
    for (std::int64_t i = 1; i <= k; ++i) {
        const std::uint64_t n = std::uint64_t(c + r - k + i);
        if (result > cap / n) return cap;
        result = result * n / std::uint64_t(i);
    }
    return result;
}

/// The repetition number: the smallest r with beta(c, r) >= l (l >= 1, c >= 1).
inline std::int64_t repetitions(std::uint64_t l, std::uint64_t c) noexcept {
    std::int64_t r = 0;
    while (binomial_beta(std::int64_t(c), r) < l) ++r;
    return r;
}

/// T(l, c): the fewest untaped forward steps that reverse l steps with c
/// snapshots (the initial one included). l >= 1, c >= 1.
inline std::uint64_t minimal_advances(std::uint64_t l, std::uint64_t c) noexcept {
    if (l <= 1) return 0;
    if (c == 1) return l * (l - 1) / 2;
    const std::int64_t r = repetitions(l, c);
    return std::uint64_t(r) * l - binomial_beta(std::int64_t(c) + 1, r - 1);
}

/// Where to keep the next snapshot when reversing l >= 2 steps from a snapshot
/// with c >= 1 snapshots: an m in [1, l - 1] minimizing
/// m + T(l - m, c - 1) + T(m, c) (l - 1 if it is one, else the smallest). With
/// c = 1 there is no free snapshot: m = l - 1 (advance to the last step and
/// tape it).
inline std::uint64_t best_split(std::uint64_t l, std::uint64_t c) noexcept {
    if (c <= 1 || l <= 2) return l - 1;
    const std::int64_t r = repetitions(l, c);  // >= 1 since l > beta(c, 0) = 1
    const std::int64_t s = std::int64_t(c);
    auto l_minus = [l](std::uint64_t b) { return b >= l ? std::uint64_t(0) : l - b; };
    const std::uint64_t lowest =
        std::max({std::uint64_t(1), binomial_beta(s, r - 2), l_minus(binomial_beta(s - 1, r))});
    const std::uint64_t highest =
        std::min({l - 1, binomial_beta(s, r - 1), l_minus(binomial_beta(s - 1, r - 1))});
    return highest == l - 1 ? highest : lowest;
}

}  // namespace tapeflow::checkpoint
