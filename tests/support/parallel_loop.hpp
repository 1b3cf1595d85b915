// tests/support/parallel_loop.hpp - a loop recorded by several std::threads
// inside one recording (tape/parallel_region.hpp), for the tests.
#pragma once

#include <tapeflow/tapeflow.hpp>

#include <cstddef>
#include <thread>
#include <vector>

namespace tapeflow_test {

// Runs body(i) for i in [begin, end): threads == 0 on this thread without a
// region; else on `threads` std::threads (contiguous chunks), each a worker
// of a parallel region of `tape` (a basic_tape of any scalar).
template <class Tape, class Body>
void loop(Tape& tape, std::size_t threads, tapeflow::region_sweep mode, long begin, long end, const Body& body) {
    if (threads == 0) {
        for (long i = begin; i < end; ++i) body(i);
        return;
    }
    using region_type = tapeflow::basic_parallel_region<typename Tape::scalar_type>;
    region_type region(tape, threads, mode);
    std::vector<std::thread> team;
    for (std::size_t t = 0; t < threads; ++t)
        team.emplace_back([&, t] {
            typename region_type::worker w(region, t);
            const long n = end - begin;
            const long first = begin + n * long(t) / long(threads), last = begin + n * long(t + 1) / long(threads);
            for (long i = first; i < last; ++i) body(i);
        });
    for (std::thread& t : team) t.join();
    region.close();
}

}  // namespace tapeflow_test
