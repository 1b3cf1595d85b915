// tapeflow/hw/hardware_config.hpp - the machine a hardware_model counts for:
// its on-chip structures, each at its own size and energy, and DRAM and the
// spill file behind them.
//
//   core --> [scratchpad]                  two tiles (tapeflow layout only)
//        --> [inner cache 0] -> ... -> [SRAM] -> DRAM -> spill file
//             smallest first             the last on-chip level
//
// The caches (inner caches, then the SRAM) are inclusive, fully
// associative LRU caches of line_bytes lines; the scratchpad is a structure
// of its own beside them.
//
// Energy per byte of an on-chip structure comes from its capacity unless
// set (sram_pj_per_byte below), from M. Horowitz, "Computing's energy
// problem (and what we can do about it)", ISSCC 2014, 45 nm, per 64-bit
// access:
//
//   SRAM  8 KiB: 10 pJ   32 KiB: 20 pJ   1 MiB: 100 pJ   DRAM: 1.3-2.6 nJ
//
// Per byte (/8): 1.25, 2.5 and 12.5 pJ. Between these sizes the energy is
// interpolated linearly in log(size) and log(energy) (a power law per
// segment: x2 per x4 in size below 32 KiB, x5 per x32 above); outside
// them, the nearest segment's power law is extended (4 KiB: 0.88 pJ/B,
// 32 MiB: 62.5 pJ/B). DRAM defaults to the middle of Horowitz's range,
// 2 nJ per 64 bits (250 pJ/B). The file level has no Horowitz figure: the
// default 2500 pJ/B is an estimate from an NVMe drive's power over its
// bandwidth (about 5 W at 2 GB/s), 10x DRAM; set it for your machine.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace tapeflow {

/// Energy per byte (pJ) of an on-chip SRAM structure of `bytes` capacity:
/// Horowitz's figures, interpolated and extended as above. 12.5 at 1 MiB.
inline double sram_pj_per_byte_of(std::size_t bytes) {
    // (KiB, pJ per byte) at the published sizes
    constexpr double kib[] = {8, 32, 1024}, pj[] = {1.25, 2.5, 12.5};
    const double size = std::max(double(bytes), 1.0) / 1024.0;
    const int i = size <= kib[1] ? 0 : 1;  // the segment, extended beyond its ends
    const double t = std::log(size / kib[i]) / std::log(kib[i + 1] / kib[i]);
    return pj[i] * std::pow(pj[i + 1] / pj[i], t);
}

/// A cache in front of the SRAM (a CPU's L1 or L2).
struct cache_level {
    std::string name;        ///< as the report prints it: "L1"
    std::size_t bytes = 0;   ///< capacity
    double pj_per_byte = 0;  ///< 0: from the capacity (sram_pj_per_byte_of)
};

struct hardware_config {
    /// The last on-chip level (a CPU's last-level cache, an accelerator's
    /// SRAM): caches the adjoint vector, and the tape of the conventional
    /// layout and of a tape without a scratchpad. For the tapeflow layout
    /// the scratchpad takes its room from it (the adjoints get sram_bytes
    /// minus the scratchpad).
    std::size_t sram_bytes = std::size_t(1) << 20;
    std::string sram_name = "SRAM";
    /// Smaller caches in front of the SRAM, smallest first (at most 3, each
    /// smaller than the next and than sram_bytes). None by default.
    std::vector<cache_level> inner_caches;
    /// Bytes moved per cache miss and per write-back, at every level.
    std::size_t line_bytes = 64;
    /// 0 (the default): from sram_bytes (12.5 pJ/B at 1 MiB).
    double sram_pj_per_byte = 0;
    /// 0 (the default): from the scratchpad's size (two tiles; 1.25 pJ/B
    /// for two 4 KiB tiles). The model learns the size when a sweep begins.
    double scratchpad_pj_per_byte = 0;
    double dram_pj_per_byte = 250;   ///< 2 nJ per 64-bit access (Horowitz: 1.3-2.6 nJ)
    double file_pj_per_byte = 2500;  ///< estimate: ~5 W NVMe drive at ~2 GB/s
    /// "SRAM needed" is the smallest power-of-two capacity at which this
    /// share of the re-references (accesses to a line seen before) hit.
    double needed_hit_fraction = 0.99;

    /// The SRAM's energy per byte: sram_pj_per_byte, or from sram_bytes.
    double sram_energy() const { return sram_pj_per_byte > 0 ? sram_pj_per_byte : sram_pj_per_byte_of(sram_bytes); }

    /// An accelerator: one on-chip SRAM of `sram` bytes and no other cache;
    /// the scratchpad (two tiles, sized by the tape) takes its room from it,
    /// the adjoints are cached in the rest.
    static hardware_config accelerator(std::size_t sram = std::size_t(64) << 10) {
        hardware_config c;
        c.sram_bytes = sram;
        return c;
    }
    /// A CPU core: L1 32 KiB, L2 1 MiB, L3 32 MiB (the SRAM), 64-byte lines
    /// (the machine of docs/performance.md, its L3 taken whole by one core).
    /// A tape with a scratchpad still gets one beside the caches, which a
    /// real CPU does not have (its tiles would live in the caches).
    static hardware_config cpu() {
        hardware_config c;
        c.inner_caches = {{"L1", std::size_t(32) << 10, 0}, {"L2", std::size_t(1) << 20, 0}};
        c.sram_bytes = std::size_t(32) << 20;
        c.sram_name = "L3";
        return c;
    }
};

}  // namespace tapeflow
