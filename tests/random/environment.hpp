// tests/random/environment.hpp - how many random programs a test runs, and
// from which seed: TAPEFLOW_RANDOM_PROGRAMS and TAPEFLOW_RANDOM_SEED.
#pragma once

#include <cstdint>
#include <cstdlib>

namespace tapeflow_random {

/// Programs a test runs by default (each test takes its share of it).
#ifdef NDEBUG
inline constexpr std::uint64_t default_programs = 4000;
#else
inline constexpr std::uint64_t default_programs = 1000;  // unoptimized: keep the run short
#endif

/// The number in environment variable `name`, or `fallback` when it is unset or empty.
inline std::uint64_t environment(const char* name, std::uint64_t fallback) {
    const char* s = std::getenv(name);
    return s && *s ? std::strtoull(s, nullptr, 0) : fallback;
}

}  // namespace tapeflow_random
