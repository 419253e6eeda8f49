// The model with linear attention (RoFormer §3.3, eq. 19) and the causal flag: no look-ahead,
// FAVOR's fixed projection (a saved buffer, not a parameter), unchanged initial weights, RoPE
// on the features, and the config errors.
//
// Legend: B batch, T tokens, C hidden, H heads, D = C/H, M random features (FAVOR), V vocab.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "config/config.hpp"
#include "io/safetensors.hpp"
#include "linear/linear_attention.hpp"
#include "linear/linear_rope.hpp"
#include "model/roformer.hpp"
#include "nn/adamw.hpp"
#include "position/schemes.hpp"
#include "tiny_model.hpp"
#include "run/checkpoint.hpp"

using namespace rf;
namespace fs = std::filesystem;

namespace {

// attention: "softmax" | "elu1" | "favor" (the last two are model.attention = linear)
ModelConfig model_config(const std::string& attention, bool causal = false) {
    // init_std 0.2: attention far from uniform, so positions and masks matter
    ModelConfig c = testing::tiny_model_config(40, 0.2);
    if (attention != "softmax") {
        c.attention = AttentionKind::linear;
        c.feature_map = parse_enum<FeatureMap>(attention, "model.feature_map");
        c.random_features = 12;  // D = 8: one orthogonal block of 8 rows + 4 rows
    }
    c.causal = causal;
    return c;
}

PositionConfig position(const std::string& scheme = "rope") {
    return testing::tiny_position_config(scheme);
}

std::vector<Real> values(const Tensor& t) {
    return std::vector<Real>(t.data(), t.data() + t.numel());
}

std::map<std::string, std::vector<Real>> parameter_values(const RoFormer& m) {
    std::map<std::string, std::vector<Real>> w;
    for (const NamedParameter& p : m.parameters()) w[p.tensor.name()] = values(p.tensor);
    return w;
}

const size_t B = 2, T = 8;
std::vector<int> batch_ids() {
    std::vector<int> ids(B * T);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int(5 + (i * 11) % 35);
    return ids;
}

// Rows (b, t) of logits_all [B·T, V] whose values differ between a and b.
std::vector<bool> rows_changed(const Tensor& a, const Tensor& b) {
    const size_t V = a.size(1);
    std::vector<bool> changed(a.size(0), false);
    for (size_t r = 0; r < a.size(0); ++r)
        for (size_t v = 0; v < V; ++v)
            changed[r] = changed[r] || a.data()[r * V + v] != b.data()[r * V + v];
    return changed;
}

}  // namespace

TEST_CASE("a causal model never looks ahead; a bidirectional one does (softmax, elu1, favor)") {
    const size_t t = 3;  // change token t + 1 of every sequence
    std::vector<int> ids = batch_ids(), changed_ids = ids;
    for (size_t b = 0; b < B; ++b)
        changed_ids[b * T + t + 1] = 5 + (ids[b * T + t + 1] + 7 - 5) % 35;
    for (const std::string attention : {"softmax", "elu1", "favor"})
        for (const std::string scheme : {"rope", "learned", "none"}) {
            CAPTURE(attention);
            CAPTURE(scheme);
            NoGradGuard no_grad;
            RoFormer causal = assembled_model(model_config(attention, true), position(scheme), 3);
            const std::vector<bool> c =
                rows_changed(causal.logits_all(ids, B, T), causal.logits_all(changed_ids, B, T));
            RoFormer bidirectional=
                assembled_model(model_config(attention, false), position(scheme), 3);
            const std::vector<bool> d = rows_changed(bidirectional.logits_all(ids, B, T),
                                                     bidirectional.logits_all(changed_ids, B, T));
            for (size_t b = 0; b < B; ++b)
                for (size_t s = 0; s < T; ++s) {
                    CAPTURE(b);
                    CAPTURE(s);
                    CHECK(c[b * T + s] == (s > t));  // bit for bit unchanged before t + 1
                    CHECK(d[b * T + s]);             // every position sees token t + 1
                }
        }
}

