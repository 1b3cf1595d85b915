// tapeflow/stream/spill_file.hpp - where tiles go past the memory budget.
//
// One private temporary file per tape, created on the first spill in the
// chosen directory with mode 0600: unnamed from the start (O_TMPFILE) where
// the file system allows, else created by mkstemp and unlinked at once, so
// that no file is left behind whatever happens to the program; the
// descriptor is closed when the tape is destroyed. Tiles are appended and read back at
// their offsets; each carries a checksum that is verified on the way back.
//
//   offset 0        t1            t2                    end
//   +--------------+-------------+---------------------+
//   | tile m (used)| tile m+1    | tile m+2            |  (tiles m.. are past the budget)
//   +--------------+-------------+---------------------+
//
// All I/O goes through spill_io, which tests replace to inject faults.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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

namespace tapeflow {

/// Reads and writes of spill files. Replace it (tape_options::spill_io) to
/// inject faults; the default uses POSIX pread/pwrite.
class spill_io {
public:
    virtual ~spill_io() = default;
    /// Creates a private file in `directory`; returns its descriptor.
    virtual int create(const std::string& directory) {
#ifdef O_TMPFILE
        // An unnamed file from the start: never visible in the directory.
        const int unnamed = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (unnamed >= 0) return unnamed;
        if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
            throw error("cannot create a spill file in '" + directory + "': " + std::strerror(errno) +
                        "; set tape_options::spill_directory to a writable directory");
#endif
        // Elsewhere: a named file, unlinked at once.
        std::string path = directory + "/tapeflow-spill-XXXXXX";
        const int fd = ::mkstemp(path.data());  // mode 0600
        if (fd < 0)
            throw error("cannot create a spill file in '" + directory + "': " + std::strerror(errno) +
                        "; set tape_options::spill_directory to a writable directory");
        ::unlink(path.c_str());  // unlinked at once: nothing to clean up later
        return fd;
    }
    /// Writes all `bytes` at `offset`.
    virtual void write(int fd, const std::byte* data, std::size_t bytes, std::uint64_t offset) {
        while (bytes > 0) {
            const ssize_t n = ::pwrite(fd, data, bytes, off_t(offset));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0)
                throw error(std::string("writing the spill file failed: ") +
                            (n < 0 ? std::strerror(errno) : "no progress") +
                            " (disk full? set tape_options::spill_directory or raise the memory budget)");
            data += n;
            bytes -= std::size_t(n);
            offset += std::uint64_t(n);
        }
    }
    /// Reads all `bytes` at `offset`.
    virtual void read(int fd, std::byte* data, std::size_t bytes, std::uint64_t offset) {
        while (bytes > 0) {
            const ssize_t n = ::pread(fd, data, bytes, off_t(offset));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0)
                throw error(std::string("reading the spill file failed: ") +
                            (n < 0 ? std::strerror(errno) : "the file is shorter than the tape") +
                            "; the tape cannot be swept: call reset()");
            data += n;
            bytes -= std::size_t(n);
            offset += std::uint64_t(n);
        }
    }
    virtual void close(int fd) noexcept { ::close(fd); }
};

/// 64-bit checksum of a tile, to catch I/O faults (not an adversary).
///
/// The tile's 8-byte words go round-robin to eight lanes; each lane keeps a
/// Fletcher pair mod 2^64, a += w; b += a. Additions are independent across
/// lanes, so the compiler turns the loop into vector adds: with AVX2 or
/// AVX-512 it runs at cache speed (~100 GB/s measured), with plain SSE2
/// ~19 GB/s, where a multiply-xorshift chain per word ran at ~4.5 GB/s and
/// took a third of a spilled gradient. What it catches: a change of any one
/// word always changes its lane's a; two changes in a lane that cancel in a
/// change b by (difference) x (distance in blocks) mod 2^64, so they go
/// unseen only when that product is 0 mod 2^64 (e.g. the top bit flipped in
/// two words of a lane an even number of blocks apart: such pairs are what
/// the sums cannot see, unlike the multiply chain). The lanes, the words of
/// an incomplete block, the tail bytes and the length are mixed into the
/// result with multiply-xorshift, so zeroed or truncated tiles show too.
/// (Sums over 32-bit halves would be exact, but GCC 12 did not vectorize
/// them: 4.4 GB/s with AVX-512.)
inline std::uint64_t tile_checksum(const std::byte* data, std::size_t bytes) noexcept {
    constexpr int lanes = 8;
    std::uint64_t a[lanes] = {}, b[lanes] = {};
    std::size_t i = 0;
    for (; i + 8 * lanes <= bytes; i += 8 * lanes) {
        std::uint64_t w[lanes];
        std::memcpy(w, data + i, sizeof w);
        for (int j = 0; j < lanes; ++j) {
            a[j] += w[j];
            b[j] += a[j];
        }
    }
    auto mix = [](std::uint64_t h, std::uint64_t w) noexcept {
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        return h ^ (h >> 32);
    };
    std::uint64_t h = 0x9e3779b97f4a7c15ull ^ bytes;
    for (int j = 0; j < lanes; ++j) h = mix(mix(h, a[j]), b[j]);
    for (; i + 8 <= bytes; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, data + i, 8);
        h = mix(h, w);
    }
    for (; i < bytes; ++i) h = (h ^ std::uint64_t(data[i])) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

