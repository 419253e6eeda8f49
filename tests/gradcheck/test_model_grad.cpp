// Gradient check of the WHOLE model, in double precision, for every position scheme, for
// softmax and linear attention (elu1, favor), bidirectional and causal: every element of every
// parameter, central differences of the loss.
#include "gradcheck.hpp"
#include "assembly/swappable_ops_for.hpp"
#include "model/roformer.hpp"

using namespace rf;

namespace {

struct TinySetup {
    ModelConfig model;
    PositionConfig position;
};

TinySetup tiny_config(const std::string& scheme, const std::string& pairing = "interleaved") {
    TinySetup s;
    ModelConfig& c = s.model;
    c.vocab_size = 11;
    c.hidden = 8;
    c.num_heads = 2;
    c.num_layers = 2;
    c.ffn = 12;
    s.position.scheme = parse_enum<PositionKind>(scheme, "position.scheme");
    s.position.pairing = parse_enum<RopePairing>(pairing, "position.pairing");
    s.position.max_positions = 8;
    return s;
}

// Every parameter of the whole model, on both paths: model.fused = true (fused attention,
// vectorised GELU, add_layer_norm) and false (the composed ops).
void check_model(TinySetup setup) {
    for (bool fused : {true, false}) {
        CAPTURE(fused);
        FastConfig fast;
        fast.fused = fused;
        RoFormer model = assembled_model(setup.model, setup.position, 7, fast);
        const size_t B = 2, T = 5;
        const std::vector<int> ids = {5, 6, 4, 7, 8, 9, 10, 4, 5, 6};
        const std::vector<int> labels = {-100, 3, 9, -100, -100, 2, -100, 7, -100, 10};

        std::vector<Tensor> params;
        for (const NamedParameter& p : model.parameters()) params.push_back(p.tensor);
        REQUIRE(!params.empty());

        auto f = [&](const std::vector<Tensor>&) {
            return model.forward(ids, labels, B, T, /*training=*/false).loss;
        };
        // The loss is a long composition; a slightly larger step is better conditioned.
        testing::GradcheckOptions opt;
        opt.h = 1e-5;
        opt.atol = 1e-7;
        opt.rtol = 1e-4;
        testing::gradcheck(f, params, opt);
    }
}

}  // namespace

TEST_CASE("gradcheck whole model: rope interleaved") { check_model(tiny_config("rope")); }
TEST_CASE("gradcheck whole model: rope half") { check_model(tiny_config("rope", "half")); }
TEST_CASE("gradcheck whole model: rope with rotate_values") {
    TinySetup c = tiny_config("rope");
    c.position.rotate_values = true;
    check_model(c);
}
TEST_CASE("gradcheck whole model: embedding_size 6 < hidden 8, three token types") {
    TinySetup c = tiny_config("rope");
    c.model.embedding_size = 6;  // the projection E → C and the head's C → E both in the loss
    c.model.type_vocab_size = 3;
    check_model(c);
}
TEST_CASE("gradcheck whole model: a RoPE layer, then a NoPE layer (position.layer_schemes)") {
    TinySetup c = tiny_config("rope");
    c.position.layer_schemes = "rope,none";
    check_model(c);
}
TEST_CASE("gradcheck whole model: sinusoidal") { check_model(tiny_config("sinusoidal")); }
TEST_CASE("gradcheck whole model: learned") { check_model(tiny_config("learned")); }
TEST_CASE("gradcheck whole model: none") { check_model(tiny_config("none")); }
TEST_CASE("gradcheck whole model: alibi") { check_model(tiny_config("alibi")); }

// ---- linear attention (RoFormer eq. 19) and the causal flag -------------------------------
namespace {
// attention = "softmax" | "elu1" | "favor" (the last two: model.attention = linear)
TinySetup attention_config(const std::string& scheme, const std::string& attention, bool causal) {
    TinySetup s = tiny_config(scheme);
    if (attention != "softmax") {
        s.model.attention = AttentionKind::linear;
        s.model.feature_map = parse_enum<FeatureMap>(attention, "model.feature_map");
        s.model.random_features = 6;  // D = 4: one orthogonal block of 4 rows + 2 rows
    }
    s.model.causal = causal;
    return s;
}
// A linear-attention model with this feature map: rope / none × bidirectional / causal.
void check_linear_model(const std::string& feature_map) {
    for (const std::string scheme : {"rope", "none"})
        for (bool causal : {false, true}) {
            CAPTURE(scheme);
            CAPTURE(causal);
            check_model(attention_config(scheme, feature_map, causal));
        }
}
}  // namespace

TEST_CASE("gradcheck whole model: linear elu1, rope / none, bidirectional / causal") {
    check_linear_model("elu1");
}
TEST_CASE("gradcheck whole model: linear favor, rope / none, bidirectional / causal") {
    check_linear_model("favor");
}
TEST_CASE("gradcheck whole model: linear elu1 + rope half with rotate_values, causal") {
    TinySetup c = attention_config("rope", "elu1", true);
    c.position.pairing = RopePairing::half;
    c.position.rotate_values = true;
    check_model(c);
}
TEST_CASE("gradcheck whole model: linear rope before the map, elu1 / favor, both masks") {
    for (const std::string feature_map : {"elu1", "favor"})
        for (bool causal : {false, true}) {
            CAPTURE(feature_map);
            CAPTURE(causal);
            TinySetup c = attention_config("rope", feature_map, causal);
            c.position.rope_placement = RopePlacement::before_feature_map;
            check_model(c);
        }
}
TEST_CASE("gradcheck whole model: linear favor, rope before the feature map, half, values") {
    TinySetup c = attention_config("rope", "favor", true);
    c.position.rope_placement = RopePlacement::before_feature_map;
    c.position.pairing = RopePairing::half;
    c.position.rotate_values = true;
    check_model(c);
}
TEST_CASE("gradcheck whole model: linear favor + learned positions") {
    check_model(attention_config("learned", "favor", false));
}
TEST_CASE("gradcheck whole model: causal softmax with rope") {
    check_model(attention_config("rope", "softmax", true));
}
TEST_CASE("gradcheck whole model: causal softmax with alibi") {
    check_model(attention_config("alibi", "softmax", true));
}
