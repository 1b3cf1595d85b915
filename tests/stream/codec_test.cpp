// The contract of tile_codec (tapeflow/stream/codec.hpp) as the tape keeps
// it: every tape compresses with its own clone() of the options' codec, so
// one tape_options may serve tapes on several threads; compress() and
// decompress() come one call at a time from one thread; bound() is asked
// once when the tape is built and never again while tiles move. A codec
// that notes every call that overlaps another, and calls from a second
// thread, checks it (no libzstd needed).
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
    std::atomic<int> foreign{0};           ///< compress/decompress calls from a third thread
    std::atomic<std::size_t> bounds{0};    ///< calls of bound()
    std::atomic<std::size_t> clones{0};    ///< calls of clone()
    std::atomic<std::size_t> compressed{0};
    std::atomic<std::size_t> expanded{0};
};

/// Stores tiles as they are (a header byte, then the tile), slowly, and logs
/// calls of one instance that overlap.
class checking_codec : public tapeflow::tile_codec {
public:
    explicit checking_codec(std::shared_ptr<codec_log> log) : log_(std::move(log)) {}

    std::unique_ptr<tapeflow::tile_codec> clone() const override {
        ++log_->clones;
        return std::make_unique<checking_codec>(log_);
    }
    const char* name() const noexcept override { return "checking"; }
    std::size_t bound(std::size_t bytes) const override {
        const call c(*this);
        ++log_->bounds;
        return bytes + 1;
    }
    std::size_t compress(const std::byte* in, std::size_t bytes, std::byte* out) override {
        const call c(*this);
        check_thread();
        std::this_thread::sleep_for(std::chrono::microseconds(200));  // a window for other calls
        out[0] = std::byte{0x5a};
        std::memcpy(out + 1, in, bytes);
        ++log_->compressed;
        return bytes + 1;
    }
    void decompress(const std::byte* in, std::size_t stored, std::byte* out, std::size_t bytes) override {
        const call c(*this);
        check_thread();
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
    // compress/decompress of one codec: on at most two threads, its tape's
    // prefetch thread and the thread that uses the tape (which runs moves
    // the prefetch thread has not started; without prefetch, only that
    // one). A codec shared by two tapes shows a third thread.
    void check_thread() {
        const std::thread::id me = std::this_thread::get_id();
        for (auto* seen : {&first_, &second_}) {
            std::thread::id none;
            if (seen->compare_exchange_strong(none, me) || none == me) return;
        }
        ++log_->foreign;
    }
    std::shared_ptr<codec_log> log_;
    mutable std::atomic<int> inside_{0};
    std::atomic<std::thread::id> first_{}, second_{};
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

TEST_CASE("one tape_options with a codec, shared by tapes on several threads: each tape has its own codec") {
    // Issue 17, point 9: one zstd codec shared by the tapes crashed with 4
    // threads and failed with "Src size is incorrect" with 2.
    const auto reference = reference_gradient();
    const int threads = GENERATE(2, 4);
    CAPTURE(threads);
    watchdog dog(120, "tapes on several threads sharing one codec");
    temp_directory dir;
    auto log = std::make_shared<codec_log>();
    const auto options = spilling_options(dir.path(), log, true);  // one object for all tapes
    std::vector<std::size_t> wrong(std::size_t(threads), 0);
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i)
        pool.emplace_back([&, i] {
            try {
                tapeflow::tape t(options);
                for (int round = 0; round < 2; ++round) {
                    t.reset();
                    heat_recording run(t, cells, steps);
                    wrong[std::size_t(i)] += mismatches(run.gradient(), reference);
                }
            } catch (const std::exception&) {
                wrong[std::size_t(i)] = std::size_t(-1);
            }
        });
    for (auto& th : pool) th.join();
    for (int i = 0; i < threads; ++i) {
        CAPTURE(i);
        CHECK(wrong[std::size_t(i)] == 0);
    }
    CHECK(log->clones == std::size_t(threads));  // one codec per tape
    CHECK(log->overlaps == 0);
    CHECK(log->foreign == 0);
}

TEST_CASE("two tapes on one thread with one tape_options: each compresses with its own codec") {
    const auto reference = reference_gradient();
    temp_directory dir;
    auto log = std::make_shared<codec_log>();
    const auto options = spilling_options(dir.path(), log, true);
    tapeflow::tape a(options), b(options);
    heat_recording run_a(a, cells, steps);
    heat_recording run_b(b, cells, steps);
    CHECK(mismatches(run_a.gradient(), reference) == 0);
    CHECK(mismatches(run_b.gradient(), reference) == 0);
    CHECK(mismatches(run_a.gradient(), reference) == 0);
    CHECK(log->clones == 2);
    // one instance would be called from both tapes' prefetch threads
    CHECK(log->foreign == 0);
    CHECK(log->overlaps == 0);
}

TEST_CASE("a codec whose clone() returns nothing is refused with a message that says so") {
    class no_clone : public checking_codec {
    public:
        using checking_codec::checking_codec;
        std::unique_ptr<tapeflow::tile_codec> clone() const override { return nullptr; }
    };
    auto options = tape_options(tile, false, 4 * tile, true);
    options.codec = std::make_shared<no_clone>(std::make_shared<codec_log>());
    CHECK_THROWS_WITH(tapeflow::tape(options), Catch::Contains("clone()") && Catch::Contains("returned nothing"));
}

TEST_CASE("a tape without scratchpad or budget never spills, and takes no clone of the codec") {
    auto log = std::make_shared<codec_log>();
    auto options = tape_options(tile);  // every tile in memory (direct_store.hpp)
    options.codec = std::make_shared<checking_codec>(log);
    tapeflow::tape t(options);
    const auto reference = reference_gradient();
    heat_recording run(t, cells, steps);
    CHECK(mismatches(run.gradient(), reference) == 0);
    CHECK(t.statistics().tiles_spilled == 0);
    CHECK(log->clones == 0);
    CHECK(log->bounds == 0);
    CHECK(log->compressed == 0);
}
