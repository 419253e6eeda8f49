// model.fused: the fused attention op (src/fast/fused_attention.cpp) against the composed ops
// a student reads (split_heads, rope, matmul, mul_scalar, softmax, matmul, merge_heads) —
// values and every gradient, at the op and for whole models trained a few steps both ways.
// The per-element double-precision gradient check is tests/gradcheck/test_fused_attention_grad.cpp.
//
// Legend: B batch, T length, C hidden = H·D.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "model/attention.hpp"
#include "fast/fused_attention.hpp"
#include "model/roformer.hpp"
#include "model_pairs.hpp"
#include "nn/adamw.hpp"
#include "rope_options.hpp"
#include "simd_isas.hpp"
#include "tiny_model.hpp"

using namespace rf;

namespace {

Tensor random_tensor(const Shape& shape, Rng& rng) {
    Tensor t = Tensor::zeros(shape, true);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = Real(rng.normal());
    return t;
}

// The composed path, written out as SelfAttention runs it with model.fused = false.
Tensor composed_attention(const Tensor& q, const Tensor& k, const Tensor& v, size_t H,
                          RopeTable* table, bool causal) {
    Tensor qh = split_heads(q, H), kh = split_heads(k, H), vh = split_heads(v, H);
    if (table) {
        qh = rope(qh, *table);
        kh = rope(kh, *table);
    }
    const double D = double(qh.size(3));
    Tensor scores = mul_scalar(matmul(qh, kh, false, true), Real(1.0 / std::sqrt(D)));
    Tensor probs = causal ? causal_softmax(scores) : softmax(scores);
    return merge_heads(matmul(probs, vh));
}

// |a − b| ≤ tol·(1 + |b|) element by element; returns the largest such ratio.
double worst_gap(const Real* a, const Real* b, size_t n) {
    double worst = 0.0;
    for (size_t i = 0; i < n; ++i)
        worst =
            std::max(worst, std::abs(double(a[i]) - double(b[i])) / (1.0 + std::abs(double(b[i]))));
    return worst;
}

void check_op_against_composed(size_t B, size_t T, size_t C, size_t H, RopeTable* table,
                               bool causal, uint64_t seed) {
    Rng rng(seed);
    Tensor q = random_tensor({B, T, C}, rng), k = random_tensor({B, T, C}, rng),
           v = random_tensor({B, T, C}, rng);
    Tensor upstream = random_tensor({B, T, C}, rng);
    Tensor fused = fused_attention(q, k, v, H, table, causal);
    fused.backward(upstream.value());
    const Array dq = q.grad(), dk = k.grad(), dv = v.grad();
    q.zero_grad();
    k.zero_grad();
    v.zero_grad();
    Tensor composed = composed_attention(q, k, v, H, table, causal);
    composed.backward(upstream.value());
    REQUIRE(fused.shape() == composed.shape());
    CHECK(worst_gap(fused.data(), composed.data(), fused.numel()) < 1e-6);
    CHECK(worst_gap(dq.data(), q.grad().data(), dq.size()) < 1e-5);
    CHECK(worst_gap(dk.data(), k.grad().data(), dk.size()) < 1e-5);
    CHECK(worst_gap(dv.data(), v.grad().data(), dv.size()) < 1e-5);
}

}  // namespace

TEST_CASE("fused attention equals the composed ops: values and gradients, every ISA") {
    testing::for_each_isa([](SimdIsa) {
        for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
            for (bool causal : {false, true}) {
                const std::string pairing_name = rope_pairing_name(pairing);
                CAPTURE(pairing_name);
                CAPTURE(causal);
                RopeTable full(testing::rope_options(pairing, 8, 8));
                check_op_against_composed(3, 17, 24, 3, &full, causal, 1);
                RopeTable partial(testing::rope_options(pairing, 8, 4, 100.0));
                check_op_against_composed(2, 9, 16, 2, &partial, causal, 2);
                RopeOptions p_rope = testing::rope_options(pairing, 8, 8, 100.0);
                p_rope.rope_p = 0.5;  // p-RoPE: pairs 2, 3 of 4 with θ = 0
                RopeTable half_turning(p_rope);
                check_op_against_composed(2, 9, 16, 2, &half_turning, causal, 9);
            }
        }
        check_op_against_composed(2, 11, 16, 4, nullptr, false, 3);
        // Large enough that the tiles run on several threads (more than ~1 MFLOP in all).
        RopeTable table(testing::rope_options(RopePairing::interleaved, 32, 32));
        check_op_against_composed(4, 64, 128, 4, &table, false, 4);
    });
}

TEST_CASE("fused attention refuses mismatched shapes and a table for another head size") {
    Rng rng(5);
    Tensor q = random_tensor({2, 3, 8}, rng), k = random_tensor({2, 4, 8}, rng);
    CHECK_THROWS_WITH_AS(fused_attention(q, k, q, 2, nullptr, false),
                         doctest::Contains("one [B,T,C] shape"), std::invalid_argument);
    RopeTable wrong(testing::rope_options(RopePairing::interleaved, 8, 8));
    CHECK_THROWS_WITH_AS(fused_attention(q, q, q, 2, &wrong, false),
                         doctest::Contains("head size 8, not 4"), std::invalid_argument);
}

