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
// literals as the code joins them (message_matcher).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
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
    std::size_t line = 0;  // 1-based line of the marker
    std::string source;    // relative to the source tree
    std::vector<std::string> code;
    bool fenced = false;  // the marker is followed by a closed ``` block
};

const std::string marker_begin = "<!-- verbatim: ";
const std::string marker_end = " -->";

std::vector<verbatim_block> verbatim_blocks(const std::vector<std::string>& lines) {
    std::vector<verbatim_block> blocks;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string& l = lines[i];
        if (l.rfind(marker_begin, 0) != 0) continue;
        verbatim_block b;
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
// "ab"; not across a comment between them), escapes left as written;
// comments, character literals and digit separators (1'000) skipped. A raw
// string R"d(...)d" is taken whole, unjoined.
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
        } else if (c == '\'' && i > 0 && std::isalnum(static_cast<unsigned char>(text[i - 1]))) {
            ++i;  // a digit separator
        } else if (c == '\'') {
            ++i;
            while (i < n && text[i] != '\'') i += text[i] == '\\' ? 2 : 1;
            ++i;
        } else if (c == 'R' && i + 1 < n && text[i + 1] == '"' &&
                   (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_'))) {
            const std::size_t open = text.find('(', i + 2);
            if (open == std::string::npos) break;
            const std::string close = ")" + text.substr(i + 2, open - i - 2) + "\"";
            const std::size_t end = text.find(close, open + 1);
            if (end == std::string::npos) break;
            literals.push_back(text.substr(open + 1, end - open - 1));
            i = end + close.size();
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

// The literal pieces of a quoted message: the text between placeholders. A
// placeholder is a value the code puts between two literals (a word in
// capitals such as N or REASON, or <member>), so a piece next to one, or at
// the message's start or end, meets a literal's boundary there: it is
// anchored. An elision ("...") or a number (which may be a value or part of
// a literal) leaves that end free.
struct message_piece {
    std::string text;
    bool start_anchored = false;
    bool end_anchored = false;
};

std::vector<message_piece> literal_pieces(const std::string& message) {
    std::vector<message_piece> pieces;
    std::string piece;
    bool start_anchored = true;  // the message's start
    auto flush = [&](bool end_anchored) {
        if (piece.size() >= 12)  // shorter ones say little
            pieces.push_back({piece, start_anchored, end_anchored});
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
        std::size_t placeholder = 0;  // its length
        bool anchors = true;
        if (message.compare(i, 3, "...") == 0) {
            placeholder = 3;
            anchors = false;
        } else if (message.compare(i, 8, "<member>") == 0) {
            placeholder = 8;
        } else if (std::isdigit(static_cast<unsigned char>(message[i]))) {
            while (i + placeholder < message.size() && std::isdigit(static_cast<unsigned char>(message[i + placeholder])))
                ++placeholder;
            anchors = false;
        } else if (word_start && is_upper(i)) {
            std::size_t end = i;
            while (is_upper(end) || (end < message.size() && message[end] == '_')) ++end;
            if (!is_word(end)) placeholder = end - i;  // capitals only
        }
        if (placeholder > 0) {
            flush(anchors);
            start_anchored = anchors;
            i += placeholder;
        } else {
            piece += message[i++];
        }
    }
    flush(true);  // the message's end
    return pieces;
}

// Whether a piece of a quoted message is literal text of the library's
// messages, as the code builds them: literals with values between them.
// The piece is matched as parts that alternate between a literal of the
// message (L) and a value the doc shows (V: a member name such as "sweep",
// a codec's name, "checksum mismatch"), which must be a whole string
// literal of the library (the code passes it as one). An L part starts and
// ends at its literal's boundaries, except the piece's first part at a free
// (unanchored) start and its last part at a free end; an L at the message's
// start may follow the literal's "tapeflow: ". A paraphrase fails: "called
// when" is in no literal, a changed word would have to sit exactly between
// two literals, and a dropped value leaves two L parts side by side.
class message_matcher {
public:
    explicit message_matcher(const std::vector<std::string>& literals) : literals_(literals) {}

    bool matches(const message_piece& piece) {
        piece_ = &piece;
        failed_.assign(2 * (piece.text.size() + 1), 0);
        return from(0, part::none);
    }

private:
    enum class part { none, literal, value };

    bool from(std::size_t at, part previous) {
        const std::string& p = piece_->text;
        if (at == p.size()) return true;
        char& failed = failed_[2 * at + (previous == part::value)];
        if (failed) return false;  // each state is tried once: no blow-up
        const std::size_t rest = p.size() - at;
        for (const std::string& l : literals_) {
            // V: a whole literal, not right after another value
            if (previous != part::value && l.size() >= 3 && l.size() <= rest && p.compare(at, l.size(), l) == 0 &&
                from(at + l.size(), part::value))
                return true;
            // L: p[at, at + len) = l[s, s + len), not right after another literal
            if (previous == part::literal) continue;
            const bool free_start = at == 0 && !piece_->start_anchored;
            const auto start_ok = [&](std::size_t s) {
                if (free_start || s == 0) return true;
                static const std::string prefix = "tapeflow: ";
                return at == 0 && s == prefix.size() && l.compare(0, s, prefix) == 0;
            };
            for (std::size_t s = 0; s < l.size(); ++s) {
                if (!start_ok(s)) continue;
                std::size_t len = 0;
                while (len < rest && s + len < l.size() && l[s + len] == p[at + len]) ++len;
                if (len == 0) continue;
                const bool ends_piece = len == rest;
                const bool ends_literal = s + len == l.size();
                // the whole rest, ending inside l only at a free end
                if (ends_piece && (ends_literal || !piece_->end_anchored)) return true;
                // or up to the end of l, with more of the piece after it
                if (!ends_piece && ends_literal && from(at + len, part::literal)) return true;
            }
        }
        failed = 1;
        return false;
    }

    const std::vector<std::string>& literals_;
    const message_piece* piece_ = nullptr;
    std::vector<char> failed_;
};

}  // namespace

TEST_CASE("every block a doc marks as verbatim is the example's code, line for line") {
    std::size_t checked = 0;
    for (const fs::path& doc : markdown_files()) {
        for (const verbatim_block& b : verbatim_blocks(read_lines(doc))) {
            INFO(doc.filename().string() << " line " << b.line << ": " << marker_begin << b.source << marker_end);
            const fs::path source = source_dir / b.source;
            const bool named = !b.source.empty(), exists = named && fs::is_regular_file(source);
            CHECK(named);
            CHECK(b.fenced);  // a ``` block right after the marker, closed
            CHECK(!b.code.empty());
            CHECK(exists);
            if (!(exists && b.fenced && !b.code.empty())) continue;  // reported; check the others
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
    // before a block: the marker must follow within a few lines, and name
    // the file the text names (when the text names one on that line).
    std::size_t claims = 0;
    for (const fs::path& doc : markdown_files()) {
        const std::vector<std::string> lines = read_lines(doc);
        const std::vector<verbatim_block> blocks = verbatim_blocks(lines);
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const std::string l = lower(lines[i]);
            if (l.find("*verbatim") == std::string::npos || l.find("code marked") != std::string::npos) continue;
            ++claims;
            std::string named;  // "examples/x.cpp" if the claim names it
            if (const std::size_t at = lines[i].find("examples/", l.find("*verbatim")); at != std::string::npos) {
                std::size_t e = at;
                while (e < lines[i].size() && (std::isalnum(static_cast<unsigned char>(lines[i][e])) ||
                                               lines[i][e] == '/' || lines[i][e] == '_' || lines[i][e] == '.'))
                    ++e;
                named = lines[i].substr(at, e - at);
            }
            std::string marked;  // the file of the first marker in the 6 lines after the claim
            for (const verbatim_block& b : blocks)
                if (b.line > i + 1 && b.line <= i + 7) {
                    marked = b.source;
                    break;
                }
            INFO(doc.filename().string() << " line " << i + 1 << " calls a block verbatim"
                                         << (named.empty() ? std::string() : " from " + named));
            INFO("no \"" << marker_begin << "<file>" << marker_end
                          << "\" line precedes its ``` fence within 6 lines: add one");
            CHECK(!marked.empty());
            if (!named.empty() && !marked.empty()) {
                INFO("but the marker names " << marked);
                CHECK(marked == named);
            }
        }
    }
    CHECK(claims >= 10);
}

TEST_CASE("the error messages the docs quote are the library's") {
    const std::vector<std::string> literals = library_literals();
    REQUIRE(literals.size() > 100);
    message_matcher matcher(literals);
    std::size_t tables = 0, rows = 0, pieces = 0;
    for (const fs::path& doc : markdown_files()) {
        const std::vector<std::string> lines = read_lines(doc);
        bool in_table = false;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const std::string& l = lines[i];
            if (l.rfind("|", 0) != 0) {
                in_table = false;
                continue;
            }
            // a table whose last column is "message after `tapeflow: `": its
            // header row is followed by the |---| row
            if (l.find("message after `tapeflow: `") != std::string::npos && i + 1 < lines.size() &&
                lines[i + 1].rfind("|---", 0) == 0) {
                in_table = true;
                ++tables;
                ++i;
                continue;
            }
            if (!in_table) continue;
            ++rows;
            INFO(doc.filename().string() << " line " << i + 1);
            // the last cell of the row: between its last two |
            const std::size_t end = l.find_last_of('|');
            REQUIRE(end == l.size() - 1);  // rows end with |
            const std::size_t begin = l.find_last_of('|', end - 1);
            const std::string cell = l.substr(begin + 1, end - begin - 1);
            const std::vector<std::string> spans = code_spans(cell);
            CHECK(!spans.empty());  // the message in backquotes
            for (const std::string& message : spans) {
                // a type named beside the message (`tapeflow::usage_error`: `...`)
                if (message.rfind("tapeflow::", 0) == 0 && message.find(' ') == std::string::npos) continue;
                for (const message_piece& piece : literal_pieces(message)) {
                    ++pieces;
                    INFO("it quotes \"" << piece.text
                                         << "\", which the string literals under include/tapeflow do not "
                                            "make: the message changed, or the table misquotes it");
                    CHECK(matcher.matches(piece));
                }
            }
        }
    }
    CHECK(tables == 3);  // tape.md, custom_adjoints.md, streaming.md
    CHECK(rows >= 25);
    CHECK(pieces >= 40);
}
