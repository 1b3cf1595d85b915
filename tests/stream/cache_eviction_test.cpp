// Cache eviction of a moved scratchpad half (tapeflow/stream/cache_eviction.hpp):
// flushing changes no byte and touches nothing past the range it is given,
// a job counts as "on another CPU" only when it runs on another thread
// and another CPU than the recorder, a tape stops flushing when its first
// timed flushes were slow, and the first decision is the verdict that
// later tapes follow. The streaming tape's gradients with
// the flush in place are checked in streaming_tape_test.
#include <catch2/catch.hpp>
#include <tapeflow/stream/cache_eviction.hpp>

#include <cstddef>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "support/affinity.hpp"

#if defined(__linux__)
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

using tapeflow::detail::evict_from_caches;
using tapeflow::detail::eviction_policy;
using tapeflow::detail::eviction_verdict;
using tapeflow::detail::running_place;
#if defined(__linux__)
using tapeflow_test::affinity_guard;
#endif

TEST_CASE("evict_from_caches leaves every byte as it was", "[cache_eviction]") {
    std::mt19937 gen(7);
    std::vector<std::byte> data(3 * 4096 + 100), copy;
    for (auto& b : data) b = std::byte(gen() & 0xff);
    copy = data;
    // whole buffer, an unaligned start, an odd length, nothing
    evict_from_caches(data.data(), data.size());
    evict_from_caches(data.data() + 13, 999);
    evict_from_caches(data.data() + 63, 2);  // two lines
    evict_from_caches(data.data(), 0);
    CHECK(data == copy);
    // and the bytes can be written again after the flush
    for (std::size_t i = 0; i < data.size(); i += 7) data[i] = std::byte(0x5a);
    for (std::size_t i = 0; i < data.size(); ++i) REQUIRE(data[i] == (i % 7 == 0 ? std::byte(0x5a) : copy[i]));
}

#if defined(__linux__)
TEST_CASE("evict_from_caches flushes nothing past the range", "[cache_eviction]") {
    // The range ends where an inaccessible page begins: a flush of a line
    // past the end faults there like a load (clflush needs read access).
    const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
    void* map = ::mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(map != MAP_FAILED);
    auto* base = static_cast<std::byte*>(map);
    REQUIRE(::mprotect(base + 2 * page, page, PROT_NONE) == 0);
    std::memset(base, 0x3c, 2 * page);
    evict_from_caches(base, 2 * page);             // up to the guard page's first byte
    evict_from_caches(base + page + 5, page - 5);  // unaligned start, same end
    evict_from_caches(base + 2 * page - 1, 1);     // the last byte alone
    CHECK(base[0] == std::byte(0x3c));
    CHECK(base[2 * page - 1] == std::byte(0x3c));
    ::munmap(map, 3 * page);
}
#endif

