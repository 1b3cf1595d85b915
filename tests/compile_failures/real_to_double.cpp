// A Real does not convert implicitly to double: derivatives would silently
// stop flowing. The legal spelling is .value().
#include <tapeflow/tapeflow.hpp>

double convert() {
#ifdef TAPEFLOW_CONTROL
    double d = tapeflow::Real(1.0).value();
#else
    double d = tapeflow::Real(1.0);
#endif
    return d;
}
