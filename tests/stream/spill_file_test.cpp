// The spill file and its I/O layer: tiles round-trip at their offsets, a
// corrupted byte or a short read is a tapeflow::error that says so, the file
// is created in the chosen directory with mode 0600 and unlinked at once,
// and a directory that cannot hold it is named in the error.
#include <catch2/catch.hpp>
#include <tapeflow/stream/spill_file.hpp>

#include "stream/stream_support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using tapeflow::spill_file;
using tapeflow_test::contains;

namespace {

// Bytes that differ from tile to tile and from position to position.
std::vector<std::byte> pattern(std::size_t bytes, unsigned seed) {
    std::vector<std::byte> v(bytes);
    std::uint32_t x = 2463534242u ^ seed;
    for (auto& b : v) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b = std::byte(x & 0xff);
    }
    return v;
}

// Reads into a buffer that starts out different from what is expected.
std::vector<std::byte> read_tile(spill_file& f, std::size_t bytes, std::uint64_t offset) {
    std::vector<std::byte> v(bytes, std::byte{0xee});
    f.read(v.data(), bytes, offset);
    return v;
}

// An io whose read delivers only the first half of the bytes asked for.
class half_reading_io : public tapeflow::spill_io {
public:
    void read(int fd, std::byte* data, std::size_t bytes, std::uint64_t offset) override {
        if (bytes > spill_file::checksum_bytes) bytes /= 2;
        spill_io::read(fd, data, bytes, offset);
    }
};

}  // namespace

TEST_CASE("tiles round-trip at their offsets, in any order") {
    tapeflow_test::temp_directory dir;
    auto io = std::make_shared<tapeflow_test::faulty_io>();
    std::uint64_t written = 0;
    {
        spill_file f(io, dir.path());
        CHECK_FALSE(f.exists());
        CHECK(io->creates == 0);  // created on the first write, not before
        const std::vector<std::size_t> sizes{4096, 1000, 64, 4095, 1};
        std::vector<std::vector<std::byte>> tiles;
        std::vector<std::uint64_t> offsets;
        std::uint64_t end = 0;
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            tiles.push_back(pattern(sizes[i], unsigned(i)));
            offsets.push_back(end);
            f.write(tiles[i].data(), sizes[i], end);
            end += sizes[i] + spill_file::checksum_bytes;
        }
        CHECK(f.exists());
        CHECK(io->creates == 1);
        CHECK(f.bytes_written() == end);
        written = end;
        for (std::size_t i : {4u, 0u, 2u, 3u, 1u, 0u}) {
            CAPTURE(i);
            CHECK(read_tile(f, sizes[i], offsets[i]) == tiles[i]);
        }
        CHECK(f.bytes_read() == end + sizes[0] + spill_file::checksum_bytes);  // tile 0 twice

        // Overwriting a tile in place (as after reset(position)): the new one reads back.
        const auto replaced = pattern(sizes[1], 99);
        f.write(replaced.data(), sizes[1], offsets[1]);
        CHECK(read_tile(f, sizes[1], offsets[1]) == replaced);
        CHECK(read_tile(f, sizes[2], offsets[2]) == tiles[2]);  // its neighbour is untouched
        CHECK(dir.entries().empty());
    }
    CHECK(io->closes == 1);  // the destructor closes the descriptor
    CHECK(written > 0);
}

TEST_CASE("a flipped byte in a tile or its checksum is reported as corrupt") {
    tapeflow_test::temp_directory dir;
    auto io = std::make_shared<tapeflow_test::faulty_io>();
    spill_file f(io, dir.path());
    const auto a = pattern(2048, 1), b = pattern(2048, 2);
    f.write(a.data(), a.size(), 0);
    f.write(b.data(), b.size(), 2048 + 8);
    CHECK(read_tile(f, 2048, 0) == a);  // fine without the fault: tile read 0
    io->corrupt_read = 1;               // the next tile read gets one bit flipped
    try {
        read_tile(f, 2048, 2048 + 8);
        FAIL("no error for a corrupted tile");
    } catch (const tapeflow::error& e) {
        CHECK(contains(e.what(), "corrupt"));
        CHECK(contains(e.what(), "offset 2056"));
        CHECK(contains(e.what(), "reset()"));
    }
    CHECK(read_tile(f, 2048, 2048 + 8) == b);  // the file itself is fine

    // A damaged checksum on disk is caught too.
    const std::byte bad{0x5a};
    REQUIRE(::pwrite(io->last_fd, &bad, 1, 2048 + 3) == 1);
    CHECK_THROWS_WITH(read_tile(f, 2048, 0), Catch::Contains("corrupt"));
    CHECK(read_tile(f, 2048, 2048 + 8) == b);
}

