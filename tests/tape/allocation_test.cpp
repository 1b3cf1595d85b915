// Recording is allocation-free in steady state: once the tape has grown,
// reset + record + sweep allocate nothing. Counted with a replaced global
// operator new (this executable only).
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include "support/options.hpp"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace {
std::atomic<long> allocations{0};
}

// Every replaceable allocation function goes through these two, so that new
// and delete always match (AddressSanitizer checks that they do).
static void* counted_allocate(std::size_t n, std::size_t alignment) {
    ++allocations;
    const std::size_t rounded = (n + alignment - 1) / alignment * alignment;
    if (void* p = std::aligned_alloc(alignment, rounded ? rounded : alignment)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n) { return counted_allocate(n, alignof(std::max_align_t)); }
void* operator new[](std::size_t n) { return counted_allocate(n, alignof(std::max_align_t)); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_allocate(n, std::size_t(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_allocate(n, std::size_t(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try { return operator new(n); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    try { return operator new(n); } catch (...) { return nullptr; }
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    try { return operator new(n, a); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    try { return operator new(n, a); } catch (...) { return nullptr; }
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

using tapeflow::Real;

namespace {
// One recording of a small time loop with regions over a preallocated state.
double record_and_sweep(tapeflow::tape& t, std::vector<Real>& u) {
    t.reset();
    t.start_recording();
    for (auto& v : u) t.register_input(v);
    Real energy = 0.0;
    for (int step = 0; step < 50; ++step) {
        tapeflow::Region r(t, "step");
        for (std::size_t i = 1; i + 1 < u.size(); ++i) {
            Real flux = u[i - 1] - 2.0 * u[i] + u[i + 1];  // temporary: identifier reused
            u[i] += 0.1 * flux * (1.0 + 0.1 * u[i] * u[i]);
        }
    }
    for (auto& v : u) energy += v * v;
    t.register_output(energy);
    t.stop_recording();
    t.set_adjoint(energy, 1.0);
    t.sweep();
    return t.adjoint(u[3]);
}
}  // namespace

TEST_CASE("steady-state recording and sweeping do not allocate") {
    tapeflow::tape t(tapeflow_test::tape_options(4096));  // small tiles: many tile switches
    std::vector<Real> u(64);
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = 0.01 * double(i);
    record_and_sweep(t, u);  // warm-up: grows tiles, identifiers, adjoints
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = 0.01 * double(i);
    REQUIRE(t.statistics().tiles > 10);

    const long before = allocations.load();
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = 0.01 * double(i);
    record_and_sweep(t, u);
    const long after = allocations.load();
    CHECK(after - before == 0);
}

// The optimizer may remove a new-expression whose pointer nothing observes
// (g++ -O1 removed `delete new std::vector<int>(10)`'s own allocation): the
// allocations here are a call of operator new, which it keeps, and a
// vector's buffer whose address is stored where it must stay visible.
static void* volatile escaped = nullptr;

TEST_CASE("the allocation counter works (the check above can fail)") {
    const long before = allocations.load();
    void* raw = ::operator new(64);
    ::operator delete(raw);
    CHECK(allocations.load() - before >= 1);
    std::vector<int> v(10);
    escaped = v.data();
    CHECK(allocations.load() - before >= 2);  // more when Catch2 allocates (-s)
}
