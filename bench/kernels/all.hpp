// bench/kernels/all.hpp - the list of kernels the harness runs.
//
// Each kernel also says whether ADOL-C can run it: `static constexpr bool
// adolc` and, when false, `adolc_note` (why, printed when skipped). Sacado
// runs every kernel unless it declares `static constexpr bool sacado =
// false` with a `sacado_note`. A kernel may name a `reference()` kernel with
// the same f (mlp_eigen: mlp): their hand-written adjoints must agree.
// mlp_eigen (Eigen 3.4) is built only when TAPEFLOW_BENCH_EIGEN is defined.
#pragma once

#include "heat.hpp"
#include "gmm.hpp"
#include "lstm.hpp"
#include "mlp.hpp"
#ifdef TAPEFLOW_BENCH_EIGEN
#include "mlp_eigen.hpp"
#endif
#include "nbody.hpp"
#include "black_scholes.hpp"
#include "quick_start.hpp"
#include "determinant.hpp"
#include "least_squares.hpp"
#include "ode.hpp"
#include "bundle_adjustment.hpp"

namespace bench {

/// Calls f on every kernel; true when every call returned true.
template <class F>
bool for_each_kernel(F&& f) {
    bool ok = true;
    ok = f(heat{}) && ok;
    ok = f(gmm{}) && ok;
    ok = f(lstm{}) && ok;
    ok = f(mlp{}) && ok;
#ifdef TAPEFLOW_BENCH_EIGEN
    ok = f(mlp_eigen{}) && ok;
#endif
    ok = f(nbody{}) && ok;
    ok = f(black_scholes{}) && ok;
    ok = f(quick_start{}) && ok;
    ok = f(determinant{}) && ok;
    ok = f(least_squares{}) && ok;
    ok = f(ode{}) && ok;
    ok = f(bundle_adjustment{}) && ok;
    return ok;
}

}  // namespace bench
