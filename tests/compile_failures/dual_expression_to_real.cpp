// An expression of Duals cannot become a Real: nothing would be taped.
#include <tapeflow/tapeflow.hpp>

double convert() {
    tapeflow::Dual a = 1.0;
#ifdef TAPEFLOW_CONTROL
    tapeflow::Real r = a.value() * 2.0;
#else
    tapeflow::Real r = a * 2.0;
#endif
    return r.value();
}
