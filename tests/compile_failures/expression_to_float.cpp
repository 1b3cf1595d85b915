// An expression (here x * y) does not convert implicitly to a number.
#include <tapeflow/tapeflow.hpp>

float convert() {
    tapeflow::Real x = 2.0, y = 3.0;
#ifdef TAPEFLOW_CONTROL
    float f = static_cast<float>(tapeflow::Real(x * y).value());
#else
    float f = x * y;
#endif
    return f;
}
