// Where RoPE enters linear attention (position.rope_placement; position.hpp,
// docs/linear_attention.md §4): eq19_features — the paper's eq. 19, the numerator's features
// rotated — and before_feature_map — q, k rotated before φ, as the code behind the paper's
// Performer figure does. The properties that tell the two apart:
//   - before_feature_map with FAVOR+ is an unbiased estimate of softmax attention with RoPE,
//     E_W[φ(R_m q)·φ(R_n k)] = exp(q_mᵀ R_{n−m} k_n / √D) (Monte-Carlo over draws of W);
//   - eq. 19 is exactly shift-invariant (all positions + s: the same outputs), before the map
//     with elu + 1 is not;
// plus the two placements (src/linear/linear_rope.hpp), the config key and the model.
// Gradients: tests/gradcheck/test_linear_attention_grad.cpp, test_model_grad.cpp; PyTorch
// parity: *_rope_before.
//
// Legend: B batch, H heads, T tokens, D head size, M random features, S Monte-Carlo draws.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "config/config.hpp"
#include "experiments/compare.hpp"
#include "linear/linear_attention.hpp"
#include "linear/linear_rope.hpp"
#include "model/roformer.hpp"
#include "ops/ops.hpp"
#include "position/schemes.hpp"
#include "tiny_model.hpp"

using namespace rf;

namespace {

Tensor randn(const Shape& shape, Rng& rng, double scale = 1.0) {
    Tensor t = Tensor::zeros(shape);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = Real(scale * rng.normal());
    return t;
}

std::vector<Real> values(const Tensor& t) {
    return std::vector<Real>(t.data(), t.data() + t.numel());
}

PositionConfig rope_config(RopePlacement placement, double base = 10000.0) {
    PositionConfig p;
    p.scheme = PositionKind::rope;
    p.base = base;
    p.rope_placement = placement;
    return p;
}

// A position scheme with linear attention's placements of it, as a model's linear kernels
// hold them (src/linear/linear_kernels.cpp): hidden C, H heads, F features.
struct Placed {
    std::unique_ptr<PositionScheme> scheme;
    LinearRope rope;
};
Placed placed(const PositionConfig& p, size_t C, size_t H, Rng& rng, size_t F) {
    return {make_position_scheme(p, C, H, rng), LinearRope(p, C / H, F)};
}

// LinearAttentionKernels::self_attention (src/linear/linear_kernels.cpp) on given heads, at
// positions offset … offset + T − 1: the two placements around φ, then linear_attention.
// W: FAVOR's projection, or nullptr for elu + 1.
Tensor attend(Placed& placed, Tensor q, Tensor k, Tensor v, const Tensor* W, bool causal,
              size_t offset) {
    placed.rope.rotate_before_feature_map(*placed.scheme, q, k, v, offset);
    Tensor qf = W ? favor_features(q, *W, true) : elu_plus_one(q);
    Tensor kf = W ? favor_features(k, *W, false, !causal) : elu_plus_one(k);
    Tensor q_num = qf, k_num = kf;
    placed.rope.rotate_features(*placed.scheme, q_num, k_num, v, offset);
    return linear_attention(q_num, k_num, v, qf, kf, causal);
}

double max_abs_difference(const Tensor& a, const Tensor& b) {
    double largest = 0.0;
    for (size_t i = 0; i < a.numel(); ++i)
        largest = std::max(largest, std::abs(double(a.data()[i]) - double(b.data()[i])));
    return largest;
}

double max_abs(const Tensor& a) {
    double largest = 0.0;
    for (size_t i = 0; i < a.numel(); ++i)
        largest = std::max(largest, std::abs(double(a.data()[i])));
    return largest;
}

}  // namespace

