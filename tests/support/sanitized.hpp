// tests/support/sanitized.hpp - whether the test is built with a sanitizer.
//
// Under AddressSanitizer (at -O0) or ThreadSanitizer a test runs 5-20x
// slower. The tests whose long loops were most of the sanitizer builds' run
// time run fewer rounds there: the same checks on fewer random cases, long
// enough for every path they take (spilling, compaction, every block size),
// while the Release suite runs them in full.
// TAPEFLOW_TEST_SANITIZED is the same as a macro, for a test case that
// should not even be compiled there (its compile time is the cost).
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)  // GCC
#define TAPEFLOW_TEST_SANITIZED 1
#elif defined(__has_feature)  // Clang
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TAPEFLOW_TEST_SANITIZED 1
#endif
#endif
#ifndef TAPEFLOW_TEST_SANITIZED
#define TAPEFLOW_TEST_SANITIZED 0
#endif

namespace tapeflow_test {

inline constexpr bool sanitized = TAPEFLOW_TEST_SANITIZED != 0;

}  // namespace tapeflow_test
