// tapeflow/stream/codec.hpp - optional compression of spilled tiles.
//
// A codec compresses a tile on its way to the spill file and expands it on
// the way back, on the prefetch thread (one call at a time, so a codec may
// keep state). tapeflow ships an opt-in zstd codec (tapeflow/stream/zstd_codec.hpp,
// needs libzstd); any other can be plugged in through tape_options::codec.
#pragma once

#include <cstddef>

namespace tapeflow {

class tile_codec {
public:
    virtual ~tile_codec() = default;
    /// Name for reports ("zstd-1").
    virtual const char* name() const noexcept = 0;
    /// Largest compressed size of `bytes` bytes.
    virtual std::size_t bound(std::size_t bytes) const = 0;
    /// Compresses `bytes` bytes of `in` into `out` (bound(bytes) long); returns the size.
    virtual std::size_t compress(const std::byte* in, std::size_t bytes, std::byte* out) = 0;
    /// Expands `stored` bytes of `in` into exactly `bytes` bytes at `out`.
    /// \throws tapeflow::error if the data does not expand to `bytes` bytes.
    virtual void decompress(const std::byte* in, std::size_t stored, std::byte* out, std::size_t bytes) = 0;
};

}  // namespace tapeflow
