// bench/harness/flags.hpp - the --name=value flags of the benchmark drivers.
#pragma once

#include <cstring>
#include <string>

namespace bench {

/// Whether `arg` is `<name>=<value>` (name with its dashes); sets value.
inline bool take_flag(const char* arg, const char* name, std::string& value) {
    const std::size_t n = std::strlen(name);
    if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
    value = arg + n + 1;
    return true;
}

}  // namespace bench
