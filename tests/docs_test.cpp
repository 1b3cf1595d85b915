// tests/docs_test.cpp - the code the docs show as copied from an example is
// still the example's code.
//
// A doc marks such a block with a comment line before its fence:
//
//   <!-- verbatim: examples/tape_api.cpp -->
//   ```cpp
//       tape.reset();
//       ...
//   ```
//
// and every line of the block must appear, in order and with its
// indentation, as consecutive lines of that file (the examples are built and
// run by the suite, so the block is code that compiles and works). A doc
// that says "verbatim from ..." must carry the marker, so no block is called
// a copy without being checked.
//
// The error messages the docs' tables quote (the column "message after
// `tapeflow: `") are the library's: every literal piece of a quoted message
// (the text between its placeholders) is made of the headers' string
// literals as the code joins them (in_messages).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#ifndef TAPEFLOW_SOURCE_DIR
#error "TAPEFLOW_SOURCE_DIR: the source tree (tests/CMakeLists.txt defines it)"
#endif

namespace {

namespace fs = std::filesystem;

const fs::path source_dir = TAPEFLOW_SOURCE_DIR;

std::vector<std::string> read_lines(const fs::path& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(line);
    }
    return lines;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// The markdown files the docs consist of: README.md and docs/*.md.
std::vector<fs::path> markdown_files() {
    std::vector<fs::path> files{source_dir / "README.md"};
    for (const auto& entry : fs::directory_iterator(source_dir / "docs"))
        if (entry.path().extension() == ".md") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

// A block of a doc marked as copied from `source`.
struct verbatim_block {
    fs::path doc;
    std::size_t line = 0;  // 1-based line of the marker
    std::string source;    // relative to the source tree
    std::vector<std::string> code;
    bool fenced = false;  // the marker is followed by a closed ``` block
};

const std::string marker_begin = "<!-- verbatim: ";
const std::string marker_end = " -->";

std::vector<verbatim_block> verbatim_blocks(const fs::path& doc) {
    const std::vector<std::string> lines = read_lines(doc);
    std::vector<verbatim_block> blocks;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string& l = lines[i];
        if (l.rfind(marker_begin, 0) != 0) continue;
        verbatim_block b;
        b.doc = doc;
        b.line = i + 1;
        if (l.size() > marker_begin.size() + marker_end.size() &&
            l.compare(l.size() - marker_end.size(), marker_end.size(), marker_end) == 0)
            b.source = l.substr(marker_begin.size(), l.size() - marker_begin.size() - marker_end.size());
        if (i + 1 < lines.size() && lines[i + 1].rfind("```", 0) == 0) {
            std::size_t j = i + 2;
            for (; j < lines.size() && lines[j].rfind("```", 0) != 0; ++j) b.code.push_back(lines[j]);
            b.fenced = j < lines.size();
        }
        blocks.push_back(b);
    }
    return blocks;
}

// Where `code` starts as consecutive lines of `file`; the number of lines
// of `code` matched at the best start when it is nowhere (for the message).
struct match {
    bool found = false;
    std::size_t best_length = 0;
    std::size_t best_start = 0;
};

match find_block(const std::vector<std::string>& file, const std::vector<std::string>& code) {
    match m;
    for (std::size_t start = 0; start < file.size(); ++start) {
        std::size_t k = 0;
        while (k < code.size() && start + k < file.size() && file[start + k] == code[k]) ++k;
        if (k == code.size()) {
            m.found = true;
            return m;
        }
        if (k > m.best_length) {
            m.best_length = k;
            m.best_start = start;
        }
    }
    return m;
}

// The string literals of a C++ source, adjacent ones joined ("a" "b" is
// "ab"), escapes left as written; comments and character literals skipped.
std::vector<std::string> string_literals(const std::string& text) {
    std::vector<std::string> literals;
    std::size_t i = 0;
    const std::size_t n = text.size();
    auto skip_space = [&] {
        while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    };
    while (i < n) {
        const char c = text[i];
        if (c == '/' && i + 1 < n && text[i + 1] == '/') {
            while (i < n && text[i] != '\n') ++i;
        } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
            const std::size_t end = text.find("*/", i + 2);
            i = end == std::string::npos ? n : end + 2;
        } else if (c == '\'') {
            ++i;
            while (i < n && text[i] != '\'') i += text[i] == '\\' ? 2 : 1;
            ++i;
        } else if (c == '"') {
            std::string literal;
            while (i < n && text[i] == '"') {  // this literal and the ones adjacent to it
                ++i;
                while (i < n && text[i] != '"') {
                    if (text[i] == '\\' && i + 1 < n) literal += text[i++];
                    literal += text[i++];
                }
                ++i;
                skip_space();
            }
            literals.push_back(literal);
        } else {
            ++i;
        }
    }
    return literals;
}

