// The hook compiled out: with TAPEFLOW_HARDWARE_MODEL=0 (set for this
// translation unit by tests/hw/CMakeLists.txt) a tape never calls its
// observer, and gradients are the same bit for bit.
#include <catch2/catch.hpp>
#include <tapeflow/hw/hardware_model.hpp>
#include <tapeflow/hw/lru_stack.hpp>
#include <tapeflow/tapeflow.hpp>

#include "stream/stream_support.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

namespace {

/// Counts every call.
class counting_observer : public tapeflow::tape_observer {
public:
    std::uint64_t calls = 0;
    void recorded(std::uint64_t, tapeflow::memory_level) override { ++calls; }
    void tile_finished(std::size_t, std::size_t) override { ++calls; }
    void tile_moved(std::size_t, std::size_t, tapeflow::memory_level, tapeflow::memory_level) override { ++calls; }
    void sweep_begins(const tapeflow::sweep_context&) override { ++calls; }
    void layer(std::size_t, const std::byte*, std::size_t, std::size_t, tapeflow::memory_level) override { ++calls; }
    void sweep_ends() override { ++calls; }
    void tile_reopened(std::size_t) override { ++calls; }
    void cleared() override { ++calls; }
};

/// acc = x * y, then acc = acc * x: n records of 28 bytes (several 1024-byte
/// tiles), swept; then reset to the middle, 10 more records, swept again;
/// then reset. Returns the adjoints of x and y after each sweep.
std::vector<double> chain(const tapeflow::tape_options& o, int n) {
    using tapeflow::Real;
    tapeflow::tape t(o);
    t.start_recording();
    Real x = 1.001, y = 0.5;
    t.register_input(x);
    t.register_input(y);
    Real acc = x * y;
    tapeflow::position middle;
    for (int i = 2; i <= n; ++i) {
        acc = acc * x;
        if (i == n / 2) middle = t.get_position();
    }
    t.register_output(acc);
    t.stop_recording();
    std::vector<double> g;
    t.set_adjoint(acc, 1.0);
    t.sweep();
    g.push_back(t.adjoint(x));
    g.push_back(t.adjoint(y));
    t.reset(middle);
    t.start_recording();
    for (int i = 0; i < 10; ++i) acc = acc * x;
    t.stop_recording();
    t.clear_adjoints();
    t.set_adjoint(acc, 1.0);
    t.sweep();
    g.push_back(t.adjoint(x));
    g.push_back(t.adjoint(y));
    t.reset();
    return g;
}

}  // namespace

TEST_CASE("TAPEFLOW_HARDWARE_MODEL=0: an attached observer is never called") {
    STATIC_REQUIRE_FALSE(tapeflow::hardware_model_hook);
    tapeflow_test::temp_directory dir;
    struct configuration {
        const char* name;
        std::size_t tile;
        bool scratchpad;
        std::size_t budget;
    };
    const configuration configurations[] = {
        {"direct", 1024, false, std::numeric_limits<std::size_t>::max()},
        {"scratchpad", 1024, true, std::numeric_limits<std::size_t>::max()},
        {"budget that spills", 1024, true, 4 * 1024}};
    for (const auto& c : configurations) {
        INFO(c.name);
        tapeflow::tape_options plain;
        plain.tile_bytes = c.tile;
        plain.scratchpad = c.scratchpad;
        plain.memory_budget_bytes = c.budget;
        plain.spill_directory = dir.path();
        auto counter = std::make_shared<counting_observer>();
        tapeflow::tape_options counted = plain;
        counted.observer = counter;
        auto model = std::make_shared<tapeflow::hardware_model>();
        tapeflow::tape_options modelled = plain;
        modelled.observer = model;
        const std::vector<double> g0 = chain(plain, 200);
        const std::vector<double> g1 = chain(counted, 200);
        const std::vector<double> g2 = chain(modelled, 200);
        CHECK(counter->calls == 0);
        CHECK(model->tapeflow().tape_bytes_written == 0);
        CHECK(model->tapeflow().tape_bytes_swept == 0);
        CHECK(model->layers().empty());
        REQUIRE(g0.size() == 4);
        CHECK(std::memcmp(g0.data(), g1.data(), 4 * sizeof(double)) == 0);
        CHECK(std::memcmp(g0.data(), g2.data(), 4 * sizeof(double)) == 0);
        CHECK(g0[0] != 0);
    }
}
