// tests/stream/stream_support.hpp - helpers of the streaming tests: a fresh
// temporary directory, thread and descriptor counts from /proc, a watchdog
// that turns a hang into a failure, fault-injecting spill_io layers, and the
// time-stepping program (a nonlinear 1-D heat equation) whose gradient the
// streaming configurations must reproduce bit for bit.
#pragma once

#include <tapeflow/stream/spill_file.hpp>
#include <tapeflow/tapeflow.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tapeflow_test {

// ---- the environment --------------------------------------------------------

/// Names in a directory, without "." and "..".
inline std::vector<std::string> directory_entries(const std::string& path) {
    std::vector<std::string> names;
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) return names;
    while (const dirent* e = ::readdir(dir)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(dir);
    return names;
}

/// Entries of /proc/self/task: the threads of this process.
inline std::size_t thread_count() { return directory_entries("/proc/self/task").size(); }
/// thread_count() once it equals `expected`, or after 2 s. A thread that was
/// joined may stay listed in /proc for a moment (the kernel wakes the joiner
/// before it reaps the thread); a leaked thread stays for good.
inline std::size_t settled_thread_count(std::size_t expected) {
    std::size_t n = thread_count();
    for (int i = 0; i < 200 && n != expected; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        n = thread_count();
    }
    return n;
}
/// thread_count() once it has stayed the same for 30 ms (at most 2 s): the
/// count to compare against later. Taken right after a thread was joined
/// (the watchdog of the previous run of a test, a prefetcher), a plain
/// thread_count() can still list that thread, and the later settled count
/// is then one less (seen: "2 == 3" in a loaded ctest run).
inline std::size_t steady_thread_count() {
    std::size_t n = thread_count();
    for (int same = 0, i = 0; same < 3 && i < 200; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const std::size_t m = thread_count();
        same = m == n ? same + 1 : 0;
        n = m;
    }
    return n;
}
/// Entries of /proc/self/fd: the open descriptors of this process.
inline std::size_t descriptor_count() { return directory_entries("/proc/self/fd").size(); }

/// A fresh empty directory under $TMPDIR (or /tmp), removed with its files
/// at the end of the scope.
class temp_directory {
public:
    temp_directory() {
        const char* base = std::getenv("TMPDIR");
        std::string pattern = std::string(base && *base ? base : "/tmp") + "/tapeflow-stream-test-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) {
            std::perror("mkdtemp");
            std::abort();
        }
        path_ = pattern;
    }
    temp_directory(const temp_directory&) = delete;
    temp_directory& operator=(const temp_directory&) = delete;
    ~temp_directory() {
        for (const auto& name : directory_entries(path_)) ::unlink((path_ + "/" + name).c_str());
        ::rmdir(path_.c_str());
    }
    const std::string& path() const noexcept { return path_; }
    std::vector<std::string> entries() const { return directory_entries(path_); }

private:
    std::string path_;
};

/// Aborts the process (so the test fails instead of hanging) when the scope
/// is not left within `seconds`.
class watchdog {
public:
    watchdog(double seconds, std::string what) : what_(std::move(what)) {
        thread_ = std::thread([this, seconds] {
            std::unique_lock<std::mutex> lock(mutex_);
            const auto limit = std::chrono::duration<double>(seconds);
            if (!done_cv_.wait_for(lock, limit, [this] { return done_; })) {
                std::fprintf(stderr, "watchdog: '%s' did not finish within %.0f s (hang)\n", what_.c_str(),
                             seconds);
                std::fflush(stderr);
                std::abort();
            }
        });
    }
    watchdog(const watchdog&) = delete;
    watchdog& operator=(const watchdog&) = delete;
    ~watchdog() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_ = true;
        }
        done_cv_.notify_all();
        thread_.join();
    }

private:
    std::string what_;
    std::mutex mutex_;
    std::condition_variable done_cv_;
    bool done_ = false;
    std::thread thread_;
};

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// ---- spill_io layers ----------------------------------------------------------