// Every string literal of the headers under include/tapeflow.
std::vector<std::string> library_literals() {
    std::vector<std::string> all;
    for (const auto& entry : fs::recursive_directory_iterator(source_dir / "include" / "tapeflow")) {
        if (entry.path().extension() != ".hpp") continue;
        std::ifstream in(entry.path());
        std::stringstream text;
        text << in.rdbuf();
        for (std::string& l : string_literals(text.str())) all.push_back(std::move(l));
    }
    return all;
}

// The backquoted parts of a markdown table cell.
std::vector<std::string> code_spans(const std::string& cell) {
    std::vector<std::string> spans;
    for (std::size_t at = cell.find('`'); at != std::string::npos;) {
        const std::size_t end = cell.find('`', at + 1);
        if (end == std::string::npos) break;
        spans.push_back(cell.substr(at + 1, end - at - 1));
        at = cell.find('`', end + 1);
    }
    return spans;
}

// The literal pieces of a quoted message: the text between placeholders
// (a word in capitals such as N or REASON, a number, "<member>", "...").
std::vector<std::string> literal_pieces(const std::string& message) {
    std::vector<std::string> pieces;
    std::string piece;
    auto flush = [&] {
        if (piece.size() >= 12) pieces.push_back(piece);  // shorter ones say little
        piece.clear();
    };
    std::size_t i = 0;
    while (i < message.size()) {
        const auto is_upper = [&](std::size_t k) {
            return k < message.size() && std::isupper(static_cast<unsigned char>(message[k]));
        };
        const auto is_word = [&](std::size_t k) {
            return k < message.size() && (std::isalnum(static_cast<unsigned char>(message[k])) || message[k] == '_');
        };
        const bool word_start = i == 0 || !is_word(i - 1);
        if (message.compare(i, 3, "...") == 0) {
            flush();
            i += 3;
        } else if (message.compare(i, 8, "<member>") == 0) {
            flush();
            i += 8;
        } else if (std::isdigit(static_cast<unsigned char>(message[i]))) {
            flush();
            while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i]))) ++i;
        } else if (word_start && is_upper(i)) {
            std::size_t end = i;
            while (is_upper(end) || (end < message.size() && message[end] == '_')) ++end;
            if (!is_word(end)) {  // a placeholder: capitals only
                flush();
                i = end;
            } else {
                piece += message[i++];
            }
        } else {
            piece += message[i++];
        }
    }
    flush();
    return pieces;
}

// Whether piece[at..] is literal text of the library's messages, as the
// code builds them: literals joined with values between them (a member name
// such as "sweep", a codec's name, a number). So the piece is a run of parts,
// each a string literal, where only the first part may start inside its
// literal (the piece starts after a placeholder or an elision) and only the
// last may end inside its literal; a piece within one literal is one part.
// A paraphrase fails: "called when" is in no literal, and the parts around a
// changed word would have to end and start exactly at literal boundaries.
bool in_messages(const std::string& piece, const std::vector<std::string>& literals, std::size_t at = 0) {
    if (at == piece.size()) return true;
    const std::size_t rest = piece.size() - at;
    std::vector<std::size_t> lengths;  // of the parts that may come next
    for (const std::string& l : literals) {
        if (at == 0) {
            if (l.find(piece) != std::string::npos) return true;  // the whole piece in one literal
            // a suffix of l that starts the piece
            for (std::size_t len = std::min(l.size(), rest - 1); len > 0; --len)
                if (l.compare(l.size() - len, len, piece, 0, len) == 0) lengths.push_back(len);
        } else if (l.size() > 0) {
            // l whole, or a prefix of l that ends the piece
            if (l.size() <= rest && piece.compare(at, l.size(), l) == 0) lengths.push_back(l.size());
            if (l.size() > rest && l.compare(0, rest, piece, at, rest) == 0) lengths.push_back(rest);
        }
    }
    std::sort(lengths.begin(), lengths.end(), std::greater<>());
    lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
    for (std::size_t len : lengths)
        if (in_messages(piece, literals, at + len)) return true;
    return false;
}

}  // namespace