TEST_CASE("a causal model's loss at t ignores later tokens: next-token labels, sparse head") {
    // CLM labels: labels[t] = ids[t + 1], the last position ignored.
    std::vector<int> ids = batch_ids(), labels(B * T, -100);
    for (size_t b = 0; b < B; ++b)
        for (size_t s = 0; s + 1 < T; ++s) labels[b * T + s] = ids[b * T + s + 1];
    for (const std::string attention : {"softmax", "elu1", "favor"}) {
        CAPTURE(attention);
        NoGradGuard no_grad;
        RoFormer model = assembled_model(model_config(attention, true), position(), 4);
        const ModelOutput out = model.forward(ids, labels, B, T, false);
        const Tensor all = model.logits_all(ids, B, T);
        REQUIRE(out.rows.size() == B * (T - 1));
        // The head on the labelled rows equals the full head's rows (same encoder pass).
        for (size_t r = 0; r < out.rows.size(); ++r)
            for (size_t v = 0; v < 40; ++v)
                CHECK(out.logits.data()[r * 40 + v] ==
                      doctest::Approx(all.data()[size_t(out.rows[r]) * 40 + v]).epsilon(1e-5));
    }
}

TEST_CASE("softmax, elu1 and favor models of one seed share every initial parameter") {
    for (const std::string scheme : {"rope", "learned"}) {
        CAPTURE(scheme);
        RoFormer softmax = assembled_model(model_config("softmax"), position(scheme), 11);
        RoFormer elu1 = assembled_model(model_config("elu1"), position(scheme), 11);
        RoFormer favor = assembled_model(model_config("favor", true), position(scheme), 11);
        const auto a = parameter_values(softmax);
        CHECK(a == parameter_values(elu1));
        CHECK(a == parameter_values(favor));
        CHECK(softmax.buffers().empty());
        CHECK(elu1.buffers().empty());
        CHECK(favor.buffers().size() == 2);
    }
}

TEST_CASE("initial weights are the seed's normal draws in HF order, whatever the attention") {
    // Replays the initialiser from the seed alone: every 2-D parameter but the learned table is
    // std·N(0, 1) from Rng(seed), drawn in parameter order; biases 0, LayerNorm γ 1, β 0. FAVOR's
    // W must come from another generator, or every weight after layer 0's would shift.
    for (const std::string attention : {"softmax", "elu1", "favor"}) {
        CAPTURE(attention);
        const ModelConfig c = model_config(attention);
        RoFormer model = assembled_model(c, position(), 21);
        Rng rng(21);
        for (const NamedParameter& p : model.parameters()) {
            CAPTURE(p.tensor.name());
            const std::string& n = p.tensor.name();
            const bool gamma = n.size() > 16 && n.substr(n.size() - 16) == "LayerNorm.weight";
            bool ok = true;
            for (size_t i = 0; i < p.tensor.numel(); ++i) {
                const Real expected =
                    p.tensor.dim() == 2 ? Real(c.init_std * rng.normal()) : Real(gamma ? 1 : 0);
                ok = ok && p.tensor.data()[i] == expected;
            }
            CHECK(ok);
        }
    }
}

TEST_CASE("FAVOR projection: [M, D], fixed, deterministic per seed, different per layer") {
    RoFormer a = assembled_model(model_config("favor"), position(), 5);
    RoFormer b = assembled_model(model_config("favor"), position(), 5);
    RoFormer c = assembled_model(model_config("favor"), position(), 6);
    const std::vector<Tensor> wa = a.buffers(), wb = b.buffers(), wc = c.buffers();
    REQUIRE(wa.size() == 2);
    for (size_t i = 0; i < 2; ++i) {
        CHECK(wa[i].name() ==
              "roformer.encoder.layer." + std::to_string(i) + ".attention.self.feature_projection");
        CHECK(wa[i].shape() == Shape{12, 8});
        CHECK(!wa[i].requires_grad());
        CHECK(values(wa[i]) == values(wb[i]));  // same seed, same W
        CHECK(values(wa[i]) != values(wc[i]));  // another seed, another W
    }
    CHECK(values(wa[0]) != values(wa[1]));  // one W per layer
    // The first block of D = 8 rows is orthogonal: W is orthogonal_random_features' output.
    for (size_t i = 0; i < 8; ++i)
        for (size_t j = 0; j < i; ++j) {
            double dot = 0;
            for (size_t d = 0; d < 8; ++d)
                dot += double(wa[0].data()[i * 8 + d]) * wa[0].data()[j * 8 + d];
            CHECK(std::abs(dot) < 1e-4);
        }
    // Not a parameter: no name among them, and a training step leaves it as it was.
    for (const NamedParameter& p : a.parameters())
        CHECK(p.tensor.name().find("feature_projection") == std::string::npos);
    const std::vector<Real> before = values(wa[0]);
    AdamW optimizer(a.parameters(), AdamWOptions{});
    std::vector<int> ids = batch_ids(), labels(B * T, -100);
    labels[3] = 9;
    labels[12] = 17;
    Tensor loss = a.forward(ids, labels, B, T, true).loss;
    optimizer.zero_grad();
    loss.backward();
    optimizer.step(1e-2);
    CHECK(values(wa[0]) == before);
    CHECK(!Tensor(wa[0]).has_grad());
}

