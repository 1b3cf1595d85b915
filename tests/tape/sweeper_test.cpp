#include <catch2/catch.hpp>
#include <tapeflow/tape/sweeper.hpp>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <random>
#include <vector>

using tapeflow::identifier;
using L = tapeflow::record_layout<double>;

namespace {

// A run of records, written one after the other as the recorder lays them out.
struct run {
    std::vector<std::byte> bytes;
    void add(identifier lhs, const std::vector<double>& partials, const std::vector<identifier>& ids,
             bool update = false) {
        const std::size_t at = bytes.size();
        bytes.resize(at + L::size(partials.size()));
        L::write(bytes.data() + at, lhs, std::uint32_t(partials.size()), partials.data(), ids.data(), update);
    }
    void add_external(std::uint32_t index) {
        const std::size_t at = bytes.size();
        bytes.resize(at + L::external_size);
        L::write_external(bytes.data() + at, index);
    }
    const std::byte* begin() const { return bytes.data(); }
    const std::byte* end() const { return bytes.data() + bytes.size(); }
};

// y = 2 * x1 (an entry with one input and one output), for the external path
struct doubling : tapeflow::external_entry<double> {
    identifier in, out;
    int calls = 0;
    doubling(identifier i, identifier o) : in(i), out(o) {}
    void reverse(double* adjoint, std::vector<double>&) override {
        ++calls;
        adjoint[in] += 2 * adjoint[out];
        adjoint[out] = 0;
    }
    void reverse_lanes(double* adjoint, std::size_t lanes, std::vector<double>&) override {
        ++calls;
        for (std::size_t l = 0; l < lanes; ++l) {
            adjoint[in * lanes + l] += 2 * adjoint[out * lanes + l];
            adjoint[out * lanes + l] = 0;
        }
    }
    std::size_t bytes() const noexcept override { return 0; }
};

}  // namespace

TEST_CASE("sweep_records propagates adjoints backwards through records of every length") {
    // x1 = 1, x2 = 2 are inputs; the records, in recording order:
    //   v3 = x1 * x2          partials (x2, x1) = (2, 1)
    //   v4 = 3 v3 + v3 ...    a long record: 40 pairs on x1 with partial 0.25 each (10 x1)
    //   v5 = v3 * v4          partials (v4, v3)
    run r;
    r.add(3, {2.0, 1.0}, {1, 2});
    r.add(4, std::vector<double>(40, 0.25), std::vector<identifier>(40, 1));
    const double v3 = 2.0, v4 = 10.0;
    r.add(5, {v4, v3}, {3, 4});
    std::vector<double> adjoint(6, 0.0);
    adjoint[5] = 1.0;
    tapeflow::external_table<double> none;
    tapeflow::detail::sweep_records(r.begin(), r.end(), adjoint.data(), none);
    // d v5 / d x1 = v4 * x2 + v3 * 10 = 20 + 20; d v5 / d x2 = v4 * x1 = 10
    CHECK(adjoint[1] == 40.0);
    CHECK(adjoint[2] == 10.0);
    CHECK(adjoint[3] == 0.0);  // every lhs adjoint is consumed
    CHECK(adjoint[4] == 0.0);
    CHECK(adjoint[5] == 0.0);
}

