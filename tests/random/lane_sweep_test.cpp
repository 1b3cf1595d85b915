// tests/random/lane_sweep_test.cpp - vector reverse mode (lane_adjoints) on
// the random programs of program.hpp: every program with several outputs is
// recorded once and swept once per output with the tape's scalar adjoints
// and in blocks of 3, 4 and 8 lanes; every row must be bit for bit the same
// (the lanes do the scalar sweep's arithmetic; this target is compiled
// without contraction of multiply-adds). The programs have custom adjoints
// (called once per lane) and, when built with Eigen, Eigen products and
// solves taped as one entry. Three tapes: the default, 1024-byte tiles, and
// 1024-byte tiles under a 4 KiB memory budget with the prefetch thread
// (tiles spilled to a file and read back by every sweep).
//
// TAPEFLOW_RANDOM_PROGRAMS=n: programs per tape (default 600, 200 without NDEBUG).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <tapeflow/tapeflow.hpp>

#include "random/interpreter.hpp"
#include "random/program.hpp"
#include "support/jacobian_rows.hpp"
#include "support/options.hpp"

namespace {

using tapeflow::Real;
using tapeflow_random::generator;
using tapeflow_random::generator_options;
using tapeflow_random::interpreter;
using rows = std::vector<std::vector<double>>;

#ifdef NDEBUG
constexpr std::uint64_t default_programs = 600;
#else
constexpr std::uint64_t default_programs = 200;
#endif

std::uint64_t program_count() {
    const char* s = std::getenv("TAPEFLOW_RANDOM_PROGRAMS");
    return s && *s ? std::strtoull(s, nullptr, 0) : default_programs;
}

// Bit for bit (NaN payloads aside), so that 0 and -0 differ too.
bool same_bits(double a, double b) {
    if (std::isnan(a) && std::isnan(b)) return true;
    return std::memcmp(&a, &b, sizeof a) == 0;
}

// One recording of a program with its inputs and outputs kept alive.
struct recording {
    std::vector<Real> x, y;
};

using tapeflow_test::lane_rows;    // support/jacobian_rows.hpp
using tapeflow_test::scalar_rows;

std::size_t differences(const rows& a, const rows& b) {
    std::size_t d = 0;
    for (std::size_t k = 0; k < a.size(); ++k)
        for (std::size_t i = 0; i < a[k].size(); ++i) d += !same_bits(a[k][i], b[k][i]);
    return d;
}

}  // namespace

TEST_CASE("random programs: vector reverse Jacobians == scalar sweeps, bit for bit", "[random]") {
    const int configuration = GENERATE(0, 1, 2);
    CAPTURE(configuration);
    tapeflow::tape_options o;
    if (configuration == 1) o = tapeflow_test::tape_options(1024);
    if (configuration == 2) o = tapeflow_test::tape_options(1024, true, 4096, true);
    tapeflow::tape t(o);
    t.activate();
    const std::uint64_t programs = program_count();
    std::uint64_t compared = 0, cells = 0, nonzero = 0;
    for (std::uint64_t i = 0; i < programs; ++i) {
        generator_options g;
        g.outputs = 2 + int(i % 12);  // 2 .. 13 outputs: full and partial blocks of lanes
        const std::uint64_t seed = 7000 + i;
        const tapeflow_random::program p = generator(seed, g).make();
        std::mt19937_64 rng(seed);
        recording r;
        for (int k = 0; k < p.inputs; ++k) r.x.emplace_back(-2 + 4 * double(rng() >> 11) * 0x1.0p-53);
        t.reset();
        t.start_recording();
        for (Real& xi : r.x) t.register_input(xi);
        interpreter<Real> run(p);
        r.y = run.run(r.x);
        for (Real& yk : r.y) t.register_output(yk);
        t.stop_recording();
        if (!run.finite) continue;
        const rows scalar = scalar_rows(t, r);
        const rows three = lane_rows<3>(t, r), four = lane_rows<4>(t, r), eight = lane_rows<8>(t, r);
        INFO("program seed " << seed << ", " << r.y.size() << " outputs");
        CHECK(differences(scalar, three) == 0);
        CHECK(differences(scalar, four) == 0);
        CHECK(differences(scalar, eight) == 0);
        // and the driver, which records again and chooses its lanes
        std::vector<double> xv;
        for (const Real& xi : r.x) xv.push_back(xi.value());
        const rows driven =
            tapeflow::jacobian([&](const std::vector<Real>& v) { return interpreter<Real>(p).run(v); }, xv);
        CHECK(differences(scalar, driven) == 0);
        ++compared;
        cells += r.x.size() * r.y.size();
        for (const auto& row : scalar)
            for (double v : row) nonzero += v != 0;
    }
    std::printf("lane sweeps, configuration %d: %llu programs compared, %llu Jacobian entries (%llu nonzero), "
                "spilled tiles %llu\n",
                configuration, static_cast<unsigned long long>(compared), static_cast<unsigned long long>(cells),
                static_cast<unsigned long long>(nonzero),
                static_cast<unsigned long long>(t.statistics().tiles_spilled));
    CHECK(compared > programs / 2);
    CHECK(nonzero > cells / 4);  // the comparison is not of zeros
    if (configuration == 2) CHECK(t.statistics().tiles_spilled > 0);
}
