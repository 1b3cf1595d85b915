// tests/random/random_program_test.cpp - randomized differential test.
//
// Thousands of random programs (program.hpp) run three ways:
//   tapeflow::Real  reverse mode: the whole gradient in one sweep, under
//                   several tape configurations (check.hpp): tile sizes,
//                   scratchpad, memory budgets that spill, zstd compression
//                   of the spill file (when built with libzstd), prefetch
//                   thread on and off;
//   dual numbers    forward mode, one run per input: the reference;
//   double          central finite differences (Richardson-extrapolated),
//                   where the program is smooth around the point.
// Besides scalar statements the programs have custom adjoints (taped by Real
// as one entry with a hand-written reverse rule, which the dual numbers
// check) and, when built with Eigen, Eigen products, coefficient functions,
// reductions and solves (tapeflow's one-entry products, dot products, norms
// and factorizations for Real, Eigen's own code for the others).
// Reverse == dual to 1e-10 relative (plus 1e-12 of the magnitude of the terms
// summed, for cancellation), finite differences == dual and reverse to 1e-5
// relative. Counts go to stdout (one line per test case) and to Catch2.
//
// Environment:
//   TAPEFLOW_RANDOM_PROGRAMS=n   number of scalar programs (default 4000; 1000
//                                without NDEBUG); vector programs: n / 4 (at least 1).
//                                Millions for a long run.
//   TAPEFLOW_RANDOM_SEED=s       seed of program 0; program i uses s + i, so
//                                a failure reported for seed q reproduces with
//                                TAPEFLOW_RANDOM_SEED=q TAPEFLOW_RANDOM_PROGRAMS=1.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <tapeflow/tapeflow.hpp>

#include "random/check.hpp"
#include "random/environment.hpp"

namespace {

using tapeflow::Real;
using tapeflow_random::differential;
using tapeflow_random::default_programs;
using tapeflow_random::environment;
using tapeflow_random::generator_options;

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void report_failures(const differential& d) {
    for (const std::string& f : d.tally.failures) {
        UNSCOPED_INFO(f);
        std::printf("FAILURE %s\n", f.c_str());
    }
}

}  // namespace

