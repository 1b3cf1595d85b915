// tapeflow/hw/hardware_config.hpp - the machine a hardware_model counts for.
//
// Energy per byte, from M. Horowitz, "Computing's energy problem (and what
// we can do about it)", ISSCC 2014, 45 nm, per 64-bit access:
//
//   SRAM  8 KB: 10 pJ   32 KB: 20 pJ   1 MB: 100 pJ   DRAM: 1.3-2.6 nJ
//
// Per byte (/8): 1.25, 2.5 and 12.5 pJ; DRAM 162-325 pJ. The defaults are
// a 1 MiB SRAM (12.5 pJ/B) and DRAM at the middle of Horowitz's range, 2 nJ
// per 64 bits (250 pJ/B). The file level has no Horowitz figure: the default
// 2500 pJ/B is an estimate from an NVMe drive's power over its bandwidth
// (about 5 W at 2 GB/s), 10x DRAM; set it for your machine.
#pragma once

#include <cstddef>

namespace tapeflow {

struct hardware_config {
    /// On-chip SRAM: holds the scratchpad (two tiles, when the tape has
    /// one) and caches the adjoint vector (and, for the conventional layout,
    /// the tape streams too).
    std::size_t sram_bytes = std::size_t(1) << 20;
    /// Bytes moved per cache miss and per write-back.
    std::size_t line_bytes = 64;
    double sram_pj_per_byte = 12.5;  ///< 100 pJ per 64-bit access, 1 MB SRAM (Horowitz)
    double dram_pj_per_byte = 250;   ///< 2 nJ per 64-bit access (Horowitz: 1.3-2.6 nJ)
    double file_pj_per_byte = 2500;  ///< estimate: ~5 W NVMe drive at ~2 GB/s
    /// "SRAM needed" is the smallest power-of-two capacity at which this
    /// share of the re-references (accesses to a line seen before) hit.
    double needed_hit_fraction = 0.99;
};

}  // namespace tapeflow
