// A named expression of Duals is rejected as for Real: it is a snapshot of
// its operands, stale once one of them changes.
#include <tapeflow/tapeflow.hpp>

double named() {
    tapeflow::Dual a = 1.0, b = 2.0;
#ifdef TAPEFLOW_CONTROL
    tapeflow::Dual e = a * b;
#else
    auto e = a * b;
#endif
    a = 5.0;
    tapeflow::Dual c = e + a;
    return c.value();
}