TEST_CASE("every block a doc marks as verbatim is the example's code, line for line") {
    std::size_t checked = 0;
    for (const fs::path& doc : markdown_files()) {
        for (const verbatim_block& b : verbatim_blocks(doc)) {
            INFO(doc.filename().string() << " line " << b.line << ": " << marker_begin << b.source << marker_end);
            REQUIRE(!b.source.empty());
            REQUIRE(b.fenced);  // a ``` block right after the marker, closed
            REQUIRE(!b.code.empty());
            const fs::path source = source_dir / b.source;
            REQUIRE(fs::is_regular_file(source));
            const std::vector<std::string> file = read_lines(source);
            const match m = find_block(file, b.code);
            if (!m.found) {
                const std::size_t k = m.best_length;
                INFO("the block's first " << k << " lines match " << b.source << " from line "
                                          << m.best_start + 1 << "; its line " << k + 1 << " is\n  "
                                          << b.code[k] << "\nand is not the next line of the file"
                                          << (m.best_start + k < file.size() ? ":\n  " + file[m.best_start + k]
                                                                             : std::string(" (end of file)")));
                CHECK(m.found);
            }
            ++checked;
        }
    }
    // The docs hold ten such blocks today: the test cannot pass by finding none.
    CHECK(checked >= 10);
}

TEST_CASE("a doc that calls a block verbatim marks it for the check") {
    // "(*verbatim from examples/x.cpp*)" or "*Verbatim from examples/x.cpp:*"
    // before a block: the marker must follow within a few lines.
    std::size_t claims = 0;
    for (const fs::path& doc : markdown_files()) {
        const std::vector<std::string> lines = read_lines(doc);
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const std::string l = lower(lines[i]);
            if (l.find("*verbatim") == std::string::npos || l.find("code marked") != std::string::npos) continue;
            ++claims;
            bool marked = false;
            for (std::size_t j = i + 1; j < lines.size() && j <= i + 6 && !marked; ++j)
                marked = lines[j].rfind(marker_begin, 0) == 0;
            INFO(doc.filename().string() << " line " << i + 1 << " calls a block verbatim but no \""
                                         << marker_begin << "<file>" << marker_end
                                         << "\" line precedes its ``` fence: add one");
            CHECK(marked);
        }
    }
    CHECK(claims >= 10);
}

TEST_CASE("the error messages the docs quote are the library's") {
    const std::vector<std::string> literals = library_literals();
    REQUIRE(literals.size() > 100);
    std::size_t tables = 0, pieces = 0;
    for (const fs::path& doc : markdown_files()) {
        const std::vector<std::string> lines = read_lines(doc);
        bool in_table = false;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const std::string& l = lines[i];
            if (l.rfind("|", 0) != 0) {
                in_table = false;
                continue;
            }
            if (l.find("message after `tapeflow: `") != std::string::npos) {
                in_table = true;
                ++tables;
                continue;
            }
            if (!in_table || l.rfind("|---", 0) == 0) continue;
            // the last cell of the row
            const std::size_t end = l.find_last_of('|');
            const std::size_t begin = l.find_last_of('|', end - 1);
            const std::string cell = l.substr(begin + 1, end - begin - 1);
            for (const std::string& message : code_spans(cell)) {
                // a type named beside the message (`tapeflow::usage_error`: `...`)
                if (message.rfind("tapeflow::", 0) == 0 && message.find(' ') == std::string::npos) continue;
                for (const std::string& piece : literal_pieces(message)) {
                    ++pieces;
                    const bool found = in_messages(piece, literals);
                    INFO(doc.filename().string() << " line " << i + 1 << " quotes \"" << piece
                                                 << "\", which the string literals under include/tapeflow do "
                                                    "not make: the message changed, or the table misquotes it");
                    CHECK(found);
                }
            }
        }
    }
    CHECK(tables >= 3);
    CHECK(pieces >= 40);
}
