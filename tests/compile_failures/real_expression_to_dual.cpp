// An expression of Reals cannot become a Dual: it has no tangents.
#include <tapeflow/tapeflow.hpp>

double convert() {
    tapeflow::Real a = 1.0;
#ifdef TAPEFLOW_CONTROL
    tapeflow::Dual d = a.value() * 2.0;
#else
    tapeflow::Dual d = a * 2.0;
#endif
    return d.value();
}
