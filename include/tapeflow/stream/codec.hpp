// tapeflow/stream/codec.hpp - optional compression of spilled tiles.
//
// A codec compresses a tile on its way to the spill file and expands it on
// the way back. tapeflow ships an opt-in zstd codec
// (tapeflow/stream/zstd_codec.hpp, needs libzstd); any other can be plugged
// in through tape_options::codec.
//
// The codec in tape_options is a prototype, never used to compress: every
// tape built from the options takes its own clone(), so one options object
// may serve many tapes on many threads.
//
//   tape_options::codec (const, shared)
//        | clone(), once per tape, on the thread that builds the tape
//        v
//   the tape's codec: compress() / decompress() on the tape's prefetch
//   thread or on the thread that uses the tape (which runs the moves the
//   prefetch thread has not started), one call at a time, each call done
//   before the next starts (it may keep state: contexts, buffers)
//
// Which thread calls what:
//   clone(), name(), bound()  const, from any thread, also at the same time
//                             (tapes built on several threads): they must
//                             not touch mutable state
//   compress(), decompress()  only on the instance's own tape, one call at
//                             a time, on its prefetch thread or the tape's
//                             own thread (always, with prefetch = false)
#pragma once

#include <cstddef>
#include <memory>

namespace tapeflow {

class tile_codec {
public:
    virtual ~tile_codec() = default;
    /// A new codec with the same settings and a state of its own.
    virtual std::unique_ptr<tile_codec> clone() const = 0;
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
