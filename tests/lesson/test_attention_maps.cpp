// attention_maps (src/model/attention_maps.hpp): the softmax weights `roformer attention` dumps
// are the ones the model's own forward uses — checked against an independent computation in
// double (the paper's eq. (14)-(16) rotation by hand, docs/rope.md), layer by layer.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "model/attention_maps.hpp"
#include "tiny_model.hpp"

using namespace rf;

namespace {

const std::vector<int> kIds = {1, 7, 3, 12, 5, 9, 2};  // T = 7

// Every parameter (biases and LayerNorm γ, β included) redrawn from normal(0, 0.5²), so the
// attention is far from uniform and every term of the computation matters.
RoFormer random_model(const ModelConfig& config, const PositionConfig& position) {
    RoFormer model = assembled_model(config, position, 3);
    Rng rng(11);
    for (const NamedParameter& p : model.parameters()) {
        Tensor t = p.tensor;
        for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = Real(0.5 * rng.normal());
    }
    return model;
}

ModelConfig config_with_layers(size_t layers) {
    ModelConfig c = testing::tiny_model_config(20);
    c.num_layers = layers;
    return c;
}

// A handle (Tensor shares its storage), returned by value: binding a reference to a
// reference-returning call with a temporary argument draws GCC 14's -Wdangling-reference.
Tensor named(const RoFormer& model, const std::string& name) {
    for (const NamedParameter& p : model.parameters())
        if (p.tensor.name() == name) return p.tensor;
    FAIL("no parameter " << name);
    return model.parameters().front().tensor;
}

using Matrix = std::vector<std::vector<double>>;  // [T][C]

// y = x·Wᵀ + b for a [T][in] x and the model's Linear called `prefix`.
Matrix linear_by_hand(const RoFormer& model, const Matrix& x, const std::string& prefix) {
    const Tensor &w = named(model, prefix + ".weight"), &b = named(model, prefix + ".bias");
    const size_t out = w.size(0), in = w.size(1);
    Matrix y(x.size(), std::vector<double>(out));
    for (size_t t = 0; t < x.size(); ++t)
        for (size_t o = 0; o < out; ++o) {
            double s = b.data()[o];
            for (size_t i = 0; i < in; ++i) s += double(w.data()[o * in + i]) * x[t][i];
            y[t][o] = s;
        }
    return y;
}

// Layer `layer`'s probabilities [H][T][T] from its input x, in double: interleaved RoPE
// (pair (2i, 2i+1) of each head rotated by m·θ_i, θ_i = 10000^(−2i/D)), q·k/√D, softmax
// (causal: keys n ≤ m only).
std::vector<Matrix> probabilities_by_hand(const RoFormer& model, const Matrix& x, size_t layer,
                                          bool rope, bool causal) {
    const std::string p = "roformer.encoder.layer." + std::to_string(layer) + ".attention.self.";
    Matrix q = linear_by_hand(model, x, p + "query"), k = linear_by_hand(model, x, p + "key");
    const size_t T = x.size(), C = q[0].size(), H = model.config().num_heads, D = C / H;
    if (rope)
        for (Matrix* m : {&q, &k})
            for (size_t t = 0; t < T; ++t)
                for (size_t h = 0; h < H; ++h)
                    for (size_t i = 0; i < D / 2; ++i) {
                        const double angle = double(t) * std::pow(10000.0, -2.0 * i / double(D));
                        double &a = (*m)[t][h * D + 2 * i], &b = (*m)[t][h * D + 2 * i + 1];
                        const double a0 = a, b0 = b;
                        a = std::cos(angle) * a0 - std::sin(angle) * b0;
                        b = std::sin(angle) * a0 + std::cos(angle) * b0;
                    }
    std::vector<Matrix> probs(H, Matrix(T, std::vector<double>(T, 0.0)));
    for (size_t h = 0; h < H; ++h)
        for (size_t m = 0; m < T; ++m) {
            const size_t keys = causal ? m + 1 : T;
            std::vector<double> s(keys);
            for (size_t n = 0; n < keys; ++n) {
                for (size_t d = 0; d < D; ++d) s[n] += q[m][h * D + d] * k[n][h * D + d];
                s[n] /= std::sqrt(double(D));
            }
            const double top = *std::max_element(s.begin(), s.end());
            double total = 0;
            for (double& v : s) total += v = std::exp(v - top);
            for (size_t n = 0; n < keys; ++n) probs[h][m][n] = s[n] / total;
        }
    return probs;
}

// The embedding block by hand: LN(word_emb[id] + type_emb[0]), no absolute positions.
Matrix embeddings_by_hand(const RoFormer& model, const std::vector<int>& ids) {
    const std::string p = "roformer.embeddings.";
    const Tensor &E = named(model, p + "word_embeddings.weight"),
                 &type = named(model, p + "token_type_embeddings.weight"),
                 &g = named(model, p + "LayerNorm.weight"), &b = named(model, p + "LayerNorm.bias");
    const size_t C = E.size(1);
    Matrix x(ids.size(), std::vector<double>(C));
    for (size_t t = 0; t < ids.size(); ++t) {
        for (size_t c = 0; c < C; ++c) x[t][c] = double(E.data()[ids[t] * C + c]) + type.data()[c];
        const double mean = std::accumulate(x[t].begin(), x[t].end(), 0.0) / double(C);
        double var = 0;
        for (double v : x[t]) var += (v - mean) * (v - mean);
        var /= double(C);
        for (size_t c = 0; c < C; ++c)
            x[t][c] = (x[t][c] - mean) / std::sqrt(var + model.config().layer_norm_eps) *
                          double(g.data()[c]) +
                      double(b.data()[c]);
    }
    return x;
}

double max_difference(const AttentionMaps& maps, size_t layer, const std::vector<Matrix>& ref) {
    double worst = 0;
    const size_t T = maps.length;
    for (size_t h = 0; h < maps.heads; ++h)
        for (size_t m = 0; m < T; ++m)
            for (size_t n = 0; n < T; ++n)
                worst =
                    std::max(worst, std::abs(double(maps.at(layer, h)[m * T + n]) - ref[h][m][n]));
    return worst;
}

}  // namespace

