// tests/random/forward_program_test.cpp - the random programs of
// random_program_test.cpp in forward mode (tapeflow/dual.hpp,
// tapeflow/forward_drivers.hpp):
//   scalar programs  tapeflow::Dual (one run per input) and
//                    jacobian_forward<4> (ceil(n / 4) runs) against the dual
//                    numbers of tests/support, the reverse gradient and
//                    Richardson-extrapolated finite differences;
//   vector programs  jacobian_forward<1>, <2> and <4> against the dual
//                    numbers and tapeflow::jacobian (reverse).
// The tolerances are those of the reverse checks (random/check.hpp). The
// programs have no eigen statements (generator_options::eigen): the Eigen
// part of the interpreter is not compiled for tapeflow's Duals; custom
// statements take their place.
//
// Environment: TAPEFLOW_RANDOM_PROGRAMS=n (default 4000 optimized, 1000
// not; the forward tests run n / 2 scalar and n / 4 vector programs) and
// TAPEFLOW_RANDOM_SEED=s, as for random_program_test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <tapeflow/tapeflow.hpp>

#include "random/check.hpp"
#include "random/environment.hpp"

namespace {

using tapeflow_random::differential;
using tapeflow_random::default_programs;
using tapeflow_random::environment;
using tapeflow_random::generator_options;

void report(const char* what, const differential& d) {
    const auto& t = d.tally;
    std::printf("forward_program_test: %s: %llu programs (%llu rejected, %llu skipped: eigen), %llu "
                "comparisons, %llu mismatches, %llu value mismatches; finite differences %llu checked, "
                "%llu mismatches; worst error/tolerance %.2g (AD) %.2g (finite differences)\n",
                what, (unsigned long long)t.programs, (unsigned long long)t.rejected,
                (unsigned long long)t.forward_skipped, (unsigned long long)t.entries,
                (unsigned long long)t.ad_mismatches, (unsigned long long)t.value_mismatches,
                (unsigned long long)t.fd_checked, (unsigned long long)t.fd_mismatches, t.worst_ad, t.worst_fd);
    for (const std::string& f : t.failures) {
        UNSCOPED_INFO(f);
        std::printf("FAILURE %s\n", f.c_str());
    }
}

}  // namespace

TEST_CASE("random programs in forward mode: Dual == lanes == reverse == finite differences", "[random]") {
    const std::uint64_t programs =
        std::max<std::uint64_t>(1, environment("TAPEFLOW_RANDOM_PROGRAMS", default_programs) / 2);
    const std::uint64_t seed = environment("TAPEFLOW_RANDOM_SEED", 20240601);
    differential d;
    d.seed_offset = std::uint64_t(1) << 41;  // other programs than random_program_test's
    generator_options o;
    o.eigen = false;
    for (std::uint64_t i = 0; i < programs; ++i) d.forward_program(d.seed_offset + seed + i, o);
    report("scalar programs", d);
    const auto& t = d.tally;
    CHECK(t.programs == programs);
    CHECK(t.ad_mismatches == 0);
    CHECK(t.value_mismatches == 0);
    CHECK(t.fd_mismatches == 0);
    CHECK(t.errors == 0);
    CHECK(t.forward_skipped == 0);
    if (programs >= 500) {
        // Teeth: most programs compared, most derivatives seen by finite differences.
        CHECK(t.rejected * 20 <= t.programs);
        CHECK(t.entries == 4 * t.inputs);  // Dual and lanes, each against the dual numbers and reverse
        CHECK(t.fd_checked * 10 >= t.inputs * 8);
        CHECK(t.nonzero * 2 >= t.inputs);
    }
}

TEST_CASE("random vector programs: jacobian_forward == dual numbers == jacobian", "[random]") {
    const std::uint64_t programs =
        std::max<std::uint64_t>(1, environment("TAPEFLOW_RANDOM_PROGRAMS", default_programs) / 4);
    const std::uint64_t seed = environment("TAPEFLOW_RANDOM_SEED", 20240601);
    differential d;
    d.seed_offset = std::uint64_t(3) << 40;
    for (std::uint64_t i = 0; i < programs; ++i) {
        generator_options o;
        o.outputs = int(1 + (seed + i) % 4);
        o.max_inputs = 9;  // several passes of 4 lanes
        o.eigen = false;
        d.forward_vector_program(d.seed_offset + seed + i, o);
    }
    report("vector programs", d);
    const auto& t = d.tally;
    CHECK(t.programs == programs);
    CHECK(t.ad_mismatches == 0);
    CHECK(t.value_mismatches == 0);
    CHECK(t.errors == 0);
    CHECK(t.forward_skipped == 0);
    if (programs >= 250) {
        CHECK(t.rejected * 20 <= t.programs);
        CHECK(t.entries == 6 * t.cells);  // three lane counts, each against the dual numbers and reverse
    }
}
