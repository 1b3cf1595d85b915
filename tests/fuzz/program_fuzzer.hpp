// tests/fuzz/program_fuzzer.hpp - how the fuzz target turns bytes into a
// random program (tests/random/program.hpp), shared by the libFuzzer target
// (program_fuzzer.cpp) and the replay driver (replay.cpp).
//
//   bytes      at most max_input_bytes are used; the rest is ignored, so
//              every input decodes the same way in the fuzzer and the replay;
//   program    generator(bytes): the first choices of the generator come
//              from the bytes, 8 per choice, the rest from a sequence seeded
//              by them (choice_source);
//   label      program::seed, a hash of the bytes: check.hpp draws the input
//              values x from it and runs its slow tape configurations (spill
//              file, prefetch thread) when it is a multiple of slow_stride.
//              The label makes that one input in slow_one_in, whatever
//              libFuzzer learns about the comparison in check.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "random/program.hpp"

namespace tapeflow_fuzz {

/// 8 bytes per choice: the bytes decide the first 512 choices of a program,
/// the whole of a median one (measured: programs of these options make about
/// 500 choices, the largest about 1600).
inline constexpr std::size_t max_input_bytes = 4096;
/// One input in slow_one_in runs the slow configurations of check.hpp.
inline constexpr std::uint64_t slow_one_in = 8;
/// check.hpp's slow_stride (differential::slow_stride); kept here so that
/// the replay driver does not have to include check.hpp.
inline constexpr std::uint64_t slow_stride = 8;

/// Smaller programs than random_program_test's defaults, for many runs per
/// second; loops and nesting still make recordings of several tiles.
inline tapeflow_random::generator_options options() {
    tapeflow_random::generator_options o;
    o.max_inputs = 4;
    o.max_vars = 4;
    o.min_statements = 1;
    o.max_statements = 16;
    o.max_depth = 3;
    o.max_nesting = 2;
    o.outputs = 1;  // differential::scalar_program checks one output
    return o;
}

inline std::size_t used_bytes(std::size_t size) { return std::min(size, max_input_bytes); }

/// The program label of the first used_bytes(size) bytes.
inline std::uint64_t label(const std::uint8_t* data, std::size_t size) {
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, then a splitmix64 finish
    for (std::size_t i = 0; i < used_bytes(size); ++i) h = (h ^ data[i]) * 0x100000001b3ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
    const bool slow = (h >> 32) % slow_one_in == 0;  // high bits: independent of the low ones
    h -= h % slow_stride;                             // a multiple of slow_stride ...
    return slow ? h : h + 1;                          // ... or one past it
}

inline tapeflow_random::program decode(const std::uint8_t* data, std::size_t size) {
    return tapeflow_random::generator(data, used_bytes(size), label(data, size), options()).make();
}

/// Counts of the inputs checked so far in this process (program_fuzzer.cpp).
std::string summary();

}  // namespace tapeflow_fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
