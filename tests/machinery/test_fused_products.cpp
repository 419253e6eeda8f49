// model.fused: the wider products (src/fast/fused_products.cpp, fused_attention_packed) against
// the composed ops they replace — values and every gradient at the op, whole models trained a
// few steps both ways on both objectives, and the checkpoint a fused run writes.
// The per-element double-precision gradient checks are
// tests/gradcheck/test_fused_products_grad.cpp.
//
// Legend: R rows, C in features, V classes, B batch, T length, H heads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "fast/fused_ops.hpp"
#include "config/config.hpp"
#include "io/safetensors.hpp"
#include "fast/fused_attention.hpp"
#include "model/roformer.hpp"
#include "model_pairs.hpp"
#include "nn/adamw.hpp"
#include "rope_options.hpp"
#include "tiny_model.hpp"
#include "run/checkpoint.hpp"

using namespace rf;
namespace fs = std::filesystem;

namespace {

Tensor random_tensor(const Shape& shape, Rng& rng, double scale = 1.0) {
    Tensor t = Tensor::zeros(shape, true);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = Real(scale * rng.normal());
    return t;
}

// max_i |a_i − b_i| / (1 + max_i |b_i|): the gap relative to the tensor's scale
double gap(const Real* a, const Real* b, size_t n) {
    double worst = 0.0, scale = 0.0;
    for (size_t i = 0; i < n; ++i) {
        worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
        scale = std::max(scale, std::abs(double(b[i])));
    }
    return worst / (1.0 + scale);
}
double gap(const Array& a, const Array& b) {
    REQUIRE(a.shape() == b.shape());
    return gap(a.data(), b.data(), a.size());
}

std::vector<Array> grads(const std::vector<Tensor>& ts) {
    std::vector<Array> out;
    for (Tensor t : ts) {
        out.push_back(t.grad());
        t.zero_grad();
    }
    return out;
}

// stacked_linear(x, {W_i}, {b_i}) against concat of linear(x, W_i, b_i), values and gradients.
void check_stacked_against_linear(const Shape& x_shape, const std::vector<size_t>& outs,
                                  bool with_bias, uint64_t seed) {
    Rng rng(seed);
    const size_t C = x_shape.back();
    Tensor x = random_tensor(x_shape, rng);
    std::vector<Tensor> w, b;
    for (size_t o : outs) {
        w.push_back(random_tensor({o, C}, rng, 0.2));
        if (with_bias) b.push_back(random_tensor({o}, rng));
    }
    std::vector<Tensor> all{x};
    all.insert(all.end(), w.begin(), w.end());
    all.insert(all.end(), b.begin(), b.end());

    Tensor fast = stacked_linear(x, w, b);
    Tensor upstream = random_tensor(fast.shape(), rng);
    fast.backward(upstream.value());
    const std::vector<Array> fast_grads = grads(all);

    std::vector<Tensor> parts;
    for (size_t i = 0; i < outs.size(); ++i)
        parts.push_back(linear(x, w[i], with_bias ? b[i] : Tensor()));
    Tensor composed = concat(parts, int(x_shape.size()) - 1);
    composed.backward(upstream.value());
    const std::vector<Array> composed_grads = grads(all);

    REQUIRE(fast.shape() == composed.shape());
    CHECK(gap(fast.value(), composed.value()) < 1e-6);
    for (size_t i = 0; i < all.size(); ++i) {
        CAPTURE(i);
        CHECK(gap(fast_grads[i], composed_grads[i]) < 1e-5);
    }
}

// linear_cross_entropy against cross_entropy(add(matmul(x, Wᵀ), b)): loss, logits, gradients.
void check_loss_against_composed(size_t R, size_t C, size_t V, bool with_bias,
                                 const std::vector<int>& targets, uint64_t seed) {
    Rng rng(seed);
    Tensor x = random_tensor({R, C}, rng), w = random_tensor({V, C}, rng, 0.5);
    Tensor b = with_bias ? random_tensor({V}, rng) : Tensor();
    std::vector<Tensor> all{x, w};
    if (with_bias) all.push_back(b);

    Tensor logits;
    Tensor fast = linear_cross_entropy(x, w, b, targets, -100, &logits);
    fast.backward();
    const std::vector<Array> fast_grads = grads(all);

    Tensor product = matmul(x, w, false, true);
    Tensor composed_logits = with_bias ? add(product, b) : product;
    Tensor composed = cross_entropy(composed_logits, targets, -100);
    composed.backward();
    const std::vector<Array> composed_grads = grads(all);

    CHECK(fast.item() == doctest::Approx(composed.item()).epsilon(1e-6));
    REQUIRE(logits.defined());
    CHECK(!logits.requires_grad());
    CHECK(gap(logits.value(), composed_logits.value()) < 1e-6);
    for (size_t i = 0; i < all.size(); ++i) {
        CAPTURE(i);
        CHECK(gap(fast_grads[i], composed_grads[i]) < 1e-5);
    }
}

std::vector<int> some_targets(size_t R, size_t V, size_t ignore_every) {
    std::vector<int> t(R);
    for (size_t r = 0; r < R; ++r)
        t[r] = ignore_every && r % ignore_every == 1 ? -100 : int((r * 37 + 5) % V);
    return t;
}

}  // namespace

