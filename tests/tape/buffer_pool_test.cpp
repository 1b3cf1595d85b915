// tapeflow/tape/buffer_pool.hpp: the buffers external entries take from
// their tape and give back when a reset drops them.
#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>
#include <tapeflow/tape/buffer_pool.hpp>

#include <cstddef>
#include <vector>

using tapeflow::buffer_pool;
using tapeflow::pooled_buffer;

TEST_CASE("take() gives the smallest spare with room, else a new vector, and give() keeps the memory") {
    buffer_pool<double> pool;
    pool.prepare();
    CHECK(pool.bytes() == 0);

    std::vector<double> fresh = pool.take(100);
    CHECK(fresh.empty());
    CHECK(fresh.capacity() >= 100);

    std::vector<double> small(10), large(1000);
    const double* small_data = small.data();
    const double* large_data = large.data();
    pool.give(std::move(small));
    pool.give(std::move(large));
    CHECK(pool.bytes() == (10 + 1000) * sizeof(double));

    std::vector<double> got = pool.take(500);  // only the large one has room
    CHECK(got.data() == large_data);
    CHECK(got.empty());  // emptied, capacity kept
    CHECK(got.capacity() == 1000);
    CHECK(pool.bytes() == 10 * sizeof(double));

    pool.give(std::move(got));
    std::vector<double> tight = pool.take(8);  // both fit: the smaller
    CHECK(tight.data() == small_data);

    std::vector<double> grown = pool.take(5000);  // none fits: a new vector
    CHECK(grown.capacity() >= 5000);
    CHECK(pool.bytes() == 1000 * sizeof(double));  // the spare stays

    pool.give(std::vector<double>());  // nothing to keep
    CHECK(pool.bytes() == 1000 * sizeof(double));

    std::vector<double> none = pool.take(0);  // no size asked: the spares stay
    CHECK(none.capacity() == 0);
    CHECK(pool.bytes() == 1000 * sizeof(double));
}

TEST_CASE("the pool keeps at most max_spares buffers and never allocates in give()") {
    buffer_pool<int> pool;
    pool.prepare();
    for (std::size_t i = 0; i < buffer_pool<int>::max_spares + 10; ++i) pool.give(std::vector<int>(4));
    CHECK(pool.bytes() == buffer_pool<int>::max_spares * 4 * sizeof(int));

    buffer_pool<int> unprepared;  // no room reserved: give() drops the buffer
    unprepared.give(std::vector<int>(4));
    CHECK(unprepared.bytes() == 0);
}

TEST_CASE("pooled_buffer gives its vector back when destroyed, moved into, or asked") {
    buffer_pool<double> pool;
    pool.prepare();
    {
        pooled_buffer<double> b(pool, 64);
        b->resize(64);
        CHECK(pool.bytes() == 0);
    }
    CHECK(pool.bytes() >= 64 * sizeof(double));

    pooled_buffer<double> a(pool, 64);  // takes that one back
    CHECK(pool.bytes() == 0);
    const double* data = a->data();
    pooled_buffer<double> moved(std::move(a));
    CHECK(moved->data() == data);
    CHECK(a->capacity() == 0);  // NOLINT(bugprone-use-after-move): moved-from is empty
    moved.give_back();
    CHECK(moved->capacity() == 0);
    CHECK(pool.bytes() >= 64 * sizeof(double));

    pooled_buffer<double> target(pool, 16);
    pooled_buffer<double> source(pool, 128);
    const std::size_t held = pool.bytes();
    target = std::move(source);  // target's old buffer goes back
    CHECK(pool.bytes() > held);
    pooled_buffer<double> unowned;  // not from a pool: destroying it gives nothing back
    unowned->resize(3);
}

TEST_CASE("a tape reuses its entries' buffers from one recording to the next") {
    tapeflow::tape t;
    constexpr std::size_t n = 1000;
    std::vector<tapeflow::Real> x(n);
    std::vector<double> gradient_first, gradient_again;
    std::size_t kept_after_first = 0;
    for (int round = 0; round < 3; ++round) {
        t.reset();
        t.start_recording();
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = 0.001 * double(i + 1);
            t.register_input(x[i]);
        }
        // y = sum_i x_i^2 as one entry
        tapeflow::Real y;
        tapeflow::custom_adjoint op;
        op.reserve(n, 1);
        double sum = 0;
        for (const auto& xi : x) {
            op.add_input(xi);
            sum += xi.value() * xi.value();
        }
        op.add_output(y, sum);
        std::vector<double> values(n);
        for (std::size_t i = 0; i < n; ++i) values[i] = x[i].value();
        op.record([values](const double* yb, double* xb) {
            for (std::size_t i = 0; i < values.size(); ++i) xb[i] += 2 * values[i] * yb[0];
        });
        t.register_output(y);
        t.stop_recording();
        t.set_adjoint(y, 1.0);
        t.sweep();
        std::vector<double>& g = round == 0 ? gradient_first : gradient_again;
        g.clear();
        for (const auto& xi : x) g.push_back(t.adjoint(xi));
        if (round == 0) {
            t.reset();  // the entry goes: its identifier buffers return to the tape
            kept_after_first = t.identifier_buffers().bytes();
            CHECK(kept_after_first >= n * sizeof(tapeflow::identifier));
            CHECK(t.statistics().spare_external_bytes >= kept_after_first);
            CHECK(t.statistics().external_bytes == 0);
        }
    }
    t.reset();
    CHECK(t.identifier_buffers().bytes() == kept_after_first);  // reused, not grown
    CHECK(gradient_again == gradient_first);
    for (std::size_t i = 0; i < n; ++i) CHECK(gradient_first[i] == 2 * 0.001 * double(i + 1));
}
