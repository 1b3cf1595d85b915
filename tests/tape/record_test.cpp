#include <catch2/catch.hpp>
#include <tapeflow/tape/record.hpp>

#include <cstring>
#include <random>
#include <utility>
#include <vector>

using tapeflow::identifier;
using tapeflow::record_layout;

TEST_CASE("record size: k (partial, identifier) pairs and a 4-byte header, packed") {
    using L = record_layout<double>;
    // 8 bytes per partial + 4 per identifier + 4 header.
    CHECK(L::size(1) == 16);
    CHECK(L::size(2) == 28);
    CHECK(L::size(3) == 40);
    CHECK(L::size(7) == 88);
    CHECK(L::size(15) == 15 * 12 + 4);
    CHECK(L::size(16) == 16 * 12 + 8);  // long record: the count has its own word
    CHECK(L::size(31) == 31 * 12 + 8);
    CHECK(record_layout<float>::size(1) == 12);  // 4 + 4 + 4
    CHECK(record_layout<float>::size(3) == 28);  // 3 * 8 + 4
    CHECK(record_layout<long double>::size(1) == sizeof(long double) + 4 + 4);
    for (std::size_t k = 0; k < 100; ++k) CHECK(L::count(L::size(k)) == k);
    for (std::size_t k = 0; k < 100; ++k) CHECK(record_layout<float>::count(record_layout<float>::size(k)) == k);
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
}

TEST_CASE("long records (16 pairs or more) and the largest identifier round-trip, both kinds") {
    using L = record_layout<double>;
    for (const bool update : {false, true})
    for (std::uint32_t k : {1u, 15u, 16u, 17u, 30u, 31u, 32u, 200u}) {
        CAPTURE(update, k);
        std::vector<double> partials(k);
        std::vector<identifier> ids(k);
        for (std::uint32_t i = 0; i < k; ++i) {
            partials[i] = 0.5 * i - 3;
            ids[i] = 1000 + 7 * i;
        }
        std::vector<std::byte> buffer(L::size(k));
        L::write(buffer.data(), L::max_identifier, k, partials.data(), ids.data(), update);
        const auto h = L::header_before(buffer.data() + buffer.size());
        CHECK(h.lhs == L::max_identifier);
        CHECK(h.count == k);
        CHECK(h.update == update);
        CHECK(L::partial(buffer.data(), 0) == partials[0]);
        CHECK(L::id(buffer.data(), 0) == ids[0]);
        CHECK(L::partial(buffer.data(), k - 1) == partials[k - 1]);
        CHECK(L::id(buffer.data(), k - 1) == ids[k - 1]);
    }
}

TEST_CASE("distinct_and_active: true only for distinct active slots, false (merge path) for ids sharing a mask bit") {
    using L = record_layout<double>;
    // small statements compare every pair
    const identifier two[2] = {4, 68}, two_same[2] = {4, 4}, two_passive[2] = {4, 0};
    CHECK(L::distinct_and_active<2>(two));
    CHECK_FALSE(L::distinct_and_active<2>(two_same));
    CHECK_FALSE(L::distinct_and_active<2>(two_passive));
    // from 4 slots on: a 64-bit mask of id mod 64
    const identifier near[8] = {100, 101, 102, 103, 104, 105, 106, 107};
    CHECK(L::distinct_and_active<8>(near));
    const identifier repeat[8] = {100, 101, 102, 103, 104, 105, 106, 100};
    CHECK_FALSE(L::distinct_and_active<8>(repeat));
    const identifier passive[5] = {1, 2, 3, 0, 5};
    CHECK_FALSE(L::distinct_and_active<5>(passive));
    const identifier first_passive[4] = {0, 2, 3, 4};
    CHECK_FALSE(L::distinct_and_active<4>(first_passive));
    // 3 and 67 differ but share bit 3: the mask test fails, and merge_pairs
    // (the path the recorder then takes) still writes both as separate pairs
    const identifier shared_bit[4] = {3, 67, 5, 6};
    CHECK_FALSE(L::distinct_and_active_mask<4>(shared_bit));
#if TAPEFLOW_SIMD_DISTINCT
    CHECK(L::distinct_and_active<4>(shared_bit));  // the vector test is exact
#else
    CHECK_FALSE(L::distinct_and_active<4>(shared_bit));
#endif
    std::vector<std::byte> tape(L::size(4));
    const double partials[4] = {1.0, 2.0, 3.0, 4.0};
    REQUIRE(L::merge_pairs<4>(tape.data(), shared_bit, partials) == 4);
    for (std::uint32_t i = 0; i < 4; ++i) {
        CHECK(L::id(tape.data(), i) == shared_bit[i]);
        CHECK(L::partial(tape.data(), i) == partials[i]);
    }
}

