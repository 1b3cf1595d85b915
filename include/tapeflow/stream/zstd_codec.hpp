// tapeflow/stream/zstd_codec.hpp - the zstd codec for spilled tiles (opt-in:
// include this header and link libzstd, e.g. Debian libzstd-dev, -lzstd).
//
// **Example**:
//   #include <tapeflow/stream/zstd_codec.hpp>
//   tapeflow::tape_options options;
//   options.memory_budget_bytes = 256u << 20;
//   options.codec = std::make_shared<tapeflow::zstd_codec>(1);   // level 1: fastest
//
// Each tape compresses with its own clone() (its own zstd contexts); the
// codec in the options is only cloned and asked bound(), a pure function.
#pragma once

#include <zstd.h>

#include <memory>
#include <string>

#include "../error.hpp"
#include "codec.hpp"

namespace tapeflow {

class zstd_codec : public tile_codec {
public:
    explicit zstd_codec(int level = 1)
        : level_(level), name_("zstd-" + std::to_string(level)), cctx_(ZSTD_createCCtx()),
          dctx_(ZSTD_createDCtx()) {
        if (!cctx_ || !dctx_) throw error("zstd: cannot create a compression context (out of memory)");
    }
    ~zstd_codec() override {
        ZSTD_freeCCtx(cctx_);
        ZSTD_freeDCtx(dctx_);
    }
    zstd_codec(const zstd_codec&) = delete;
    zstd_codec& operator=(const zstd_codec&) = delete;

    std::unique_ptr<tile_codec> clone() const override { return std::make_unique<zstd_codec>(level_); }
    const char* name() const noexcept override { return name_.c_str(); }
    std::size_t bound(std::size_t bytes) const override { return ZSTD_compressBound(bytes); }
    std::size_t compress(const std::byte* in, std::size_t bytes, std::byte* out) override {
        const std::size_t n = ZSTD_compressCCtx(cctx_, out, ZSTD_compressBound(bytes), in, bytes, level_);
        if (ZSTD_isError(n)) throw error(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
        return n;
    }
    void decompress(const std::byte* in, std::size_t stored, std::byte* out, std::size_t bytes) override {
        const std::size_t n = ZSTD_decompressDCtx(dctx_, out, bytes, in, stored);
        if (ZSTD_isError(n) || n != bytes)
            throw error("a spilled tile does not decompress to its size (corrupt spill file); "
                        "the tape cannot be swept: call reset()");
    }

private:
    int level_;
    std::string name_;
    ZSTD_CCtx* cctx_;
    ZSTD_DCtx* dctx_;
};

}  // namespace tapeflow
