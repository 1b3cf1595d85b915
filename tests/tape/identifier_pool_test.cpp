#include <catch2/catch.hpp>
#include <tapeflow/tape/identifier_pool.hpp>

#include <set>
#include <vector>

TEST_CASE("identifiers start at 1 and are reused last-in first-out") {
    tapeflow::identifier_pool pool;
    CHECK(pool.capacity() == 1);  // identifier 0 is the passive one
    const auto a = pool.acquire(), b = pool.acquire(), c = pool.acquire();
    CHECK(a == 1);
    CHECK(b == 2);
    CHECK(c == 3);
    CHECK(pool.live() == 3);
    pool.release(b);
    pool.release(a);
    CHECK(pool.live() == 1);
    CHECK(pool.acquire() == a);  // last released comes back first
    CHECK(pool.acquire() == b);
    CHECK(pool.acquire() == 4);
    CHECK(pool.capacity() == 5);
    CHECK(pool.highest() == 4);
}

TEST_CASE("many short-lived identifiers keep the capacity at the peak of live ones") {
    tapeflow::identifier_pool pool;
    for (int i = 0; i < 100000; ++i) {
        const auto x = pool.acquire();
        const auto y = pool.acquire();
        pool.release(x);
        pool.release(y);
    }
    CHECK(pool.capacity() == 3);
    CHECK(pool.highest() == 2);
    CHECK(pool.live() == 0);
}

TEST_CASE("inputs and outputs never get an identifier that a record on the tape assigns") {
    tapeflow::identifier_pool pool;
    const auto a = pool.acquire();  // lhs of some record
    pool.release(a);
    const auto input = pool.acquire_unused();
    CHECK(input != a);      // a is still the lhs of a record on the tape
    CHECK(pool.acquire() == a);  // a statement may take it
    pool.release(a);
    pool.tape_emptied();    // reset: no records any more
    CHECK(pool.acquire_unused() == a);
}

TEST_CASE("an identifier given back twice is ignored past the room of the used list, never written beyond it") {
    tapeflow::identifier_pool pool;
    const auto a = pool.acquire();
    const auto b = pool.acquire();
    pool.release(a);
    pool.release(b);
    for (int i = 0; i < 1000; ++i) pool.release(a);  // misuse: ASan would see an overrun
    CHECK(pool.live() == 0);
    CHECK(pool.acquire() == b);
    CHECK(pool.acquire() == a);
    CHECK(pool.live() == 2);
}

TEST_CASE("highest() exceeds the most identifiers held at once when inputs need unused identifiers") {
    tapeflow::identifier_pool pool;
    // three statement lhs, freed while their records are on the tape
    const auto a = pool.acquire(), b = pool.acquire(), c = pool.acquire();
    pool.release(a);
    pool.release(b);
    pool.release(c);
    // two inputs: the free identifiers are lhs of records, so new ones are minted
    const auto x = pool.acquire_unused();
    const auto y = pool.acquire_unused();
    CHECK(x == 4);
    CHECK(y == 5);
    CHECK(pool.live() == 2);      // never more than 3 held at once
    CHECK(pool.highest() == 5);   // but the adjoint vector needs 5 + 1
    CHECK(pool.capacity() == 6);
}

TEST_CASE("pools minting from shared identifiers hand out the owner's free ones, then fresh ones, never one twice") {
    // the tape's pool (owner) and two threads' pools of a parallel region
    tapeflow::identifier_pool owner, first, second;
    std::vector<tapeflow::identifier> held;
    for (int i = 0; i < 300; ++i) held.push_back(owner.acquire());  // 1 .. 300
    for (int i = 0; i < 100; ++i) owner.release(held[std::size_t(i)]);  // 1 .. 100 free
    tapeflow::shared_identifiers shared;
    owner.share(shared);
    owner.mint_from(&shared);
    first.mint_from(&shared);
    second.mint_from(&shared);
    std::set<tapeflow::identifier> seen(held.begin() + 100, held.end());  // 101 .. 300 are held
    // the first pool takes the owner's 100 free ones (one block), then a fresh block
    for (int i = 0; i < 300; ++i) {
        const auto id = first.acquire();
        CHECK(seen.insert(id).second);
        if (i < 100) CHECK(id <= 100);
    }
    for (int i = 0; i < 300; ++i) CHECK(seen.insert(second.acquire()).second);
    CHECK(*seen.rbegin() <= shared.highest);  // everything handed out is at most the shared highest
    // at the region's end the owner takes back what the threads freed and did not use
    first.release(*seen.begin());
    const std::size_t highest_before = shared.highest;
    owner.mint_from(nullptr);
    first.mint_from(nullptr);
    second.mint_from(nullptr);
    owner.take_free_of(first, shared.highest);
    owner.take_free_of(second, shared.highest);
    CHECK(owner.highest() == highest_before);
    std::set<tapeflow::identifier> back;
    for (auto id = owner.acquire(); id <= highest_before; id = owner.acquire())  // until it mints
        CHECK(back.insert(id).second);
    // the free ones: the one released and the rest of both blocks, none held
    CHECK(back.count(*seen.begin()) == 1);
    for (const auto id : back)
        if (id != *seen.begin()) CHECK(seen.count(id) == 0);
    CHECK(back.size() == std::size_t(highest_before) - (seen.size() - 1));
}