TEST_CASE("rope_placement: RoPE rotates q, k before φ or φ's outputs, never both") {
    Rng rng(1);
    const size_t C = 16, H = 2, F = 12;  // D = 8
    Tensor q = randn({1, H, 5, 8}, rng), k = randn({1, H, 5, 8}, rng), v = randn({1, H, 5, 8}, rng);
    Tensor qf = elu_plus_one(randn({1, H, 5, F}, rng)), kf = elu_plus_one(randn({1, H, 5, F}, rng));
    for (bool rotate_values : {false, true}) {
        CAPTURE(rotate_values);
        PositionConfig eq19 = rope_config(RopePlacement::eq19_features);
        PositionConfig before = rope_config(RopePlacement::before_feature_map);
        eq19.rotate_values = before.rotate_values = rotate_values;
        Placed a = placed(eq19, C, H, rng, F);
        Placed b = placed(before, C, H, rng, F);
        RopeTable& head_table = dynamic_cast<RopePosition&>(*b.scheme).table();
        CHECK(a.rope.placement() == RopePlacement::eq19_features);
        CHECK(b.rope.placement() == RopePlacement::before_feature_map);
        // eq19_features: nothing before φ, the features after it
        Tensor q1 = q, k1 = k, v1 = v;
        a.rope.rotate_before_feature_map(*a.scheme, q1, k1, v1, 3);
        CHECK(q1.impl() == q.impl());
        CHECK(k1.impl() == k.impl());
        CHECK(v1.impl() == v.impl());
        Tensor qn = qf, kn = kf, vn = v;
        a.rope.rotate_features(*a.scheme, qn, kn, vn, 3);
        CHECK(values(qn) == values(rope(qf, a.rope.feature_table(), 3)));
        CHECK(values(qn) != values(qf));
        // before_feature_map: q, k (and v with rotate_values) with the head table before φ,
        // nothing after it
        Tensor q2 = q, k2 = k, v2 = v;
        b.rope.rotate_before_feature_map(*b.scheme, q2, k2, v2, 3);
        CHECK(values(q2) == values(rope(q, head_table, 3)));
        CHECK(values(k2) == values(rope(k, head_table, 3)));
        CHECK(values(q2) != values(q));
        if (rotate_values)
            CHECK(values(v2) == values(rope(v, head_table, 3)));
        else
            CHECK(v2.impl() == v.impl());
        Tensor qn2 = qf, kn2 = kf, vn2 = v;
        b.rope.rotate_features(*b.scheme, qn2, kn2, vn2, 3);
        CHECK(qn2.impl() == qf.impl());
        CHECK(kn2.impl() == kf.impl());
        CHECK(vn2.impl() == v.impl());
    }
    // Schemes other than rope act at neither place, whatever the key says.
    for (PositionKind other :
         {PositionKind::none, PositionKind::learned, PositionKind::sinusoidal}) {
        PositionConfig p = rope_config(RopePlacement::before_feature_map);
        p.scheme = other;
        Placed s = placed(p, C, H, rng, F);
        Tensor a = q, b = k, c = v;
        s.rope.rotate_before_feature_map(*s.scheme, a, b, c);
        CHECK(a.impl() == q.impl());
        CHECK(b.impl() == k.impl());
        CHECK(c.impl() == v.impl());
    }
}

TEST_CASE("position.rope_placement: a model key, read as a word, refused when misspelt") {
    Config config = default_config();
    CHECK(config.position.rope_placement == RopePlacement::eq19_features);  // published numbers
    apply_override(config, "position.rope_placement=before_feature_map");
    CHECK(config.position.rope_placement == RopePlacement::before_feature_map);
    CHECK_THROWS_WITH_AS(apply_override(config, "position.rope_placement=before"),
                         doctest::Contains("position.rope_placement"), std::invalid_argument);
    // It changes the trained model: in the signature a checkpoint is matched against.
    const auto signature = model_signature(config);
    REQUIRE(signature.count("position.rope_placement") == 1);
    CHECK(signature.at("position.rope_placement") !=
          model_signature(default_config()).at("position.rope_placement"));
    // eq. 19 rotates pairs of random features (M must be even); before the map it rotates q, k,
    // so an odd M is fine.
    ModelConfig favor = testing::tiny_model_config(40, 0.2);
    favor.attention = AttentionKind::linear;
    favor.feature_map = FeatureMap::favor;
    favor.random_features = 11;
    CHECK_THROWS_WITH_AS(assembled_model(favor, rope_config(RopePlacement::eq19_features), 1),
                         doctest::Contains("model.random_features"), std::invalid_argument);
    CHECK_NOTHROW(assembled_model(favor, rope_config(RopePlacement::before_feature_map), 1));
}

TEST_CASE("rope_placement: the same seed's models differ only where RoPE sits") {
    // One seed, so identical weights; linear attention: the placement changes the logits.
    // Softmax attention has one place for RoPE: the placement changes nothing, bit for bit.
    const std::vector<int> ids = {5, 9, 12, 7, 30, 22, 14, 8, 6, 11, 25, 19};
    for (AttentionKind attention : {AttentionKind::linear, AttentionKind::softmax}) {
        CAPTURE(std::string(enum_name(attention)));
        ModelConfig m = testing::tiny_model_config(40, 0.2);
        m.attention = attention;
        m.feature_map = FeatureMap::elu1;
        RoFormer a = assembled_model(m, rope_config(RopePlacement::eq19_features), 3);
        RoFormer b = assembled_model(m, rope_config(RopePlacement::before_feature_map), 3);
        const Tensor la = a.logits_all(ids, 2, 6);
        const Tensor lb = b.logits_all(ids, 2, 6);
        if (attention == AttentionKind::linear)
            CHECK(max_abs_difference(la, lb) > 1e-3);
        else
            CHECK(values(la) == values(lb));
    }
}

