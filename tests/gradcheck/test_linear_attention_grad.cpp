// Gradient checks (Real = double) for src/linear/linear_attention.cpp: elu_plus_one; linear
// attention bidirectional and causal — numerator and denominator given as the same tensors
// (fan-out), given separately, with RoPE on the numerator features (RoFormer eq. 19) and with
// RoPE on q, k before the feature map (position.rope_placement = before_feature_map);
// FAVOR+ features alone (stabilise = false) and through linear attention (stabilise = true,
// where the stabiliser cancels). (causal_softmax, its softmax counterpart: test_softmax_grad.cpp.)
//
// Legend: B batch, H heads, T tokens, D head size, F feature size, M random features.
#include <cmath>

#include "linear/linear_attention.hpp"
#include "gradcheck/gradcheck.hpp"
#include "position/rope.hpp"
#include "rope_options.hpp"

using rf::Shape;
using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

namespace {

// A leaf of values 0.3 + |N(0, 1)|: positive, so a denominator made of it stays away from 0.
Tensor positive(const Shape& shape, rf::Rng& rng) {
    Tensor t = randn(shape, rng);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = 0.3 + std::abs(t.data()[i]);
    return t;
}

}  // namespace

TEST_CASE("elu_plus_one gradient on both sides of 0") {
    rf::Rng rng(1);
    gradcheck([](const Inputs& in) { return rf::elu_plus_one(in[0]); }, {randn({3, 5}, rng, 2.0)});
    gradcheck([](const Inputs& in) { return rf::elu_plus_one(in[0]); },
              {randn({2, 2, 3}, rng, 0.3)});
}

TEST_CASE("linear_attention gradient, numerator == denominator (the same tensors twice)") {
    for (bool causal : {false, true}) {
        CAPTURE(causal);
        rf::Rng rng(2);
        // positive leaves q, k, each passed twice: the two gradients must add up (+=)
        gradcheck(
            [causal](const Inputs& in) {
                return rf::linear_attention(in[0], in[1], in[2], in[0], in[1], causal);
            },
            {positive({2, 2, 4, 3}, rng), positive({2, 2, 4, 3}, rng), randn({2, 2, 4, 2}, rng)});
        // the usual linear transformer: φ = elu + 1 of arbitrary-sign q, k, one φ tensor each
        gradcheck(
            [causal](const Inputs& in) {
                Tensor qf = rf::elu_plus_one(in[0]), kf = rf::elu_plus_one(in[1]);
                return rf::linear_attention(qf, kf, in[2], qf, kf, causal);
            },
            {randn({2, 5, 3}, rng), randn({2, 5, 3}, rng), randn({2, 5, 3}, rng)});
    }
}

TEST_CASE("linear_attention gradient, separate numerator and denominator features") {
    for (bool causal : {false, true}) {
        CAPTURE(causal);
        rf::Rng rng(3);
        // numerator of either sign, denominator positive: five independent inputs
        const auto f = [causal](const Inputs& in) {
            return rf::linear_attention(in[0], in[1], in[2], in[3], in[4], causal);
        };
        gradcheck(f, {randn({3, 5, 4}, rng), randn({3, 5, 4}, rng), randn({3, 5, 3}, rng),
                      positive({3, 5, 4}, rng), positive({3, 5, 4}, rng)});
        gradcheck(f, {randn({2, 1, 3, 2}, rng), randn({2, 1, 3, 2}, rng), randn({2, 1, 3, 1}, rng),
                      positive({2, 1, 3, 2}, rng), positive({2, 1, 3, 2}, rng)});
        // the same tensor as query and key (q = k), and as numerator and denominator
        gradcheck(
            [causal](const Inputs& in) {
                return rf::linear_attention(in[0], in[0], in[1], in[0], in[0], causal);
            },
            {positive({2, 4, 3}, rng), randn({2, 4, 2}, rng)});
    }
}

