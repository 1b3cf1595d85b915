// tapeflow/stream/spill_io.hpp - the operating-system layer of spill files.
//
// Every read and write of a spill file goes through a spill_io: four calls,
// on a descriptor the io hands out.
//
//   create(directory) -> fd     a file of the tape's own, gone when closed
//   write(fd, data, n, offset)  all n bytes, or tapeflow::error
//   read(fd, data, n, offset)   all n bytes, or tapeflow::error
//   close(fd)                   the file goes away with it
//
// Two implementations:
//   spill_io           POSIX (pread/pwrite on an unnamed O_TMPFILE, or a
//                      mkstemp file unlinked at once); the default where
//                      POSIX I/O exists
//   portable_spill_io  the C library alone (fopen/fseek/fread/fwrite), for
//                      systems without POSIX I/O, where it is the default
//                      (default_spill_io())
//
// Tests derive from spill_io to inject faults (tests/stream/stream_support.hpp).
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "../error.hpp"

#if defined(__unix__) || defined(__APPLE__)
#define TAPEFLOW_POSIX_SPILL_IO 1
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#else
#define TAPEFLOW_POSIX_SPILL_IO 0
#endif

namespace tapeflow {

namespace detail {
[[noreturn]] inline void throw_create_failed(const std::string& directory, const char* reason) {
    throw error("cannot create a spill file in '" + directory + "': " + reason +
                "; set tape_options::spill_directory to a writable directory");
}
[[noreturn]] inline void throw_write_failed(const char* reason) {
    throw error(std::string("writing the spill file failed: ") + reason +
                " (disk full? set tape_options::spill_directory or raise the memory budget)");
}
[[noreturn]] inline void throw_read_failed(const char* reason) {
    throw error(std::string("reading the spill file failed: ") + reason + "; the tape cannot be swept: call reset()");
}
}  // namespace detail

/// Reads and writes of spill files. Replace it (tape_options::io) to inject
/// faults or to put the files elsewhere; the default uses POSIX
/// pread/pwrite where they exist.
class spill_io {
public:
    virtual ~spill_io() = default;

    /// Whether read() may run on two threads at once on one descriptor (at
    /// different offsets). When it may, a sweep reads each spilled tile in
    /// parts on the tape's prefetch thread and on the sweeping thread side
    /// by side (streaming_store::read_part_bytes); else whole, on the
    /// prefetch thread. A tape whose tape_options::io is empty uses its
    /// default layer so (pread); a layer given in tape_options::io is asked
    /// this, and a class derived from this one says no unless it overrides
    /// it (its read() may keep state between calls).
    virtual bool concurrent_reads() const noexcept { return false; }

#if TAPEFLOW_POSIX_SPILL_IO
    /// Creates a private file in `directory`; returns its descriptor.
    virtual int create(const std::string& directory) {
#ifdef O_TMPFILE
        // An unnamed file from the start: never visible in the directory.
        const int unnamed = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (unnamed >= 0) return unnamed;
        if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
            detail::throw_create_failed(directory, std::strerror(errno));
#endif
        // Elsewhere: a named file, unlinked at once.
        std::string path = directory + "/tapeflow-spill-XXXXXX";
        const int fd = ::mkstemp(path.data());  // mode 0600
        if (fd < 0) detail::throw_create_failed(directory, std::strerror(errno));
        ::unlink(path.c_str());  // unlinked at once: nothing to clean up later
        return fd;
    }
    /// Writes all `bytes` at `offset`.
    virtual void write(int fd, const std::byte* data, std::size_t bytes, std::uint64_t offset) {
        while (bytes > 0) {
            const ssize_t n = ::pwrite(fd, data, bytes, off_t(offset));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) detail::throw_write_failed(n < 0 ? std::strerror(errno) : "no progress");
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
            if (n <= 0) detail::throw_read_failed(n < 0 ? std::strerror(errno) : "the file is shorter than the tape");
            data += n;
            bytes -= std::size_t(n);
            offset += std::uint64_t(n);
        }
    }
    virtual void close(int fd) noexcept { ::close(fd); }
#else
    // No POSIX I/O here: default_spill_io() gives a portable_spill_io; a
    // class derived from this one must implement all four calls.
    virtual int create(const std::string& directory) {
        detail::throw_create_failed(directory, "no POSIX I/O on this system; use tapeflow::portable_spill_io");
    }
    virtual void write(int, const std::byte*, std::size_t, std::uint64_t) {
        detail::throw_write_failed("no POSIX I/O on this system; use tapeflow::portable_spill_io");
    }
    virtual void read(int, std::byte*, std::size_t, std::uint64_t) {
        detail::throw_read_failed("no POSIX I/O on this system; use tapeflow::portable_spill_io");
    }
    virtual void close(int) noexcept {}
#endif
};

