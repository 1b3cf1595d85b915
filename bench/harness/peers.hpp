// bench/harness/peers.hpp - the operator-overloading peers' tools that CMake
// built in (tapeflow_bench_peers: TAPEFLOW_BENCH_CODIPACK, _ADEPT, _XAD,
// each defined when its source tree was given).
#pragma once

#ifdef TAPEFLOW_BENCH_CODIPACK
#include "codipack_tool.hpp"
#endif
#ifdef TAPEFLOW_BENCH_ADEPT
#include "adept_tool.hpp"
#endif
#ifdef TAPEFLOW_BENCH_XAD
#include "xad_tool.hpp"
#endif
