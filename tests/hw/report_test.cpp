// tests/hw/report_test.cpp - tapeflow/hw/report.hpp: the CSV and the JSON
// hold the model's exact numbers, the tables name every region.
#include <catch2/catch.hpp>
#include <tapeflow/hw/hardware_model.hpp>
#include <tapeflow/hw/report.hpp>
#include <tapeflow/tapeflow.hpp>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

using tapeflow::memory_level;
using tapeflow::Real;

namespace {

const char* const odd_label = "inner, \"quoted\"\\path";  // a comma, quotes, a backslash

// A small program with nested and repeated regions, on a tape with the
// tapeflow layout that keeps 2 tiles in memory and spills the rest (so
// every level moves bytes), swept twice.
std::shared_ptr<tapeflow::hardware_model> recorded_model(const tapeflow::hardware_config& config = {}) {
    auto model = std::make_shared<tapeflow::hardware_model>(config);
    tapeflow::tape_options options;
    options.tile_bytes = 1024;
    options.scratchpad = true;
    options.memory_budget_bytes = 4 * 1024;
    options.prefetch = false;
    options.observer = model;
    tapeflow::tape tape(options);

    tape.start_recording();
    std::vector<Real> x(64);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = 0.01 * double(i + 1);
        tape.register_input(x[i]);
    }
    Real f = x[0] * x[1];  // outside every region
    {
        tapeflow::Region setup(tape, "setup");
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = sin(x[i]) * x[(i + 1) % x.size()];
        tapeflow::Region inner(tape, odd_label);
        for (Real& xi : x) xi = xi * xi + 1.0;
    }
    for (int step = 0; step < 6; ++step) {
        tapeflow::Region region(tape, "step");
        for (std::size_t i = 1; i + 1 < x.size(); ++i) x[i] = x[i] + 0.1 * (x[i - 1] - 2.0 * x[i] + x[i + 1]);
    }
    for (const Real& xi : x) f += xi * xi;
    tape.register_output(f);
    tape.stop_recording();
    for (int sweep = 0; sweep < 2; ++sweep) {
        tape.clear_adjoints();
        tape.set_adjoint(f, 1.0);
        tape.sweep();
    }
    return model;
}

// ---- CSV --------------------------------------------------------------------

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
        lines.push_back(text.substr(start, end - start));
    REQUIRE(start == text.size());  // ends with a newline
    return lines;
}

// Fields of one CSV line; a quoted field may hold commas and "" for ".
std::vector<std::string> fields_of(const std::string& line) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                fields.back() += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                fields.back() += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            fields.emplace_back();
        } else {
            fields.back() += c;
        }
    }
    REQUIRE_FALSE(quoted);
    return fields;
}

std::uint64_t integer(const std::string& text) {
    char* end = nullptr;
    const std::uint64_t v = std::strtoull(text.c_str(), &end, 10);
    INFO("'" << text << "'");
    REQUIRE((!text.empty() && *end == '\0'));
    return v;
}

double real(const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    INFO("'" << text << "'");
    REQUIRE((!text.empty() && *end == '\0'));
    return v;
}

// Checks the 6 byte counts and the energy of one layout, from field `at` on.
void check_csv_traffic(const std::vector<std::string>& f, std::size_t at, const tapeflow::traffic& t,
                       const tapeflow::hardware_model& m) {
    for (std::size_t l = 0; l < tapeflow::memory_level_count; ++l) {
        CHECK(integer(f[at + 2 * l]) == t.read[l]);
        CHECK(integer(f[at + 2 * l + 1]) == t.written[l]);
    }
    CHECK(real(f[at + 6]) == m.energy_pj(t));  // shortest round-trip form: exact
}

// ---- JSON -------------------------------------------------------------------

