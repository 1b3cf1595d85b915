// tapeflow/stream/spill_file.hpp - where tiles go past the memory budget.
//
// One private temporary file per tape, created on the first spill in the
// chosen directory. With the POSIX layer (spill_io.hpp, the default there):
// mode 0600, unnamed from the start (O_TMPFILE) where the file system
// allows, else created by mkstemp and unlinked at once, so that no file is
// left behind whatever happens to the program; the descriptor is closed
// when the tape is destroyed. Tiles are appended and
// read back at their offsets; each carries CRC-32C checksums (crc32c.hpp)
// that are verified on the way back, so a damaged tile is an error, never a
// wrong gradient.
//
//   offset 0        t1            t2                    end
//   +--------------+-------------+---------------------+
//   | tile m (used)| tile m+1    | tile m+2            |  (tiles m.. are past the budget)
//   +--------------+-------------+---------------------+
//
// All I/O goes through spill_io (spill_io.hpp: POSIX, or the C library
// alone where POSIX is missing), which tests replace to inject faults.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../error.hpp"
#include "codec.hpp"
#include "crc32c.hpp"
#include "spill_io.hpp"

namespace tapeflow {

/// The 8 bytes after each tile in the spill file: two CRC-32C (crc32c.hpp).
///
///   stored:  of the bytes as they are on disk, followed by their count as 8
///            bytes: the tile, or with a codec its length word and the
///            compressed bytes (so damage to the file is found before the
///            codec reads it)
///   decoded: of the tile as recorded, followed by its count as 8 bytes
///            (without a codec the same as `stored`; with one it catches a
///            codec that expands damaged or foreign data without an error)
///
/// Both are verified when the tile is read back; a mismatch is an error,
/// never a gradient.
struct tile_checksums {
    std::uint32_t stored;
    std::uint32_t decoded;
};

/// CRC-32C of `bytes` bytes at `data`, followed by `bytes` as 8 bytes: a
/// tile read back at the wrong length does not match either.
inline std::uint32_t tile_checksum(const std::byte* data, std::size_t bytes) noexcept {
    const std::uint64_t count = bytes;
    return crc32c(&count, sizeof count, crc32c(data, bytes));
}

/// The spill file of one tape: tiles at offsets chosen by the caller, each
/// followed by its checksums (tile_checksums, 8 bytes):
///
///   without a codec   | tile (used bytes)                 | stored | decoded |
///   with a codec      | length | compressed tile | stored | decoded | (hole) |
///                      <------------- reserved_bytes(used) ------------------>
///
/// With a codec every slot is as large as the worst case, length_bytes +
/// codec.bound(tile_bytes) + checksum_bytes, asked of the codec once, at
/// construction (so the recording thread, which places tiles, never calls
/// the codec while the prefetch thread compresses); the unused end of a slot
/// stays a hole in the file. The codec is this file's own (each tape clones
/// tape_options::codec). Written on the prefetch thread; read there, and
/// in parts also on the sweeping thread (streaming_store.hpp).
class spill_file {
public:
    static constexpr std::size_t checksum_bytes = sizeof(tile_checksums);
    static constexpr std::size_t length_bytes = 8;

    /// `codec` (may be empty; this file's own) compresses tiles of at most
    /// `tile_bytes` bytes.
    spill_file(std::shared_ptr<spill_io> io, std::string directory, std::unique_ptr<tile_codec> codec = nullptr,
               std::size_t tile_bytes = 0)
        : io_(std::move(io)),
          directory_(std::move(directory)),
          codec_(std::move(codec)),
          tile_bytes_(tile_bytes),
          max_stored_(codec_ ? codec_->bound(tile_bytes) : 0) {}
    spill_file(const spill_file&) = delete;
    spill_file& operator=(const spill_file&) = delete;
    ~spill_file() {
        if (fd_ >= 0) io_->close(fd_);
    }

    /// Bytes of file a tile of `used` bytes takes (with a codec, a whole slot).
    std::size_t reserved_bytes(std::size_t used) const noexcept {
        return codec_ ? length_bytes + max_stored_ + checksum_bytes : used + checksum_bytes;
    }
    /// Memory of the codec's buffer, bound(tile_bytes) (0 without codec).
    std::size_t buffer_bytes() const noexcept { return max_stored_; }

    /// Writes a tile and its checksums at `offset`. Creates the file on first use.
    void write(const std::byte* data, std::size_t bytes, std::uint64_t offset) {
        write(data, bytes, offset, tile_checksum(data, bytes));
    }
    /// The same with the tile's checksum, tile_checksum(data, bytes), given:
    /// the recording thread computes it while the tile is in its cache, so
    /// that the thread which writes spends its time on the write alone.
    void write(const std::byte* data, std::size_t bytes, std::uint64_t offset, std::uint32_t checksum) {
        if (fd_ < 0) fd_ = io_->create(directory_);
        tile_checksums sums{};
        if (codec_) {
            if (bytes > tile_bytes_)
                throw usage_error("spill_file: a tile of " + std::to_string(bytes) + " bytes, more than the " +
                                  std::to_string(tile_bytes_) + " given at construction");
            buffer_.resize(max_stored_);
            const std::uint64_t stored = codec_->compress(data, bytes, buffer_.data());
            if (stored > max_stored_)
                throw error(std::string("the codec ") + codec_->name() + " compressed " + std::to_string(bytes) +
                            " bytes into " + std::to_string(stored) + ", more than its bound(" +
                            std::to_string(tile_bytes_) + ") = " + std::to_string(max_stored_) +
                            ": fix the codec's bound()");
            sums.stored = stored_checksum(stored, buffer_.data());
            sums.decoded = checksum;
            io_->write(fd_, reinterpret_cast<const std::byte*>(&stored), length_bytes, offset);
            io_->write(fd_, buffer_.data(), std::size_t(stored), offset + length_bytes);
            offset += length_bytes + stored;
            written_ += length_bytes + stored;
        } else {
            sums.stored = sums.decoded = checksum;
            io_->write(fd_, data, bytes, offset);
            offset += bytes;
            written_ += bytes;
        }
        std::byte tail[checksum_bytes];
        std::memcpy(tail, &sums, checksum_bytes);
        io_->write(fd_, tail, checksum_bytes, offset);
        written_ += checksum_bytes;
    }

