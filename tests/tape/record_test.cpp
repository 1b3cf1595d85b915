#include <catch2/catch.hpp>
#include <tapeflow/tape/record.hpp>

#include <vector>

using tapeflow::identifier;
using tapeflow::record_layout;

TEST_CASE("record size: k (partial, identifier) pairs and an 8-byte header, packed") {
    using L = record_layout<double>;
    // 8 bytes per partial + 4 per identifier + 8 header.
    CHECK(L::size(1) == 20);
    CHECK(L::size(2) == 32);
    CHECK(L::size(3) == 44);
    CHECK(L::size(7) == 92);
    CHECK(record_layout<float>::size(1) == 16);  // 4 + 4 + 8
    CHECK(record_layout<float>::size(3) == 32);  // 3 * 8 + 8
    CHECK(record_layout<long double>::size(1) == sizeof(long double) + 4 + 8);
    for (std::size_t k = 0; k < 40; ++k) CHECK(L::count(L::size(k)) == k);
}

TEMPLATE_TEST_CASE("a written record is read back from its end", "", float, double, long double) {
    using L = record_layout<TestType>;
    const std::uint32_t k = 5;
    std::vector<TestType> partials{1.5, -2.25, 3.0, 0.125, -7.0};
    std::vector<identifier> ids{4, 9, 1, 77, 3};
    std::byte buffer[512];
    const std::size_t bytes = L::write(buffer + 4, 42, k, partials.data(), ids.data());  // unaligned
    REQUIRE(bytes == L::size(k));

    const std::byte* record = buffer + 4;
    const tapeflow::record_header h = L::header_before(record + bytes);
    CHECK(h.lhs == 42);
    CHECK(h.count == k);
    for (std::uint32_t i = 0; i < k; ++i) {
        CHECK(L::partial(record, i) == partials[i]);
        CHECK(L::id(record, i) == ids[i]);
    }
    L::add_partial(buffer + 4, 2, TestType(0.5));
    CHECK(L::partial(record, 2) == TestType(3.5));
}
