// The prefetch thread: jobs in submission order, wait(ticket), the
// synchronous mode, errors kept and rethrown (later jobs dropped),
// clear_error(), and a destructor that joins the thread even with jobs queued.
#include <catch2/catch.hpp>
#include <tapeflow/stream/prefetcher.hpp>

#include "stream/stream_support.hpp"

#include <atomic>
#include <chrono>
#include <future>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using tapeflow::prefetcher;
using namespace std::chrono_literals;

namespace {

// A gate that jobs block on until the test opens it.
class gate {
public:
    void open() { promise_.set_value(); }
    void pass() const { future_.wait(); }

private:
    std::promise<void> promise_;
    std::shared_future<void> future_ = promise_.get_future().share();
};

}  // namespace

TEST_CASE("jobs run in submission order on one background thread") {
    tapeflow_test::watchdog dog(60, "jobs in order");
    prefetcher p(true);
    CHECK_FALSE(p.thread_started());
    std::vector<int> order;  // touched by the jobs only until drain()
    std::vector<std::thread::id> threads;
    prefetcher::ticket last = 0;
    for (int i = 0; i < 200; ++i) {
        const prefetcher::ticket t = p.submit([&order, &threads, i] {
            if (i % 17 == 0) std::this_thread::sleep_for(100us);  // uneven job lengths
            order.push_back(i);
            threads.push_back(std::this_thread::get_id());
        });
        CHECK(t > last);  // tickets increase
        last = t;
    }
    CHECK(p.thread_started());
    p.drain();
    REQUIRE(order.size() == 200);
    for (int i = 0; i < 200; ++i) CHECK(order[std::size_t(i)] == i);
    for (const auto& id : threads) {
        CHECK(id == threads.front());
        CHECK(id != std::this_thread::get_id());
    }
}

TEST_CASE("hand-offs around the spin time: every job runs, every wait returns") {
    // Both sides spin for prefetcher::spin_time before they sleep. Gaps and
    // job lengths just below and above it make submit() meet a thread that
    // is spinning, falling asleep or asleep, and wait() spin or block: a
    // lost wake-up hangs here (the watchdog aborts).
    tapeflow_test::watchdog dog(120, "hand-offs around the spin time");
    prefetcher p(true);
    const auto spin = prefetcher::spin_time;
    const std::chrono::microseconds gaps[] = {0us, spin / 2, spin - 10us, spin, spin + 10us, 2 * spin};
    std::atomic<int> ran{0};
    int submitted = 0;
    for (int round = 0; round < 40; ++round)
        for (const auto gap : gaps) {
            const auto job_length = gaps[std::size_t(round + submitted) % std::size(gaps)];
            const prefetcher::ticket t = p.submit([&ran, job_length] {
                std::this_thread::sleep_for(job_length);
                ++ran;
            });
            ++submitted;
            if (round % 2 == 0) p.wait(t);  // wait() meets a job running, finished or queued
            std::this_thread::sleep_for(gap);
        }
    p.drain();
    CHECK(ran == submitted);
}

TEST_CASE("wait(ticket) returns once that job is done, not before") {
    tapeflow_test::watchdog dog(60, "wait(ticket)");
    gate g;  // before the prefetcher: it outlives the jobs that use it
    prefetcher p(true);
    std::atomic<int> finished{0};
    const auto first = p.submit([&] {
        g.pass();
        finished = 1;
    });
    const auto second = p.submit([&] {
        std::this_thread::sleep_for(20ms);
        finished = 2;
    });
    // Open the gate from another thread after a while: wait(first) must block
    // until then.
    const auto start = std::chrono::steady_clock::now();
    std::thread opener([&] {
        std::this_thread::sleep_for(100ms);
        g.open();
    });
    const double waited = p.wait(first);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(finished >= 1);
    CHECK(elapsed >= 0.1);
    CHECK(waited >= 0.05);  // wait() reports the seconds it blocked
    CHECK(waited <= elapsed);
    p.wait(second);
    CHECK(finished == 2);
    CHECK(p.wait(second) == 0.0);  // already done: no blocking
    CHECK(p.wait(first) == 0.0);
    opener.join();
}

TEST_CASE("disabled: jobs run synchronously inside submit, no thread") {
    const auto threads_before = tapeflow_test::thread_count();
    prefetcher p(false);
    std::vector<std::thread::id> ran_on;
    int calls = 0;
    const auto t1 = p.submit([&] {
        ++calls;
        ran_on.push_back(std::this_thread::get_id());
    });
    CHECK(calls == 1);  // done before submit returned
    const auto t2 = p.submit([&] {
        ++calls;
        ran_on.push_back(std::this_thread::get_id());
    });
    CHECK(calls == 2);
    CHECK(t2 > t1);
    CHECK(p.wait(t1) == 0.0);
    CHECK(p.wait(t2) == 0.0);
    CHECK(p.drain() == 0.0);
    CHECK_FALSE(p.thread_started());
    CHECK(tapeflow_test::settled_thread_count(threads_before) == threads_before);
    for (const auto& id : ran_on) CHECK(id == std::this_thread::get_id());
}