TEST_CASE("FAVOR projection is saved in model.safetensors and loaded back; missing is refused") {
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_runs" / "favor_checkpoint";
    fs::remove_all(dir);
    fs::create_directories(dir);
    Config config = default_config();
    config.model = model_config("favor");
    config.position = position();
    RoFormer trained = assembled_model(config.model, config.position, 8);
    save_checkpoint(dir.string(), trained, config, 3, nullptr);
    const std::string path = (dir / "model.safetensors").string();
    const SafetensorsFile file = read_safetensors(path);
    for (const Tensor& w : trained.buffers()) {
        REQUIRE(file.find(w.name()) != nullptr);
        CHECK(file.at(w.name()).data == std::vector<float>(w.data(), w.data() + w.numel()));
    }

    // A model of another seed has another W (and other weights) until it loads the file.
    RoFormer loaded = assembled_model(config.model, config.position, 9);
    CHECK(values(loaded.buffers()[0]) != values(trained.buffers()[0]));
    CHECK(load_model_weights(loaded, config, path) == 3);
    for (size_t i = 0; i < 2; ++i)
        CHECK(values(loaded.buffers()[i]) == values(trained.buffers()[i]));
    {
        NoGradGuard no_grad;
        const std::vector<int> ids = batch_ids();
        CHECK(values(loaded.logits_all(ids, B, T)) == values(trained.logits_all(ids, B, T)));
    }

    // The same file without layer 1's W: refused with a message naming the tensor.
    SafetensorsFile stripped = file;
    const std::string missing = "roformer.encoder.layer.1.attention.self.feature_projection";
    std::vector<NamedTensor> kept;
    for (const NamedTensor& t : stripped.tensors)
        if (t.name != missing) kept.push_back(t);
    const std::string stripped_path = (dir / "stripped.safetensors").string();
    write_safetensors(stripped_path, kept, stripped.metadata);
    RoFormer other = assembled_model(config.model, config.position, 9);
    CHECK_THROWS_WITH_AS(load_model_weights(other, config, stripped_path),
                         doctest::Contains(missing.c_str()), std::runtime_error);
}

TEST_CASE("RoPE in linear attention rotates the features (eq. 19), with F-feature tables") {
    Rng rng(1);
    PositionConfig p = position();
    // favor: F = M = 12, built at construction (D = 8)
    auto scheme = make_position_scheme(p, 16, 2, rng);
    LinearRope linear_rope(p, 8, 12);
    CHECK(linear_rope.feature_table().options().head_dim == 12);
    CHECK(linear_rope.feature_table().options().rotary_dims == 12);
    // The features are rotated by the F-table, v is left alone without rotate_values.
    Tensor qf = Tensor::zeros({1, 2, 5, 12}), kf = Tensor::zeros({1, 2, 5, 12});
    Tensor v = Tensor::zeros({1, 2, 5, 8});
    for (size_t i = 0; i < qf.numel(); ++i) {
        qf.data()[i] = Real(0.1 + 0.01 * double(i % 17));
        kf.data()[i] = Real(0.2 + 0.01 * double(i % 13));
    }
    for (size_t i = 0; i < v.numel(); ++i) v.data()[i] = Real(i);
    Tensor q_num = qf, k_num = kf, v_out = v;
    linear_rope.rotate_features(*scheme, q_num, k_num, v_out, 2);
    const Tensor expected_q = rope(qf, linear_rope.feature_table(), 2);
    const Tensor expected_k = rope(kf, linear_rope.feature_table(), 2);
    CHECK(values(q_num) == values(expected_q));
    CHECK(values(k_num) == values(expected_k));
    CHECK(values(q_num) != values(qf));
    CHECK(v_out.impl() == v.impl());
    // rotate_values: v turns with the head table (D = 8) as in softmax attention.
    p.rotate_values = true;
    auto rotating = make_position_scheme(p, 16, 2, rng);
    LinearRope rotating_rope(p, 8, 12);
    Tensor q2 = qf, k2 = kf, v2 = v;
    rotating_rope.rotate_features(*rotating, q2, k2, v2);
    CHECK(values(v2) == values(rope(v, dynamic_cast<RopePosition&>(*rotating).table())));
    // Other schemes leave all three handles as they were.
    for (const char* other : {"none", "learned", "sinusoidal"}) {
        auto s = make_position_scheme(position(other), 16, 2, rng);
        LinearRope other_rope(position(other), 8, 12);
        Tensor a = qf, b = kf, c = v;
        other_rope.rotate_features(*s, a, b, c);
        CHECK(a.impl() == qf.impl());
        CHECK(b.impl() == kf.impl());
        CHECK(c.impl() == v.impl());
    }
}

