// A Real (reverse mode, taped) and a Dual (forward mode) do not mix in one
// expression, although both have scalar type double.
#include <tapeflow/tapeflow.hpp>

double mix() {
    tapeflow::Real a = 1.0;
    tapeflow::Dual b = 2.0;
#ifdef TAPEFLOW_CONTROL
    tapeflow::Dual c = a.value() + b;
#else
    tapeflow::Dual c = a + b;
#endif
    return c.value();
}
