// Gradient checks (Real = double) for the additive position schemes: learned (x and the
// table, at an offset), sinusoidal (x only; the table is fixed) and ALiBi (scores only).
//
// Legend: B batch, T length, C hidden, H heads.
#include "gradcheck/gradcheck.hpp"
#include "position/position.hpp"
#include "position/schemes.hpp"

using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

TEST_CASE("learned position gradient: x and the table rows used (offset 2)") {
    rf::Rng rng(1);
    rf::PositionConfig config;
    config.scheme = rf::PositionKind::learned;
    config.max_positions = 7;
    auto scheme = rf::make_position_scheme(config, 4, 2, rng);
    Tensor table = scheme->parameters().at(0);  // same storage the scheme reads
    gradcheck([&](const Inputs& in) { return scheme->embed(in[0], 2); },
              {randn({3, 4, 4}, rng), table});
}

TEST_CASE("sinusoidal position gradient: identity on x") {
    rf::Rng rng(2);
    rf::PositionConfig config;
    config.scheme = rf::PositionKind::sinusoidal;
    config.base = 50.0;
    auto scheme = rf::make_position_scheme(config, 6, 2, rng);
    gradcheck([&](const Inputs& in) { return scheme->embed(in[0], 4); }, {randn({2, 3, 6}, rng)});
}

TEST_CASE("alibi gradient: identity on the scores (5 heads, not a power of two)") {
    rf::Rng rng(3);
    rf::PositionConfig config;
    config.scheme = rf::PositionKind::alibi;
    auto scheme = rf::make_position_scheme(config, 10, 5, rng);
    gradcheck([&](const Inputs& in) { return scheme->bias_scores(in[0]); },
              {randn({2, 5, 4, 4}, rng)});
}