TEST_CASE("sweep_records, sweep_lane_records and sweep_records_private: records of each count 1-20, both kinds") {
    // Random records of 1-20 pairs (each short count has a case of its own
    // in the sweep, 16 and more are long records), assignments and updates
    // in random order, with an external entry between them. The reference
    // sweeps the same records kept as plain structs (no encoding): a record
    // stepped over by a wrong size would read wrong pairs or headers.
    struct plain {
        identifier lhs;
        std::vector<double> partials;
        std::vector<identifier> ids;
        bool update;
        bool external;
    };
    std::mt19937 rng(34);
    std::uniform_real_distribution<double> value(-2.0, 2.0);
    constexpr identifier inputs = 30;
    identifier next = inputs + 1;
    std::vector<plain> records;
    std::vector<std::uint32_t> counts;
    for (int repeat = 0; repeat < 3; ++repeat)
        for (std::uint32_t k = 1; k <= 20; ++k) counts.push_back(k);
    std::shuffle(counts.begin(), counts.end(), rng);
    for (std::size_t j = 0; j < counts.size(); ++j) {
        // every third record an update of an earlier variable; an
        // assignment takes a new one
        plain p{0, {}, {}, j % 3 == 1, false};
        p.lhs = p.update ? identifier(inputs + 1 + rng() % (next - inputs - 1)) : next++;
        for (std::uint32_t i = 0; i < counts[j]; ++i) {
            p.partials.push_back(value(rng));
            p.ids.push_back(identifier(1 + rng() % (p.lhs - 1)));  // an input or an earlier variable
        }
        records.push_back(p);
        if (j == counts.size() / 2) records.push_back(plain{0, {}, {}, false, true});
    }
    // the records encoded, the external entry left out where `externals` is false
    const auto encode = [&](bool externals) {
        run encoded;
        for (const plain& p : records) {
            if (!p.external)
                encoded.add(p.lhs, p.partials, p.ids, p.update);
            else if (externals)
                encoded.add_external(0);
        }
        return encoded;
    };
    const run r = encode(true);
    // the reference sweep from `seed` (the entry: x2's adjoint += 2 * that
    // of v = inputs + 1, which it consumes; left out where `externals` is false)
    const auto reference = [&](std::vector<double> adjoint, bool externals = true) {
        for (auto p = records.rbegin(); p != records.rend(); ++p) {
            if (p->external) {
                if (!externals) continue;
                adjoint[2] += 2 * adjoint[inputs + 1];
                adjoint[inputs + 1] = 0;
                continue;
            }
            const double a = adjoint[p->lhs];
            if (!p->update) adjoint[p->lhs] = 0;
            for (std::size_t i = 0; i < p->ids.size(); ++i) adjoint[p->ids[i]] += p->partials[i] * a;
        }
        return adjoint;
    };
    const auto random_seed = [&] {
        std::vector<double> seed(next, 0.0);
        for (identifier id = inputs + 1; id < next; ++id) seed[id] = value(rng);
        return seed;
    };
    tapeflow::external_table<double> externals;
    auto entry = std::make_unique<doubling>(2, inputs + 1);
    const doubling* seen = entry.get();
    CHECK(externals.push(std::move(entry)) == 0);

    SECTION("one adjoint per identifier") {
        const std::vector<double> seed = random_seed();
        const std::vector<double> expected = reference(seed);
        std::vector<double> adjoint = seed;
        tapeflow::detail::sweep_records(r.begin(), r.end(), adjoint.data(), externals);
        CHECK(seen->calls == 1);
        for (identifier id = 1; id < next; ++id) {
            INFO("identifier " << id);
            CHECK(adjoint[id] == Approx(expected[id]).epsilon(1e-12).margin(1e-12));
        }
    }
    SECTION("a thread's part of a parallel region: its adds into adjoints of its own") {
        // sweep_records_private gets no external entries; the lhs adjoint
        // is the sum of the shared and the private part, the operands' adds
        // go to the private part, and what it touched is listed
        const run no_entry = encode(false);
        const std::vector<double> seed = random_seed();
        const std::vector<double> expected = reference(seed, false);
        std::vector<double> shared = seed, mine(seed.size(), 0.0);
        std::vector<identifier> touched;
        tapeflow::detail::sweep_records_private(no_entry.begin(), no_entry.end(), shared.data(), mine.data(),
                                                touched);
        for (identifier id = 1; id < next; ++id) {
            INFO("identifier " << id);
            CHECK(shared[id] + mine[id] == Approx(expected[id]).epsilon(1e-12).margin(1e-12));
            if (mine[id] != 0) CHECK(std::count(touched.begin(), touched.end(), id) >= 1);
        }
        // an input's shared part is never written: the adds went to `mine`
        for (identifier id = 1; id <= inputs; ++id) CHECK(shared[id] == seed[id]);
    }
    SECTION("four lanes") {
        constexpr std::size_t lanes = 4;
        std::vector<std::vector<double>> expected;
        std::vector<double> adjoint(std::size_t(next) * lanes, 0.0);
        for (std::size_t l = 0; l < lanes; ++l) {
            const std::vector<double> seed = random_seed();
            expected.push_back(reference(seed));
            for (identifier id = 0; id < next; ++id) adjoint[id * lanes + l] = seed[id];
        }
        tapeflow::detail::sweep_lane_records<lanes>(r.begin(), r.end(), adjoint.data(), externals);
        CHECK(seen->calls == 1);
        for (std::size_t l = 0; l < lanes; ++l)
            for (identifier id = 1; id < next; ++id) {
                INFO("lane " << l << ", identifier " << id);
                CHECK(adjoint[id * lanes + l] == Approx(expected[l][id]).epsilon(1e-12).margin(1e-12));
            }
    }
}

