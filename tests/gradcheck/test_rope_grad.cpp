// Gradient checks (Real = double) for src/position/rope.cpp: the backward must turn by the
// forward's own angles, so every option that changes the angles (base, partial rotary,
// offset; the RoPE lab's explicit ids, interpolation and NTK scaling:
// test_rope_variants_grad.cpp) must be read identically by both directions (llama.cpp #2054
// was a backward that kept base = 10000).
//
// Legend: B batch, H heads, T length, D head size, r rotary dims.
#include "gradcheck/gradcheck.hpp"
#include "position/position.hpp"
#include "position/rope.hpp"
#include "rope_options.hpp"

using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

TEST_CASE("rope gradient, both pairings: non-default base, partial rotary, offset") {
    for (rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
        const std::string pairing_name = rf::rope_pairing_name(pairing);
        CAPTURE(pairing_name);
        rf::Rng rng(1);
        rf::RopeTable full(rf::testing::rope_options(pairing, 8, 8, 500.0));
        gradcheck([&](const Inputs& in) { return rf::rope(in[0], full, 3); },
                  {randn({2, 2, 4, 8}, rng)});
        rf::RopeTable partial(
            rf::testing::rope_options(pairing, 8, 4, 37.0));  // dims 4..7 pass through
        gradcheck([&](const Inputs& in) { return rf::rope(in[0], partial, 9); },
                  {randn({2, 3, 5, 8}, rng)});
    }
}

TEST_CASE("rope gradient through the scheme's rotate with rotate_values") {
    rf::PositionConfig config;
    config.scheme = rf::PositionKind::rope;
    config.base = 300.0;
    config.rotary_fraction = 0.75;  // D = 8 → r = 6
    config.rotate_values = true;
    for (const rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
        config.pairing = pairing;
        rf::Rng rng(3);
        auto scheme = rf::make_position_scheme(config, 16, 2, rng);
        // q', k', v' stacked into one output so one check covers dq, dk and dv
        gradcheck(
            [&](const Inputs& in) {
                Tensor q = in[0], k = in[1], v = in[2];
                scheme->rotate(q, k, v, 5);
                return rf::concat({q, k, v}, 0);
            },
            {randn({2, 2, 3, 8}, rng), randn({2, 2, 3, 8}, rng), randn({2, 2, 3, 8}, rng)});
    }
}

TEST_CASE("rope gradient accumulates on fan-out and through a chain") {
    rf::Rng rng(4);
    rf::RopeTable table(rf::testing::rope_options(rf::RopePairing::interleaved, 4, 4, 10000.0));
    // the same x rotated at two offsets and summed: both contributions must arrive (+=)
    gradcheck(
        [&](const Inputs& in) {
            return rf::add(rf::rope(in[0], table, 0), rf::rope(in[0], table, 7));
        },
        {randn({2, 3, 4}, rng)});
    // rotation composed with itself: R_{m+3} R_m
    gradcheck([&](const Inputs& in) { return rf::rope(rf::rope(in[0], table, 0), table, 3); },
              {randn({2, 3, 4}, rng)});
}