/// The POSIX layer with counters and switchable faults. Faults act on the
/// n-th data write / read (spill_file writes and reads a tile, then its
/// 8-byte checksum, so calls with more than 8 bytes are tile data; a sweep
/// reads a tile larger than streaming_store::read_part_bytes in parts, each
/// a read of its own), or on the first read made on a watched thread. Every
/// fault is a real error of the kernel, reported by the library's own
/// spill_io::write / read (so the tests see the library's messages).
class faulty_io : public tapeflow::spill_io {
public:
    static constexpr std::size_t never = std::numeric_limits<std::size_t>::max();

    /// Tile writes from this one on go to /dev/full (ENOSPC from the kernel).
    std::atomic<std::size_t> fail_write_from{never};
    /// Tile writes from this one on go to a read-only descriptor (EBADF): an
    /// I/O error that is not a full disk.
    std::atomic<std::size_t> io_error_on_write_from{never};
    /// The tile read with this index reads from a directory (EISDIR): an
    /// I/O error of the read itself.
    std::atomic<std::size_t> io_error_on_read{never};
    /// The tile read with this index gets one byte flipped after reading.
    std::atomic<std::size_t> corrupt_read{never};
    /// The tile read with this index is changed by `damage` after reading
    /// (set both before the sweep); `damage` returns whether it changed it.
    std::atomic<std::size_t> damage_read{never};
    std::function<bool(std::byte* data, std::size_t bytes)> damage;
    std::atomic<bool> damaged{false};
    /// The tile read with this index finds the file truncated to 0 bytes.
    std::atomic<std::size_t> truncate_before_read{never};
    /// Microseconds each tile write / read sleeps (to keep the prefetcher busy).
    std::atomic<int> write_delay_us{0};
    std::atomic<int> read_delay_us{0};
    /// A thread whose tile reads are counted, and can be made to fail; set
    /// it before the tape that uses this layer starts its own thread.
    std::thread::id watched;
    std::atomic<std::size_t> watched_reads{0};          ///< tile reads made on `watched`
    std::atomic<bool> io_error_on_watched_read{false};  ///< the next one on `watched` reads a directory
    std::atomic<bool> corrupt_watched_read{false};      ///< the next one on `watched` gets a byte flipped

    /// Offset of every tile read, and whether it was made on `watched`.
    struct read_entry {
        std::uint64_t offset;
        bool on_watched;
    };
    std::vector<read_entry> read_log() const {
        std::lock_guard<std::mutex> lock(log_mutex_);
        return log_;
    }

    /// What concurrent_reads() answers (this layer's reads are pread's).
    bool concurrent = true;

    std::atomic<std::size_t> creates{0};
    std::atomic<std::size_t> closes{0};
    std::atomic<std::size_t> tile_writes{0};       ///< tile writes started
    std::atomic<std::size_t> tile_writes_done{0};  ///< tile writes that succeeded
    std::atomic<std::size_t> tile_reads{0};       ///< tile reads started
    std::atomic<std::size_t> tile_reads_done{0};  ///< tile reads that returned the bytes
    std::atomic<std::uint64_t> max_end{0};  ///< largest offset + bytes written
    std::atomic<int> last_fd{-1};

