// tests/fuzz/program_fuzzer.cpp - the libFuzzer target: bytes -> random
// program -> the differential check of tests/random (check.hpp).
//
// Each input is decoded into a program of one output (program_fuzzer.hpp)
// and checked by differential::scalar_program: tapeflow's reverse mode under
// the tape configurations of check.hpp against dual numbers and finite
// differences. On a mismatch or an error the report goes to stderr and the
// target aborts, so libFuzzer saves the input as a crash. A rejected program
// (values not finite or too large) is not a failure.
//
// Built twice: with -fsanitize=fuzzer,address,undefined as program_fuzzer
// (Clang, TAPEFLOW_BUILD_FUZZERS=ON), and with replay.cpp as
// fuzz_corpus_replay, which runs the seed corpus in the ordinary test build.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>

#include "fuzz/program_fuzzer.hpp"
#include "random/check.hpp"

static_assert(tapeflow_fuzz::slow_stride == tapeflow_random::differential::slow_stride,
              "program_fuzzer.hpp must mirror check.hpp's slow_stride");

namespace {

// One checker for the whole process: its tapes, threads and spill files are
// made once, not per input.
tapeflow_random::differential& checker() {
    static tapeflow_random::differential d;
    return d;
}

[[noreturn]] void report_and_abort(const tapeflow_random::program& p, std::size_t first,
                                   const std::string& extra) {
    const auto& failures = checker().tally.failures;
    std::fprintf(stderr, "\n==== tapeflow program_fuzzer: the check failed ====\n");
    for (std::size_t i = first; i < failures.size(); ++i) std::fprintf(stderr, "%s\n", failures[i].c_str());
    if (!extra.empty()) std::fprintf(stderr, "%s\n", extra.c_str());
    // check.hpp prints the program with its first failure only.
    if (first != 0 || failures.empty())
        std::fprintf(stderr, "the program:\n%s\n", tapeflow_random::to_string(p).c_str());
    std::fprintf(stderr,
                 "(the program was decoded from the fuzzer input; the seed above is its label, not a "
                 "random_program_test seed: run fuzz_corpus_replay <input> to see it again)\n");
    std::fflush(stderr);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    tapeflow_random::differential& d = checker();
    const tapeflow_random::program p = tapeflow_fuzz::decode(data, size);
    const std::uint64_t before = d.tally.mismatches();
    const std::size_t reported = d.tally.failures.size();
    try {
        d.scalar_program(p);
    } catch (const std::exception& e) {  // outside the configurations' own try blocks
        report_and_abort(p, reported, std::string("exception: ") + e.what());
    }
    if (d.tally.mismatches() != before) report_and_abort(p, reported, "");
    return 0;
}

std::string tapeflow_fuzz::summary() {
    const tapeflow_random::tallies& t = checker().tally;
    std::ostringstream s;
    s << t.programs << " programs (" << t.rejected << " rejected: values too large), " << t.inputs
      << " gradient entries (" << t.nonzero << " nonzero), " << t.entries << " comparisons with the dual numbers, "
      << t.fd_checked << " checked by finite differences, " << t.statements << " statements recorded, "
      << t.spilled_tiles << " tiles spilled, " << t.mismatches() << " mismatches";
    return s.str();
}
