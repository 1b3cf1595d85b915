// tests/hw/event_tally.hpp - what the tests of the hardware model share: an
// observer that forwards every event to a model and tallies the events
// themselves (so a test can compare the model's sums with what the tape
// said), and arithmetic on tapeflow::traffic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include <tapeflow/tapeflow.hpp>

namespace tapeflow_test {

using tapeflow::hardware_model;
using tapeflow::memory_level;
using tapeflow::traffic;

inline std::uint64_t rd(const traffic& t, memory_level l) { return t.read[std::size_t(l)]; }
inline std::uint64_t wr(const traffic& t, memory_level l) { return t.written[std::size_t(l)]; }

/// a - b, level by level and on-chip structure by structure.
inline traffic difference(const traffic& a, const traffic& b) {
    traffic d;
    for (std::size_t l = 0; l < tapeflow::memory_level_count; ++l) {
        d.read[l] = a.read[l] - b.read[l];
        d.written[l] = a.written[l] - b.written[l];
    }
    for (std::size_t i = 0; i < tapeflow::max_on_chip_structures; ++i) d.on_chip[i] = a.on_chip[i] - b.on_chip[i];
    d.records = a.records - b.records;
    return d;
}

inline bool same_traffic(const traffic& a, const traffic& b) {
    return a.read == b.read && a.written == b.written && a.on_chip == b.on_chip && a.records == b.records;
}

/// Forwards every event to a model and tallies the events themselves.
class event_tally : public tapeflow::tape_observer {
public:
    explicit event_tally(std::shared_ptr<hardware_model> m) : model(std::move(m)) {}
    std::shared_ptr<hardware_model> model;
    traffic recorded_bytes;   ///< recorded(): written at its level
    traffic moves_outside;    ///< tile moves outside sweeps (close, seal, ...)
    traffic moves_in_sweeps;  ///< tile moves during sweeps (staging)
    std::size_t reopened = 0, cleared_count = 0, layers = 0;

    // (tiles are on chip only in the scratchpad, on_chip[0])
    void recorded(std::uint64_t b, memory_level l) override {
        recorded_bytes.written[std::size_t(l)] += b;
        if (l == memory_level::sram) recorded_bytes.on_chip[0] += b;
        model->recorded(b, l);
    }
    void tile_finished(std::size_t t, std::size_t used) override { model->tile_finished(t, used); }
    void tile_moved(std::size_t t, std::size_t b, memory_level from, memory_level to) override {
        traffic& m = sweeping_ ? moves_in_sweeps : moves_outside;
        m.read[std::size_t(from)] += b;
        m.written[std::size_t(to)] += b;
        if (from == memory_level::sram) m.on_chip[0] += b;
        if (to == memory_level::sram) m.on_chip[0] += b;
        model->tile_moved(t, b, from, to);
    }
    void sweep_begins(const tapeflow::sweep_context& c) override {
        sweeping_ = true;
        model->sweep_begins(c);
    }
    void layer(std::size_t t, const std::byte* d, std::size_t b, std::size_t e, memory_level l) override {
        ++layers;
        model->layer(t, d, b, e, l);
    }
    void sweep_ends() override {
        sweeping_ = false;
        model->sweep_ends();
    }
    void tile_reopened(std::size_t t) override {
        ++reopened;
        model->tile_reopened(t);
    }
    void cleared() override {
        ++cleared_count;
        model->cleared();
    }

private:
    bool sweeping_ = false;
};

}  // namespace tapeflow_test
