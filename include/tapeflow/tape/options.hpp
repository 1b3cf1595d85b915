// tapeflow/tape/options.hpp - tape_options and tape_progress, which live in
// stream/options.hpp (every option is about the tape's tiles); this header is
// kept so that code including it goes on compiling.
#pragma once

#include "../stream/options.hpp"