TEST_CASE("damage to the spill file itself is caught when the tile is read back") {
    // What the file can suffer between the write and the sweep, done to the
    // file with pwrite: each must be an error, never the damaged bytes.
    tapeflow_test::temp_directory dir;
    auto io = std::make_shared<tapeflow_test::faulty_io>();
    spill_file f(io, dir.path());
    const std::size_t bytes = 8192;
    const auto a = pattern(bytes, 21);
    f.write(a.data(), bytes, 0);
    const int fd = io->last_fd;
    auto damage = [&](std::size_t at, std::vector<std::byte> with) {
        REQUIRE(::pwrite(fd, with.data(), with.size(), off_t(at)) == ssize_t(with.size()));
    };
    auto byte_at = [&](std::size_t at) {
        std::byte b{};
        REQUIRE(::pread(fd, &b, 1, off_t(at)) == 1);
        return b;
    };
    auto check_caught = [&](const char* what) {
        INFO(what);
        CHECK_THROWS_WITH(read_tile(f, bytes, 0), Catch::Contains("corrupt") && Catch::Contains("call reset()"));
        f.write(a.data(), bytes, 0);  // repaired for the next case
        CHECK(read_tile(f, bytes, 0) == a);
    };
    damage(100, {byte_at(100) ^ std::byte{0x04}});
    check_caught("one bit");
    // the sign bits of two words 128 bytes apart: cancelled in the old sums
    damage(7, {byte_at(7) ^ std::byte{0x80}});
    damage(7 + 128, {byte_at(7 + 128) ^ std::byte{0x80}});
    check_caught("two sign flips in one old lane");
    {
        std::vector<std::byte> w(a.begin() + 64, a.begin() + 72), x(a.begin() + 128, a.begin() + 136);
        damage(64, x);
        damage(128, w);
        check_caught("two words swapped");
    }
    damage(4096, std::vector<std::byte>(4096, std::byte{0}));
    check_caught("a zeroed page");
    damage(bytes + 1, {byte_at(bytes + 1) ^ std::byte{0x01}});
    check_caught("the stored checksum");
    damage(bytes + 6, {byte_at(bytes + 6) ^ std::byte{0x20}});
    check_caught("the decoded checksum");
}

TEST_CASE("tile_checksum: the length counts, so zeros of another length do not match") {
    const std::vector<std::byte> zeros(4096, std::byte{0});
    CHECK(tapeflow::tile_checksum(zeros.data(), 4096) != tapeflow::tile_checksum(zeros.data(), 4088));
    CHECK(tapeflow::tile_checksum(zeros.data(), 0) != tapeflow::tile_checksum(zeros.data(), 8));
    CHECK(tapeflow::tile_checksum(zeros.data(), 4096) != 0u);
}

