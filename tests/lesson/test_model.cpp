// The encoder's structure: HF names and shapes, the sparse MLM head, the tied decoder.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <stdexcept>

#include "assembly/swappable_ops_for.hpp"
#include "model/roformer.hpp"
#include "tiny_model.hpp"

using namespace rf;

namespace {
ModelConfig small_config() { return testing::tiny_model_config(50); }
PositionConfig position(const std::string& scheme = "rope") {
    return testing::tiny_position_config(scheme);
}
}  // namespace

TEST_CASE("model parameters carry HF RoFormerForMaskedLM names and [out, in] shapes") {
    RoFormer model = assembled_model(small_config(), position(), 1);
    std::map<std::string, Shape> shapes;
    for (const NamedParameter& p : model.parameters()) {
        CHECK_MESSAGE(shapes.count(p.tensor.name()) == 0, "duplicate name " << p.tensor.name());
        shapes[p.tensor.name()] = p.tensor.shape();
    }
    const std::string l1 = "roformer.encoder.layer.1.";
    CHECK(shapes.at("roformer.embeddings.word_embeddings.weight") == Shape{50, 16});
    CHECK(shapes.at("roformer.embeddings.token_type_embeddings.weight") == Shape{2, 16});
    CHECK(shapes.at("roformer.embeddings.LayerNorm.weight") == Shape{16});
    CHECK(shapes.at(l1 + "attention.self.query.weight") == Shape{16, 16});
    CHECK(shapes.at(l1 + "attention.self.value.bias") == Shape{16});
    CHECK(shapes.at(l1 + "attention.output.dense.weight") == Shape{16, 16});
    CHECK(shapes.at(l1 + "attention.output.LayerNorm.bias") == Shape{16});
    CHECK(shapes.at(l1 + "intermediate.dense.weight") == Shape{32, 16});
    CHECK(shapes.at(l1 + "output.dense.weight") == Shape{16, 32});
    CHECK(shapes.at(l1 + "output.LayerNorm.weight") == Shape{16});
    CHECK(shapes.at("cls.predictions.transform.dense.weight") == Shape{16, 16});
    CHECK(shapes.at("cls.predictions.transform.LayerNorm.bias") == Shape{16});
    CHECK(shapes.at("cls.predictions.bias") == Shape{50});
    // 4 embedding tensors + 16 per layer + 5 head tensors, no decoder.weight (it is tied)
    CHECK(shapes.size() == 4 + 2 * 16 + 5);
    CHECK(shapes.count("cls.predictions.decoder.weight") == 0);

    RoFormer learned = assembled_model(small_config(), position("learned"), 1);
    bool found = false;
    for (const NamedParameter& p : learned.parameters())
        found |= p.tensor.name() == "roformer.embeddings.position_embeddings.weight";
    CHECK(found);
}

TEST_CASE("embedding_size E < hidden: E-wide tables, HF's embeddings_project, head back to E") {
    ModelConfig config = small_config();
    config.embedding_size = 8;
    config.type_vocab_size = 3;
    RoFormer model = assembled_model(config, position(), 1);
    std::map<std::string, Shape> shapes;
    for (const NamedParameter& p : model.parameters()) shapes[p.tensor.name()] = p.tensor.shape();
    CHECK(shapes.at("roformer.embeddings.word_embeddings.weight") == Shape{50, 8});
    CHECK(shapes.at("roformer.embeddings.token_type_embeddings.weight") == Shape{3, 8});
    CHECK(shapes.at("roformer.embeddings.LayerNorm.weight") == Shape{8});
    CHECK(shapes.at("roformer.embeddings_project.weight") == Shape{16, 8});
    CHECK(shapes.at("roformer.embeddings_project.bias") == Shape{16});
    CHECK(shapes.at("roformer.encoder.layer.0.attention.self.query.weight") == Shape{16, 16});
    CHECK(shapes.at("cls.predictions.transform.dense.weight") == Shape{8, 16});
    CHECK(shapes.at("cls.predictions.transform.LayerNorm.weight") == Shape{8});
    CHECK(shapes.size() == 4 + 2 + 2 * 16 + 5);
    // The encoder still hands C-wide rows to whatever reads it; type 2 is a valid segment.
    const std::vector<int> ids = {5, 6, 7, 8}, types = {0, 1, 2, 2};
    CHECK(model.encode(ids, 1, 4, false, types).shape() == Shape{4, 16});
    CHECK(model.logits_all(ids, 1, 4, types).shape() == Shape{4, 50});
    CHECK_THROWS_WITH_AS(model.encode(ids, 1, 4, false, {0, 1, 3, 0}),
                         doctest::Contains("model.type_vocab_size"), std::invalid_argument);
    // E = C (the default) has no projection: every earlier checkpoint keeps its tensors.
    RoFormer plain = assembled_model(small_config(), position(), 1);
    for (const NamedParameter& p : plain.parameters())
        CHECK(p.tensor.name().find("embeddings_project") == std::string::npos);
}

TEST_CASE("weight decay flags: 2-D weights decay, biases and LayerNorm do not") {
    RoFormer model = assembled_model(small_config(), position(), 1);
    for (const NamedParameter& p : model.parameters())
        CHECK_MESSAGE(p.decay == (p.tensor.dim() == 2), p.tensor.name());
}

