// Gradient check of the whole sequence classifier (encoder + HF-layout classification head),
// double precision, every element of every trained parameter: one sentence and a sentence
// pair (token types 0/1, so token_type_embeddings row 1 gets its gradient too).
#include "gradcheck.hpp"
#include "assembly/swappable_ops_for.hpp"
#include "model/classifier.hpp"

using namespace rf;

namespace {

void check_classifier(PositionKind scheme, bool pair) {
    ModelConfig c;
    c.vocab_size = 11;
    c.hidden = 8;
    c.num_heads = 2;
    c.num_layers = 2;
    c.ffn = 12;
    PositionConfig position;
    position.scheme = scheme;
    position.max_positions = 8;
    for (bool fused : {true, false}) {
        CAPTURE(fused);
        FastConfig fast;
        fast.fused = fused;
        SequenceClassifier model(make_model(c, position, 7, fast), 3, 11);
        const size_t B = 3, T = 5;
        const std::vector<int> ids = {2, 6, 7, 3, 0, 2, 8, 3, 9, 3, 2, 5, 10, 4, 3};
        const std::vector<int> types =
            pair ? std::vector<int>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0}
                 : std::vector<int>{};
        const std::vector<int> labels = {2, 0, 1};
        std::vector<Tensor> params;
        for (const NamedParameter& p : model.parameters()) params.push_back(p.tensor);
        REQUIRE(params.size() >= 4);
        CHECK(params[params.size() - 4].name() == "classifier.dense.weight");
        CHECK(params.back().name() == "classifier.out_proj.bias");
        auto f = [&](const std::vector<Tensor>&) {
            return model.forward(ids, types, labels, B, T, /*training=*/false).loss;
        };
        testing::GradcheckOptions opt;
        opt.h = 1e-5;
        opt.atol = 1e-7;
        opt.rtol = 1e-4;
        testing::gradcheck(f, params, opt);
    }
}

}  // namespace

TEST_CASE("gradcheck classifier: rope, one sentence") {
    check_classifier(PositionKind::rope, false);
}
TEST_CASE("gradcheck classifier: rope, sentence pair") {
    check_classifier(PositionKind::rope, true);
}
TEST_CASE("gradcheck classifier: learned, sentence pair") {
    check_classifier(PositionKind::learned, true);
}