// Three AdamW steps of the same model, fused and composed: the losses and every parameter's
// gradient at every step agree, for each scheme (ALiBi and rotate_values take the composed
// path either way) and for a causal model.
TEST_CASE("model.fused = true and false train alike: losses and every gradient, 3 steps") {
    struct Case {
        std::string scheme, pairing;
        bool rotate_values, causal;
        size_t embedding_size = 0;
        std::string layer_schemes;
    };
    const std::vector<Case> cases{
        {"rope", "interleaved", false, false, 0, ""},
        {"rope", "half", false, false, 0, ""},
        {"rope", "interleaved", true, false, 0, ""},
        {"rope", "interleaved", false, true, 0, ""},
        {"none", "interleaved", false, false, 0, ""},
        {"learned", "interleaved", false, false, 0, ""},
        {"sinusoidal", "interleaved", false, false, 0, ""},
        {"alibi", "interleaved", false, false, 0, ""},
        {"rope", "interleaved", false, false, 8, ""},
        {"rope", "half", false, true, 0, "none,rope"}};
    const size_t B = 3, T = 12, V = 40;
    std::vector<int> ids(B * T), labels(B * T, -100);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int(5 + (i * 11) % (V - 5));
    for (size_t i = 0; i < ids.size(); i += 3) labels[i] = int(5 + (i * 7) % (V - 5));
    for (const Case& c : cases) {
        CAPTURE(c.scheme);
        CAPTURE(c.pairing);
        CAPTURE(c.rotate_values);
        CAPTURE(c.causal);
        CAPTURE(c.embedding_size);
        CAPTURE(c.layer_schemes);
        PositionConfig position = testing::tiny_position_config(c.scheme);
        position.pairing = parse_enum<RopePairing>(c.pairing, "position.pairing");
        position.rotate_values = c.rotate_values;
        position.layer_schemes = c.layer_schemes;
        ModelConfig config = testing::tiny_model_config(V);
        config.causal = c.causal;
        config.embedding_size = c.embedding_size;
        FastConfig composed_path;
        composed_path.fused = false;
        RoFormer fused = assembled_model(config, position, 11);
        RoFormer composed = assembled_model(config, position, 11, composed_path);
        AdamW opt_f(fused.parameters(), {}), opt_c(composed.parameters(), {});
        for (int step = 0; step < 3; ++step) {
            CAPTURE(step);
            ModelOutput out_f = fused.forward(ids, labels, B, T, true);
            ModelOutput out_c = composed.forward(ids, labels, B, T, true);
            CHECK(out_f.loss.item() == doctest::Approx(out_c.loss.item()).epsilon(1e-5));
            opt_f.zero_grad();
            opt_c.zero_grad();
            out_f.loss.backward();
            out_c.loss.backward();
            testing::for_each_gradient_pair(fused, composed, [](Tensor& gf, Tensor& gc) {
                double scale = 0.0;  // gradients compared relative to the tensor's largest
                for (size_t j = 0; j < gc.numel(); ++j)
                    scale = std::max(scale, std::abs(double(gc.grad().data()[j])));
                double gap = 0.0;
                for (size_t j = 0; j < gc.numel(); ++j)
                    gap = std::max(
                        gap, std::abs(double(gf.grad().data()[j]) - double(gc.grad().data()[j])));
                CHECK(gap <= 1e-4 * (scale + 1e-6));
            });
            opt_f.step(1e-3);
            opt_c.step(1e-3);
        }
    }
}

TEST_CASE("fused attention with YaRN's table (temperature folded into cos/sin) equals composed") {
    for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
        RopeOptions o = testing::rope_options(pairing, 8, 8, 500.0);
        o.scaling = RopeScaling::yarn;
        o.scaling_factor = 8.0;  // a = 0.1·ln 8 + 1 ≈ 1.21: scores ×1.46
        o.original_max_positions = 6;
        RopeTable yarn(o);
        check_op_against_composed(2, 13, 16, 2, &yarn, true, 6);
        check_op_against_composed(2, 13, 16, 2, &yarn, false, 7);
        // and the temperature is really there: the plain table gives other outputs
        RopeTable plain(testing::rope_options(pairing, 8, 8, 500.0));
        Rng rng(8);
        Tensor q = random_tensor({1, 5, 16}, rng), k = random_tensor({1, 5, 16}, rng),
               v = random_tensor({1, 5, 16}, rng);
        const Tensor a = fused_attention(q, k, v, 2, &yarn, false);
        const Tensor b = fused_attention(q, k, v, 2, &plain, false);
        CHECK(worst_gap(a.data(), b.data(), a.numel()) > 1e-3);
    }
}