TEST_CASE("random programs: reverse gradient == dual numbers == finite differences", "[random]") {
    const std::uint64_t programs = environment("TAPEFLOW_RANDOM_PROGRAMS", default_programs);
    const std::uint64_t seed = environment("TAPEFLOW_RANDOM_SEED", 20240601);
    const auto start = std::chrono::steady_clock::now();

    differential d;
    for (std::uint64_t i = 0; i < programs; ++i) {
        d.scalar_program(seed + i, generator_options{});
        if (programs >= 200000 && (i + 1) % 100000 == 0) {
            std::printf("  ... %llu programs, %llu mismatches\n", (unsigned long long)(i + 1),
                        (unsigned long long)d.tally.mismatches());
            std::fflush(stdout);
        }
    }
    const auto& t = d.tally;
    const double elapsed = seconds_since(start);
    std::printf(
        "random_program_test: %llu scalar programs (%llu rejected: values too large), "
        "%llu gradient entries (%llu nonzero), %llu comparisons (%zu tape configurations): "
        "%llu reverse/dual mismatches, %llu value mismatches; finite differences: %llu checked, %llu skipped "
        "near kinks, %llu unsteady (%llu not linear at the step), %llu mismatches; worst error/tolerance %.2g (reverse) "
        "%.2g (finite differences); %llu statements recorded (%llu custom-adjoint entries), %llu tiles "
        "of 1024 bytes, %llu tiles spilled (%llu compressed: %llu bytes to %llu); %llu custom and %llu "
        "Eigen statements run; %.2f s\n",
        (unsigned long long)t.programs, (unsigned long long)t.rejected, (unsigned long long)t.inputs,
        (unsigned long long)t.nonzero, (unsigned long long)t.entries, differential::configurations,
        (unsigned long long)t.ad_mismatches, (unsigned long long)t.value_mismatches,
        (unsigned long long)t.fd_checked, (unsigned long long)t.fd_kinks, (unsigned long long)t.fd_unsteady,
        (unsigned long long)t.fd_nonlinear,
        (unsigned long long)t.fd_mismatches, t.worst_ad, t.worst_fd, (unsigned long long)t.statements,
        (unsigned long long)t.externals, (unsigned long long)t.small_tiles,
        (unsigned long long)t.spilled_tiles, (unsigned long long)t.compressed_tiles,
        (unsigned long long)t.plain_tile_bytes, (unsigned long long)t.compressed_bytes,
        (unsigned long long)t.kinds[std::size_t(tapeflow_random::stmt::custom)],
        (unsigned long long)t.kinds[std::size_t(tapeflow_random::stmt::eigen)], elapsed);
    report_failures(d);

    INFO("programs " << t.programs << ", rejected " << t.rejected << ", gradient entries " << t.entries
                     << ", finite differences checked " << t.fd_checked);
    CHECK(t.programs == programs);
    CHECK(t.ad_mismatches == 0);
    CHECK(t.value_mismatches == 0);
    CHECK(t.fd_mismatches == 0);
    CHECK(t.errors == 0);
    if (programs >= 1000) {  // statistics of the generator, not of one program
        // The test has teeth only if most programs are used and most
        // derivatives are checked against finite differences too.
        CHECK(t.rejected * 20 <= t.programs);
        CHECK(t.fd_checked * 10 >= t.inputs * 8);
        CHECK(t.nonzero * 2 >= t.inputs);
        // The tiny tiles are crossed: on average several tiles per recording.
        CHECK(t.small_tiles >= 2 * (t.programs - t.rejected));
        // The memory budgets send tiles to the spill file (configurations 5
        // to 8 run for every slow_stride-th program), compressed in 7 and 8.
        CHECK(t.spilled_tiles * differential::slow_stride >= 2 * (t.programs - t.rejected));
        if (tapeflow_random::with_zstd) {
            CHECK(t.compressed_tiles * differential::slow_stride >= t.programs - t.rejected);
            CHECK(t.compressed_bytes < t.plain_tile_bytes);
        }
        // Custom and Eigen statements put entries on the tape.
        CHECK(t.externals > 0);
        // Every operation and every statement kind of the generator ran, and
        // every form of the custom and Eigen statements.
        for (std::size_t o = 0; o < t.uses.size(); ++o) {
            INFO("operation " << tapeflow_random::name(tapeflow_random::op(o)) << " (" << o << ")");
            CHECK(t.uses[o] > 0);
        }
        for (std::size_t k = 0; k < t.kinds.size(); ++k) {
            if (k == std::size_t(tapeflow_random::stmt::eigen) && !tapeflow_random::with_eigen) continue;
            INFO("statement kind " << k);
            CHECK(t.kinds[k] > 0);
        }
        for (std::size_t f = 0; f < t.custom_uses.size(); ++f) {
            INFO("custom statement form " << f << " (family " << f / 3 << ", api " << f % 3 << ")");
            CHECK(t.custom_uses[f] > 0);
        }
        for (std::size_t f = 0; tapeflow_random::with_eigen && f < t.eigen_uses.size(); ++f) {
            INFO("eigen statement form " << f << " (eigen_form_index)");
            CHECK(t.eigen_uses[f] > 0);
        }
    }
}

TEST_CASE("random vector programs: jacobian == dual numbers", "[random]") {
    const std::uint64_t programs =
        std::max<std::uint64_t>(1, environment("TAPEFLOW_RANDOM_PROGRAMS", default_programs) / 4);
    const std::uint64_t seed = environment("TAPEFLOW_RANDOM_SEED", 20240601);
    const auto start = std::chrono::steady_clock::now();

    differential d;
    d.seed_offset = std::uint64_t(1) << 40;  // other programs than the scalar test's
    for (std::uint64_t i = 0; i < programs; ++i) {
        generator_options o;
        o.outputs = int(1 + (seed + i) % 4);
        d.vector_program(d.seed_offset + seed + i, o);
    }
    const auto& t = d.tally;
    std::printf(
        "random_program_test: %llu vector programs (%llu rejected), %llu jacobian entries, "
        "%llu comparisons (%d tape configurations), %llu mismatches, %llu value mismatches; "
        "%.2f s\n",
        (unsigned long long)t.programs, (unsigned long long)t.rejected, (unsigned long long)t.cells,
        (unsigned long long)t.entries, tapeflow_random::with_zstd ? 5 : 4,
        (unsigned long long)t.ad_mismatches, (unsigned long long)t.value_mismatches, seconds_since(start));
    report_failures(d);

    INFO("vector programs " << t.programs << ", jacobian entries " << t.entries);
    CHECK(t.programs == programs);
    CHECK(t.ad_mismatches == 0);
    CHECK(t.value_mismatches == 0);
    CHECK(t.errors == 0);
    if (programs >= 250) CHECK(t.rejected * 20 <= t.programs);
}
