// A named Real does not convert implicitly to double either.
#include <tapeflow/tapeflow.hpp>

double convert() {
    tapeflow::Real x = 2.0;
#ifdef TAPEFLOW_CONTROL
    double d = x.value();
#else
    double d = x;
#endif
    return d;
}