TEST_CASE("a failing job: its error is rethrown by the next wait() and submit(), later jobs do not run") {
    tapeflow_test::watchdog dog(60, "failing job");
    gate g;  // before the prefetcher: it outlives the jobs that use it
    prefetcher p(true);
    std::atomic<int> ran{0};
    std::atomic<bool> later_ran{false};
    const auto t1 = p.submit([&] {
        g.pass();  // hold the queue until every job is submitted
        ++ran;
    });
    const auto t2 = p.submit([&] {
        ++ran;
        throw tapeflow::error("job two failed");
    });
    const auto t3 = p.submit([&] { later_ran = true; });
    const auto t4 = p.submit([&] { later_ran = true; });
    g.open();

    // wait() for a job after the failure: the error, not a hang.
    try {
        p.wait(t4);
        FAIL("wait() did not rethrow");
    } catch (const tapeflow::error& e) {
        CHECK(tapeflow_test::contains(e.what(), "job two failed"));
    }
    CHECK(ran == 2);
    // The error stays until clear_error(): wait() on earlier or later
    // tickets and submit() rethrow it, and the submitted job does not run.
    CHECK_THROWS_WITH(p.wait(t1), Catch::Contains("job two failed"));
    CHECK_THROWS_WITH(p.wait(t3), Catch::Contains("job two failed"));
    CHECK_THROWS_WITH(p.drain(), Catch::Contains("job two failed"));
    CHECK_THROWS_WITH(p.submit([&] { later_ran = true; }), Catch::Contains("job two failed"));
    std::this_thread::sleep_for(20ms);
    CHECK_FALSE(later_ran);
    (void)t2;

    // clear_error(): usable again, new jobs run.
    p.clear_error();
    std::atomic<bool> after{false};
    const auto t5 = p.submit([&] { after = true; });
    CHECK_NOTHROW(p.wait(t5));
    CHECK(after);
    CHECK_FALSE(later_ran);  // the dropped jobs stay dropped
    CHECK_NOTHROW(p.drain());
}

TEST_CASE("a job that throws something that is not a tapeflow::error is rethrown as it is") {
    tapeflow_test::watchdog dog(60, "foreign exception");
    prefetcher p(true);
    const auto t = p.submit([] { throw std::out_of_range("index 7"); });
    CHECK_THROWS_AS(p.wait(t), std::out_of_range);
    p.clear_error();
    CHECK_NOTHROW(p.wait(p.submit([] {})));
}

TEST_CASE("disabled: a failing job throws from submit() and again until clear_error()") {
    prefetcher p(false);
    int ran = 0;
    CHECK_THROWS_WITH(p.submit([] { throw tapeflow::error("disk gone"); }), Catch::Contains("disk gone"));
    CHECK_THROWS_WITH(p.submit([&] { ++ran; }), Catch::Contains("disk gone"));
    CHECK_THROWS_WITH(p.drain(), Catch::Contains("disk gone"));
    CHECK(ran == 0);
    p.clear_error();
    const auto t = p.submit([&] { ++ran; });
    CHECK(ran == 1);
    CHECK_NOTHROW(p.wait(t));
}

TEST_CASE("the destructor joins the thread, also with jobs queued") {
    tapeflow_test::watchdog dog(60, "prefetcher destructor");
    const auto threads_before = tapeflow_test::thread_count();
    SECTION("idle") {
        {
            prefetcher p(true);
            p.wait(p.submit([] {}));
            CHECK(tapeflow_test::thread_count() == threads_before + 1);
        }
        CHECK(tapeflow_test::settled_thread_count(threads_before) == threads_before);
    }
    SECTION("never started") {
        { prefetcher p(true); }
        CHECK(tapeflow_test::settled_thread_count(threads_before) == threads_before);
    }
    SECTION("jobs queued") {
        auto ran = std::make_shared<std::atomic<int>>(0);
        {
            prefetcher p(true);
            for (int i = 0; i < 50; ++i)
                p.submit([ran] {
                    std::this_thread::sleep_for(1ms);
                    ++*ran;
                });
            CHECK(*ran < 50);  // still queued when the destructor starts
        }
        CHECK(tapeflow_test::settled_thread_count(threads_before) == threads_before);
        // No job runs after the destructor returned.
        const int at_destruction = *ran;
        std::this_thread::sleep_for(30ms);
        CHECK(*ran == at_destruction);
    }
    SECTION("an error pending") {
        std::atomic<bool> later_ran{false};
        {
            gate g;
            prefetcher p(true);
            p.submit([&] {
                g.pass();
                throw tapeflow::error("fails");
            });
            p.submit([&] { later_ran = true; });  // queued behind the failing job
            g.open();
            std::this_thread::sleep_for(10ms);
        }
        CHECK_FALSE(later_ran);
        CHECK(tapeflow_test::settled_thread_count(threads_before) == threads_before);
    }
}
