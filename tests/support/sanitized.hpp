// tests/support/sanitized.hpp - whether the test is built with a sanitizer.
//
// Under AddressSanitizer (at -O0) or ThreadSanitizer a test runs 5-20x
// slower. The tests whose long loops were most of the sanitizer builds' run
// time run fewer rounds there: the same checks on fewer random cases, long
// enough for every path they take (spilling, compaction, every block size),
// while the Release suite runs them in full.
#pragma once

namespace tapeflow_test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)  // GCC
inline constexpr bool sanitized = true;
#elif defined(__has_feature)  // Clang
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif
#else
inline constexpr bool sanitized = false;
#endif

}  // namespace tapeflow_test
