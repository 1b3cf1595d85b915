#include <catch2/catch.hpp>
#include <tapeflow/tape/identifier_pool.hpp>

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