// Parses JSON into path -> value: "totals.tapeflow.dram_read" -> "1234",
// "regions[2].label" -> the string unescaped. Throws std::runtime_error
// where the text is not JSON (unquoted key, unbalanced brackets, ...).
class json_paths {
public:
    static std::map<std::string, std::string> parse(std::string_view text) {
        json_paths p(text);
        p.value("");
        p.space();
        if (p.i_ != text.size()) p.fail("text after the value");
        return std::move(p.out_);
    }

private:
    explicit json_paths(std::string_view text) : s_(text) {}

    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error(what + " at offset " + std::to_string(i_));
    }
    void space() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
    }
    bool next_is(char c) {
        space();
        return i_ < s_.size() && s_[i_] == c;
    }
    void expect(char c) {
        if (!next_is(c)) fail(std::string("expected '") + c + "'");
        ++i_;
    }
    void put(const std::string& path, std::string v) {
        if (!out_.emplace(path, std::move(v)).second) fail("duplicate key " + path);
    }

    void value(const std::string& path) {
        space();
        if (i_ >= s_.size()) fail("unexpected end");
        if (s_[i_] == '{') {
            ++i_;
            if (next_is('}')) return void(++i_);
            for (;;) {
                if (!next_is('"')) fail("key not quoted");
                const std::string key = string();
                expect(':');
                value(path.empty() ? key : path + "." + key);
                if (!next_is(',')) break;
                ++i_;
            }
            expect('}');
        } else if (s_[i_] == '[') {
            ++i_;
            if (next_is(']')) return void(++i_);
            for (std::size_t n = 0;; ++n) {
                value(path + "[" + std::to_string(n) + "]");
                if (!next_is(',')) break;
                ++i_;
            }
            expect(']');
        } else if (s_[i_] == '"') {
            put(path, string());
        } else {
            const std::size_t start = i_;
            while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' ||
                                      s_[i_] == '+' || s_[i_] == '.'))
                ++i_;
            const std::string token(s_.substr(start, i_ - start));
            char* end = nullptr;
            const bool number = !token.empty() && (std::isdigit(static_cast<unsigned char>(token[0])) ||
                                                   token[0] == '-');
            if (number) std::strtod(token.c_str(), &end);
            if (!(token == "true" || token == "false" || token == "null" || (number && *end == '\0')))
                fail("not a value: '" + token + "'");
            put(path, token);
        }
    }
    std::string string() {
        expect('"');
        std::string r;
        for (;;) {
            if (i_ >= s_.size()) fail("unterminated string");
            const char c = s_[i_++];
            if (c == '"') return r;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') {
                r += c;
                continue;
            }
            if (i_ >= s_.size()) fail("unterminated escape");
            const char e = s_[i_++];
            if (e == '"' || e == '\\' || e == '/') r += e;
            else if (e == 'n') r += '\n';
            else if (e == 't') r += '\t';
            else if (e == 'u' && i_ + 4 <= s_.size()) {
                const unsigned long code = std::strtoul(std::string(s_.substr(i_, 4)).c_str(), nullptr, 16);
                if (code >= 0x80) fail("\\u escape beyond ASCII (not needed here)");
                r += char(code);
                i_ += 4;
            } else {
                fail("bad escape");
            }
        }
    }

    std::string_view s_;
    std::size_t i_ = 0;
    std::map<std::string, std::string> out_;
};

void check_json_traffic(const std::map<std::string, std::string>& json, const std::string& at,
                        const tapeflow::traffic& t, const tapeflow::hardware_model& m) {
    const char* levels[] = {"sram", "dram", "file"};
    for (std::size_t l = 0; l < tapeflow::memory_level_count; ++l) {
        INFO(at << " " << levels[l]);
        CHECK(integer(json.at(at + "." + levels[l] + "_read")) == t.read[l]);
        CHECK(integer(json.at(at + "." + levels[l] + "_written")) == t.written[l]);
    }
    CHECK(integer(json.at(at + ".records")) == t.records);
    CHECK(real(json.at(at + ".energy_pj")) == m.energy_pj(t));
}

void check_json_summary(const std::map<std::string, std::string>& json, const std::string& at,
                        const tapeflow::layout_summary& s, const tapeflow::hardware_model& m) {
    check_json_traffic(json, at, s.total, m);
    CHECK(real(json.at(at + ".energy_pj")) == s.energy_pj);
    CHECK(integer(json.at(at + ".tape_bytes_written")) == s.tape_bytes_written);
    CHECK(integer(json.at(at + ".tape_bytes_swept")) == s.tape_bytes_swept);
    CHECK(integer(json.at(at + ".adjoint_accesses")) == s.adjoint_accesses);
    CHECK(integer(json.at(at + ".adjoint_misses")) == s.adjoint_misses);
    for (std::size_t i = 0; i < s.structures.size(); ++i) {
        const std::string one = at + ".structures[" + std::to_string(i) + "]";
        CHECK(json.at(one + ".name") == s.structures[i].structure.name);
        CHECK(integer(json.at(one + ".bytes")) == s.structures[i].bytes);
        CHECK(real(json.at(one + ".energy_pj")) == s.structures[i].energy_pj);
        CHECK(integer(json.at(one + ".misses")) == s.structures[i].misses);
    }
    CHECK(json.count(at + ".structures[" + std::to_string(s.structures.size()) + "].name") == 0);
    CHECK(real(json.at(at + ".on_chip_energy_pj")) == s.on_chip_energy_pj);
    CHECK(integer(json.at(at + ".write_backs")) == s.write_backs);
    CHECK(integer(json.at(at + ".sram_needed_bytes")) == s.sram_needed_bytes);
    CHECK(integer(json.at(at + ".peak_on_chip_bytes")) == s.peak_on_chip_bytes);
}

