// += and -= do not mix scalar types either (float and double tapes).
#include <tapeflow/tapeflow.hpp>

double update() {
    tapeflow::RealF a = 1.0f;
    tapeflow::Real b = 2.0;
#ifdef TAPEFLOW_CONTROL
    a += float(b.value());
#else
    a += b;
#endif
    return double(a.value());
}
