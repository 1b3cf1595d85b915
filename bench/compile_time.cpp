// bench/compile_time.cpp - the translation unit bench/run_compile_time
// compiles to measure what tapeflow costs the compiler (issue 19.6).
//
// Three kernels of the harness (gmm, bundle_adjustment, ode: about 690
// lines with their hand adjoints), compiled three ways:
//   (none)                                  the kernels on double, no tapeflow header
//   -DTAPEFLOW_COMPILE_TIME_HEADER           the same with <tapeflow/tapeflow.hpp> included
//   -DTAPEFLOW_COMPILE_TIME_HEADER -DTAPEFLOW_COMPILE_TIME_REAL
//                                           their gradients by tapeflow::gradient on Real
// The function is only compiled, never run.
#include <vector>

#if defined(TAPEFLOW_COMPILE_TIME_HEADER)
#include <tapeflow/tapeflow.hpp>
#endif

#include "kernels/bundle_adjustment.hpp"
#include "kernels/gmm.hpp"
#include "kernels/ode.hpp"

#if defined(TAPEFLOW_COMPILE_TIME_REAL)
std::vector<double> compile_time_kernels(const std::vector<double>& x) {
    using tapeflow::Real;
    std::vector<double> g = tapeflow::gradient([](const std::vector<Real>& v) { return bench::gmm{}(v); }, x);
    const std::vector<double> g2 =
        tapeflow::gradient([](const std::vector<Real>& v) { return bench::bundle_adjustment{}(v); }, x);
    const std::vector<double> g3 = tapeflow::gradient([](const std::vector<Real>& v) { return bench::ode{}(v); }, x);
    g.insert(g.end(), g2.begin(), g2.end());
    g.insert(g.end(), g3.begin(), g3.end());
    return g;
}
#else
std::vector<double> compile_time_kernels(const std::vector<double>& x) {
    return {bench::gmm{}(x), bench::bundle_adjustment{}(x), bench::ode{}(x)};
}
#endif
