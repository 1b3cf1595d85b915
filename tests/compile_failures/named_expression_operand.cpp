// Issue 19 item 2: `e` was built from the old `a`; after `a = 10 * a` it
// would give the old value and an identifier `a` no longer holds. A named
// expression is not an operand.
#include <tapeflow/tapeflow.hpp>

double stale() {
    tapeflow::Real a = 2.0, b = 3.0;
#ifdef TAPEFLOW_CONTROL
    tapeflow::Real e = a * b;
#else
    auto e = a * b;
#endif
    a = 10 * a;
    tapeflow::Real r = e + a;
    return r.value();
}