    bool concurrent_reads() const noexcept override { return concurrent; }
    int create(const std::string& directory) override {
        const int fd = spill_io::create(directory);
        ++creates;
        last_fd = fd;
        return fd;
    }
    void write(int fd, const std::byte* data, std::size_t bytes, std::uint64_t offset) override {
        if (bytes > tapeflow::spill_file::checksum_bytes) {
            const std::size_t n = tile_writes++;
            if (write_delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(write_delay_us));
            if (n >= fail_write_from) {
                write_elsewhere("/dev/full", O_WRONLY, data, bytes);
                return;  // /dev/full accepted the write: the check in the test fails
            }
            if (n >= io_error_on_write_from) {
                write_elsewhere("/dev/null", O_RDONLY, data, bytes);
                return;  // the read-only descriptor accepted the write: the test fails
            }
        }
        spill_io::write(fd, data, bytes, offset);
        if (bytes > tapeflow::spill_file::checksum_bytes) ++tile_writes_done;
        std::uint64_t end = offset + bytes, seen = max_end.load();
        while (end > seen && !max_end.compare_exchange_weak(seen, end)) {
        }
    }
    void read(int fd, std::byte* data, std::size_t bytes, std::uint64_t offset) override {
        const bool tile_data = bytes > tapeflow::spill_file::checksum_bytes;
        const std::size_t n = tile_data ? tile_reads++ : never;
        const bool on_watched = tile_data && std::this_thread::get_id() == watched;
        if (on_watched) ++watched_reads;
        if (tile_data) {
            std::lock_guard<std::mutex> lock(log_mutex_);
            log_.push_back({offset, on_watched});
        }
        if (tile_data && read_delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(read_delay_us));
        if (tile_data && n == truncate_before_read) {
            if (::ftruncate(fd, 0) != 0) throw tapeflow::error("test setup: ftruncate failed");
        }
        if ((tile_data && n == io_error_on_read) || (on_watched && io_error_on_watched_read.exchange(false))) {
            const int directory = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (directory < 0) throw tapeflow::error("test setup: cannot open /");
            try {
                spill_io::read(directory, data, bytes, offset);
            } catch (...) {
                ::close(directory);
                throw;
            }
            ::close(directory);
            return;  // reading a directory succeeded: the check in the test fails
        }
        spill_io::read(fd, data, bytes, offset);
        if ((tile_data && n == corrupt_read) || (on_watched && corrupt_watched_read.exchange(false)))
            data[bytes / 2] ^= std::byte{0x10};
        if (tile_data && n == damage_read && damage(data, bytes)) damaged = true;
        if (tile_data) ++tile_reads_done;
    }
    void close(int fd) noexcept override {
        ++closes;
        spill_io::close(fd);
    }

    /// Switches every fault off.
    void heal() {
        fail_write_from = never;
        io_error_on_write_from = never;
        io_error_on_read = never;
        corrupt_read = never;
        damage_read = never;
        truncate_before_read = never;
        write_delay_us = 0;
        read_delay_us = 0;
        io_error_on_watched_read = false;
        corrupt_watched_read = false;
    }

private:
    mutable std::mutex log_mutex_;
    std::vector<read_entry> log_;

    // Writes through spill_io::write to `path` opened with `flags` (it throws
    // the library's error for that descriptor).
    void write_elsewhere(const char* path, int flags, const std::byte* data, std::size_t bytes) {
        const int other = ::open(path, flags | O_CLOEXEC);
        if (other < 0) throw tapeflow::error(std::string("test setup: cannot open ") + path);
        try {
            spill_io::write(other, data, bytes, 0);
        } catch (...) {
            ::close(other);
            throw;
        }
        ::close(other);
    }
};

/// Threads and descriptors of the process, to check that a scope left none
/// behind: take one before (after any watchdog), compare after.
struct process_resources {
    std::size_t threads = steady_thread_count();
    std::size_t descriptors = descriptor_count();
};

// ---- the program: a nonlinear 1-D heat equation ---------------------------------
//
//   u_i <- u_i + r (1 + kappa u_i^2) (u_{i-1} - 2 u_i + u_{i+1}),  u_0 = u_{n+1} = 0
//   J = sum_i w_i u_i^2 after `steps` steps; inputs u(0) and kappa.
//
// Each step records one statement of 3-4 arguments (40-52 bytes) per cell.

constexpr double heat_r = 0.2;

inline std::vector<double> heat_initial(std::size_t cells) {
    std::vector<double> u(cells);
    for (std::size_t i = 0; i < cells; ++i)
        u[i] = 0.1 + 0.8 * std::sin(3.141592653589793 * double(i + 1) / double(cells + 1));
    return u;
}
constexpr double heat_kappa = 0.3;
inline double heat_weight(std::size_t i) { return 1.0 + 0.01 * double(i); }

