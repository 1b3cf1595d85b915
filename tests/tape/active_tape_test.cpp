#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

#include <stdexcept>
#include <thread>

TEST_CASE("active_tape_scope makes a tape active for a scope and the previous one active after it") {
    tapeflow::tape& before = tapeflow::tape::active();
    tapeflow::tape inner;
    {
        tapeflow::active_tape_scope scope(inner);
        CHECK(inner.is_active());
        CHECK(tapeflow::tape::active_if_any() == &inner);
        inner.start_recording();
        tapeflow::Real x = 2.0;
        inner.register_input(x);
        tapeflow::Real y = x * x;
        inner.register_output(y);
        inner.stop_recording();
        CHECK(y.tape_tag() == inner.serial());
        inner.set_adjoint(y, 1.0);
        inner.sweep();
        CHECK(inner.adjoint(x) == 4.0);
    }
    CHECK(before.is_active());
    CHECK_FALSE(inner.is_active());
}

TEST_CASE("active_tape_scope restores the previous tape when the scope is left by an exception") {
    tapeflow::tape& before = tapeflow::tape::active();
    tapeflow::tape inner;
    try {
        tapeflow::active_tape_scope scope(inner);
        throw std::runtime_error("leaving");
    } catch (const std::runtime_error&) {
    }
    CHECK(before.is_active());
}

TEST_CASE("an exception that leaves active_tape_scope while its tape records: the previous tape is active again") {
    tapeflow::tape& before = tapeflow::tape::active();
    tapeflow::tape inner;
    try {
        tapeflow::active_tape_scope scope(inner);
        inner.start_recording();
        throw std::runtime_error("in the middle of a recording");
    } catch (const std::runtime_error&) {
    }
    CHECK(before.is_active());
    CHECK(inner.is_recording());
    inner.stop_recording();
    inner.reset();
}

TEST_CASE("active_tape_scope refuses a tape while another one records, and changes nothing") {
    tapeflow::tape& outer = tapeflow::tape::active();
    outer.reset();
    outer.start_recording();
    tapeflow::tape inner;
    CHECK_THROWS_AS(tapeflow::active_tape_scope<tapeflow::tape>(inner), tapeflow::usage_error);
    CHECK(outer.is_active());
    outer.stop_recording();
    outer.reset();
}

TEST_CASE("active_if_any creates no tape, and active() makes the thread's default tape active") {
    std::thread([] {
        CHECK(tapeflow::tape::active_if_any() == nullptr);
        tapeflow::Real x = 1.0;  // a passive assignment needs no tape
        x = x * 2.0;
        CHECK(tapeflow::tape::active_if_any() == nullptr);
        tapeflow::tape& t = tapeflow::tape::active();
        CHECK(tapeflow::tape::active_if_any() == &t);
        CHECK(&t == &tapeflow::tape::thread_default());
    }).join();
}

TEST_CASE("a tape that is destroyed while active leaves the thread without an active tape") {
    std::thread([] {
        {
            tapeflow::tape t;
            t.activate();
            CHECK(tapeflow::tape::active_if_any() == &t);
        }
        CHECK(tapeflow::tape::active_if_any() == nullptr);
    }).join();
}
