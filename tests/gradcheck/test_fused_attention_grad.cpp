// Gradient checks (Real = double), on every instruction set of the kernels this CPU runs
// (src/fast/simd.hpp), for src/fast/fused_attention.cpp: the fused softmax
// attention's backward for q, k and v, with RoPE (both pairings, partial rotary), without,
// and causal. The tile loop's gather (row stride C) and scatter are part of what is checked.
//
// Legend: B batch, T length, C hidden = H·D.
#include "gradcheck/gradcheck.hpp"
#include "fast/fused_attention.hpp"
#include "rope_options.hpp"
#include "simd_isas.hpp"

using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

TEST_CASE("fused attention gradient: q, k, v with RoPE (both pairings, partial rotary)") {
    rf::testing::for_each_isa([&](rf::SimdIsa) {
        for (rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
            for (size_t r : {size_t(4), size_t(2)}) {
                const std::string pairing_name = rf::rope_pairing_name(pairing);
                CAPTURE(pairing_name);
                CAPTURE(r);
                rf::Rng rng(7 + r);
                rf::RopeTable table(rf::testing::rope_options(pairing, 4, r, 30.0));
                for (bool causal : {false, true}) {
                    CAPTURE(causal);
                    gradcheck(
                        [&](const Inputs& in) {
                            return rf::fused_attention(in[0], in[1], in[2], 2, &table, causal);
                        },
                        {randn({2, 5, 8}, rng), randn({2, 5, 8}, rng), randn({2, 5, 8}, rng)});
                }
            }
        }
    });
}

TEST_CASE("fused attention gradient: no rotation, one head and three heads") {
    rf::testing::for_each_isa([&](rf::SimdIsa) {
        rf::Rng rng(3);
        for (size_t heads : {size_t(1), size_t(3)}) {
            CAPTURE(heads);
            gradcheck(
                [&](const Inputs& in) {
                    return rf::fused_attention(in[0], in[1], in[2], heads, nullptr, false);
                },
                {randn({2, 4, 6}, rng), randn({2, 4, 6}, rng), randn({2, 4, 6}, rng)});
        }
    });
}

TEST_CASE("fused attention gradient: the same tensor as q, k and v (fan-out)") {
    rf::testing::for_each_isa([&](rf::SimdIsa) {
        rf::Rng rng(4);
        rf::RopeTable table(rf::testing::rope_options(rf::RopePairing::interleaved, 4, 4));
        gradcheck(
            [&](const Inputs& in) {
                return rf::fused_attention(in[0], in[0], in[0], 2, &table, true);
            },
            {randn({1, 6, 8}, rng)});
    });
}