/// Spill files through the C library alone: a file of a unique name in the
/// directory, opened for update, removed at once where the system allows
/// (POSIX; elsewhere, as on Windows, when it is closed). Offsets past what
/// `long` holds need a 64-bit `long` (_fseeki64 on Windows). Descriptors are
/// indices into this object's table of open files, which a mutex guards,
/// so one object may serve several tapes (their I/O then takes turns).
class portable_spill_io : public spill_io {
public:
    portable_spill_io() = default;
    portable_spill_io(const portable_spill_io&) = delete;
    portable_spill_io& operator=(const portable_spill_io&) = delete;
    ~portable_spill_io() override {
        for (std::size_t i = 0; i < files_.size(); ++i)
            if (files_[i].file) close(int(i));
    }

    int create(const std::string& directory) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::random_device random;
        for (int attempt = 0; attempt < 100; ++attempt) {
            const std::string path = directory + "/tapeflow-spill-" + std::to_string(random()) + "-" +
                                     std::to_string(++created_);
            errno = 0;
            std::FILE* f = std::fopen(path.c_str(), "w+bx");  // x: fails if the name is taken (C11)
            if (!f && errno == EEXIST) continue;
            if (!f) detail::throw_create_failed(directory, errno ? std::strerror(errno) : "fopen failed");
            // removed at once where an open file can be (POSIX): nothing is left behind
            const bool removed = std::remove(path.c_str()) == 0;
            std::size_t slot = 0;
            while (slot < files_.size() && files_[slot].file) ++slot;  // a closed one's slot, or a new one
            if (slot == files_.size()) files_.emplace_back();
            files_[slot] = open_file{f, removed ? std::string() : path};
            return int(slot);
        }
        detail::throw_create_failed(directory, "no unused file name found");
    }
    void write(int fd, const std::byte* data, std::size_t bytes, std::uint64_t offset) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::FILE* f = seek(fd, offset);
        if (!f) detail::throw_write_failed(reason("cannot seek"));
        if (std::fwrite(data, 1, bytes, f) != bytes || std::fflush(f) != 0)
            detail::throw_write_failed(reason("short write"));
    }
    void read(int fd, std::byte* data, std::size_t bytes, std::uint64_t offset) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::FILE* f = seek(fd, offset);
        if (!f) detail::throw_read_failed(reason("cannot seek"));
        if (std::fread(data, 1, bytes, f) != bytes)
            detail::throw_read_failed(std::ferror(f) ? reason("read error") : "the file is shorter than the tape");
    }
    void close(int fd) noexcept override {
        std::lock_guard<std::mutex> lock(mutex_);
        if (fd < 0 || std::size_t(fd) >= files_.size() || !files_[std::size_t(fd)].file) return;
        open_file& o = files_[std::size_t(fd)];
        std::fclose(o.file);
        if (!o.path.empty()) std::remove(o.path.c_str());
        o = open_file{};
    }

private:
    struct open_file {
        std::FILE* file = nullptr;
        std::string path;  // to remove at close; empty when removed at creation
    };

    // errno's text, or `otherwise` where the C library left errno unset
    static const char* reason(const char* otherwise) noexcept { return errno ? std::strerror(errno) : otherwise; }

    // The file of `fd`, positioned at `offset`, its error flag cleared;
    // nullptr (errno set where the system sets it) if that fails.
    std::FILE* seek(int fd, std::uint64_t offset) {
        errno = 0;
        if (fd < 0 || std::size_t(fd) >= files_.size() || !files_[std::size_t(fd)].file) {
            errno = EBADF;
            return nullptr;
        }
        std::FILE* f = files_[std::size_t(fd)].file;
        std::clearerr(f);
#if defined(_WIN32)
        const int failed = ::_fseeki64(f, static_cast<long long>(offset), SEEK_SET);
#else
        const int failed = offset > std::uint64_t(std::numeric_limits<long>::max())
                               ? (errno = EOVERFLOW, -1)
                               : std::fseek(f, long(offset), SEEK_SET);
#endif
        return failed == 0 ? f : nullptr;
    }

    std::mutex mutex_;
    std::vector<open_file> files_;
    std::uint64_t created_ = 0;
};

/// The spill_io a tape uses when tape_options::io is empty.
inline std::shared_ptr<spill_io> default_spill_io() {
#if TAPEFLOW_POSIX_SPILL_IO
    return std::make_shared<spill_io>();
#else
    return std::make_shared<portable_spill_io>();
#endif
}

}  // namespace tapeflow