TEST_CASE("attention_maps: one [H,T,T] block per layer, rows are probability distributions") {
    RoFormer model = random_model(config_with_layers(2), testing::tiny_position_config("rope"));
    const AttentionMaps maps = attention_maps(model, kIds);
    REQUIRE(maps.probabilities.size() == 2);
    CHECK(maps.layers == 2);
    CHECK(maps.heads == 2);
    CHECK(maps.length == kIds.size());
    const size_t T = kIds.size();
    double farthest_from_uniform = 0;
    for (size_t l = 0; l < 2; ++l) {
        CHECK(maps.probabilities[l].shape() == Shape{2, T, T});
        CHECK_FALSE(maps.probabilities[l].requires_grad());  // computed under NoGradGuard
        for (size_t h = 0; h < 2; ++h)
            for (size_t m = 0; m < T; ++m) {
                double row = 0;
                for (size_t n = 0; n < T; ++n) {
                    const double p = maps.at(l, h)[m * T + n];
                    CHECK(p >= 0.0);
                    row += p;
                    farthest_from_uniform = std::max(farthest_from_uniform, std::abs(p - 1.0 / T));
                }
                CHECK(row == doctest::Approx(1.0).epsilon(1e-5));
            }
    }
    CHECK(farthest_from_uniform > 0.1);  // the checks above are not about a uniform matrix
}

TEST_CASE("attention_maps: layer 0 equals RoPE attention computed by hand in double") {
    RoFormer model = random_model(config_with_layers(2), testing::tiny_position_config("rope"));
    const AttentionMaps maps = attention_maps(model, kIds);
    const Matrix x = embeddings_by_hand(model, kIds);
    CHECK(max_difference(maps, 0, probabilities_by_hand(model, x, 0, true, false)) < 1e-4);
    // Without the rotation the same weights give other probabilities: the test can fail.
    CHECK(max_difference(maps, 0, probabilities_by_hand(model, x, 0, false, false)) > 1e-2);
}