namespace {

// The same history on any pool: identifiers freed while records are on the
// tape (used), freed before a reset (unused), and some still held.
void give_history(tapeflow::identifier_pool& pool) {
    std::vector<tapeflow::identifier> held;
    for (int i = 0; i < 40; ++i) held.push_back(pool.acquire());
    for (int i = 0; i < 40; i += 3) pool.release(held[std::size_t(i)]);  // 14 freed, scattered
    pool.tape_emptied();                                               // they are unused now
    for (int i = 1; i < 40; i += 3) pool.release(held[std::size_t(i)]);  // 13 used ones, others
}

}  // namespace

TEST_CASE("acquire(count, out) and acquire_unused(count, out) hand out what one call each would, in that order") {
    // acquire: 5 from the used list; 20 used, then unused; 35 every free
    // one (27), then new ones. acquire_unused: 3 and 14 unused, 25 then new ones.
    const bool unused = GENERATE(false, true);
    const std::size_t count = unused ? GENERATE(std::size_t(3), std::size_t(14), std::size_t(25))
                                     : GENERATE(std::size_t(0), std::size_t(5), std::size_t(20), std::size_t(35));
    INFO((unused ? "acquire_unused" : "acquire") << ", count " << count);
    tapeflow::identifier_pool one_by_one, at_once;
    give_history(one_by_one);
    give_history(at_once);
    std::vector<tapeflow::identifier> expected, got(count);
    for (std::size_t k = 0; k < count; ++k)
        expected.push_back(unused ? one_by_one.acquire_unused() : one_by_one.acquire());
    if (unused)
        at_once.acquire_unused(count, got.data());
    else
        at_once.acquire(count, got.data());
    CHECK(got == expected);
    CHECK(std::set<tapeflow::identifier>(got.begin(), got.end()).size() == count);
    CHECK(at_once.highest() == one_by_one.highest());
    CHECK(at_once.live() == one_by_one.live());
    // and the pools go on alike
    CHECK(at_once.acquire() == one_by_one.acquire());
    CHECK(at_once.acquire_unused() == one_by_one.acquire_unused());
}

TEST_CASE("ranges: consecutive identifiers, reused by length, used ones only for outputs, joined when the tape empties") {
    tapeflow::identifier_pool pool;
    const auto single = pool.acquire();  // 1
    const auto a = pool.acquire_range(4), b = pool.acquire_range(4);
    CHECK(a == 2);  // 2 .. 5
    CHECK(b == 6);  // 6 .. 9
    CHECK(pool.highest() == 9);
    CHECK(pool.live() == 9);
    pool.release_range(a, 4);
    pool.release_range(b, 4);
    CHECK(pool.live() == 1);
    std::set<tapeflow::identifier> free;
    pool.for_each_free([&](tapeflow::identifier id) { CHECK(free.insert(id).second); });
    CHECK(free == std::set<tapeflow::identifier>{2, 3, 4, 5, 6, 7, 8, 9});
    // a record may assign the freed ranges: an input range is minted
    const auto c = pool.acquire_unused_range(4);
    CHECK(c == 10);  // 10 .. 13
    // an output range takes the last freed one of its length
    CHECK(pool.acquire_range(4) == b);
    // single identifiers never come from a free range
    CHECK(pool.acquire() == 14);
    pool.release_range(b, 4);
    pool.release_range(c, 4);
    pool.tape_emptied();  // 2 .. 13 free and unused, one range now
    CHECK(pool.acquire_unused_range(12) == 2);
    pool.release_range(2, 12);
    pool.tape_emptied();
    // a shorter request takes the front of the shortest range that is long enough
    CHECK(pool.acquire_unused_range(5) == 2);
    CHECK(pool.acquire_unused_range(7) == 7);
    CHECK(pool.highest() == 14);
    CHECK(pool.live() == 14);
    (void)single;
}

TEST_CASE("a range past the identifier limit throws and takes nothing, and none is made in a parallel region") {
    tapeflow::identifier_pool pool;
    CHECK_THROWS_WITH(pool.acquire_range(std::size_t(tapeflow::identifier_pool::max_identifier) + 1),
                      Catch::Contains("active variables are alive at once"));
    CHECK(pool.highest() == 0);
    tapeflow::shared_identifiers shared;
    pool.share(shared);
    pool.mint_from(&shared);
    CHECK_THROWS_WITH(pool.acquire_range(3), Catch::Contains("cannot be made inside a parallel region"));
    pool.mint_from(nullptr);
    CHECK(pool.acquire_range(3) == 1);
}

TEST_CASE("take_free_of takes another pool's free ranges too") {
    // a matrix variable whose last copy died on a parallel region's thread
    // gave its range to that thread's pool
    tapeflow::identifier_pool pool, thread_pool;
    const auto first = pool.acquire_range(100);
    thread_pool.release_range(first, 100);
    pool.take_free_of(thread_pool, pool.highest());
    CHECK(pool.live() == 0);
    CHECK(pool.acquire_range(100) == first);  // not minted again
    CHECK(pool.highest() == 100);
    CHECK(thread_pool.live() == 0);
}