TEST_CASE("before_feature_map with FAVOR+ is unbiased for softmax attention with RoPE") {
    // Over S independent orthogonal projections W, the weight φ(R_m q_m)·φ(R_n k_n) of every
    // query/key pair (the stabiliser off: c = 0) must average to exp(q_mᵀ R_{n−m} k_n / √D),
    // the unnormalised weight of softmax attention with RoPE. R_{n−m} is written out here
    // (interleaved pairs, θ_i = base^(−2i/D)), independent of the rope op. Pass: |mean − truth|
    // ≤ 4·SE for all T² pairs, SE = sample sd/√S (a 4-sigma band: about 6e-5 two-sided per pair
    // for a Gaussian mean). Negative controls in the same band: the estimate without the
    // rotation, and eq. 19's numerator (R_m φ(q))·(R_n φ(k)), must each miss some pair.
    const size_t D = 8, M = 16, S = 12000, T = 4;
    const double base = 10.0;  // fast angles: positions 0 … 3 turn every pair visibly
    Rng master(2026);
    Tensor q = randn({1, 1, T, D}, master, 0.6), k = randn({1, 1, T, D}, master, 0.6);
    Tensor v = Tensor::zeros({1, 1, T, D});
    Placed before = placed(rope_config(RopePlacement::before_feature_map, base), D, 1, master, M);
    Placed eq19 = placed(rope_config(RopePlacement::eq19_features, base), D, 1, master, M);
    const size_t offset = 5;
    Tensor rq = q, rk = k, rv = v;
    before.rope.rotate_before_feature_map(*before.scheme, rq, rk, rv, offset);

    std::vector<double> truth(T * T);
    for (size_t m = 0; m < T; ++m)
        for (size_t n = 0; n < T; ++n) {
            double score = 0.0;
            for (size_t i = 0; i < D / 2; ++i) {
                const double angle =
                    (double(n) - double(m)) * std::pow(base, -2.0 * double(i) / double(D));
                const double k0 = k.data()[n * D + 2 * i], k1 = k.data()[n * D + 2 * i + 1];
                score +=
                    q.data()[m * D + 2 * i] * (k0 * std::cos(angle) - k1 * std::sin(angle)) +
                    q.data()[m * D + 2 * i + 1] * (k0 * std::sin(angle) + k1 * std::cos(angle));
            }
            truth[m * T + n] = std::exp(score / std::sqrt(double(D)));
        }

    // estimates[e][pair]: sums and sums of squares, e = 0 before the map, 1 no rotation, 2 eq. 19
    std::vector<std::vector<double>> sum(3, std::vector<double>(T * T)), sq = sum;
    for (size_t s = 0; s < S; ++s) {
        Rng rng(master.next_u64());
        const Tensor W = orthogonal_random_features(M, D, rng);
        const Tensor features[3][2] = {
            {favor_features(rq, W, true, false), favor_features(rk, W, false, false)},
            {favor_features(q, W, true, false), favor_features(k, W, false, false)},
            {favor_features(q, W, true, false), favor_features(k, W, false, false)}};
        Tensor eq_q = features[2][0], eq_k = features[2][1], unused = v;
        eq19.rope.rotate_features(*eq19.scheme, eq_q, eq_k, unused, offset);
        const Tensor* used[3][2] = {
            {&features[0][0], &features[0][1]}, {&features[1][0], &features[1][1]}, {&eq_q, &eq_k}};
        for (size_t e = 0; e < 3; ++e)
            for (size_t m = 0; m < T; ++m)
                for (size_t n = 0; n < T; ++n) {
                    double w = 0.0;
                    for (size_t j = 0; j < M; ++j)
                        w += double(used[e][0]->data()[m * M + j]) * used[e][1]->data()[n * M + j];
                    sum[e][m * T + n] += w;
                    sq[e][m * T + n] += w * w;
                }
    }
    size_t outside[3] = {0, 0, 0};
    for (size_t e = 0; e < 3; ++e)
        for (size_t pair = 0; pair < T * T; ++pair) {
            const double mean = sum[e][pair] / double(S);
            const double sd =
                std::sqrt(std::max(0.0, (sq[e][pair] - double(S) * mean * mean) / double(S - 1)));
            const double se = sd / std::sqrt(double(S));
            if (e == 0) {
                CAPTURE(pair);
                CAPTURE(truth[pair]);
                CAPTURE(mean);
                CAPTURE(se);
                CHECK(se < 0.03 * truth[pair]);  // enough draws for the band to have power
            }
            outside[e] += std::abs(mean - truth[pair]) > 4.0 * se;
        }
    MESSAGE("pairs outside 4 SE of exp(q_mᵀ R_(n−m) k_n / √D), of "
            << T * T << ": before the map " << outside[0] << ", no rotation " << outside[1]
            << ", eq. 19 " << outside[2]);
    CHECK(outside[0] == 0);
    CHECK(outside[1] > 0);  // dropping the rotation fails the same check
    CHECK(outside[2] > 0);  // eq. 19 is relative, but not an estimate of this
}

