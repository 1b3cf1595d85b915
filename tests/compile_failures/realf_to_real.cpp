// A RealF does not convert implicitly to a Real (its identifier belongs to
// the float tape).
#include <tapeflow/tapeflow.hpp>

double convert() {
    tapeflow::RealF a = 1.0f;
#ifdef TAPEFLOW_CONTROL
    tapeflow::Real b = a.value();
#else
    tapeflow::Real b = a;
#endif
    return b.value();
}
