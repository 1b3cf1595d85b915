// The closed form of the binomial schedule against a brute-force minimum.
#include <tapeflow/checkpoint/binomial.hpp>

#include <catch2/catch.hpp>

#include <cstdint>

using namespace tapeflow::checkpoint;

#include "brute_force.hpp"

using tapeflow_test::brute_force;

TEST_CASE("binomial_beta is the binomial coefficient (c + r choose c)", "[binomial]") {
    CHECK(binomial_beta(0, 0) == 1);
    CHECK(binomial_beta(1, 1) == 2);
    CHECK(binomial_beta(2, 3) == 10);
    CHECK(binomial_beta(5, 5) == 252);
    CHECK(binomial_beta(3, -1) == 0);
    // Pascal's rule on a grid
    for (int c = 1; c < 30; ++c)
        for (int r = 1; r < 30; ++r) CHECK(binomial_beta(c, r) == binomial_beta(c - 1, r) + binomial_beta(c, r - 1));
    CHECK(binomial_beta(200, 200) == UINT64_MAX);  // saturates instead of wrapping
}

TEST_CASE("minimal_advances matches the exhaustive minimum for every l <= 120, c <= 12", "[binomial]") {
    const auto t = brute_force(120, 12);
    for (int c = 1; c <= 12; ++c)
        for (int l = 1; l <= 120; ++l) {
            INFO("l = " << l << ", c = " << c);
            CHECK(minimal_advances(l, c) == t[l][c]);
        }
}

TEST_CASE("minimal_advances at the ends: one snapshot, a snapshot per step", "[binomial]") {
    for (std::uint64_t l = 1; l < 200; ++l) {
        CHECK(minimal_advances(l, 1) == l * (l - 1) / 2);  // re-run from the start for every step
        CHECK(minimal_advances(l, l) == l - 1);            // one run forward, nothing again
        CHECK(minimal_advances(l, l + 5) == l - 1);
    }
}

TEST_CASE("best_split achieves the minimum", "[binomial]") {
    const auto t = brute_force(90, 8);
    for (int c = 1; c <= 8; ++c)
        for (int l = 2; l <= 90; ++l) {
            const std::uint64_t m = best_split(l, c);
            INFO("l = " << l << ", c = " << c << ", m = " << m);
            REQUIRE(m >= 1);
            REQUIRE(m <= std::uint64_t(l - 1));
            const std::uint64_t rest = m == std::uint64_t(l - 1) ? 0 : t[l - m][c - 1];
            CHECK(m + rest + t[m][c] == t[l][c]);
        }
}