namespace {

// The reference: every identifier active and no two equal.
template <std::size_t N>
bool all_active_and_distinct(const identifier* ids) {
    for (std::size_t i = 0; i < N; ++i) {
        if (ids[i] == 0) return false;
        for (std::size_t j = 0; j < i; ++j)
            if (ids[j] == ids[i]) return false;
    }
    return true;
}

// distinct_and_active<N> (and the mask and vector tests it chooses from)
// on one set of identifiers: "distinct" only when it is (else a repeat
// would be written as two pairs of one identifier, which is harmless for the
// sweep but not what the record promises); exact where the test is exact.
template <std::size_t N>
void check_distinct(const identifier* ids) {
    using L = record_layout<double>;
    const bool expected = all_active_and_distinct<N>(ids);
    if (!expected) {
        REQUIRE_FALSE(L::distinct_and_active<N>(ids));
        REQUIRE_FALSE(L::distinct_and_active_mask<N>(ids));
    }
    if (N <= 3) REQUIRE(L::distinct_and_active<N>(ids) == expected);
#if TAPEFLOW_SIMD_DISTINCT
    if constexpr (N <= 8) {
        REQUIRE(L::distinct_and_active_vector<N>(ids) == expected);  // AVX2 or SSE2
        REQUIRE(L::distinct_and_active<N>(ids) == expected);
    }
#endif
}

// Distinct identifiers of a few layouts, then each with one repeat at every
// pair of places and with a 0 at every place.
template <std::size_t N>
void check_distinct_width(std::mt19937& random) {
    std::vector<std::vector<identifier>> sets;
    std::vector<identifier> ids(N);
    for (std::size_t i = 0; i < N; ++i) ids[i] = identifier(100 + i);  // neighbours
    sets.push_back(ids);
    for (std::size_t i = 0; i < N; ++i) ids[i] = identifier(5 + 64 * i);  // one mask bit for all
    sets.push_back(ids);
    for (std::size_t i = 0; i < N; ++i) ids[i] = identifier(1024 * (N - i) + 3);  // arrays of 1024
    sets.push_back(ids);
    for (std::size_t i = 0; i < N; ++i) ids[i] = tapeflow::max_record_identifier - identifier(i);
    sets.push_back(ids);
    std::uniform_int_distribution<identifier> any(1, 200);
    for (int r = 0; r < 200; ++r) {
        for (std::size_t i = 0; i < N; ++i) ids[i] = any(random);  // repeats by chance too
        sets.push_back(ids);
    }
    for (const std::vector<identifier>& set : sets) {
        check_distinct<N>(set.data());
        for (std::size_t i = 0; i < N; ++i) {
            std::vector<identifier> changed = set;
            changed[i] = 0;
            check_distinct<N>(changed.data());
            for (std::size_t j = 0; j < i; ++j) {
                changed = set;
                changed[i] = changed[j];
                check_distinct<N>(changed.data());
            }
        }
    }
}

}  // namespace

TEST_CASE("distinct_and_active against pairwise compares: every width to 10, repeats and zeros at every place") {
    std::mt19937 random(20261127);
    check_distinct_width<2>(random);
    check_distinct_width<3>(random);
    check_distinct_width<4>(random);
    check_distinct_width<5>(random);
    check_distinct_width<6>(random);
    check_distinct_width<7>(random);
    check_distinct_width<8>(random);
    check_distinct_width<9>(random);
    check_distinct_width<10>(random);
#if TAPEFLOW_SIMD_DISTINCT
    // Congruent mod 64 but different: the vector test finds them distinct.
    const identifier congruent[7] = {5, 69, 133, 197, 261, 325, 389};
    CHECK(record_layout<double>::distinct_and_active<7>(congruent));
    CHECK_FALSE(record_layout<double>::distinct_and_active_mask<7>(congruent));
#endif
#if !defined(TAPEFLOW_TEST_EXPECT_SIMD_DISTINCT) && defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
    // record_test itself, on x86-64 (SSE2 at least): a vector test, not the mask
    STATIC_REQUIRE(TAPEFLOW_SIMD_DISTINCT >= 1);
#endif
#ifdef TAPEFLOW_TEST_EXPECT_SIMD_DISTINCT
    // record_avx2_test and record_mask_test (tests/tape/CMakeLists.txt) are
    // built to test one path each
    STATIC_REQUIRE(TAPEFLOW_SIMD_DISTINCT == TAPEFLOW_TEST_EXPECT_SIMD_DISTINCT);
#endif
}

