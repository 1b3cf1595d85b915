// bench/kernels/all.hpp - the list of kernels the harness runs.
//
// Each kernel also says whether ADOL-C can run it: `static constexpr bool
// adolc` and, when false, `adolc_note` (why, printed when skipped).
#pragma once

#include "heat.hpp"
#include "gmm.hpp"
#include "lstm.hpp"
#include "mlp.hpp"
#include "nbody.hpp"
#include "black_scholes.hpp"
#include "quick_start.hpp"

namespace bench {

/// Calls f on every kernel; true when every call returned true.
template <class F>
bool for_each_kernel(F&& f) {
    bool ok = true;
    ok = f(heat{}) && ok;
    ok = f(gmm{}) && ok;
    ok = f(lstm{}) && ok;
    ok = f(mlp{}) && ok;
    ok = f(nbody{}) && ok;
    ok = f(black_scholes{}) && ok;
    ok = f(quick_start{}) && ok;
    return ok;
}

}  // namespace bench
