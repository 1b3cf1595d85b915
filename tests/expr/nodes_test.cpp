// Expression nodes (include/tapeflow/expr/nodes.hpp): a statement deeper than
// tapeflow::max_expression_depth is split into records at that depth
// (split_operand), so statements of any length compile, differentiate
// correctly in every mode, give their temporaries' identifiers back, and
// take stack in proportion to their length.
#include <catch2/catch.hpp>
#include <pthread.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/tapeflow.hpp>

#include "support/sanitized.hpp"

using tapeflow::Real;

namespace {

constexpr std::size_t depth = tapeflow::max_expression_depth;

/// x[0] + x[1] + ... + x[n-1] written out: a chain n - 1 deep.
template <class T, std::size_t... I>
T chain_sum(const std::vector<T>& x, std::index_sequence<I...>) {
    return (x[I] + ...);
}

/// x[0] x[1] + x[1] x[2] + ... + x[n-1] x[0] written out (n deep), as a
/// tree, not assigned: what a function returns when it returns an
/// expression (its temporaries travel with it). The gradient is
/// x[j-1] + x[j+1] (indices mod n).
template <class T, std::size_t... I>
auto ring_tree(const std::vector<T>& x, std::index_sequence<I...>) {
    constexpr std::size_t n = sizeof...(I);
    return ((x[I] * x[(I + 1) % n]) + ...);
}

std::vector<double> ring_inputs(std::size_t n) {
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = 0.5 + 0.001 * double(i * 7 % 13) - 0.0003 * double(i);
    return x;
}

struct recorded {
    std::size_t statements, arguments;
    double value;
    std::vector<double> gradient;
};

template <std::size_t N>
recorded record_chain_sum() {
    tapeflow::tape t;
    t.start_recording();
    std::vector<Real> x(N);
    for (std::size_t i = 0; i < N; ++i) t.register_input(x[i], 1.0 + double(i));
    Real y = chain_sum(x, std::make_index_sequence<N>{});
    t.register_output(y);
    t.stop_recording();
    const tapeflow::tape_statistics s = t.statistics();
    t.set_adjoint(y, 1.0);
    t.sweep();
    recorded r{s.statements, s.arguments, y.value(), {}};
    for (const Real& xi : x) r.gradient.push_back(t.adjoint(xi));
    return r;
}

/// Runs f on a thread whose stack is a buffer filled with a pattern, and
/// returns how many bytes of it were written (the thread's stack high-water
/// mark, thread start-up included).
std::size_t stack_used(const std::function<void()>& f) {
    constexpr std::size_t size = std::size_t(32) << 20;
    void* stack = std::aligned_alloc(4096, size);
    REQUIRE(stack != nullptr);
    std::memset(stack, 0xA5, size);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, stack, size);
    pthread_t thread;
    auto body = [](void* p) -> void* {
        (*static_cast<const std::function<void()>*>(p))();
        return nullptr;
    };
    const int created = pthread_create(&thread, &attr, body, const_cast<std::function<void()>*>(&f));
    pthread_attr_destroy(&attr);
    REQUIRE(created == 0);
    pthread_join(thread, nullptr);
    const auto* bytes = static_cast<const unsigned char*>(stack);
    std::size_t untouched = 0;  // the stack grows down: count from the low end
    while (untouched < size && bytes[untouched] == 0xA5) ++untouched;
    std::free(stack);
    return size - untouched;
}

template <std::size_t N>
void check_ring_gradient(const std::vector<double>& g) {
    const std::vector<double> x = ring_inputs(N);
    REQUIRE(g.size() == N);
    for (std::size_t j = 0; j < N; ++j) {
        INFO("j = " << j);
        CHECK(g[j] == Approx(x[(j + N - 1) % N] + x[(j + 1) % N]).epsilon(1e-14));
    }
}

}  // namespace

TEST_CASE("a statement up to max_expression_depth deep is one record") {
    const recorded r = record_chain_sum<depth + 1>();  // depth levels exactly
    CHECK(r.statements == 1);
    CHECK(r.arguments == depth + 1);
    for (double g : r.gradient) CHECK(g == 1.0);
}

TEST_CASE("a deeper statement adds one record per max_expression_depth levels") {
    // The chain is split where an operation would nest deeper than the limit:
    // the first record takes depth + 1 operands, each later one the previous
    // record and depth more operands. So n operands make 1 + (n - 2) / depth
    // records, each split also an argument of the record after it.
    auto check = [](const recorded& r, std::size_t n) {
        INFO("n = " << n);
        const std::size_t splits = (n - 2) / depth;
        CHECK(r.statements == 1 + splits);
        CHECK(r.arguments == n + splits);
        CHECK(r.value == double(n) * double(n + 1) / 2);  // exact: small integers
        REQUIRE(r.gradient.size() == n);
        for (double g : r.gradient) CHECK(g == 1.0);
    };
    check(record_chain_sum<depth + 2>(), depth + 2);
    check(record_chain_sum<2 * depth + 1>(), 2 * depth + 1);
    check(record_chain_sum<2 * depth + 2>(), 2 * depth + 2);
    check(record_chain_sum<1000>(), 1000);
}

