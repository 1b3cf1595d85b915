// An expression kept in an `auto` variable does not convert to a Real: it is
// a snapshot of its operands (values and identifiers) and would be stale.
#include <tapeflow/tapeflow.hpp>

double convert() {
    tapeflow::Real x = 2.0, y = 3.0;
#ifdef TAPEFLOW_CONTROL
    tapeflow::Real e = x * y + x;
#else
    auto e = x * y + x;
#endif
    tapeflow::Real r = e;
    return r.value();
}
