// tests/checkpoint/brute_force.hpp - the binomial optimum by exhaustive search.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tapeflow_test {

// The fewest untaped steps that reverse l steps with c snapshots, by
// exhaustive minimization over the first split (independent of the closed
// form): advance m steps from the snapshot and keep state m (needs a free
// snapshot unless m = l - 1, where the last step is taped at once), reverse
// [m, l) with one snapshot fewer, then [0, m) with all c.
inline std::vector<std::vector<std::uint64_t>> brute_force(int max_l, int max_c) {
    const std::uint64_t none = UINT64_MAX / 4;
    std::vector<std::vector<std::uint64_t>> t(max_l + 1, std::vector<std::uint64_t>(max_c + 1, none));
    for (int c = 1; c <= max_c; ++c) {
        t[1][c] = 0;
        for (int l = 2; l <= max_l; ++l) {
            std::uint64_t best = none;
            for (int m = 1; m <= l - 1; ++m) {
                const std::uint64_t rest = m == l - 1 ? 0 : (c > 1 ? t[l - m][c - 1] : none);
                best = std::min(best, std::uint64_t(m) + rest + t[m][c]);
            }
            t[l][c] = best;
        }
    }
    return t;
}


}  // namespace tapeflow_test
