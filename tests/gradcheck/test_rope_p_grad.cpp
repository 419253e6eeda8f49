// Gradient checks (Real = double) for p-RoPE (position.rope_p, src/position/rope.cpp's
// rope_frequencies): the backward reads the same table, so the pairs with θ_i = 0 must pass
// the gradient through unchanged and the turning ones rotate it back.
//
// Legend: B batch, H heads, T length, D head size.
#include "gradcheck/gradcheck.hpp"
#include "position/position.hpp"
#include "position/rope.hpp"
#include "rope_options.hpp"

using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

TEST_CASE("p-RoPE gradient, both pairings: p = 0.5, 0.25 and 0, with an offset") {
    for (rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
        const std::string pairing_name = rf::rope_pairing_name(pairing);
        CAPTURE(pairing_name);
        for (double p : {0.5, 0.25, 0.0}) {
            CAPTURE(p);
            rf::Rng rng(11);
            rf::RopeOptions o = rf::testing::rope_options(pairing, 8, 8, 300.0);
            o.rope_p = p;
            rf::RopeTable table(o);
            gradcheck([&](const Inputs& in) { return rf::rope(in[0], table, 4); },
                      {randn({2, 2, 5, 8}, rng)});
        }
    }
}

TEST_CASE("p-RoPE gradient through the scheme's rotate with rotate_values and YaRN") {
    rf::PositionConfig config;
    config.scheme = rf::PositionKind::rope;
    config.base = 300.0;
    config.rope_p = 0.75;  // D = 8 → 3 of 4 pairs turn
    config.rotate_values = true;
    config.scaling = rf::RopeScaling::yarn;
    config.scaling_factor = 2.0;
    config.original_max_positions = 4;
    rf::validate_position_config(config, 16, 2);
    for (const rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
        config.pairing = pairing;
        rf::Rng rng(12);
        auto scheme = rf::make_position_scheme(config, 16, 2, rng);
        gradcheck(
            [&](const Inputs& in) {
                Tensor q = in[0], k = in[1], v = in[2];
                scheme->rotate(q, k, v, 3);
                return rf::concat({q, k, v}, 0);
            },
            {randn({2, 2, 3, 8}, rng), randn({2, 2, 3, 8}, rng), randn({2, 2, 3, 8}, rng)});
    }
}
