// tests/fuzz/replay.cpp - runs fuzzer inputs through the fuzz target without
// libFuzzer, with any compiler: the seed corpus in the ordinary test build
// (CTest fuzz:corpus_replay), or a crash input to reproduce it.
//
//   fuzz_corpus_replay                  every file of tests/fuzz/corpus
//   fuzz_corpus_replay <file|dir>...    those files, and the files of those
//                                       directories; a file named here is
//                                       printed first: its label and program
//
// A failing input aborts in LLVMFuzzerTestOneInput (after its report), so
// the driver fails; so does an argument that is neither a file nor a
// directory, or a run without any input.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/program_fuzzer.hpp"
#include "random/print.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<std::uint8_t> read_bytes(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void replay(const fs::path& file, bool print) {
    const std::vector<std::uint8_t> bytes = read_bytes(file);
    if (print) {
        const tapeflow_random::program p = tapeflow_fuzz::decode(bytes.data(), bytes.size());
        std::printf("%s: %zu bytes (%zu used), label %llu%s\n%s\n", file.string().c_str(), bytes.size(),
                    tapeflow_fuzz::used_bytes(bytes.size()), (unsigned long long)p.seed,
                    p.seed % tapeflow_fuzz::slow_stride == 0 ? " (slow configurations too)" : "",
                    tapeflow_random::to_string(p).c_str());
    }
    // The name first: if the input fails, the abort follows it (and abort()
    // does not flush stdout).
    std::fprintf(stderr, "replay %s\n", file.string().c_str());
    std::fflush(stdout);
    std::fflush(stderr);
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> arguments(argv + 1, argv + argc);
    if (arguments.empty()) arguments.push_back(TAPEFLOW_FUZZ_CORPUS);
    std::size_t inputs = 0;
    for (const std::string& a : arguments) {
        const fs::path path(a);
        if (fs::is_directory(path)) {
            std::vector<fs::path> files;
            for (const fs::directory_entry& e : fs::directory_iterator(path))
                if (e.is_regular_file()) files.push_back(e.path());
            std::sort(files.begin(), files.end());  // the same order every run
            for (const fs::path& f : files) replay(f, false);
            inputs += files.size();
        } else if (fs::is_regular_file(path)) {
            replay(path, true);
            ++inputs;
        } else {
            std::fprintf(stderr, "fuzz_corpus_replay: %s is neither a file nor a directory\n", a.c_str());
            return 1;
        }
    }
    if (inputs == 0) {
        std::fprintf(stderr, "fuzz_corpus_replay: no input to replay\n");
        return 1;
    }
    std::printf("fuzz_corpus_replay: %zu inputs, no failure: %s\n", inputs, tapeflow_fuzz::summary().c_str());
    return 0;
}