TEST_CASE("sweep_records skips a record whose adjoint is 0 and runs an external entry on that path") {
    run r;
    r.add(3, {5.0}, {1});      // v3 = 5 x1: its adjoint stays 0, nothing reaches x1 from it
    r.add_external(0);         // v4 = 2 x2
    r.add(5, {std::numeric_limits<double>::infinity()}, {3});  // v5 = f(v3), never seeded
    r.add(6, {3.0}, {4});      // v6 = 3 v4
    tapeflow::external_table<double> externals;
    auto entry = std::make_unique<doubling>(2, 4);
    doubling* seen = entry.get();
    CHECK(externals.push(std::move(entry)) == 0);
    std::vector<double> adjoint(7, 0.0);
    adjoint[6] = 1.0;
    tapeflow::detail::sweep_records(r.begin(), r.end(), adjoint.data(), externals);
    CHECK(seen->calls == 1);
    CHECK(adjoint[2] == 6.0);
    CHECK(adjoint[1] == 0.0);  // 0 * inf was not added: the record was skipped
}

TEST_CASE("sweep_lane_records gives each lane what a scalar sweep seeded with that lane gives") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> value(-2.0, 2.0);
    constexpr std::size_t inputs = 5, records = 200, lanes = 4;
    run r;
    identifier next = inputs + 1;
    for (std::size_t s = 0; s < records; ++s, ++next) {
        const std::size_t k = 1 + rng() % std::min<std::size_t>(6, next - 1);
        std::vector<double> p(k);
        std::vector<identifier> id(k);
        for (std::size_t i = 0; i < k; ++i) {  // distinct operands, as the recorder merges repeats
            p[i] = value(rng);
            do id[i] = identifier(1 + rng() % (next - 1));
            while (std::find(id.begin(), id.begin() + std::ptrdiff_t(i), id[i]) != id.begin() + std::ptrdiff_t(i));
        }
        r.add(next, p, id);
    }
    const std::size_t n = next;
    tapeflow::external_table<double> none;
    std::vector<double> lane_adjoint(n * lanes, 0.0);
    for (std::size_t l = 0; l < lanes; ++l) lane_adjoint[(n - 1 - l) * lanes + l] = 1.0 + double(l);
    tapeflow::detail::sweep_lane_records<lanes>(r.begin(), r.end(), lane_adjoint.data(), none);
    for (std::size_t l = 0; l < lanes; ++l) {
        std::vector<double> adjoint(n, 0.0);
        adjoint[n - 1 - l] = 1.0 + double(l);
        tapeflow::detail::sweep_records(r.begin(), r.end(), adjoint.data(), none);
        std::size_t nonzero = 0;
        for (std::size_t i = 1; i <= inputs; ++i) {
            CHECK(lane_adjoint[i * lanes + l] == adjoint[i]);
            nonzero += adjoint[i] != 0.0;
        }
        CHECK(nonzero > 0);  // the seed reached the inputs: the comparison compared something
    }
}
