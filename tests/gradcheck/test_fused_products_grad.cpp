// Gradient checks (Real = double) for src/fast/fused_products.cpp and fused_attention_packed:
// stacked_linear (x, every weight, every bias), linear_cross_entropy (x, W, b, with ignored
// rows, over several row blocks and threads' parts), and the packed attention's gradient
// into its one [B,T,3C] input.
//
// Legend: R rows, C in features, V classes, B batch, T length.
#include "fast/fused_ops.hpp"
#include "gradcheck/gradcheck.hpp"
#include "fast/fused_attention.hpp"
#include "rope_options.hpp"

using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

TEST_CASE("stacked_linear gradient: x, three weights, three biases") {
    rf::Rng rng(1);
    gradcheck(
        [](const Inputs& in) {
            return rf::stacked_linear(in[0], {in[1], in[2], in[3]}, {in[4], in[5], in[6]});
        },
        {randn({2, 3, 4}, rng), randn({4, 4}, rng), randn({2, 4}, rng), randn({3, 4}, rng),
         randn({4}, rng), randn({2}, rng), randn({3}, rng)});
}

TEST_CASE("stacked_linear gradient: no biases, the same weight twice (fan-out)") {
    rf::Rng rng(2);
    gradcheck(
        [](const Inputs& in) {
            return rf::stacked_linear(in[0], {in[1], in[1]}, {});
        },
        {randn({5, 3}, rng), randn({2, 3}, rng)});
}

TEST_CASE("linear_cross_entropy gradient: x, W, b with ignored rows") {
    rf::Rng rng(3);
    const std::vector<int> targets{2, -100, 0, 6, 3, -100};
    gradcheck(
        [&](const Inputs& in) { return rf::linear_cross_entropy(in[0], in[1], in[2], targets); },
        {randn({6, 4}, rng), randn({7, 4}, rng), randn({7}, rng)});
}

TEST_CASE("linear_cross_entropy gradient: several row blocks and parts, no bias") {
    // 600 rows: more than two blocks of 256, so every thread's part has a partial last block.
    rf::Rng rng(4);
    const size_t R = 600, V = 5;
    std::vector<int> targets(R);
    for (size_t r = 0; r < R; ++r) targets[r] = r % 7 == 3 ? -100 : int(r % V);
    gradcheck(
        [&](const Inputs& in) { return rf::linear_cross_entropy(in[0], in[1], Tensor(), targets); },
        {randn({R, 2}, rng), randn({V, 2}, rng)});
}

TEST_CASE("fused_attention_packed gradient: one [B,T,3C] input, RoPE, causal and not") {
    rf::Rng rng(5);
    rf::RopeTable table(rf::testing::rope_options(rf::RopePairing::interleaved, 4, 4, 30.0));
    for (bool causal : {false, true}) {
        CAPTURE(causal);
        gradcheck(
            [&](const Inputs& in) { return rf::fused_attention_packed(in[0], 2, &table, causal); },
            {randn({2, 5, 24}, rng)});
    }
}
