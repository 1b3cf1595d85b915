// tests/support/options.hpp - tape options for the test configurations.
#pragma once

#include <tapeflow/tapeflow.hpp>

#include <cstddef>
#include <limits>

namespace tapeflow_test {

inline tapeflow::tape_options tape_options(std::size_t tile_bytes, bool scratchpad = false,
                                           std::size_t budget = std::numeric_limits<std::size_t>::max(),
                                           bool prefetch = true) {
    tapeflow::tape_options o;
    o.tile_bytes = tile_bytes;
    o.scratchpad = scratchpad;
    o.memory_budget_bytes = budget;
    o.prefetch = prefetch;
    return o;
}

}  // namespace tapeflow_test
