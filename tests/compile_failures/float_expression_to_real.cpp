// An expression over RealF does not initialize a Real: its identifiers belong
// to the float tape and would be recorded on the double one.
#include <tapeflow/tapeflow.hpp>

double convert() {
    tapeflow::RealF a = 1.0f;
#ifdef TAPEFLOW_CONTROL
    tapeflow::Real b = tapeflow::RealF(a * a).value();
#else
    tapeflow::Real b = a * a;
#endif
    return b.value();
}
