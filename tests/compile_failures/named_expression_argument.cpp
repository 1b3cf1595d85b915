// A named expression is not an argument of a function either (nor of +=).
#include <tapeflow/tapeflow.hpp>

double argument() {
    tapeflow::Real x = 2.0, y = 3.0;
#ifdef TAPEFLOW_CONTROL
    tapeflow::Real e = x * y;
#else
    auto e = x * y;
#endif
    tapeflow::Real r = sin(e);
    r += e;
    return r.value();
}
