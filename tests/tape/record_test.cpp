#include <catch2/catch.hpp>
#include <tapeflow/tape/record.hpp>

#include <vector>

using tapeflow::identifier;
using tapeflow::record_layout;

TEST_CASE("record size: k partials, k identifiers, 8-byte header, padded to the alignment") {
    using L = record_layout<double>;
    // 8 bytes per partial + 4 per identifier + 8 header, rounded up to 8.
    CHECK(L::size(1) == 24);   // 8 + 4 + 8 = 20 -> 24
    CHECK(L::size(2) == 32);   // 16 + 8 + 8 = 32
    CHECK(L::size(3) == 48);   // 24 + 12 + 8 = 44 -> 48
    CHECK(L::size(7) == 96);   // 56 + 28 + 8 = 92 -> 96
    CHECK(record_layout<float>::size(1) == 16);   // 4 + 4 + 8
    CHECK(record_layout<float>::size(3) == 32);   // 12 + 12 + 8
    CHECK(record_layout<long double>::size(1) % alignof(long double) == 0);
    CHECK(record_layout<long double>::size(1) >= sizeof(long double) + 4 + 8);
}

TEMPLATE_TEST_CASE("a written record is read back from its end", "", float, double, long double) {
    using L = record_layout<TestType>;
    const std::uint32_t k = 5;
    std::vector<TestType> partials{1.5, -2.25, 3.0, 0.125, -7.0};
    std::vector<identifier> ids{4, 9, 1, 77, 3};
    alignas(64) std::byte buffer[512];
    const std::size_t bytes = L::write(buffer, 42, k, partials.data(), ids.data());
    REQUIRE(bytes == L::size(k));

    const tapeflow::record_header h = L::header_before(buffer + bytes);
    CHECK(h.lhs == 42);
    CHECK(h.count == k);
    for (std::uint32_t i = 0; i < k; ++i) {
        TestType p;
        identifier id;
        std::memcpy(&p, buffer + i * sizeof(TestType), sizeof p);
        std::memcpy(&id, buffer + L::ids_offset(k) + i * sizeof(identifier), sizeof id);
        CHECK(p == partials[i]);
        CHECK(id == ids[i]);
    }
}