TEST_CASE("eviction_policy flushes until its first timed flushes were all slow", "[cache_eviction]") {
    const std::size_t lines = eviction_policy::sample_lines;
    const double slow = 4 * eviction_policy::max_ns_per_line * 1e-9 * lines;  // seconds for `lines`
    const double fast = eviction_policy::max_ns_per_line / 5 * 1e-9 * lines;
    eviction_verdict verdict;  // the test's own, not the process's
    eviction_policy p(verdict);
    CHECK(p.flushing());
    CHECK_FALSE(p.decided());
    CHECK(p.fastest_ns_per_line() == 0);

    SECTION("all slow: flushing stops at the last sample") {
        for (int i = 0; i + 1 < eviction_policy::samples; ++i) p.observe(lines, slow);
        CHECK(p.flushing());  // not before the decision
        CHECK_FALSE(p.decided());
        p.observe(lines, slow);
        CHECK(p.decided());
        CHECK_FALSE(p.flushing());
        CHECK(p.fastest_ns_per_line() == Approx(4 * eviction_policy::max_ns_per_line));
        p.observe(lines, fast);  // no second thoughts
        CHECK_FALSE(p.flushing());
    }
    SECTION("one fast sample keeps it, whatever comes later") {
        p.observe(lines, slow);
        p.observe(4 * lines, 4 * fast);  // per line, so longer flushes count alike
        for (int i = 2; i < eviction_policy::samples; ++i) p.observe(lines, slow);
        CHECK(p.decided());
        CHECK(p.flushing());
        CHECK(p.fastest_ns_per_line() == Approx(eviction_policy::max_ns_per_line / 5));
        for (int i = 0; i < 10; ++i) p.observe(lines, slow);
        CHECK(p.flushing());
    }
    SECTION("just under the limit keeps flushing, just over stops") {
        eviction_verdict other;
        eviction_policy q(other);
        for (int i = 0; i < eviction_policy::samples; ++i) {
            p.observe(lines, 0.99 * eviction_policy::max_ns_per_line * 1e-9 * lines);
            q.observe(lines, 1.01 * eviction_policy::max_ns_per_line * 1e-9 * lines);
        }
        CHECK(p.decided());
        CHECK(p.flushing());
        CHECK(q.decided());
        CHECK_FALSE(q.flushing());
    }
    SECTION("short flushes are not samples") {
        for (int i = 0; i < 10; ++i) p.observe(lines - 1, 1.0);
        CHECK_FALSE(p.decided());
        CHECK(p.flushing());
        CHECK(p.fastest_ns_per_line() == 0);
    }
}

TEST_CASE("a tape's decision is the process's: later policies follow it without timing", "[cache_eviction]") {
    const std::size_t lines = eviction_policy::sample_lines;
    const double slow = 4 * eviction_policy::max_ns_per_line * 1e-9 * lines;
    const double fast = eviction_policy::max_ns_per_line / 5 * 1e-9 * lines;
    eviction_verdict verdict;
    CHECK(verdict.ns_per_line() == 0);
    eviction_policy first(verdict), early(verdict);
    early.observe(lines, fast);  // one sample before the verdict: not yet decided
    CHECK_FALSE(early.decided());
    for (int i = 0; i < eviction_policy::samples; ++i) first.observe(lines, slow);
    REQUIRE(first.decided());
    CHECK(verdict.ns_per_line() == Approx(4 * eviction_policy::max_ns_per_line));

    SECTION("a policy made after the verdict is decided from the start, and times nothing") {
        eviction_policy later(verdict);
        CHECK(later.decided());
        CHECK_FALSE(later.flushing());
        CHECK(later.fastest_ns_per_line() == Approx(4 * eviction_policy::max_ns_per_line));
        later.observe(lines, fast);  // not a sample: the verdict stands
        CHECK_FALSE(later.flushing());
        std::vector<std::byte> data(2 * lines * 64, std::byte(0x42));
        later.evict(data.data(), data.size());
        CHECK(later.flushed() == 0);  // not flushing: nothing flushed
    }
    SECTION("a policy that had sampled follows the verdict instead of finishing its own") {
        CHECK(early.decided());
        CHECK_FALSE(early.flushing());
        CHECK(early.fastest_ns_per_line() == Approx(4 * eviction_policy::max_ns_per_line));  // the verdict's
        for (int i = 0; i < eviction_policy::samples; ++i) early.observe(lines, fast);
        CHECK_FALSE(early.flushing());
    }
    SECTION("the first decision is the verdict: a later one does not replace it") {
        eviction_verdict fresh;
        eviction_policy a(fresh), b(fresh);
        for (int i = 0; i < eviction_policy::samples; ++i) a.observe(lines, fast);
        CHECK(fresh.ns_per_line() == Approx(eviction_policy::max_ns_per_line / 5));
        fresh.publish(100);  // what a second tape deciding would do
        CHECK(fresh.ns_per_line() == Approx(eviction_policy::max_ns_per_line / 5));
        CHECK(b.decided());
        CHECK(b.flushing());
    }
    SECTION("0 or less is not a figure: it gives no verdict") {
        eviction_verdict empty;
        empty.publish(0);
        empty.publish(-1);
        CHECK(empty.ns_per_line() == 0);
        eviction_policy c(empty);
        CHECK_FALSE(c.decided());
        empty.publish(7);
        CHECK(empty.ns_per_line() == 7);
        CHECK(c.decided());
        CHECK(c.flushing());
    }
}

