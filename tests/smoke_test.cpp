#include <catch2/catch.hpp>
#include <tapeflow/tapeflow.hpp>

TEST_CASE("gradient of a product") {
    auto g = tapeflow::gradient([](const std::vector<tapeflow::Real>& x) { return x[0] * x[1]; },
                                std::vector<double>{2.0, 5.0});
    CHECK(g[0] == 5.0);
    CHECK(g[1] == 2.0);
}
