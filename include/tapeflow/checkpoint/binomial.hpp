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
// best_split() picks that m with the closed form for T.
#pragma once

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
/// with c >= 1 snapshots: the m in [1, l - 1] minimizing
/// m + T(l - m, c - 1) + T(m, c). With c = 1 there is no free snapshot: m = l - 1
/// (advance to the last step and tape it).
inline std::uint64_t best_split(std::uint64_t l, std::uint64_t c) noexcept {
    if (c <= 1 || l <= 2) return l - 1;
    std::uint64_t best = l - 1;
    std::uint64_t best_cost = (l - 1) + minimal_advances(l - 1, c);  // m = l - 1 needs no snapshot
    for (std::uint64_t m = 1; m + 1 < l; ++m) {
        const std::uint64_t cost = m + minimal_advances(l - m, c - 1) + minimal_advances(m, c);
        if (cost < best_cost) {
            best_cost = cost;
            best = m;
        }
    }
    return best;
}

}  // namespace tapeflow::checkpoint