TEST_CASE("a short read is an error that says the file is short") {
    tapeflow_test::temp_directory dir;
    SECTION("the file ends early (EOF)") {
        auto io = std::make_shared<tapeflow_test::faulty_io>();
        spill_file f(io, dir.path());
        const auto a = pattern(4096, 3);
        f.write(a.data(), a.size(), 0);
        io->truncate_before_read = 0;
        try {
            read_tile(f, 4096, 0);
            FAIL("no error for a truncated file");
        } catch (const tapeflow::error& e) {
            CHECK(contains(e.what(), "reading the spill file failed"));
            CHECK(contains(e.what(), "shorter"));
        }
    }
    SECTION("a tile beyond the end of the file") {
        auto io = std::make_shared<tapeflow_test::faulty_io>();
        spill_file f(io, dir.path());
        const auto a = pattern(512, 4);
        f.write(a.data(), a.size(), 0);
        CHECK_THROWS_WITH(read_tile(f, 512, 4096), Catch::Contains("shorter"));
        CHECK_THROWS_WITH(read_tile(f, 1024, 0), Catch::Contains("spill file"));
    }
    SECTION("an io that delivers fewer bytes than asked: the checksum catches it") {
        auto io = std::make_shared<half_reading_io>();
        spill_file f(io, dir.path());
        const auto a = pattern(4096, 5);
        f.write(a.data(), a.size(), 0);
        CHECK_THROWS_WITH(read_tile(f, 4096, 0), Catch::Contains("corrupt"));
    }
}

TEST_CASE("the file is private: in the chosen directory, mode 0600, unlinked at once") {
    tapeflow_test::temp_directory dir;
    class watching_io : public tapeflow::spill_io {
    public:
        explicit watching_io(std::string dir) : dir_(std::move(dir)) {}
        int create(const std::string& directory) override {
            const int fd = spill_io::create(directory);
            entries_after_create = tapeflow_test::directory_entries(dir_);
            return fd;
        }
        std::vector<std::string> entries_after_create{"not called"};

    private:
        std::string dir_;
    };
    watching_io io(dir.path());
    const mode_t old_mask = ::umask(0);  // mkstemp must not rely on the umask for 0600
    const int fd = io.create(dir.path());
    ::umask(old_mask);
    REQUIRE(fd >= 0);
    CHECK(io.entries_after_create.empty());
    CHECK(dir.entries().empty());
    struct stat st {};
    REQUIRE(::fstat(fd, &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK((st.st_mode & 07777) == 0600);
    CHECK(st.st_nlink == 0);  // no name left anywhere
    struct stat dir_st {};
    REQUIRE(::stat(dir.path().c_str(), &dir_st) == 0);
    CHECK(st.st_dev == dir_st.st_dev);  // on the file system of the chosen directory

    // The descriptor works: write, read back.
    const auto a = pattern(300, 6);
    io.write(fd, a.data(), a.size(), 100);
    std::vector<std::byte> b(300);
    io.read(fd, b.data(), b.size(), 100);
    CHECK(a == b);
    io.close(fd);
    CHECK(::fcntl(fd, F_GETFD) == -1);  // closed
}

TEST_CASE("a directory that cannot hold the file is named in the error") {
    tapeflow_test::temp_directory dir;
    tapeflow::spill_io io;
    SECTION("it does not exist") {
        const std::string missing = dir.path() + "/no/such/dir";
        try {
            io.create(missing);
            FAIL("no error");
        } catch (const tapeflow::error& e) {
            CHECK(contains(e.what(), "'" + missing + "'"));
            CHECK(contains(e.what(), "No such file or directory"));
            CHECK(contains(e.what(), "spill_directory"));
        }
    }
    SECTION("it is a regular file") {
        const std::string file = dir.path() + "/plain-file";
        const int fd = ::open(file.c_str(), O_CREAT | O_WRONLY, 0600);
        REQUIRE(fd >= 0);
        ::close(fd);
        try {
            io.create(file);
            FAIL("no error");
        } catch (const tapeflow::error& e) {
            CHECK(contains(e.what(), "'" + file + "'"));
            CHECK(contains(e.what(), "Not a directory"));
        }
        CHECK(dir.entries() == std::vector<std::string>{"plain-file"});
    }
    SECTION("through spill_file: the first write fails, nothing is left open") {
        const auto before = tapeflow_test::descriptor_count();
        {
            spill_file f(std::make_shared<tapeflow::spill_io>(), dir.path() + "/missing");
            const auto a = pattern(64, 1);
            CHECK_THROWS_WITH(f.write(a.data(), a.size(), 0), Catch::Contains(dir.path() + "/missing"));
            CHECK_FALSE(f.exists());
        }
        CHECK(tapeflow_test::descriptor_count() == before);
    }
}
