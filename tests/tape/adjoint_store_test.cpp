#include <catch2/catch.hpp>
#include <tapeflow/tape/adjoint_store.hpp>

TEST_CASE("adjoint_store grows with new adjoints 0, never shrinks, and reads 0 past its end") {
    tapeflow::adjoint_store<double> a;
    CHECK(a.size() == 0);
    CHECK(a.get(5) == 0.0);
    a.grow(4);
    REQUIRE(a.size() == 4);
    for (tapeflow::identifier i = 0; i < 4; ++i) CHECK(a.get(i) == 0.0);
    a.set(3, 2.5);
    a.grow(2);
    CHECK(a.size() == 4);
    CHECK(a.get(3) == 2.5);
    a.grow(8);
    CHECK(a.get(3) == 2.5);
    CHECK(a.get(7) == 0.0);
    CHECK(a.bytes() >= 8 * sizeof(double));
    a.clear();
    CHECK(a.size() == 8);
    CHECK(a.get(3) == 0.0);
    CHECK(a.sweep_data()[3] == 0.0);
}

TEST_CASE("adjoint_store knows what was written: clear_traced zeroes the seeds and what the records name") {
    tapeflow::adjoint_store<double> a;
    a.grow(12);
    CHECK(a.all_zero());
    CHECK(a.traceable());
    a.set(2, 1.0);  // a seed
    CHECK_FALSE(a.all_zero());
    double* p = a.sweep_data();  // what a sweep through records naming 5, 7 and 9 writes
    p[5] = 3.0;
    p[7] = -4.0;
    p[9] = 0.5;
    REQUIRE(a.traceable());
    // the records name 5, 7, 9 (and 40, past the vector: ignored)
    a.clear_traced([](auto zero) {
        for (tapeflow::identifier id : {5u, 7u, 9u, 40u}) zero(id);
    });
    CHECK(a.all_zero());
    for (tapeflow::identifier i = 0; i < 12; ++i) CHECK(a.get(i) == 0.0);

    SECTION("records dropped after a write: no longer traceable, until the next full clear") {
        a.records_dropped();  // nothing written: still traceable
        CHECK(a.traceable());
        a.sweep_data()[4] = 1.0;
        a.records_dropped();
        CHECK_FALSE(a.traceable());
        a.clear();
        CHECK(a.traceable());
        CHECK(a.get(4) == 0.0);
    }
    SECTION("cleared while a sweep writes on: not all zero") {
        a.sweep_data()[3] = 1.0;
        a.clear_while_swept();
        CHECK(a.get(3) == 0.0);
        CHECK_FALSE(a.all_zero());
        CHECK(a.traceable());
    }
    SECTION("more seeds than it remembers: no longer traceable") {
        for (tapeflow::identifier i = 0; i < a.max_seeds; ++i) a.set(i % 12, 1.0);
        CHECK(a.traceable());
        a.set(11, 2.0);
        CHECK_FALSE(a.traceable());
        a.clear();
        CHECK(a.traceable());
        CHECK(a.all_zero());
        for (tapeflow::identifier i = 0; i < 12; ++i) CHECK(a.get(i) == 0.0);
    }
}
