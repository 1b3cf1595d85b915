// The folders of include/tapeflow depend on each other one way only
// (docs/tape.md, "How the headers depend on each other"):
//
//   checkpoint/, eigen/     may include anything below
//        |
//   top-level headers        real.hpp, dual.hpp, drivers, ... (they may
//        |                   include each other; the umbrellas tapeflow.hpp
//        |                   and eigen.hpp may include anything)
//   expr/     hw/      expressions; the hardware model (neither includes the other)
//        |     |
//       tape/          records, recorder, sweeper, the tape
//        |
//      stream/         tiles, the FIFO, spill file, prefetch, observer, options
//        |
//   config.hpp, error.hpp   included by everything
//
// Every `#include "..."` of every header is read and resolved; an include
// of a folder at the same or a higher level than the includer's (other than
// its own folder) is a failure that names the file and the line.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;

#ifndef TAPEFLOW_SOURCE_DIR
#error "TAPEFLOW_SOURCE_DIR: the source tree (tests/CMakeLists.txt defines it)"
#endif

namespace {

const fs::path include_root = fs::path(TAPEFLOW_SOURCE_DIR) / "include" / "tapeflow";

/// The part of include/tapeflow a header belongs to: its first folder, or
/// the file name itself for the headers at the top.
std::string part_of(const fs::path& relative) {
    auto it = relative.begin();
    return std::next(it) == relative.end() ? relative.string() : it->string();
}

constexpr int top_level = 4;

/// Level of a part: a folder, a base header, or (any other .hpp at the top)
/// top_level. -1: a folder this test does not know (add it to the list).
int level_of(const std::string& part) {
    static const std::map<std::string, int> levels{
        {"config.hpp", 0}, {"error.hpp", 0}, {"stream", 1},     {"tape", 2},
        {"expr", 3},       {"hw", 3},        {"checkpoint", 5}, {"eigen", 5}};
    const auto it = levels.find(part);
    if (it != levels.end()) return it->second;
    return fs::path(part).extension() == ".hpp" ? top_level : -1;
}

struct include_line {
    fs::path from, to;  // relative to include/tapeflow
    int line;
};

std::vector<include_line> read_includes() {
    std::vector<include_line> all;
    const std::regex quoted(R"re(^\s*#\s*include\s*"([^"]+)")re");
    for (const auto& entry : fs::recursive_directory_iterator(include_root)) {
        if (!entry.is_regular_file() || entry.path().extension() != ".hpp") continue;
        std::ifstream in(entry.path());
        std::string text;
        int number = 0;
        while (std::getline(in, text)) {
            ++number;
            std::smatch m;
            if (!std::regex_search(text, m, quoted)) continue;
            const fs::path target = (entry.path().parent_path() / m[1].str()).lexically_normal();
            all.push_back({entry.path().lexically_relative(include_root), target.lexically_relative(include_root),
                           number});
        }
    }
    return all;
}

}  // namespace

TEST_CASE("the folders of include/tapeflow include one another one way only") {
    const std::vector<include_line> includes = read_includes();
    // the library has its folders and headers where this test expects them
    REQUIRE(includes.size() > 100);
    std::map<std::string, int> seen;
    for (const include_line& i : includes) ++seen[part_of(i.from)];
    for (const char* folder : {"stream", "tape", "expr", "hw", "checkpoint", "eigen"}) CHECK(seen[folder] > 0);

    for (const include_line& i : includes) {
        const std::string from = part_of(i.from), to = part_of(i.to);
        INFO(i.from.string() << ":" << i.line << " includes " << i.to.string());
        CHECK(fs::exists(include_root / i.to));
        CHECK(level_of(from) >= 0);
        CHECK(level_of(to) >= 0);
        if (from == "tapeflow.hpp" || from == "eigen.hpp") continue;  // the umbrellas include everything
        if (level_of(from) == top_level)
            CHECK(level_of(to) <= top_level);  // other top-level headers, and the folders below them
        else if (from != to)
            CHECK(level_of(to) < level_of(from));
    }
}

TEST_CASE("the layer check sees a header that includes upwards") {
    // The rule of the test above, on the include that tape.hpp had before the
    // observer moved to stream/, and on expr and hw, which are side by side.
    CHECK_FALSE(level_of(part_of("hw/observer.hpp")) < level_of(part_of("tape/tape.hpp")));
    CHECK_FALSE(level_of(part_of("expr/expression.hpp")) < level_of(part_of("hw/hardware_model.hpp")));
    CHECK(level_of(part_of("stream/observer.hpp")) < level_of(part_of("tape/tape.hpp")));
    CHECK(level_of(part_of("config.hpp")) < level_of(part_of("stream/tile.hpp")));
    CHECK_FALSE(level_of(part_of("real.hpp")) < level_of(part_of("tape/tape.hpp")));
    CHECK(level_of(part_of("real.hpp")) < level_of(part_of("checkpoint/checkpointed_loop.hpp")));
    CHECK(level_of(part_of("newfolder/x.hpp")) == -1);
}