    /// Reads the tile of `bytes` bytes at `offset` into `data` and verifies it.
    /// \throws tapeflow::error on a short read or a checksum mismatch.
    void read(std::byte* data, std::size_t bytes, std::uint64_t offset) {
        verify(data, bytes, offset, read_unverified(data, bytes, offset));
    }

    /// read() in two steps, for a tile that the thread calling verify() is
    /// about to use (the sweep: the check brings the tile into its cache,
    /// and the thread that reads spends its time on the reads alone).
    /// read_unverified() reads the tile into `data` and returns the checksum
    /// it must have; `data` may be used only after verify() of the same
    /// tile and that checksum has returned. With a codec, the compressed
    /// bytes are verified in read_unverified(), before the codec reads them.
    /// \throws tapeflow::error on a short read or a checksum mismatch.
    std::uint32_t read_unverified(std::byte* data, std::size_t bytes, std::uint64_t offset) {
        if (!codec_) {
            read_part(data, bytes, offset);
            return read_checksum(bytes, offset);
        }
        std::uint64_t stored = 0;
        io_->read(fd_, reinterpret_cast<std::byte*>(&stored), length_bytes, offset);
        read_ += length_bytes;
        if (stored > max_stored_) throw corrupt(offset, "bad length");
        buffer_.resize(max_stored_);
        io_->read(fd_, buffer_.data(), std::size_t(stored), offset + length_bytes);
        const tile_checksums sums = read_checksums(offset + length_bytes + stored);
        read_ += std::size_t(stored);
        if (sums.stored != stored_checksum(stored, buffer_.data())) throw corrupt(offset, "checksum mismatch");
        codec_->decompress(buffer_.data(), std::size_t(stored), data, bytes);
        return sums.decoded;
    }
    /// Whether a tile may be read in parts: without a codec, read_checksum()
    /// of the tile, read_part() for each part, then verify() of the whole,
    /// as for read_unverified(). Parts may be read on two threads at once
    /// where the caller knows that its spill_io allows it
    /// (spill_io::concurrent_reads()).
    bool reads_in_parts() const noexcept { return !codec_; }
    /// The checksum that the tile of `bytes` at `offset` must have.
    std::uint32_t read_checksum(std::size_t bytes, std::uint64_t offset) {
        const tile_checksums sums = read_checksums(offset + bytes);
        // without a codec both sums are of the same bytes: a difference is
        // damage to the checksums themselves
        if (sums.stored != sums.decoded) throw corrupt(offset, "checksum mismatch");
        return sums.decoded;
    }
    /// Reads `bytes` of a tile, the ones at `offset` in the file, into `data`.
    void read_part(std::byte* data, std::size_t bytes, std::uint64_t offset) {
        io_->read(fd_, data, bytes, offset);
        read_ += bytes;
    }

    /// Throws, as read() does, unless the tile of `bytes` at `data`, read
    /// from `offset` by read_unverified(), has the `expected` checksum it
    /// returned.
    void verify(const std::byte* data, std::size_t bytes, std::uint64_t offset, std::uint32_t expected) const {
        if (tile_checksum(data, bytes) == expected) return;
        throw corrupt(offset, codec_ ? std::string("checksum mismatch after decompression by ") + codec_->name()
                                     : std::string("checksum mismatch"));
    }

    bool exists() const noexcept { return fd_ >= 0; }
    std::uint64_t bytes_written() const noexcept { return written_; }
    std::uint64_t bytes_read() const noexcept { return read_; }

private:
    // Of the length word and the compressed bytes, as on disk.
    static std::uint32_t stored_checksum(std::uint64_t stored, const std::byte* compressed) noexcept {
        const std::uint64_t count = length_bytes + stored;
        return crc32c(&count, sizeof count, crc32c(compressed, std::size_t(stored), crc32c(&stored, length_bytes)));
    }
    tile_checksums read_checksums(std::uint64_t offset) {
        std::byte tail[checksum_bytes];
        io_->read(fd_, tail, checksum_bytes, offset);
        read_ += checksum_bytes;
        tile_checksums sums;
        std::memcpy(&sums, tail, checksum_bytes);
        return sums;
    }
    static error corrupt(std::uint64_t offset, const std::string& what) {
        return error("a tile read back from the spill file is corrupt (" + what + " at offset " +
                     std::to_string(offset) + "); the tape cannot be swept: call reset()");
    }

    std::shared_ptr<spill_io> io_;
    std::string directory_;
    std::unique_ptr<tile_codec> codec_;  // this file's own: no other thread calls it
    std::size_t tile_bytes_;         // largest tile (with a codec)
    std::size_t max_stored_;         // codec_->bound(tile_bytes_), asked once
    std::vector<std::byte> buffer_;  // a compressed tile (codec only)
    int fd_ = -1;
    std::atomic<std::uint64_t> written_{0};
    std::atomic<std::uint64_t> read_{0};
};

}  // namespace tapeflow