TEST_CASE("attention_maps: layer 1 uses the encoder's own layer-0 output as its input") {
    // Layer 0 of a 1-layer and a 2-layer model of the same seed are the same draw, so the
    // 1-layer model's encode() is exactly the input of the 2-layer model's layer 1.
    const PositionConfig rope = testing::tiny_position_config("rope");
    // (random_model redraws parameters in order: embeddings, layer 0, … — the same draws.)
    RoFormer one = random_model(config_with_layers(1), rope);
    RoFormer two = random_model(config_with_layers(2), rope);
    const Tensor& w1 = named(one, "roformer.encoder.layer.0.attention.self.query.weight");
    const Tensor& w2 = named(two, "roformer.encoder.layer.0.attention.self.query.weight");
    REQUIRE(std::equal(w1.data(), w1.data() + w1.numel(), w2.data()));
    Tensor hidden;
    {
        NoGradGuard no_grad;
        hidden = one.encode(kIds, 1, kIds.size(), false);  // [T, C]
    }
    const size_t C = hidden.size(1);
    Matrix x(kIds.size(), std::vector<double>(C));
    for (size_t t = 0; t < kIds.size(); ++t)
        for (size_t c = 0; c < C; ++c) x[t][c] = hidden.data()[t * C + c];
    const AttentionMaps maps = attention_maps(two, kIds);
    CHECK(max_difference(maps, 1, probabilities_by_hand(two, x, 1, true, false)) < 1e-4);
    CHECK(max_difference(maps, 0, probabilities_by_hand(two, x, 1, true, false)) > 1e-3);
}

TEST_CASE("attention_maps: a causal model's rows are exactly 0 above the diagonal") {
    ModelConfig config = config_with_layers(2);
    config.causal = true;
    RoFormer model = random_model(config, testing::tiny_position_config("rope"));
    const AttentionMaps maps = attention_maps(model, kIds);
    const size_t T = kIds.size();
    for (size_t l = 0; l < 2; ++l)
        for (size_t h = 0; h < 2; ++h)
            for (size_t m = 0; m < T; ++m) {
                double row = 0;
                for (size_t n = 0; n < T; ++n) {
                    const Real p = maps.at(l, h)[m * T + n];
                    if (n > m) CHECK(p == Real(0));
                    row += p;
                }
                CHECK(row == doctest::Approx(1.0).epsilon(1e-5));
            }
    CHECK(maps.at(0, 0)[0] == doctest::Approx(1.0));  // the first query sees only itself
    const Matrix x = embeddings_by_hand(model, kIds);
    CHECK(max_difference(maps, 0, probabilities_by_hand(model, x, 0, true, true)) < 1e-4);
}

TEST_CASE("attention_maps: without positions, permuting the tokens permutes the map") {
    // `none` attends over a set (walkthrough exercise 6): p(π ids)[m][n] = p(ids)[π m][π n].
    // RoPE breaks it: the same permutation changes the weights.
    const std::vector<size_t> perm = {3, 0, 6, 1, 5, 2, 4};
    std::vector<int> permuted;
    for (size_t i : perm) permuted.push_back(kIds[i]);
    const size_t T = kIds.size();
    auto worst_mismatch = [&](const std::string& scheme) {
        RoFormer model = random_model(config_with_layers(2), testing::tiny_position_config(scheme));
        const AttentionMaps a = attention_maps(model, kIds), b = attention_maps(model, permuted);
        double worst = 0;
        for (size_t l = 0; l < 2; ++l)
            for (size_t h = 0; h < 2; ++h)
                for (size_t m = 0; m < T; ++m)
                    for (size_t n = 0; n < T; ++n)
                        worst = std::max(worst, std::abs(double(b.at(l, h)[m * T + n]) -
                                                         a.at(l, h)[perm[m] * T + perm[n]]));
        return worst;
    };
    CHECK(worst_mismatch("none") < 1e-5);
    CHECK(worst_mismatch("rope") > 1e-2);
}

TEST_CASE("attention_maps: refused for linear attention, an empty or too long sequence") {
    ModelConfig linear = config_with_layers(1);
    linear.attention = AttentionKind::linear;
    RoFormer model = assembled_model(linear, testing::tiny_position_config("rope"), 1);
    CHECK_THROWS_WITH_AS(attention_maps(model, kIds),
                         doctest::Contains("model.attention = linear has no attention probability"),
                         std::invalid_argument);
    PositionConfig learned = testing::tiny_position_config("learned");
    learned.max_positions = 4;
    RoFormer short_table = assembled_model(config_with_layers(1), learned, 1);
    CHECK_THROWS_AS(attention_maps(short_table, kIds), std::invalid_argument);
    CHECK_THROWS_AS(attention_maps(short_table, {}), std::invalid_argument);
    CHECK(attention_maps(short_table, {1, 2, 3, 4}).length == 4);
}
