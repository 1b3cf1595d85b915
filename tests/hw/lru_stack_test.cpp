// tapeflow::lru_stack (hw/lru_stack.hpp): stack distances against a
// brute-force LRU list, over both key spaces, across many compactions of the
// Fenwick tree; cold accesses; distinct(); resident(); clear().
#include <catch2/catch.hpp>
#include <tapeflow/hw/lru_stack.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <unordered_set>
#include <utility>
#include <vector>

#include "support/sanitized.hpp"

namespace {

using tapeflow::lru_stack;

// The reference: every line touched, most recent LAST. The stack distance of
// an access is the number of lines after the line in this list (the distinct
// lines touched since it); the line then moves to the end. Cost per access:
// the distance (a hash set answers "seen before?" for cold accesses).
class brute_force_lru {
public:
    std::uint64_t access(int space, std::uint64_t key) {
        const line l{space, key};
        if (seen_.insert(code(l)).second) {
            order_.push_back(l);
            return lru_stack::cold;
        }
        std::size_t i = order_.size();
        while (i-- > 0)
            if (order_[i].space == space && order_[i].key == key) break;
        const std::uint64_t distance = order_.size() - 1 - i;
        order_.erase(order_.begin() + std::ptrdiff_t(i));
        order_.push_back(l);
        return distance;
    }
    std::uint64_t distinct() const { return order_.size(); }
    /// Lines of `space` among the `capacity` most recent ones.
    std::uint64_t resident(int space, std::uint64_t capacity) const {
        std::uint64_t n = 0;
        for (std::size_t i = order_.size(), seen = 0; i-- > 0 && seen < capacity; ++seen)
            n += order_[i].space == space;
        return n;
    }
    void clear() {
        order_.clear();
        seen_.clear();
    }

private:
    struct line {
        int space;
        std::uint64_t key;
    };
    static std::uint64_t code(const line& l) { return l.key * 2 + std::uint64_t(l.space); }
    std::vector<line> order_;
    std::unordered_set<std::uint64_t> seen_;
};

// A random access: mostly a small hot set of adjoint-like lines (space 0),
// some from a wide range of space 0, some re-reads of space-1 lines with the
// same numbers as space-0 lines (the spaces must not collide), and a stream
// of fresh space-1 keys (as the hardware model numbers tape lines).
struct access_pattern {
    std::mt19937_64 rng;
    std::uint64_t stream_key = 0;
    explicit access_pattern(std::uint64_t seed) : rng(seed) {}

    std::pair<int, std::uint64_t> next() {
        const std::uint64_t r = rng() % 100;
        if (r < 60) return {0, rng() % 64};
        if (r < 80) return {0, rng() % 3000};
        if (r < 90) return {1, rng() % 64};
        if (r < 95 && stream_key > 0) return {1, 1000000 + stream_key - 1 - rng() % std::min<std::uint64_t>(stream_key, 200)};
        return {1, 1000000 + stream_key++};
    }
};

}  // namespace

TEST_CASE("lru_stack: hand-checked distances, cold accesses and distinct()") {
    lru_stack s;
    CHECK(s.distinct() == 0);
    CHECK(s.access(0, 7) == lru_stack::cold);  // first touch of line (0, 7)
    CHECK(s.access(0, 7) == 0);                // touched again at once: nothing in between
    CHECK(s.access(1, 7) == lru_stack::cold);  // same number, other key space: another line
    CHECK(s.access(0, 3) == lru_stack::cold);
    CHECK(s.distinct() == 3);
    CHECK(s.access(0, 7) == 2);  // (1,7) and (0,3) since the last (0,7)
    CHECK(s.access(0, 3) == 1);  // (0,7)
    CHECK(s.access(0, 3) == 0);
    CHECK(s.access(1, 7) == 2);  // (0,7), (0,3): repeated touches of (0,3) count once
    CHECK(s.distinct() == 3);
    CHECK(s.access(0, 1000000) == lru_stack::cold);  // a large key grows the table
    CHECK(s.access(0, 7) == 3);  // (0,3), (1,7), (0,1000000) since the last (0,7)
    CHECK(s.distinct() == 4);
    // most recent first: (0,7) (0,1000000) (1,7) (0,3)
    CHECK(s.resident(0, 0) == 0);
    CHECK(s.resident(0, 1) == 1);  // (0,7)
    CHECK(s.resident(1, 1) == 0);
    CHECK(s.resident(0, 2) == 2);  // (0,7) (0,1000000)
    CHECK(s.resident(1, 3) == 1);  // (1,7)
    CHECK(s.resident(0, 3) == 2);
    CHECK(s.resident(0, 4) == 3);
    CHECK(s.resident(0, 1000) == 3);
    CHECK(s.resident(1, 1000) == 1);
}