TEST_CASE("sparse MLM head: logits at labelled rows equal the full head's rows") {
    RoFormer model = assembled_model(small_config(), position(), 3);
    const size_t B = 2, T = 6;
    std::vector<int> ids(B * T), labels(B * T, -100);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int(5 + (i * 7) % 40);
    labels[1] = 9;
    labels[7] = 12;
    labels[11] = 40;
    NoGradGuard no_grad;
    ModelOutput out = model.forward(ids, labels, B, T, false);
    Tensor all = model.logits_all(ids, B, T);
    REQUIRE(out.rows == std::vector<int>{1, 7, 11});
    REQUIRE(out.logits.shape() == Shape{3, 50});
    REQUIRE(all.shape() == Shape{12, 50});
    for (size_t r = 0; r < 3; ++r)
        for (size_t v = 0; v < 50; ++v)
            CHECK(out.logits.data()[r * 50 + v] ==
                  doctest::Approx(all.data()[size_t(out.rows[r]) * 50 + v]).epsilon(1e-5));
    // At init the loss is close to ln V (near-uniform predictions).
    CHECK(out.loss.item() == doctest::Approx(std::log(50.0)).epsilon(0.1));
}

TEST_CASE("same init seed gives identical weights; different seeds differ") {
    RoFormer a = assembled_model(small_config(), position(), 5);
    RoFormer b = assembled_model(small_config(), position(), 5);
    RoFormer c = assembled_model(small_config(), position(), 6);
    const Tensor& wa = a.parameters()[0].tensor;
    const Tensor& wb = b.parameters()[0].tensor;
    const Tensor& wc = c.parameters()[0].tensor;
    bool same = true, differ = false;
    for (size_t i = 0; i < wa.numel(); ++i) {
        same &= wa.data()[i] == wb.data()[i];
        differ |= wa.data()[i] != wc.data()[i];
    }
    CHECK(same);
    CHECK(differ);
}

TEST_CASE("the MLM decoder is tied: its gradient reaches the word embeddings") {
    RoFormer model = assembled_model(small_config(), position(), 2);
    std::vector<int> ids = {5, 6, 7, 8}, labels = {-100, 30, -100, -100};
    Tensor loss = model.forward(ids, labels, 1, 4, true).loss;
    loss.backward();
    const Tensor& emb = model.parameters()[0].tensor;
    // Row 30 never appears in the input, so its gradient can only come through the decoder.
    Tensor e = emb;
    double row30 = 0;
    for (size_t c = 0; c < 16; ++c) row30 += std::abs(e.grad().data()[30 * 16 + c]);
    CHECK(row30 > 0.0);
}

TEST_CASE("within one seed every scheme starts from the same encoder weights") {
    RoFormer rope = assembled_model(small_config(), position("rope"), 11);
    RoFormer learned = assembled_model(small_config(), position("learned"), 11);
    RoFormer none = assembled_model(small_config(), position("none"), 11);
    auto weights = [](const RoFormer& m) {
        std::map<std::string, std::vector<Real>> w;
        for (const NamedParameter& p : m.parameters())
            w[p.tensor.name()].assign(p.tensor.data(), p.tensor.data() + p.tensor.numel());
        return w;
    };
    auto a = weights(rope), b = weights(learned), c = weights(none);
    CHECK(b.size() == a.size() + 1);  // learned adds only its position table
    b.erase("roformer.embeddings.position_embeddings.weight");
    CHECK(a == b);
    CHECK(a == c);
}

TEST_CASE("position.layer_schemes: a `none` layer attends without positions, the others rotate") {
    const std::vector<int> ids = {5, 9, 7, 5, 12, 30, 8, 5, 9, 41};
    auto logits = [&](const std::string& scheme, const std::string& layers) {
        PositionConfig p = position(scheme);
        p.layer_schemes = layers;
        RoFormer model = assembled_model(small_config(), p, 11);
        const Tensor l = model.logits_all(ids, 1, ids.size());
        return std::vector<Real>(l.data(), l.data() + l.numel());
    };
    // Every layer named: the same model as the plain scheme, bit for bit.
    CHECK(logits("rope", "rope,rope") == logits("rope", ""));
    CHECK(logits("rope", "none, none") == logits("none", ""));
    CHECK(logits("alibi", "none,none") == logits("none", ""));
    // A hybrid is neither.
    const std::vector<Real> hybrid = logits("rope", "rope,none");
    CHECK(hybrid != logits("rope", ""));
    CHECK(hybrid != logits("none", ""));
    CHECK(hybrid != logits("rope", "none,rope"));
    // The one reader of the key refuses what cannot mean anything, naming it.
    PositionConfig p = position("rope");
    for (const char* bad : {"rope", "rope,none,rope", "rope,alibi", "rope,", "rope,ROPE"}) {
        CAPTURE(std::string(bad));
        p.layer_schemes = bad;
        CHECK_THROWS_WITH_AS(assembled_model(small_config(), p, 1),
                             doctest::Contains("position.layer_schemes"), std::invalid_argument);
    }
    PositionConfig learned = position("learned");
    learned.layer_schemes = "learned,none";
    CHECK_THROWS_WITH_AS(assembled_model(small_config(), learned, 1), doctest::Contains("embedding"),
                         std::invalid_argument);
}
