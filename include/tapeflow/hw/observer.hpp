// tapeflow/hw/observer.hpp - tape_observer, the hook a hardware model
// implements, which lives in stream/observer.hpp (the stream raises its
// events); this header is kept so that code including it goes on compiling.
#pragma once

#include "../stream/observer.hpp"
