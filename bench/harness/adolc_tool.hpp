// bench/harness/adolc_tool.hpp - ADOL-C (Debian libadolc-dev) reverse mode.
//
// trace_on(tag, keep = 1) records the operation tape and keeps the Taylor
// values, so fos_reverse can run right after trace_off() without a second
// forward sweep: ADOL-C's fastest gradient for a fresh point. Its buffers
// are sized by bench/run through .adolcrc so the tape stays in memory.
#pragma once

#include <adolc/adolc.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tools.hpp"

namespace bench {

/// ADOL-C reads .adolcrc from, and writes tape files into, the current
/// directory. The harness moves into a private temporary directory whose
/// .adolcrc sizes the buffers so the benchmark tapes stay in memory (and
/// concurrent runs cannot trample each other's files); removed at exit.
class adolc_directory {
public:
    adolc_directory() {
        char pattern[] = "/tmp/tapeflow-adolc-XXXXXX";
        if (!mkdtemp(pattern)) return;
        dir_ = pattern;
        std::ofstream rc(dir_ + "/.adolcrc");
        rc << "\"OBUFSIZE\" \"33554432\"\n\"LBUFSIZE\" \"67108864\"\n"
           << "\"VBUFSIZE\" \"16777216\"\n\"TBUFSIZE\" \"33554432\"\n"
           << "\"TAPE_DIR\" \"" << dir_ << "\"\n";
        rc.close();
        if (chdir(dir_.c_str()) != 0) dir_.clear();
    }
    ~adolc_directory() {
        if (dir_.empty()) return;
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    adolc_directory(const adolc_directory&) = delete;
    adolc_directory& operator=(const adolc_directory&) = delete;

private:
    std::string dir_;
};

struct adolc_tool {
    static constexpr const char* name = "adolc";
    static constexpr short tag = 1;
    std::vector<adouble> x;
    tool_stats last;

    template <class K>
    double gradient(const K& kernel, const std::vector<double>& xd, std::vector<double>& g) {
        const int n = int(xd.size());
        double y_value = 0.0;
        trace_on(tag, 1);
        {
            std::vector<adouble> xa(xd.size());
            for (int i = 0; i < n; ++i) xa[i] <<= xd[i];
            adouble y = kernel(xa);
            y >>= y_value;
        }
        trace_off();
        g.resize(xd.size());
        double weight = 1.0;
        fos_reverse(tag, 1, n, &weight, g.data());
        return y_value;
    }

    tool_stats stats() const {
        size_t counts[STAT_SIZE];
        tapestats(tag, counts);
        // operations (1 byte), locations (locint), values (double) of the tape
        const double ops = double(counts[NUM_OPERATIONS]);
        const double bytes = ops + double(counts[NUM_LOCATIONS]) * sizeof(locint) +
                             double(counts[NUM_VALUES]) * sizeof(double);
        return {ops, double(counts[NUM_LOCATIONS]), bytes, bytes};
    }
};

}  // namespace bench