TEST_CASE("eq19_features is exactly shift-invariant; before_feature_map with elu + 1 is not") {
    // Every position + s (offset s instead of 0): eq. 19's weights depend on n − m only, so the
    // outputs agree to float32 rounding, for either feature map and mask. Before the map,
    // φ(R_m q)·φ(R_n k) with elu + 1 depends on m and n themselves: the outputs move. With
    // FAVOR+ it is relative only in expectation over W: for one fixed W they move too.
    const size_t B = 2, H = 2, T = 6, D = 8, M = 16;
    Rng rng(7);
    const Tensor q = randn({B, H, T, D}, rng), k = randn({B, H, T, D}, rng),
                 v = randn({B, H, T, D}, rng);
    const Tensor W = orthogonal_random_features(M, D, rng);
    for (bool favor : {false, true})
        for (bool causal : {false, true}) {
            CAPTURE(favor);
            CAPTURE(causal);
            const size_t F = favor ? M : D;
            Placed eq19 = placed(rope_config(RopePlacement::eq19_features), H * D, H, rng, F);
            Placed before =
                placed(rope_config(RopePlacement::before_feature_map), H * D, H, rng, F);
            const Tensor* w = favor ? &W : nullptr;
            const Tensor eq19_at_0 = attend(eq19, q, k, v, w, causal, 0);
            const Tensor before_at_0 = attend(before, q, k, v, w, causal, 0);
            for (size_t s : {size_t(1), size_t(7), size_t(300)}) {
                CAPTURE(s);
                const double moved_eq19 =
                    max_abs_difference(eq19_at_0, attend(eq19, q, k, v, w, causal, s));
                const double moved_before =
                    max_abs_difference(before_at_0, attend(before, q, k, v, w, causal, s));
                CAPTURE(moved_eq19);
                CAPTURE(moved_before);
                CHECK(moved_eq19 <= 1e-4 * std::max(1.0, max_abs(eq19_at_0)));
                CHECK(moved_before > 1e-2 * max_abs(before_at_0));  // the same test can fail
            }
        }
}

TEST_CASE("the placement presets: both placements, the same tokens per step at both lengths") {
    // configs/compare_placement.toml (64 characters) and compare_placement_long.toml (256):
    // rope_eq19 and rope_before differ in the placement only; batch × seq_len is the same.
    size_t tokens_per_step = 0;
    for (const std::string name : {"compare_placement", "compare_placement_long"}) {
        CAPTURE(name);
        const ComparePreset p =
            load_compare_preset(std::string(RF_SOURCE_DIR) + "/configs/" + name + ".toml");
        std::vector<std::string> runs = p.settings.schemes;
        std::sort(runs.begin(), runs.end());
        CHECK(runs == std::vector<std::string>{"learned", "none", "rope_before", "rope_eq19",
                                               "softmax_rope"});
        const Config eq19 = comparison_run_config(p.base, "rope_eq19", 1, p.settings.variants);
        Config before = comparison_run_config(p.base, "rope_before", 1, p.settings.variants);
        CHECK(eq19.position.rope_placement == RopePlacement::eq19_features);
        CHECK(before.position.rope_placement == RopePlacement::before_feature_map);
        before.position.rope_placement = RopePlacement::eq19_features;
        CHECK(before == eq19);
        CHECK(eq19.model.attention == AttentionKind::linear);
        const size_t tokens = p.base.train.batch_size * p.base.data.seq_len;
        if (tokens_per_step) CHECK(tokens == tokens_per_step);
        tokens_per_step = tokens;
    }
}
