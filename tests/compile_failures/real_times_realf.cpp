// Operands of different scalar types do not mix, in either order.
#include <tapeflow/tapeflow.hpp>

double mix() {
    tapeflow::Real a = 1.0;
    tapeflow::RealF b = 2.0f;
#ifdef TAPEFLOW_CONTROL
    tapeflow::Real c = a * b.value();
#else
    tapeflow::Real c = a * b;
#endif
    return c.value();
}