TEST_CASE("linear_attention gradient with RoPE on the numerator features (eq. 19)") {
    for (rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
        for (bool causal : {false, true}) {
            const std::string pairing_name = rf::rope_pairing_name(pairing);
            CAPTURE(pairing_name);
            CAPTURE(causal);
            rf::Rng rng(4);
            rf::RopeTable table(rf::testing::rope_options(pairing, 4, 4, 10.0));
            // numerator R_m φ(q_m), R_n φ(k_n); denominator φ(q_m), φ(k_n) unrotated
            gradcheck(
                [&table, causal](const Inputs& in) {
                    Tensor qf = rf::elu_plus_one(in[0]), kf = rf::elu_plus_one(in[1]);
                    return rf::linear_attention(rf::rope(qf, table, 2), rf::rope(kf, table, 2),
                                                in[2], qf, kf, causal);
                },
                {randn({2, 2, 4, 4}, rng), randn({2, 2, 4, 4}, rng), randn({2, 2, 4, 3}, rng)});
        }
    }
}

TEST_CASE("favor_features gradient alone, stabilise = false (queries and keys alike)") {
    rf::Rng rng(5);
    const Tensor W = rf::orthogonal_random_features(5, 3, rng);  // two blocks, the last of 2
    for (bool is_query : {true, false}) {
        CAPTURE(is_query);
        gradcheck([&W, is_query](
                      const Inputs& in) { return rf::favor_features(in[0], W, is_query, false); },
                  {randn({2, 3, 3}, rng, 0.8)});
    }
}

TEST_CASE("favor_features → linear_attention gradient, stabilise = true (the stabiliser cancels)") {
    for (bool causal : {false, true}) {
        CAPTURE(causal);
        rf::Rng rng(6);
        const Tensor W = rf::orthogonal_random_features(4, 3, rng);
        // Performer: φ(q) with the per-row c, φ(k) with one c per slice; num == den
        gradcheck(
            [&W, causal](const Inputs& in) {
                Tensor qf = rf::favor_features(in[0], W, true);
                Tensor kf = rf::favor_features(in[1], W, false);
                return rf::linear_attention(qf, kf, in[2], qf, kf, causal);
            },
            {randn({2, 2, 4, 3}, rng), randn({2, 2, 4, 3}, rng), randn({2, 2, 4, 3}, rng)});
        // with RoPE on the numerator features (M = 4 random features, rotated in pairs)
        rf::RopeTable table(rf::testing::rope_options(rf::RopePairing::interleaved, 4, 4, 10.0));
        gradcheck(
            [&W, &table, causal](const Inputs& in) {
                Tensor qf = rf::favor_features(in[0], W, true);
                Tensor kf = rf::favor_features(in[1], W, false);
                return rf::linear_attention(rf::rope(qf, table), rf::rope(kf, table), in[2], qf, kf,
                                            causal);
            },
            {randn({2, 5, 3}, rng), randn({2, 5, 3}, rng), randn({2, 5, 2}, rng)});
    }
}

TEST_CASE("linear_attention gradient with RoPE before the feature map (φ(R q), φ(R k))") {
    // position.rope_placement = before_feature_map: q, k rotated first, then φ, the same
    // features in numerator and denominator. Both feature maps, both pairings, both masks.
    for (bool favor : {false, true})
        for (rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half})
            for (bool causal : {false, true}) {
                CAPTURE(favor);
                const std::string pairing_name = rf::rope_pairing_name(pairing);
                CAPTURE(pairing_name);
                CAPTURE(causal);
                rf::Rng rng(8);
                rf::RopeTable table(rf::testing::rope_options(pairing, 4, 4, 10.0));
                const Tensor W = rf::orthogonal_random_features(5, 4, rng);  // M = 5: odd is fine
                gradcheck(
                    [&](const Inputs& in) {
                        Tensor rq = rf::rope(in[0], table, 3), rk = rf::rope(in[1], table, 3);
                        Tensor qf = favor ? rf::favor_features(rq, W, true) : rf::elu_plus_one(rq);
                        Tensor kf = favor ? rf::favor_features(rk, W, false, !causal)
                                          : rf::elu_plus_one(rk);
                        return rf::linear_attention(qf, kf, in[2], qf, kf, causal);
                    },
                    {randn({2, 2, 4, 4}, rng, 0.7), randn({2, 2, 4, 4}, rng, 0.7),
                     randn({2, 2, 4, 3}, rng)});
            }
}