TEST_CASE("a 1000-term statement compiles, and its stack grows in proportion to its length") {
    // 1000 terms used to pass the compilers' template depth; at 300 terms
    // the nested temporaries of a sum of products took 2.1 MB of stack,
    // growing as n^2 (g++ 12 -O3).
    recorded r250{}, r1000{};
    const std::size_t base = stack_used([&] { r250 = record_chain_sum<2>(); });
    const std::size_t s250 = stack_used([&] { r250 = record_chain_sum<250>(); });
    const std::size_t s1000 = stack_used([&] { r1000 = record_chain_sum<1000>(); });
    CHECK(r250.value == 250.0 * 251.0 / 2);
    CHECK(r1000.value == 1000.0 * 1001.0 / 2);
    for (double g : r1000.gradient) CHECK(g == 1.0);
    INFO("stack bytes: 2 terms " << base << ", 250 terms " << s250 << ", 1000 terms " << s1000);
    REQUIRE(s250 > base);
    // four times the terms: four times the stack, not sixteen (allow 6)
    if (!tapeflow_test::sanitized) CHECK(double(s1000 - base) < 6.0 * double(s250 - base));
}

TEST_CASE("the temporary Reals of split statements give their identifiers back") {
    tapeflow::tape t;
    t.start_recording();
    std::vector<Real> x(300);
    for (std::size_t i = 0; i < x.size(); ++i) t.register_input(x[i], 0.25 * double(i));
    const std::size_t before = t.statistics().live_identifiers;
    Real y = 0.0;
    for (int round = 0; round < 50; ++round) y += chain_sum(x, std::make_index_sequence<300>{});
    t.register_output(y);
    const tapeflow::tape_statistics s = t.statistics();
    // x and y are alive, no temporary is
    CHECK(s.live_identifiers == before + 1);
    // identifiers are reused: a round needs y and four temporaries at most
    CHECK(s.peak_identifiers <= x.size() + 8);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    for (const Real& xi : x) CHECK(t.adjoint(xi) == 50.0);
}

TEST_CASE("split trees shared by copies: a tree returned from a function, and used twice") {
    // A sum of n products (each one level deep) is split every 63 levels
    // after the first 64: 1 + (n - 2) / (depth - 1) records, the last one
    // the assignment. ring_tree returns the tree with its temporaries;
    // twice() copies that tree twice into one node, and both copies hold
    // the same temporaries, alive until the last copy is gone: no record
    // more than the tree alone takes.
    constexpr std::size_t n = 150;
    constexpr std::size_t records = 1 + (n - 2) / (depth - 1);
    static_assert(records == 3, "150 terms: two temporaries and the assignment");
    auto twice = [](const auto& e) { return e + e; };
    const std::vector<double> x = ring_inputs(n);

    tapeflow::tape t;
    t.start_recording();
    std::vector<Real> p(n);
    for (std::size_t i = 0; i < n; ++i) t.register_input(p[i], x[i]);
    const std::size_t before = t.statistics().live_identifiers;
    Real alone = ring_tree(p, std::make_index_sequence<n>{});
    CHECK(t.statistics().statements == records);
    Real y = twice(ring_tree(p, std::make_index_sequence<n>{}));
    CHECK(t.statistics().statements == 2 * records);
    // the temporaries' identifiers are back: the inputs, alone and y live
    CHECK(t.statistics().live_identifiers == before + 2);
    t.register_output(y);
    t.stop_recording();
    t.set_adjoint(y, 1.0);
    t.sweep();
    std::vector<double> half(n);
    for (std::size_t j = 0; j < n; ++j) half[j] = t.adjoint(p[j]) / 2;
    check_ring_gradient<n>(half);
    double expected = 0;
    for (std::size_t i = 0; i < n; ++i) expected += x[i] * x[(i + 1) % n];
    CHECK(alone.value() == Approx(expected).epsilon(1e-14));
    CHECK(y.value() == Approx(2 * expected).epsilon(1e-14));

    // through a driver: f returns the tree (it outlives f's statement)
    const auto g = tapeflow::gradient(
        [&](const std::vector<Real>& q) { return twice(ring_tree(q, std::make_index_sequence<n>{})) * 1.0; }, x);
    for (std::size_t j = 0; j < n; ++j) half[j] = g[j] / 2;
    check_ring_gradient<n>(half);
}

#if !TAPEFLOW_TEST_SANITIZED
// Not compiled under the sanitizers (14 s of CPU at -O0 with ASan, for the
// drivers): forward mode splits into a Dual (no heap block), and the second
// order temporary is the same temporary_leaf that the cases above run there.
TEST_CASE("split statements in forward mode and second order") {
    // f = x0 (x0 + ... + x79): split once at the default depth.
    // df/dx0 = s + x0, df/dxj = x0 (s the sum); H00 = 2, H0j = Hj0 = 1, else 0.
    constexpr std::size_t n = 80;
    auto f = [](const auto& p) {
        using T = std::decay_t<decltype(p[0])>;
        return T(chain_sum(p, std::make_index_sequence<n>{}) * p[0]);
    };
    std::vector<double> x(n), v(n);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = 0.5 + 0.01 * double(i);
        v[i] = 1.0 - 0.02 * double(i);
    }
    double s = 0, v_rest = 0;
    for (std::size_t i = 0; i < n; ++i) s += x[i];
    for (std::size_t i = 1; i < n; ++i) v_rest += v[i];

    CHECK(tapeflow::derivative(f, x, v) == Approx((s + x[0]) * v[0] + x[0] * v_rest).epsilon(1e-14));

    const std::vector<double> hv = tapeflow::hessian_vector_product(f, x, v);
    REQUIRE(hv.size() == n);
    CHECK(hv[0] == Approx(2 * v[0] + v_rest).epsilon(1e-14));
    for (std::size_t j = 1; j < n; ++j) {
        INFO("j = " << j);
        CHECK(hv[j] == Approx(v[0]).epsilon(1e-14));
    }
}
#endif
