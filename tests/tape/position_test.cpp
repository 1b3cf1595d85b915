#include <catch2/catch.hpp>
#include <tapeflow/tape/position.hpp>

using tapeflow::position;
using tapeflow::position_epochs;

namespace {
position at(std::uint64_t statements, const position_epochs& e) {
    position p;
    p.statements = statements;
    p.epoch = e.current();
    return p;
}
}  // namespace

TEST_CASE("positions are ordered by statements") {
    position a, b;
    a.statements = 3;
    b.statements = 5;
    CHECK(a < b);
    CHECK(a <= b);
    CHECK(b > a);
    CHECK(a != b);
}

TEST_CASE("position_epochs: a reset invalidates every earlier position, the start stays valid") {
    position_epochs e;
    const position p = at(10, e);
    CHECK(e.valid(p));
    e.records_dropped();
    CHECK_FALSE(e.valid(p));
    CHECK(e.valid(position{}));
    CHECK(e.valid(at(4, e)));
}

TEST_CASE("position_epochs: a reset(position) keeps earlier positions up to its point") {
    position_epochs e;
    const position p80 = at(80, e), p120 = at(120, e), p150 = at(150, e);
    e.records_dropped_after(120);
    CHECK(e.valid(p80));
    CHECK(e.valid(p120));
    CHECK_FALSE(e.valid(p150));
    const position q130 = at(130, e);  // recorded on from 120
    CHECK(e.valid(q130));
    e.records_dropped_after(100);  // a later, lower truncation bounds both epochs
    CHECK(e.valid(p80));
    CHECK_FALSE(e.valid(p120));
    CHECK_FALSE(e.valid(q130));
    e.records_dropped();
    CHECK_FALSE(e.valid(p80));
}

TEST_CASE("position_epochs: a position from a later epoch than the tape's is refused") {
    position_epochs e;
    position p = at(5, e);
    p.epoch += 1;
    CHECK_FALSE(e.valid(p));
}
