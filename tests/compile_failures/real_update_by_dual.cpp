// += of a Dual to a Real mixes modes (forward into a tape).
#include <tapeflow/tapeflow.hpp>

double update() {
    tapeflow::Real r = 1.0;
    tapeflow::Dual d(2.0, 1.0);
#ifdef TAPEFLOW_CONTROL
    r += d.value();
#else
    r += d;
#endif
    return r.value();
}
