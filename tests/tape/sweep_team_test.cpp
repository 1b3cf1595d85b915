// tape/sweep_team.hpp: every index of every run is called exactly once,
// whether the helpers spin (runs back to back) or sleep (runs far apart),
// and an exception of any call reaches the caller. Also under
// ThreadSanitizer in .ci/run.
#include <catch2/catch.hpp>
#include <tapeflow/tape/sweep_team.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <thread>
#include <vector>

using tapeflow::detail::sweep_team;

TEST_CASE("sweep_team calls each index of each run once, back to back and after the helpers slept") {
    for (std::size_t helpers : {1u, 3u}) {
        sweep_team team(helpers);
        CHECK(team.helpers() == helpers);
        std::vector<std::atomic<int>> calls(helpers + 1);
        int expected_last = 0;
        for (int run = 0; run < 400; ++run) {
            const std::size_t n = 1 + std::size_t(run) % (helpers + 1);  // 1 .. helpers + 1 calls
            for (auto& c : calls) c.store(0);
            team.run(n, [&](std::size_t i) { calls[i].fetch_add(1); });
            for (std::size_t i = 0; i < calls.size(); ++i) {
                INFO(helpers << " helpers, run " << run << ", index " << i << " of " << n);
                CHECK(calls[i].load() == (i < n ? 1 : 0));
            }
            // now and then wait past the spinning: the helpers sleep, and the next run must wake them
            if (run % 50 == 49) std::this_thread::sleep_for(std::chrono::microseconds(3 * sweep_team::spin_microseconds));
            expected_last = run;
        }
        CHECK(expected_last == 399);
    }
}

TEST_CASE("sweep_team rethrows an exception of the caller's call or of a helper's") {
    sweep_team team(2);
    CHECK_THROWS_WITH(team.run(3, [](std::size_t i) {
        if (i == 2) throw std::runtime_error("helper 2 failed");
    }),
                      "helper 2 failed");
    CHECK_THROWS_WITH(team.run(3, [](std::size_t i) {
        if (i == 0) throw std::runtime_error("caller failed");
    }),
                      "caller failed");
    // the team works on after a failure
    std::atomic<int> sum{0};
    team.run(3, [&](std::size_t i) { sum.fetch_add(int(i) + 1); });
    CHECK(sum.load() == 6);
}