// What a print function writes, through a temporary file.
template <class Print>
std::string printed(Print print) {
    std::FILE* file = std::tmpfile();
    REQUIRE(file != nullptr);
    print(file);
    std::string text;
    std::rewind(file);
    for (int c; (c = std::fgetc(file)) != EOF;) text += char(c);
    std::fclose(file);
    return text;
}

}  // namespace

TEST_CASE("the program moves bytes at every level, in regions and outside") {
    const auto model = recorded_model();
    const auto flow = model->tapeflow();
    CHECK(flow.total.bytes(memory_level::sram) > 0);
    CHECK(flow.total.bytes(memory_level::dram) > 0);
    CHECK(flow.total.bytes(memory_level::file) > 0);
    REQUIRE(model->regions().size() == 1 + 2 + 6);
    CHECK(model->regions()[2].label == odd_label);
    CHECK(model->regions()[2].depth == 2);
    CHECK(model->layers().size() > 4);
    CHECK(model->layers().back().sweep == 1);
}

TEST_CASE("the CSV holds the model's exact numbers, one row per region, the rest and the total") {
    const auto model = recorded_model();
    const std::vector<std::string> lines = lines_of(tapeflow::to_csv(*model));
    const auto& regions = model->regions();
    REQUIRE(lines.size() == 1 + regions.size() + 2);

    const std::vector<std::string> header = fields_of(lines[0]);
    REQUIRE(header.size() == 5 + 3 * 7);
    CHECK(header[0] == "kind");
    CHECK(header[2] == "label");
    CHECK(header[5] == "tapeflow_sram_read");
    CHECK(header[10] == "tapeflow_file_written");
    CHECK(header[11] == "tapeflow_energy_pj");
    CHECK(header[12] == "conventional_sram_read");
    CHECK(header[18] == "conventional_energy_pj");
    CHECK(header[19] == "per_variable_sram_read");
    CHECK(header[25] == "per_variable_energy_pj");

    tapeflow::traffic sum_flow, sum_conv, sum_var;
    for (std::size_t i = 0; i < regions.size(); ++i) {
        INFO("region " << i);
        const std::vector<std::string> f = fields_of(lines[1 + i]);
        REQUIRE(f.size() == header.size());
        CHECK(f[0] == "region");
        CHECK(integer(f[1]) == i);
        CHECK(f[2] == regions[i].label);
        CHECK(integer(f[3]) == regions[i].depth);
        CHECK(integer(f[4]) == regions[i].tapeflow.records);
        check_csv_traffic(f, 5, regions[i].tapeflow, *model);
        check_csv_traffic(f, 12, regions[i].conventional, *model);
        check_csv_traffic(f, 19, regions[i].per_variable, *model);
        sum_flow += regions[i].tapeflow;
        sum_conv += regions[i].conventional;
        sum_var += regions[i].per_variable;
    }

    // "other" = total - the regions; "total" = the layout totals
    const std::vector<std::string> other = fields_of(lines[1 + regions.size()]);
    const std::vector<std::string> total = fields_of(lines[2 + regions.size()]);
    CHECK(other[0] == "other");
    CHECK(other[1].empty());
    CHECK(total[0] == "total");
    CHECK(total[1].empty());
    const tapeflow::layout_summary flow = model->tapeflow(), conv = model->conventional(),
                                   var = model->per_variable();
    check_csv_traffic(total, 5, flow.total, *model);
    check_csv_traffic(total, 12, conv.total, *model);
    check_csv_traffic(total, 19, var.total, *model);
    CHECK(real(total[11]) == flow.energy_pj);
    CHECK(real(total[18]) == conv.energy_pj);
    CHECK(real(total[25]) == var.energy_pj);
    CHECK(integer(total[4]) == flow.total.records);
    CHECK(integer(other[4]) == 0);  // every record swept is in a region (or region 0)
    for (std::size_t col = 5; col < 11; ++col) {
        INFO("column " << header[col]);
        const std::size_t l = (col - 5) / 2;
        const std::uint64_t in_regions = (col - 5) % 2 == 0 ? sum_flow.read[l] : sum_flow.written[l];
        const std::uint64_t conv_in_regions = (col - 5) % 2 == 0 ? sum_conv.read[l] : sum_conv.written[l];
        const std::uint64_t var_in_regions = (col - 5) % 2 == 0 ? sum_var.read[l] : sum_var.written[l];
        CHECK(in_regions + integer(other[col]) == integer(total[col]));
        CHECK(conv_in_regions + integer(other[col + 7]) == integer(total[col + 7]));
        CHECK(var_in_regions + integer(other[col + 14]) == integer(total[col + 14]));
    }
    CHECK(integer(other[10]) > 0);  // the spilled tiles were written to the file
}