/// The spill file of one tape: tiles at offsets chosen by the caller, each
/// followed by its 8-byte checksum. With a codec, a tile is stored as
/// [8-byte length][compressed bytes][checksum of them] in a slot of
/// reserved_bytes(used) (the unused end of the slot stays a hole in the file).
/// Written and read on the prefetch thread.
class spill_file {
public:
    static constexpr std::size_t checksum_bytes = 8;
    static constexpr std::size_t length_bytes = 8;

    spill_file(std::shared_ptr<spill_io> io, std::string directory,
               std::shared_ptr<tile_codec> codec = nullptr)
        : io_(std::move(io)), directory_(std::move(directory)), codec_(std::move(codec)) {}

    /// Bytes of file a tile of `used` bytes may take.
    std::size_t reserved_bytes(std::size_t used) const {
        return codec_ ? length_bytes + codec_->bound(used) + checksum_bytes : used + checksum_bytes;
    }
    /// Memory of the codec's buffer for tiles of `tile_bytes` (0 without codec).
    std::size_t buffer_bytes(std::size_t tile_bytes) const {
        return codec_ ? codec_->bound(tile_bytes) : 0;
    }
    spill_file(const spill_file&) = delete;
    spill_file& operator=(const spill_file&) = delete;
    ~spill_file() {
        if (fd_ >= 0) io_->close(fd_);
    }

    /// Writes a tile and its checksum at `offset`. Creates the file on first use.
    void write(const std::byte* data, std::size_t bytes, std::uint64_t offset) {
        if (fd_ < 0) fd_ = io_->create(directory_);
        if (codec_) {
            buffer_.resize(codec_->bound(bytes) + length_bytes);
            const std::uint64_t stored = codec_->compress(data, bytes, buffer_.data() + length_bytes);
            std::memcpy(buffer_.data(), &stored, length_bytes);
            data = buffer_.data() + length_bytes;
            io_->write(fd_, buffer_.data(), length_bytes + stored, offset);
            bytes = std::size_t(stored);
            offset += length_bytes;
            written_ += length_bytes;
        } else {
            io_->write(fd_, data, bytes, offset);
        }
        const std::uint64_t sum = tile_checksum(data, bytes);
        std::byte tail[checksum_bytes];
        std::memcpy(tail, &sum, checksum_bytes);
        io_->write(fd_, tail, checksum_bytes, offset + bytes);
        written_ += bytes + checksum_bytes;
    }
    /// Reads the tile of `bytes` bytes at `offset` into `data` and verifies it.
    /// \throws tapeflow::error on a short read or a checksum mismatch.
    void read(std::byte* data, std::size_t bytes, std::uint64_t offset) {
        if (codec_) {
            std::uint64_t stored = 0;
            io_->read(fd_, reinterpret_cast<std::byte*>(&stored), length_bytes, offset);
            if (stored > codec_->bound(bytes))
                throw error("a tile read back from the spill file is corrupt (bad length at offset " +
                            std::to_string(offset) + "); the tape cannot be swept: call reset()");
            buffer_.resize(codec_->bound(bytes));
            read_verified(buffer_.data(), std::size_t(stored), offset + length_bytes);
            read_ += length_bytes;
            codec_->decompress(buffer_.data(), std::size_t(stored), data, bytes);
            return;
        }
        read_verified(data, bytes, offset);
    }

private:
    void read_verified(std::byte* data, std::size_t bytes, std::uint64_t offset) {
        io_->read(fd_, data, bytes, offset);
        std::byte tail[checksum_bytes];
        io_->read(fd_, tail, checksum_bytes, offset + bytes);
        read_ += bytes + checksum_bytes;
        std::uint64_t stored;
        std::memcpy(&stored, tail, checksum_bytes);
        if (stored != tile_checksum(data, bytes))
            throw error("a tile read back from the spill file is corrupt (checksum mismatch at offset " +
                        std::to_string(offset) + "); the tape cannot be swept: call reset()");
    }

public:
    bool exists() const noexcept { return fd_ >= 0; }
    std::uint64_t bytes_written() const noexcept { return written_; }
    std::uint64_t bytes_read() const noexcept { return read_; }

private:
    std::shared_ptr<spill_io> io_;
    std::string directory_;
    std::shared_ptr<tile_codec> codec_;
    std::vector<std::byte> buffer_;  // compressed tile (codec only)
    int fd_ = -1;
    std::atomic<std::uint64_t> written_{0};
    std::atomic<std::uint64_t> read_{0};
};

}  // namespace tapeflow