TEST_CASE("linear attention config errors name the key and the fix") {
    PositionConfig half_rotary = position();
    half_rotary.rotary_fraction = 0.5;  // D = 8 → 4 rotary dims, fine; M = 6 → 3 features, odd
    ModelConfig favor6 = model_config("favor");
    favor6.random_features = 6;
    CHECK_THROWS_WITH_AS(assembled_model(favor6, half_rotary, 1),
                         doctest::Contains("model.random_features"), std::invalid_argument);
    CHECK_NOTHROW(assembled_model(model_config("favor"), half_rotary, 1));  // 12 → 6 rotary features
    // An unknown word never reaches the model: it is refused where the config is read.
    Config unknown = default_config();
    CHECK_THROWS_WITH_AS(apply_override(unknown, "model.feature_map=relu"),
                         doctest::Contains("model.feature_map"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(apply_override(unknown, "model.attention=performer"),
                         doctest::Contains("model.attention"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(assembled_model(model_config("elu1"), position("alibi"), 1),
                         doctest::Contains("position.scheme = alibi"), std::invalid_argument);
    ModelConfig no_features = model_config("favor");
    no_features.random_features = 0;
    CHECK_THROWS_WITH_AS(assembled_model(no_features, position(), 1),
                         doctest::Contains("model.random_features"), std::invalid_argument);
    // Causal FAVOR with huge heads: |w|²/2 past float32's exp range is refused up front.
    ModelConfig wide = model_config("favor", true);
    wide.hidden = 512;
    wide.num_heads = 1;
    wide.ffn = 8;
    wide.num_layers = 1;
    CHECK_THROWS_WITH_AS(assembled_model(wide, position("none"), 1), doctest::Contains("model.num_heads"),
                         std::invalid_argument);
}

TEST_CASE("forward FLOPs: softmax counts T, linear counts the feature size instead") {
    const double C = 16, H = 2, T = 64, F = 32, V = 40, L = 2, D = 8, M = 12;
    const double common = L * (2 * 4 * C * C + 2 * 2 * C * F) + (2 * C * C + 2 * C * V);
    RoFormer softmax = assembled_model(model_config("softmax"), position(), 1);
    RoFormer elu1 = assembled_model(model_config("elu1"), position(), 1);
    RoFormer favor = assembled_model(model_config("favor"), position(), 1);
    CHECK(softmax.forward_flops_per_token(64, 1.0) == doctest::Approx(common + L * 2 * 2 * T * C));
    CHECK(elu1.forward_flops_per_token(64, 1.0) ==
          doctest::Approx(common + L * (2 * 2 * D * C + 2 * 2 * D * H)));
    CHECK(favor.forward_flops_per_token(64, 1.0) ==
          doctest::Approx(common + L * (2 * 2 * M * C + 2 * 2 * M * H + 2 * 2 * M * C)));
    // Linear attention's cost does not grow with T.
    CHECK(elu1.forward_flops_per_token(512, 1.0) == elu1.forward_flops_per_token(64, 1.0));
}