TEST_CASE("the JSON is well formed and holds the config, totals, regions and layers") {
    tapeflow::hardware_config config;  // an inner cache whose name needs escaping
    config.inner_caches = {{"L1 \"small\"", 512, 0}};
    config.dram_pj_per_byte = 200;
    const auto model = recorded_model(config);
    const tapeflow::hardware_config& c = model->config();
    const std::string text = tapeflow::to_json(*model);

    // balanced braces and brackets outside strings
    int braces = 0, brackets = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (in_string) {
            if (ch == '\\') ++i;
            else if (ch == '"') in_string = false;
            continue;
        }
        in_string = ch == '"';
        braces += ch == '{' ? 1 : ch == '}' ? -1 : 0;
        brackets += ch == '[' ? 1 : ch == ']' ? -1 : 0;
        REQUIRE(braces >= 0);
        REQUIRE(brackets >= 0);
    }
    CHECK(braces == 0);
    CHECK(brackets == 0);

    std::map<std::string, std::string> json;
    REQUIRE_NOTHROW(json = json_paths::parse(text));  // quoted keys, no duplicates, valid values

    CHECK(integer(json.at("config.sram_bytes")) == c.sram_bytes);
    CHECK(integer(json.at("config.line_bytes")) == c.line_bytes);
    CHECK(real(json.at("config.sram_pj_per_byte")) == c.sram_pj_per_byte);
    CHECK(real(json.at("config.scratchpad_pj_per_byte")) == c.scratchpad_pj_per_byte);
    CHECK(json.at("config.sram_name") == "SRAM");
    CHECK(json.at("config.inner_caches[0].name") == "L1 \"small\"");
    CHECK(integer(json.at("config.inner_caches[0].bytes")) == 512);
    CHECK(json.count("config.inner_caches[1].name") == 0);
    CHECK(real(json.at("config.dram_pj_per_byte")) == c.dram_pj_per_byte);
    CHECK(real(json.at("config.file_pj_per_byte")) == c.file_pj_per_byte);
    CHECK(real(json.at("config.needed_hit_fraction")) == c.needed_hit_fraction);

    // the structures the model charges: the scratchpad, L1, the SRAM
    const std::vector<tapeflow::on_chip_structure> structures = model->structures();
    REQUIRE(structures.size() == 3);
    for (std::size_t i = 0; i < structures.size(); ++i) {
        const std::string at = "structures[" + std::to_string(i) + "]";
        CHECK(json.at(at + ".name") == structures[i].name);
        CHECK(integer(json.at(at + ".capacity")) == structures[i].capacity);
        CHECK(real(json.at(at + ".pj_per_byte")) == structures[i].pj_per_byte);
    }
    CHECK(json.count("structures[3].name") == 0);
    check_json_summary(json, "totals.tapeflow", model->tapeflow(), *model);
    check_json_summary(json, "totals.conventional", model->conventional(), *model);
    check_json_summary(json, "totals.per_variable", model->per_variable(), *model);

    const auto& regions = model->regions();
    for (std::size_t i = 0; i < regions.size(); ++i) {
        const std::string at = "regions[" + std::to_string(i) + "]";
        CHECK(integer(json.at(at + ".index")) == i);
        CHECK(json.at(at + ".label") == regions[i].label);
        CHECK(integer(json.at(at + ".depth")) == regions[i].depth);
        check_json_traffic(json, at + ".tapeflow", regions[i].tapeflow, *model);
        check_json_traffic(json, at + ".conventional", regions[i].conventional, *model);
        check_json_traffic(json, at + ".per_variable", regions[i].per_variable, *model);
    }
    CHECK(json.count("regions[" + std::to_string(regions.size()) + "].index") == 0);

    const auto& layers = model->layers();
    const char* levels[] = {"sram", "dram", "file"};
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const std::string at = "layers[" + std::to_string(i) + "]";
        CHECK(integer(json.at(at + ".sweep")) == layers[i].sweep);
        CHECK(integer(json.at(at + ".tile")) == layers[i].tile);
        CHECK(json.at(at + ".level") == levels[std::size_t(layers[i].level)]);
        check_json_traffic(json, at + ".tapeflow", layers[i].tapeflow, *model);
    }
    CHECK(json.count("layers[" + std::to_string(layers.size()) + "].tile") == 0);
}