template <class T>
std::vector<T> heat_step(const std::vector<T>& u, const T& kappa) {
    std::vector<T> next;
    next.reserve(u.size());
    const std::size_t n = u.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (i == 0)
            next.emplace_back(u[i] + heat_r * (1.0 + kappa * u[i] * u[i]) * (-2.0 * u[i] + u[i + 1]));
        else if (i + 1 == n)
            next.emplace_back(u[i] + heat_r * (1.0 + kappa * u[i] * u[i]) * (u[i - 1] - 2.0 * u[i]));
        else
            next.emplace_back(u[i] + heat_r * (1.0 + kappa * u[i] * u[i]) * (u[i - 1] - 2.0 * u[i] + u[i + 1]));
    }
    return next;
}

template <class T>
T heat_objective_of(const std::vector<T>& u) {
    T J = 0.0;
    for (std::size_t i = 0; i < u.size(); ++i) J = J + heat_weight(i) * u[i] * u[i];
    return J;
}

/// The plain-double program (for finite differences): x = u(0) then kappa.
inline double heat_objective(const std::vector<double>& x, std::size_t steps) {
    std::vector<double> u(x.begin(), x.end() - 1);
    const double kappa = x.back();
    for (std::size_t s = 0; s < steps; ++s) u = heat_step(u, kappa);
    return heat_objective_of(u);
}

/// One recording of the heat program on a tape, keeping every state alive so
/// that the tape can be reset to the start of any step and recorded again.
/// marks[s] is the position before step s (after the inputs for s = 0).
class heat_recording {
public:
    using Real = tapeflow::Real;

    heat_recording(tapeflow::tape& t, std::size_t cells, std::size_t steps) : tape_(t), steps_(steps) {
        tape_.start_recording();
        const auto u0 = heat_initial(cells);
        inputs_.assign(u0.begin(), u0.end());
        for (auto& x : inputs_) tape_.register_input(x);
        kappa_ = heat_kappa;
        tape_.register_input(kappa_);
        states_.push_back(inputs_);  // copies: one statement per cell
        marks_.resize(steps + 1);
        record_from(0);
    }

    /// Records steps s.. and the objective (the tape is recording).
    void record_from(std::size_t s) {
        states_.resize(s + 1);
        for (; s < steps_; ++s) {
            marks_[s] = tape_.get_position();
            states_.push_back(heat_step(states_[s], kappa_));
        }
        marks_[steps_] = tape_.get_position();
        objective_ = heat_objective_of(states_.back());
        tape_.register_output(objective_);
        tape_.stop_recording();
    }

    /// reset(marks[s]), then records steps s.. again.
    void rerecord_from(std::size_t s) {
        tape_.reset(marks_[s]);
        tape_.start_recording();
        record_from(s);
    }

    /// Gradient of J with respect to (u(0), kappa) from a full sweep.
    std::vector<double> gradient() {
        tape_.clear_adjoints();
        tape_.set_adjoint(objective_, 1.0);
        tape_.sweep();
        return input_adjoints();
    }
    std::vector<double> input_adjoints() const {
        std::vector<double> g;
        for (const auto& x : inputs_) g.push_back(tape_.adjoint(x));
        g.push_back(tape_.adjoint(kappa_));
        return g;
    }

    const Real& objective() const noexcept { return objective_; }
    Real& final_cell(std::size_t i) { return states_.back()[i]; }
    const std::vector<tapeflow::position>& marks() const noexcept { return marks_; }
    std::size_t steps() const noexcept { return steps_; }

private:
    tapeflow::tape& tape_;
    std::size_t steps_;
    std::vector<Real> inputs_;
    Real kappa_;
    std::vector<std::vector<Real>> states_;
    std::vector<tapeflow::position> marks_;
    Real objective_;
};

/// Number of components where a and b differ (bitwise for doubles: ==).
inline std::size_t mismatches(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return std::max(a.size(), b.size());
    std::size_t n = 0;
    for (std::size_t i = 0; i < a.size(); ++i) n += !(a[i] == b[i]);
    return n;
}

/// Components that are exactly zero (a gradient that is all zeros proves nothing).
inline std::size_t zeros(const std::vector<double>& a) {
    std::size_t n = 0;
    for (double v : a) n += v == 0.0;
    return n;
}

}  // namespace tapeflow_test
