// Duals with different lane counts N do not mix in one expression.
#include <tapeflow/tapeflow.hpp>

double mix() {
    tapeflow::DualVec<2> a = 1.0;
    tapeflow::DualVec<4> b = 2.0;
#ifdef TAPEFLOW_CONTROL
    tapeflow::DualVec<4> c = a.value() * b;
#else
    tapeflow::DualVec<4> c = a * b;
#endif
    return c.value();
}
