// The contract of tile_codec (tapeflow/stream/codec.hpp) as the tape keeps
// it: compress() and decompress() one call at a time, bound() asked once
// when the tape is built and never again while tiles move. A codec that
// notes every call that overlaps another checks it (no libzstd needed).
#include <catch2/catch.hpp>
#include <tapeflow/stream/codec.hpp>
#include <tapeflow/tapeflow.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "stream_support.hpp"
#include "support/options.hpp"

using namespace tapeflow_test;

namespace {

constexpr std::size_t cells = 300, steps = 60, tile = 4096;

std::vector<double> reference_gradient() {
    tapeflow::tape t;
    heat_recording r(t, cells, steps);
    return r.gradient();
}

/// What the codecs of one test saw.
struct codec_log {
    std::atomic<int> overlaps{0};          ///< calls that began while another call ran on the same codec
    std::atomic<std::size_t> bounds{0};    ///< calls of bound()
    std::atomic<std::size_t> compressed{0};
    std::atomic<std::size_t> expanded{0};
};

/// Stores tiles as they are (a header byte, then the tile), slowly, and logs
/// calls of one instance that overlap.
class checking_codec : public tapeflow::tile_codec {
public:
    explicit checking_codec(std::shared_ptr<codec_log> log) : log_(std::move(log)) {}

    const char* name() const noexcept override { return "checking"; }
    std::size_t bound(std::size_t bytes) const override {
        const call c(*this);
        ++log_->bounds;
        return bytes + 1;
    }
    std::size_t compress(const std::byte* in, std::size_t bytes, std::byte* out) override {
        const call c(*this);
        std::this_thread::sleep_for(std::chrono::microseconds(200));  // a window for other calls
        out[0] = std::byte{0x5a};
        std::memcpy(out + 1, in, bytes);
        ++log_->compressed;
        return bytes + 1;
    }
    void decompress(const std::byte* in, std::size_t stored, std::byte* out, std::size_t bytes) override {
        const call c(*this);
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        if (stored != bytes + 1 || in[0] != std::byte{0x5a}) throw tapeflow::error("checking codec: bad tile");
        std::memcpy(out, in + 1, bytes);
        ++log_->expanded;
    }

private:
    // Marks a call of this instance; notes an overlap with a call in flight.
    struct call {
        explicit call(const checking_codec& c) : codec(c) {
            if (codec.inside_.fetch_add(1) != 0) ++codec.log_->overlaps;
        }
        ~call() { --codec.inside_; }
        const checking_codec& codec;
    };
    std::shared_ptr<codec_log> log_;
    mutable std::atomic<int> inside_{0};
};

tapeflow::tape_options spilling_options(const std::string& dir, std::shared_ptr<codec_log> log, bool prefetch) {
    auto options = tape_options(tile, false, 0, prefetch);
    options.spill_directory = dir;
    options.codec = std::make_shared<checking_codec>(std::move(log));
    options.memory_budget_bytes = 2 * tile + options.codec->bound(tile);  // spill everything
    return options;
}

}  // namespace

TEST_CASE("the codec is called one call at a time, and bound() only while the tape is built") {
    const auto reference = reference_gradient();
    const bool prefetch = GENERATE(true, false);
    CAPTURE(prefetch);
    temp_directory dir;
    auto log = std::make_shared<codec_log>();
    const auto options = spilling_options(dir.path(), log, prefetch);
    tapeflow::tape t(options);
    const std::size_t bounds_when_built = log->bounds;
    heat_recording run(t, cells, steps);
    CHECK(mismatches(run.gradient(), reference) == 0);
    CHECK(t.statistics().tiles_spilled > 100);
    CHECK(log->compressed == t.statistics().tiles_spilled);
    CHECK(log->expanded == t.statistics().tiles_read_back);
    // bound() ran on the recording thread for every tile while the prefetch
    // thread compressed the one before (issue 17, point 3)
    CHECK(log->bounds == bounds_when_built);
    CHECK(log->overlaps == 0);
}