TEST_CASE("stacked_linear equals the linear layers it stacks: values and gradients") {
    check_stacked_against_linear({2, 5, 8}, {8, 8, 8}, true, 1);  // q, k, v of a [B,T,C]
    check_stacked_against_linear({7, 6}, {3, 5}, true, 2);        // unequal outs
    check_stacked_against_linear({4, 6}, {6, 6, 6}, false, 3);    // no biases
    check_stacked_against_linear({4, 6}, {9}, true, 4);           // one weight: linear
    // Large enough that the rows are split over the threads (> ~4 MFLOP per product).
    check_stacked_against_linear({8, 128, 64}, {64, 64, 64}, true, 5);
}

TEST_CASE("stacked_linear refuses mismatched weights and biases") {
    Rng rng(6);
    Tensor x = random_tensor({3, 4}, rng), w = random_tensor({5, 4}, rng),
           bad = random_tensor({5, 3}, rng), b = random_tensor({5}, rng);
    CHECK_THROWS_WITH_AS(stacked_linear(x, {w, bad}, {}), doctest::Contains("weight 1 [5, 3]"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(stacked_linear(x, {w, w}, {b}), doctest::Contains("1 biases for 2"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(stacked_linear(x, {w}, {random_tensor({4}, rng)}),
                         doctest::Contains("bias 0 [4] must be [5]"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(stacked_linear(x, {}, {}), doctest::Contains("no weights"),
                         std::invalid_argument);
}

TEST_CASE("fused_attention_packed reads one [B,T,3C] exactly as fused_attention reads three") {
    for (bool causal : {false, true}) {
        CAPTURE(causal);
        for (size_t T : {size_t(7), size_t(64)}) {  // 64: tiles on several threads
            CAPTURE(T);
            Rng rng(7 + T);
            const size_t B = 3, C = 32, H = 4;
            RopeTable table(testing::rope_options(RopePairing::interleaved, C / H, C / H));
            Tensor packed = random_tensor({B, T, 3 * C}, rng);
            Tensor q = slice(packed, 2, 0, C).detach().set_requires_grad(true);
            Tensor k = slice(packed, 2, C, 2 * C).detach().set_requires_grad(true);
            Tensor v = slice(packed, 2, 2 * C, 3 * C).detach().set_requires_grad(true);
            Tensor upstream = random_tensor({B, T, C}, rng);
            Tensor a = fused_attention_packed(packed, H, &table, causal);
            a.backward(upstream.value());
            Tensor b = fused_attention(q, k, v, H, &table, causal);
            b.backward(upstream.value());
            CHECK(gap(a.value(), b.value()) < 1e-6);
            const Array& g = packed.grad();
            for (size_t part = 0; part < 3; ++part) {
                CAPTURE(part);
                const Array& want = (part == 0 ? q : part == 1 ? k : v).grad();
                double worst = 0.0;
                for (size_t row = 0; row < B * T; ++row)
                    for (size_t c = 0; c < C; ++c)
                        worst =
                            std::max(worst, double(std::abs(g.data()[row * 3 * C + part * C + c] -
                                                            want.data()[row * C + c])));
                CHECK(worst < 1e-5);
            }
        }
    }
    Rng rng(9);
    CHECK_THROWS_WITH_AS(fused_attention_packed(random_tensor({2, 3, 8}, rng), 2, nullptr, false),
                         doctest::Contains("[B,T,3C]"), std::invalid_argument);
}

TEST_CASE("linear_cross_entropy equals cross_entropy of the product: loss, logits, gradients") {
    check_loss_against_composed(6, 5, 11, true, some_targets(6, 11, 3), 1);
    check_loss_against_composed(6, 5, 11, false, some_targets(6, 11, 0), 2);
    // More rows than one block (256) and than one block per thread: several parts, each with
    // a partial last block; some rows ignored.
    check_loss_against_composed(700, 16, 130, true, some_targets(700, 130, 5), 3);
    check_loss_against_composed(513, 8, 40, true, some_targets(513, 40, 0), 4);
}

TEST_CASE("linear_cross_entropy: every row ignored gives 0 and zero gradients; bad input refused") {
    Rng rng(10);
    Tensor x = random_tensor({3, 4}, rng), w = random_tensor({6, 4}, rng),
           b = random_tensor({6}, rng);
    Tensor loss = linear_cross_entropy(x, w, b, {-100, -100, -100});
    CHECK(loss.item() == 0.0f);
    loss.backward();
    for (Tensor t : {x, w, b})
        for (size_t i = 0; i < t.numel(); ++i) CHECK(t.grad().data()[i] == 0.0f);
    CHECK_THROWS_WITH_AS(linear_cross_entropy(x, w, b, {0, 6, 1}),
                         doctest::Contains("target 6 at row 1 is outside [0, 6)"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(linear_cross_entropy(x, w, b, {0, 1}),
                         doctest::Contains("2 targets for 3 rows"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(linear_cross_entropy(x, random_tensor({6, 5}, rng), b, {0, 1, 2}),
                         doctest::Contains("must be [R, C] and [V, C]"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(linear_cross_entropy(x, w, random_tensor({5}, rng), {0, 1, 2}),
                         doctest::Contains("bias [5] must be [6]"), std::invalid_argument);
}

// Three AdamW steps of the same model, fused and composed, on the CLM objective (a causal
// model, a label at every position but each window's last) and the MLM one (labels at some
// rows): losses, the logits handed out, and every parameter's gradient agree at every step.
TEST_CASE("model.fused = true and false train alike on both objectives (wider products)") {
    const size_t B = 3, T = 12, V = 40;
    std::vector<int> ids(B * T);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int(5 + (i * 11) % (V - 5));
    for (bool clm : {false, true}) {
        for (const std::string scheme : {"rope", "learned", "alibi"}) {
            CAPTURE(clm);
            CAPTURE(scheme);
            std::vector<int> labels(B * T, -100);
            for (size_t i = 0; i < ids.size(); ++i)
                if (clm ? i % T != T - 1 : i % 3 == 0) labels[i] = int(5 + (i * 7) % (V - 5));
            const PositionConfig position = testing::tiny_position_config(scheme);
            ModelConfig config = testing::tiny_model_config(V);
            config.causal = clm;
            FastConfig composed_path;
            composed_path.fused = false;
            RoFormer fused = assembled_model(config, position, 21);
            RoFormer composed = assembled_model(config, position, 21, composed_path);
            REQUIRE(FastConfig{}.fused);
            AdamW opt_f(fused.parameters(), {}), opt_c(composed.parameters(), {});
            for (int step = 0; step < 3; ++step) {
                CAPTURE(step);
                ModelOutput out_f = fused.forward(ids, labels, B, T, true);
                ModelOutput out_c = composed.forward(ids, labels, B, T, true);
                CHECK(out_f.rows == out_c.rows);
                CHECK(out_f.loss.item() == doctest::Approx(out_c.loss.item()).epsilon(1e-5));
                CHECK(gap(out_f.logits.value(), out_c.logits.value()) < 1e-4);
                opt_f.zero_grad();
                opt_c.zero_grad();
                out_f.loss.backward();
                out_c.loss.backward();
                testing::for_each_gradient_pair(fused, composed, [](Tensor& gf, Tensor& gc) {
                    CHECK(gap(gf.grad(), gc.grad()) < 1e-4);
                });
                opt_f.step(1e-3);
                opt_c.step(1e-3);
            }
        }
    }
}

TEST_CASE("a fused and a composed run save the same tensors: HF's names, the same shapes") {
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_runs" / "fused_products_checkpoint";
    std::map<std::string, Shape> saved[2];
    for (bool fused : {true, false}) {
        const fs::path run = dir / (fused ? "fused" : "composed");
        fs::remove_all(run);
        fs::create_directories(run);
        Config config = default_config();
        config.model = testing::tiny_model_config(30);
        config.fast.fused = fused;
        config.position = testing::tiny_position_config("rope");
        RoFormer model = assembled_model(config.model, config.position, 4, config.fast);
        std::vector<int> ids(16), labels(16, -100);
        for (size_t i = 0; i < ids.size(); ++i) ids[i] = int(3 + i % 20);
        labels[2] = 7;
        AdamW optimizer(model.parameters(), {});
        optimizer.zero_grad();
        model.forward(ids, labels, 2, 8, true).loss.backward();
        optimizer.step(1e-3);
        save_checkpoint(run.string(), model, config, 1, nullptr);
        for (const NamedTensor& t : read_safetensors((run / "model.safetensors").string()).tensors)
            saved[fused][t.name] = t.shape;
    }
    CHECK(saved[0] == saved[1]);
    for (const char* name :
         {"roformer.encoder.layer.0.attention.self.query.weight",
          "roformer.encoder.layer.0.attention.self.key.bias",
          "roformer.encoder.layer.1.attention.self.value.weight", "cls.predictions.bias",
          "roformer.embeddings.word_embeddings.weight"}) {
        CAPTURE(std::string(name));
        CHECK(saved[1].count(name) == 1);
    }
    CHECK(saved[1].at("roformer.encoder.layer.0.attention.self.query.weight") == Shape{16, 16});
}
