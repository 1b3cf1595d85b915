// tests/random/second_order_program_test.cpp - the random programs of
// random_program_test.cpp in second order: basic_real<basic_dual<double, N>>
// through value_gradient_and_hessian<4> and hessian_vector_product, checked
// as random/check_second_order.hpp says (value and gradient against the
// double run and the dual numbers, symmetry, one lane against four, H v
// against finite differences of reverse gradients).
//
// Environment: TAPEFLOW_RANDOM_PROGRAMS=n (default 4000 optimized, 1000
// not; this test runs n / 4 programs) and TAPEFLOW_RANDOM_SEED=s, as for
// random_program_test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <tapeflow/tapeflow.hpp>

#include "random/check.hpp"
#include "random/environment.hpp"

using tapeflow_random::default_programs;
using tapeflow_random::environment;

TEST_CASE("random programs in second order: symmetric, lanes agree, gradient exact, H v == finite differences",
          "[random]") {
    const std::uint64_t programs =
        std::max<std::uint64_t>(1, environment("TAPEFLOW_RANDOM_PROGRAMS", default_programs) / 4);
    const std::uint64_t seed = environment("TAPEFLOW_RANDOM_SEED", 20240601);
    tapeflow_random::differential d;
    d.seed_offset = std::uint64_t(5) << 40;  // other programs than the other random tests'
    tapeflow_random::generator_options o;
    o.max_inputs = 9;  // several passes of 4 lanes
    for (std::uint64_t i = 0; i < programs; ++i) d.second_order_program(d.seed_offset + seed + i, o);
    const auto& t = d.tally;
    std::printf("second_order_program_test: %llu programs (%llu rejected, %llu skipped), %llu gradient "
                "comparisons, %llu second-order comparisons, %llu mismatches, %llu value mismatches; "
                "finite differences %llu checked, %llu across a kink, %llu unsteady, %llu mismatches; worst "
                "error/tolerance %.2g (AD) %.2g (finite differences)\n",
                (unsigned long long)t.programs, (unsigned long long)t.rejected,
                (unsigned long long)t.forward_skipped, (unsigned long long)t.entries,
                (unsigned long long)t.second_order_entries, (unsigned long long)t.ad_mismatches,
                (unsigned long long)t.value_mismatches, (unsigned long long)t.fd_checked,
                (unsigned long long)t.fd_kinks, (unsigned long long)t.fd_unsteady,
                (unsigned long long)t.fd_mismatches, t.worst_ad, t.worst_fd);
    for (const std::string& f : t.failures) {
        UNSCOPED_INFO(f);
        std::printf("FAILURE %s\n", f.c_str());
    }
    CHECK(t.programs == programs);
    CHECK(t.ad_mismatches == 0);
    CHECK(t.value_mismatches == 0);
    CHECK(t.fd_mismatches == 0);
    CHECK(t.errors == 0);
    CHECK(t.forward_skipped == 0);
    if (programs >= 250) {
        // Teeth: most programs compared, most H v entries seen by finite differences.
        CHECK(t.rejected * 20 <= t.programs);
        CHECK(t.entries == t.inputs);
        CHECK(t.fd_checked * 10 >= t.inputs * 7);
    }
}