TEST_CASE("merge_pairs merges repeats and drops passive slots, and the reader walks records back") {
    using L = record_layout<double>;
    std::vector<std::byte> tape(1024);
    std::byte* at = tape.data();
    // a statement x*x + 2*y + c (c passive, identifier 0): pairs for x and y
    const identifier ids1[4] = {7, 7, 9, 0};
    const double partials1[4] = {1.5, 1.5, 2.0, 4.0};
    CHECK_FALSE(L::distinct_and_active<4>(ids1));
    const std::uint32_t k1 = L::merge_pairs<4>(at, ids1, partials1);
    REQUIRE(k1 == 2);
    L::write_header(at, 3, k1);
    at += L::size(k1);
    L::write_external(at, 42);  // a custom adjoint's entry
    at += L::external_size;
    const identifier ids2[3] = {5, 1, 2};
    const double partials2[3] = {-1.0, 2.0, 0.25};
    CHECK(L::distinct_and_active<3>(ids2));
    const std::size_t b2 = L::write(at, 4, 3, partials2, ids2);
    at += b2;
    const identifier passive[2] = {0, 0};
    CHECK(L::merge_pairs<2>(at, passive, partials2) == 0);

    tapeflow::reverse_record_reader<double> r(tape.data(), at);
    REQUIRE(r.more());
    auto h = r.previous();
    CHECK(h.lhs == 4);
    REQUIRE(h.count == 3);
    CHECK_FALSE(h.update);
    for (std::uint32_t i = 0; i < 3; ++i) {
        CHECK(r.id(i) == ids2[i]);
        CHECK(r.partial(i) == partials2[i]);
    }
    REQUIRE(r.more());
    h = r.previous();
    CHECK(h.lhs == 0);
    REQUIRE(h.count == 0);
    CHECK_FALSE(h.update);  // an external entry, not a long update record
    CHECK(r.take_external() == 42);
    REQUIRE(r.more());
    h = r.previous();
    CHECK(h.lhs == 3);
    REQUIRE(h.count == 2);
    CHECK(r.id(0) == 7);
    CHECK(r.partial(0) == 3.0);
    CHECK(r.id(1) == 9);
    CHECK(r.partial(1) == 2.0);
    CHECK(r.record() == tape.data());
    CHECK_FALSE(r.more());
}

namespace {

// The pairs a statement's slots should become, computed the obvious way:
// passive slots dropped, each identifier once in order of first
// appearance, its partials summed left to right.
std::vector<std::pair<identifier, double>> expected_pairs(const identifier* ids, const double* partials,
                                                          std::size_t n) {
    std::vector<std::pair<identifier, double>> pairs;
    for (std::size_t i = 0; i < n; ++i) {
        if (ids[i] == 0) continue;
        bool found = false;
        for (auto& p : pairs)
            if (p.first == ids[i]) {
                p.second += partials[i];
                found = true;
                break;
            }
        if (!found) pairs.emplace_back(ids[i], partials[i]);
    }
    return pairs;
}

template <std::size_t N>
void check_merge_against_reference(std::mt19937& rng) {
    using L = record_layout<double>;
    // few distinct identifiers, so that repeats (also three or more of one)
    // and passive slots are common
    std::uniform_int_distribution<identifier> pick(0, 3);
    std::uniform_real_distribution<double> value(-2.0, 2.0);
    for (int round = 0; round < 500; ++round) {
        identifier ids[N];
        double partials[N];
        for (std::size_t i = 0; i < N; ++i) {
            ids[i] = pick(rng) * 11;  // 0 (passive), 11, 22 or 33
            partials[i] = value(rng);
        }
        const auto expected = expected_pairs(ids, partials, N);
        std::vector<std::byte> tape(L::size(N));
        const std::uint32_t k = L::merge_pairs<N>(tape.data(), ids, partials);
        REQUIRE(k == expected.size());
        for (std::uint32_t i = 0; i < k; ++i) {
            CHECK(L::id(tape.data(), i) == expected[i].first);
            CHECK(L::partial(tape.data(), i) == expected[i].second);  // same additions, same order: exact
        }
    }
}

}  // namespace

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

template <std::size_t N>
void check_signed_zero_kept() {
    using L = record_layout<double>;
    // a -0 partial (x * y with y = -0) beside a repeat (z twice): stored
    // as -0, like the branchy merge, which adds only on a repeat
    identifier ids[N];
    double partials[N];
    for (std::size_t i = 0; i < N; ++i) {
        ids[i] = identifier(100 + i);
        partials[i] = 1.0 + double(i);
    }
    partials[0] = -0.0;
    ids[N - 1] = ids[1];  // a repeat, so that the merge path is the one taken
    std::vector<std::byte> tape(L::size(N));
    REQUIRE(L::merge_pairs<N>(tape.data(), ids, partials) == N - 1);
    CHECK(same_bits(L::partial(tape.data(), 0), -0.0));
    CHECK(same_bits(L::partial(tape.data(), 1), partials[1] + partials[N - 1]));
}

}  // namespace

TEST_CASE("merge_pairs keeps a -0 partial as it is, in both merges") {
    check_signed_zero_kept<3>();
    check_signed_zero_kept<4>();
    check_signed_zero_kept<7>();
    check_signed_zero_kept<8>();
}

TEST_CASE("merge_pairs gives the pairs of a reference merge for every statement width (branchy and in-register merges)") {
    std::mt19937 rng(20261126);
    check_merge_against_reference<1>(rng);
    check_merge_against_reference<2>(rng);
    check_merge_against_reference<3>(rng);  // compares against the stored pairs
    check_merge_against_reference<4>(rng);  // 4 to 7: merged in registers
    check_merge_against_reference<5>(rng);
    check_merge_against_reference<6>(rng);
    check_merge_against_reference<7>(rng);
    check_merge_against_reference<8>(rng);  // compares against the stored pairs again
    check_merge_against_reference<9>(rng);
    check_merge_against_reference<12>(rng);
}