TEST_CASE("the JSON checker of this file rejects what is not JSON") {
    CHECK_NOTHROW(json_paths::parse(R"({"a": [1, -2.5e+3, {"b": "x\"y"}], "c": {}, "d": [], "e": null})"));
    CHECK_THROWS(json_paths::parse(R"({a: 1})"));              // key not quoted
    CHECK_THROWS(json_paths::parse(R"({"a": [1, 2})"));        // unbalanced
    CHECK_THROWS(json_paths::parse(R"({"a": 1}})"));           // unbalanced
    CHECK_THROWS(json_paths::parse(R"({"a": 1,})"));           // trailing comma
    CHECK_THROWS(json_paths::parse(R"({"a": 1, "a": 2})"));    // duplicate key
    CHECK_THROWS(json_paths::parse(R"({"a": inf})"));          // not a number
    CHECK_THROWS(json_paths::parse("{\"a\": \"line\nbreak\"}"));  // raw control character
}

TEST_CASE("the tables name every region, the totals and the configuration") {
    const auto model = recorded_model();
    const std::string report = printed([&](std::FILE* f) { tapeflow::print_report(*model, f); });
    for (const auto& r : model->regions()) {
        INFO(r.label);
        CHECK(report.find(std::string(2 * r.depth, ' ') + r.label + ' ') != std::string::npos);
    }
    for (const char* what : {"(not per region)", "total", "SRAM needed", "peak on-chip bytes",
                             "DRAM bytes", "file bytes", "energy", "adjoint misses", "conv / tapeflow", "p.var / tapeflow", "per variable",
                             "1.0 MiB", "on-chip structures", "scratchpad", "12.5 pJ/B", "of it on chip"})
        CHECK(report.find(what) != std::string::npos);
    // header, two column lines, one line per region, the rest and the total; a blank line;
    // the totals: a header, 13 rows; a blank line, the structures: two header lines, the
    // scratchpad and the SRAM; the hardware line
    CHECK(lines_of(report).size() == 3 + model->regions().size() + 2 + 1 + 1 + 13 + 1 + 2 + 2 + 1);

    const std::string layers = printed([&](std::FILE* f) { tapeflow::print_layers(*model, f); });
    CHECK(lines_of(layers).size() == 2 + model->layers().size());
}

TEST_CASE("a model that saw nothing reports zeros") {
    const tapeflow::hardware_model model;
    const std::vector<std::string> lines = lines_of(tapeflow::to_csv(model));
    REQUIRE(lines.size() == 1 + 1 + 2);
    CHECK(fields_of(lines[1])[2] == "(outside regions)");
    CHECK(fields_of(lines[3])[11] == "0");
    std::map<std::string, std::string> json;
    REQUIRE_NOTHROW(json = json_paths::parse(tapeflow::to_json(model)));
    CHECK(json.at("totals.conventional.energy_pj") == "0");
    CHECK(json.at("totals.per_variable.energy_pj") == "0");
    CHECK(json.count("layers[0].tile") == 0);
    const std::string report = printed([&](std::FILE* f) { tapeflow::print_report(model, f); });
    CHECK(report.find("inf") == std::string::npos);
    CHECK(report.find("nan") == std::string::npos);
}

TEST_CASE("human units in the tables") {
    CHECK(tapeflow::format_bytes(0) == "0 B");
    CHECK(tapeflow::format_bytes(1023) == "1023 B");
    CHECK(tapeflow::format_bytes(1536) == "1.5 KiB");
    CHECK(tapeflow::format_bytes(std::uint64_t(3) << 20) == "3.0 MiB");
    CHECK(tapeflow::format_bytes(std::uint64_t(5) << 30) == "5.00 GiB");
    CHECK(tapeflow::format_energy(850) == "850 pJ");
    CHECK(tapeflow::format_energy(12340) == "12.3 nJ");
    CHECK(tapeflow::format_energy(4.56e6) == "4.6 uJ");
    CHECK(tapeflow::format_energy(1.2e9) == "1.2 mJ");
    CHECK(tapeflow::format_energy(2e12) == "2.00 J");
}
