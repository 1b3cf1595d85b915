// A named expression is no right-hand side of += or -= (an update record
// would take its stale operands as well as an assignment would).
#include <tapeflow/tapeflow.hpp>

double update() {
    tapeflow::Real x = 2.0, y = 3.0;
#ifdef TAPEFLOW_CONTROL
    tapeflow::Real e = x * y;
#else
    auto e = x * y;
#endif
    tapeflow::Real r = x;
    r -= e;
    return r.value();
}
