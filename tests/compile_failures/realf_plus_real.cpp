// Operands of different scalar types (float and double tapes) do not mix.
#include <tapeflow/tapeflow.hpp>

double mix() {
    tapeflow::RealF a = 1.0f;
    tapeflow::Real b = 2.0;
#ifdef TAPEFLOW_CONTROL
    tapeflow::Real c = a.value() + b;
#else
    tapeflow::Real c = a + b;
#endif
    return c.value();
}