TEST_CASE("eviction_policy::evict times its flushes and leaves the bytes", "[cache_eviction]") {
    eviction_verdict verdict;
    eviction_policy p(verdict);
    std::vector<std::byte> data(eviction_policy::sample_lines * 64 + 64, std::byte(0x21));
    p.evict(data.data(), 100);  // too short to be timed
    CHECK(p.fastest_ns_per_line() == 0);
    for (int i = 0; i < eviction_policy::samples; ++i) p.evict(data.data(), data.size());
    if (!tapeflow::detail::can_flush) {  // nothing flushed, nothing timed
        CHECK_FALSE(p.decided());
        CHECK(p.flushed() == 0);
        return;
    }
    CHECK(p.flushed() == 1 + eviction_policy::samples);  // the short one is flushed too, untimed
    REQUIRE(p.decided());
    CHECK(p.fastest_ns_per_line() > 0);
    CHECK(verdict.ns_per_line() == p.fastest_ns_per_line());  // the first decision gives the verdict
    // whichever way this machine decided, it decided by the rule
    CHECK(p.flushing() == (p.fastest_ns_per_line() <= eviction_policy::max_ns_per_line));
    p.evict(data.data(), data.size());
    CHECK(p.flushed() == (p.flushing() ? 2u : 1u) + eviction_policy::samples);
    for (auto b : data) REQUIRE(b == std::byte(0x21));
}

TEST_CASE("running_place: the recorder's own thread is never another CPU", "[cache_eviction]") {
    const running_place recorder;
    CHECK_FALSE(running_place().other_cpu_than(recorder));
    CHECK_FALSE(recorder.other_cpu_than(recorder));
}

#if defined(__linux__)
namespace {
// A place taken on a new thread pinned to `cpu`; `pinned` says whether the
// pinning worked (checked by the caller: no assertion on the other thread).
running_place place_on_cpu(int cpu, bool& pinned) {
    running_place place;
    std::thread t([&] {
        pinned = tapeflow_test::pin(0, {cpu});
        place = running_place();
    });
    t.join();
    return place;
}
}  // namespace

TEST_CASE("running_place: another thread is another CPU unless it runs on the same CPU", "[cache_eviction]") {
    affinity_guard guard;
    REQUIRE(guard.saved());
    const std::vector<int> cpus = guard.cpus();
    REQUIRE(!cpus.empty());
    REQUIRE(tapeflow_test::pin(0, {cpus[0]}));  // the "recorder"
    const running_place recorder;
    if (recorder.cpu < 0) {
        WARN("sched_getcpu() does not tell the CPU here: every other thread counts as another CPU");
        bool pinned = false;
        CHECK(place_on_cpu(cpus[0], pinned).other_cpu_than(recorder));
        return;
    }
    CHECK(recorder.cpu == cpus[0]);
    bool pinned = false;
    // a job thread on the same CPU: the lines are in the recorder's cache already
    const running_place same = place_on_cpu(cpus[0], pinned);
    REQUIRE(pinned);
    CHECK_FALSE(same.other_cpu_than(recorder));
    if (cpus.size() < 2) {
        WARN("one usable CPU: the case of a job on another CPU is not run");
        return;
    }
    const running_place other = place_on_cpu(cpus[1], pinned);
    REQUIRE(pinned);
    CHECK(other.cpu == cpus[1]);
    CHECK(other.other_cpu_than(recorder));
}
#endif
