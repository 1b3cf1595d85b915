#include <catch2/catch.hpp>
#include <tapeflow/tape/adjoint_store.hpp>

TEST_CASE("adjoint_store grows with new adjoints 0, never shrinks, and reads 0 past its end") {
    tapeflow::adjoint_store<double> a;
    CHECK(a.size() == 0);
    CHECK(a.get(5) == 0.0);
    a.grow(4);
    REQUIRE(a.size() == 4);
    for (tapeflow::identifier i = 0; i < 4; ++i) CHECK(a.get(i) == 0.0);
    a[3] = 2.5;
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
    CHECK(a.data()[3] == 0.0);
}
