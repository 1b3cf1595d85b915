// tapeflow/config.hpp - build-time defaults, turned into constexpr values once.
//
// Each default can be overridden on the compiler command line
// (-DTAPEFLOW_TILE_BYTES=65536) or per tape through tapeflow::tape_options.
#pragma once

#include <cstddef>

#ifndef TAPEFLOW_TILE_BYTES
// Tiles of a tape held in memory. 128 KiB: a few tiles (the one being
// written, the one being read) fit in a 512 KiB L2.
#define TAPEFLOW_TILE_BYTES (128u * 1024u)
#endif

#ifndef TAPEFLOW_STREAMING_TILE_BYTES
// Tiles of a tape with a memory budget, at most an eighth of the budget.
// 2 MiB: with the prefetch thread on the other core, tiles small enough for
// L2 made the two cores pass every cache line of the scratchpad back and
// forth; 1-4 MiB tiles were the fastest measured (docs/performance.md,
// "Streaming tape").
#define TAPEFLOW_STREAMING_TILE_BYTES (2048u * 1024u)
#endif

#ifndef TAPEFLOW_MERGE_LIMIT
// Statements with at most this many active operands have repeated operands
// merged at record time (x*x records one argument with partial 2x).
#define TAPEFLOW_MERGE_LIMIT 16
#endif

#ifndef TAPEFLOW_MAX_EXPRESSION_DEPTH
// Deepest expression tree one node holds. A deeper operand is first
// assigned to a Real of its own (one record more), which keeps the stack a
// long statement takes and its compile time linear in its length.
#define TAPEFLOW_MAX_EXPRESSION_DEPTH 64
#endif

#ifndef TAPEFLOW_TAPE_PREFETCH_BYTES
// How far ahead of where it writes recording asks for the tape's next cache
// lines, and how far behind where it reads the sweep does (0: no prefetch).
// On an Intel Xeon (Sapphire Rapids class, KVM) the hardware did not fetch
// the tape's lines early enough: a prefetch 4 KiB ahead made recording
// 11-42% faster on 9 of the 10 kernels of bench/record_phases.cpp, and one
// 4 KiB behind the sweep's reader the sweep 7-41% faster
// (docs/performance.md, "Session 39"). 2-8 KiB measured alike; not yet
// measured on AMD.
#define TAPEFLOW_TAPE_PREFETCH_BYTES 4096u
#endif

#ifndef TAPEFLOW_DEBUG_CHECKS
#ifdef NDEBUG
#define TAPEFLOW_DEBUG_CHECKS 0
#else
#define TAPEFLOW_DEBUG_CHECKS 1
#endif
#endif

#ifndef TAPEFLOW_HARDWARE_MODEL
// 1: tapes tell a tape_observer (tape_options::observer, stream/observer.hpp) of
// every tile movement; 0 compiles the hook out (to measure what it costs).
#define TAPEFLOW_HARDWARE_MODEL 1
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TAPEFLOW_ALWAYS_INLINE inline __attribute__((always_inline))
#define TAPEFLOW_COLD __attribute__((noinline, cold))
#define TAPEFLOW_NOINLINE __attribute__((noinline))
#define TAPEFLOW_LIKELY(x) __builtin_expect(!!(x), 1)
#define TAPEFLOW_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define TAPEFLOW_ALWAYS_INLINE inline
#define TAPEFLOW_COLD
#define TAPEFLOW_NOINLINE
#define TAPEFLOW_LIKELY(x) (x)
#define TAPEFLOW_UNLIKELY(x) (x)
#endif

namespace tapeflow {

/// Default size of one tile of tape in bytes (a tape held in memory).
inline constexpr std::size_t default_tile_bytes = TAPEFLOW_TILE_BYTES;
/// Default size of one tile of a tape with a memory budget, when the budget allows.
inline constexpr std::size_t default_streaming_tile_bytes = TAPEFLOW_STREAMING_TILE_BYTES;
/// Smallest tile the tape accepts (a tile must hold at least one record).
inline constexpr std::size_t min_tile_bytes = 1024;
/// Largest tile the tape accepts (1 GiB; far past the sizes that are fast).
inline constexpr std::size_t max_tile_bytes = std::size_t(1) << 30;
/// Statements with at most this many active operands get duplicates merged.
inline constexpr std::size_t merge_limit = TAPEFLOW_MERGE_LIMIT;
/// Deepest expression tree (nested operations) that one record is made of.
/// A sum of N terms written out is N - 1 deep: when an operation would nest
/// deeper, its operand is first assigned to a variable of its own (a
/// temporary Real: one record, or a Dual in forward mode), and the tree goes
/// on from there (expr/nodes.hpp, split_operand). Statements of any length
/// therefore compile and run; every max_expression_depth levels add a record.
inline constexpr std::size_t max_expression_depth = TAPEFLOW_MAX_EXPRESSION_DEPTH;
static_assert(max_expression_depth >= 2, "TAPEFLOW_MAX_EXPRESSION_DEPTH must be at least 2");
/// Whether the (slow) per-statement debug checks are compiled in.
inline constexpr bool debug_checks = TAPEFLOW_DEBUG_CHECKS != 0;
/// Whether tapes call tape_options::observer (the hardware-model hook).
inline constexpr bool hardware_model_hook = TAPEFLOW_HARDWARE_MODEL != 0;
/// Distance of the tape's prefetches from where it writes or reads (0: none).
inline constexpr std::size_t tape_prefetch_bytes = TAPEFLOW_TAPE_PREFETCH_BYTES;
static_assert(tape_prefetch_bytes <= max_tile_bytes,
              "TAPEFLOW_TAPE_PREFETCH_BYTES must be between 0 and 1 GiB (a few KiB is what pays)");

}  // namespace tapeflow
