// tapeflow/stream/codec.hpp - optional compression of spilled tiles.
//
// A codec compresses a tile on its way to the spill file and expands it on
// the way back. tapeflow ships an opt-in zstd codec
// (tapeflow/stream/zstd_codec.hpp, needs libzstd); any other can be plugged
// in through tape_options::codec.
//
// Which thread calls what:
//   name(), bound()           const, from any thread, also while compress()
//                             runs: they must not touch mutable state
//   compress(), decompress()  one call at a time, on the tape's prefetch
//                             thread (or the tape's thread with prefetch =
//                             false): they may keep state (contexts, buffers)
#pragma once

#include <cstddef>

namespace tapeflow {

class tile_codec {
public:
    virtual ~tile_codec() = default;
    /// Name for reports ("zstd-1").
    virtual const char* name() const noexcept = 0;
    /// Largest compressed size of `bytes` bytes: a pure function of `bytes`,
    /// non-decreasing. A tape asks it once, for its tile size, when it is
    /// built, and reserves that much of the spill file for every tile.
    virtual std::size_t bound(std::size_t bytes) const = 0;
    /// Compresses `bytes` bytes of `in` into `out` (bound(bytes) long); returns the size.
    virtual std::size_t compress(const std::byte* in, std::size_t bytes, std::byte* out) = 0;
    /// Expands `stored` bytes of `in` into exactly `bytes` bytes at `out`.
    /// \throws tapeflow::error if the data does not expand to `bytes` bytes.
    /// (The spill file checks a CRC-32C of `in` before and of `out` after.)
    virtual void decompress(const std::byte* in, std::size_t stored, std::byte* out, std::size_t bytes) = 0;
};

}  // namespace tapeflow