TEST_CASE("lru_stack: random accesses over both key spaces == brute-force LRU list, across compactions") {
    // 200000 accesses: the tree has max(2m + 2, 65536) slots for m lines
    // seen, so it is compacted every ~60000 accesses here (several times;
    // twice in the 130000 of a sanitizer build).
    constexpr std::size_t accesses = tapeflow_test::sanitized ? 130000 : 200000;
    for (std::uint64_t seed : {1u, 2u}) {
        INFO("seed " << seed);
        lru_stack s;
        brute_force_lru ref;
        access_pattern pattern(seed);
        std::uint64_t cold = 0, warm = 0, mismatches = 0, far = 0;
        for (std::size_t i = 0; i < accesses; ++i) {
            const auto [space, key] = pattern.next();
            const std::uint64_t expected = ref.access(space, key);
            const std::uint64_t got = s.access(space, key);
            if (got != expected) {
                if (mismatches++ < 5) {
                    INFO("access " << i << ": space " << space << ", key " << key);
                    CHECK(got == expected);
                }
            }
            if (expected == lru_stack::cold)
                ++cold;
            else
                ++warm, far += expected >= 1000;
            if (i % 997 == 0) REQUIRE(s.distinct() == ref.distinct());
            if (i % 9973 == 0)
                for (std::uint64_t capacity : {0u, 1u, 5u, 64u, 700u, 3000u, 20000u, 1000000u})
                    for (int sp = 0; sp < 2; ++sp) {
                        INFO("access " << i << ": resident(" << sp << ", " << capacity << ")");
                        REQUIRE(s.resident(sp, capacity) == ref.resident(sp, capacity));
                    }
        }
        CHECK(mismatches == 0);
        CHECK(s.distinct() == ref.distinct());
        CHECK(s.distinct() == cold);
        // the pattern exercises what it should: cold and warm accesses, long distances
        CHECK(cold > accesses / 20);
        CHECK(warm > accesses / 4 * 3);
        CHECK(far > accesses / 20);
    }
}

TEST_CASE("lru_stack: more lines than the initial tree (tree grown by compaction), cyclic pattern") {
    // N lines of space 0 interleaved with N lines of space 1, touched in the
    // same order 4 times: after the first round every access has exactly
    // 2N - 1 distinct lines since its previous one. 2N = 80000 lines > the
    // 65536 slots of the first tree: compaction must grow it (2m + 2).
    constexpr std::uint64_t n = 40000;
    lru_stack s;
    std::uint64_t wrong = 0;
    for (int round = 0; round < 4; ++round)
        for (std::uint64_t k = 0; k < n; ++k)
            for (int space = 0; space < 2; ++space) {
                const std::uint64_t d = s.access(space, k);
                const std::uint64_t expected = round == 0 ? lru_stack::cold : 2 * n - 1;
                if (d != expected && wrong++ < 3) {
                    INFO("round " << round << ", key " << k << ", space " << space);
                    CHECK(d == expected);
                }
            }
    CHECK(wrong == 0);
    CHECK(s.distinct() == 2 * n);
    // the last 2c lines touched: c of each space
    CHECK(s.resident(0, 1000) == 500);
    CHECK(s.resident(1, 1001) == 501);  // the very last one is of space 1
    CHECK(s.resident(0, 3 * n) == n);
    // MRU order now ends (0, n-2), (1, n-2), (0, n-1), (1, n-1):
    CHECK(s.access(1, n - 1) == 0);  // the last line touched
    CHECK(s.access(0, n - 1) == 1);  // (1, n-1) since; order ... (1,n-2), (1,n-1), (0,n-1)
    CHECK(s.access(1, n - 2) == 2);  // (1, n-1) and (0, n-1) since
}

TEST_CASE("lru_stack: clear() forgets every line") {
    lru_stack s;
    brute_force_lru ref;
    access_pattern pattern(7);
    for (int i = 0; i < 100000; ++i) {
        const auto [space, key] = pattern.next();
        REQUIRE(s.access(space, key) == ref.access(space, key));
    }
    REQUIRE(s.distinct() > 0);
    s.clear();
    ref.clear();
    CHECK(s.distinct() == 0);
    // every line is cold again, in both spaces
    CHECK(s.access(0, 0) == lru_stack::cold);
    CHECK(s.access(1, 0) == lru_stack::cold);
    CHECK(s.access(0, 0) == 1);
    CHECK(s.distinct() == 2);
    s.clear();
    // and the stack agrees with a fresh reference for a long run again
    // (through more compactions of the tree it starts anew)
    std::uint64_t mismatches = 0;
    for (int i = 0; i < 150000; ++i) {
        const auto [space, key] = pattern.next();
        mismatches += s.access(space, key) != ref.access(space, key);
    }
    CHECK(mismatches == 0);
    CHECK(s.distinct() == ref.distinct());
}
