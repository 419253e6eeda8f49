// The parity fixtures' C++ halves, run by hand (never by ctest): the initial weights and batch
// (init.safetensors) and FAVOR's fixed projections (init_favor.safetensors) that
// tests/reference/make_reference.py reads. tests/lesson/test_parity.cpp says what the fixtures hold.
#include <sstream>

#include "assembly/swappable_ops_for.hpp"
#include "data/tokenizer.hpp"
#include "model/classifier.hpp"
#include "parity.hpp"

using namespace rf;
using namespace rf::parity;

// build/tests/test_roformer -tc="parity: write tests*" --no-skip
// writes tests/reference/init.safetensors; then run make_reference.py (docs/testing.md).
// Weights: our own initialiser with init_std 0.2 (so attention is far from uniform and the
// position schemes matter), a learned-position model so the file holds every tensor any
// scheme needs, and every bias / LayerNorm γ, β moved off its 0 / 1 start so no parameter
// is trivially zero. Batch: B sequences of T random tokens, 4 labelled positions each.
TEST_CASE("parity: write tests/reference/init.safetensors (by hand, --no-skip)" * doctest::skip()) {
    const uint64_t seed = 20240605;
    ModelConfig mc;
    mc.vocab_size = 37;
    mc.hidden = 32;
    mc.num_heads = 2;
    mc.num_layers = 2;
    mc.ffn = 64;
    mc.init_std = 0.2;
    PositionConfig pc;
    pc.scheme = PositionKind::learned;
    pc.max_positions = 20;  // > T: rows T … 19 must get exactly zero gradient
    const size_t B = 4, T = 16, labelled_per_row = 4;
    RoFormer model = assembled_model(mc, pc, seed);

    Rng rng(seed + 1);
    std::vector<NamedTensor> tensors;
    for (const NamedParameter& p : model.parameters()) {
        Tensor t = p.tensor;
        const std::string& name = t.name();
        const bool is_gamma =
            name.size() > 16 && name.substr(name.size() - 16) == "LayerNorm.weight";
        Real* v = t.data();
        for (size_t i = 0; i < t.numel(); ++i) {
            if (is_gamma)
                v[i] = Real(1.0 + 0.1 * rng.normal());
            else if (t.dim() == 1)
                v[i] = Real(0.1 * rng.normal());
            else if (name == "roformer.embeddings.position_embeddings.weight")
                v[i] *= Real(10);
        }
        tensors.push_back(to_named_tensor(t));
    }
    std::vector<float> ids(B * T), labels(B * T, -100.0f);
    for (size_t b = 0; b < B; ++b) {
        for (size_t t = 0; t < T; ++t) ids[b * T + t] = float(5 + rng.below(mc.vocab_size - 5));
        for (size_t k = 0; k < labelled_per_row;) {
            const size_t i = b * T + rng.below(T);
            if (labels[i] != -100.0f) continue;
            labels[i] = ids[i];
            if (k++ > 0) ids[i] = 4.0f;  // [MASK]; the first stays visible (BERT's 10 % case)
        }
    }
    tensors.push_back({"batch.input_ids", {B, T}, ids});
    tensors.push_back({"batch.labels", {B, T}, labels});

    auto num = [](double v) {
        std::ostringstream s;
        s.precision(17);
        s << v;
        return s.str();
    };
    std::map<std::string, std::string> m = {
        {"format", "roformer-cpp parity init"},
        // (the writer's old home, kept so that a rewritten file stays byte-identical)
        {"written_by", "tests/lesson/test_parity.cpp: test_roformer -tc=\"parity: write*\" --no-skip"},
        {"seed", std::to_string(seed)},
        {"model.vocab_size", std::to_string(mc.vocab_size)},
        {"model.hidden", std::to_string(mc.hidden)},
        {"model.num_heads", std::to_string(mc.num_heads)},
        {"model.num_layers", std::to_string(mc.num_layers)},
        {"model.ffn", std::to_string(mc.ffn)},
        {"model.layer_norm_eps", num(mc.layer_norm_eps)},
        {"position.base", num(pc.base)},
        {"position.max_positions", std::to_string(pc.max_positions)},
        {"data.batch_size", std::to_string(B)},
        {"data.seq_len", std::to_string(T)},
        {"train.steps", "10"},
        {"train.lr", "0.01"},
        {"train.min_lr_ratio", "0.1"},
        {"train.warmup_steps", "3"},
        {"train.schedule", "cosine"},
        {"train.beta1", "0.9"},
        {"train.beta2", "0.98"},
        {"train.eps", "1e-06"},
        {"train.weight_decay", "0.01"},
        {"train.grad_clip", "1"},
    };
    write_safetensors(reference_path("init.safetensors"), tensors, m);
    MESSAGE("wrote " << reference_path("init.safetensors"));
}

// FAVOR's fixed projections for the favor cases: W:[M, D] of each layer, M = 24 (one
// orthogonal block of D = 16 rows and a truncated one of 8), drawn by our model from the seed
// of init.safetensors exactly as `roformer train` would. Then run make_reference.py.
// build/tests/test_roformer -tc="parity: write init_favor*" --no-skip
TEST_CASE("parity: write init_favor.safetensors, FAVOR's W (by hand, --no-skip)" *
          doctest::skip()) {
    const SafetensorsFile& init = init_file();
    ModelConfig mc;
    mc.vocab_size = meta_size(init, "model.vocab_size");
    mc.hidden = meta_size(init, "model.hidden");
    mc.num_heads = meta_size(init, "model.num_heads");
    mc.num_layers = meta_size(init, "model.num_layers");
    mc.ffn = meta_size(init, "model.ffn");
    mc.attention = AttentionKind::linear;
    mc.feature_map = FeatureMap::favor;
    mc.random_features = 24;
    PositionConfig pc;
    pc.scheme = PositionKind::rope;
    RoFormer model = assembled_model(mc, pc, std::stoull(meta(init, "seed")));
    std::vector<NamedTensor> tensors;
    for (const Tensor& w : model.buffers()) tensors.push_back(to_named_tensor(w));
    REQUIRE(tensors.size() == mc.num_layers);
    const std::string path = reference_path("init_favor.safetensors");
    write_safetensors(path, tensors,
                      {{"format", "roformer-cpp parity favor projections"},
                       {"written_by",
                        "tests/lesson/test_parity_writers.cpp: test_roformer -tc=\"parity: write "
                        "init_favor*\" --no-skip"},
                       {"seed", meta(init, "seed")},
                       {"model.random_features", std::to_string(mc.random_features)},
                       {"model.head_size", std::to_string(mc.hidden / mc.num_heads)}});
    MESSAGE("wrote " << path);
}

// The classification head's fixtures (tests/machinery/test_parity_classifier.cpp): the head's initial
// weights and two labelled batches, one of single sentences and one of sentence pairs, read by
// make_reference.py beside init.safetensors (the encoder). K = 3 classes; the head is drawn
// by our own initialiser with init.safetensors's init_std (0.2) and its biases moved off 0.
// Every row is framed as the fine-tune frames it (finetune/sentence_pair.hpp): [CLS] a [SEP] with
// types 0, or [CLS] a [SEP] b [SEP] with the types of b and its [SEP] = 1; all rows of a batch
// have one length (fine-tuning's batches have no padding). The AdamW settings are the
// fine-tune loop's (finetune/finetune.cpp): betas 0.9, 0.999, eps 1e-8, linear warm-up then
// linear decay to 0, with a larger peak lr so that 10 steps move every parameter visibly.
// build/tests/test_roformer -tc="parity: write init_classifier*" --no-skip
TEST_CASE(
    "parity: write init_classifier.safetensors, the head and two batches (by hand, "
    "--no-skip)" *
    doctest::skip()) {
    const SafetensorsFile& init = init_file();
    const uint64_t seed = std::stoull(meta(init, "seed")) + 25;
    const size_t C = meta_size(init, "model.hidden"), V = meta_size(init, "model.vocab_size");
    const size_t K = 3, B = 4, T = 12;
    Rng rng(seed);
    ClassificationHead head(C, K, 0.2, rng);
    std::vector<NamedParameter> params;
    head.collect(params);
    std::vector<NamedTensor> tensors;
    for (const NamedParameter& p : params) {
        Tensor t = p.tensor;
        if (t.dim() == 1)
            for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = Real(0.1 * rng.normal());
        tensors.push_back(to_named_tensor(t));
    }
    for (const char* kind : {"single", "pair"}) {
        const bool pair = std::string(kind) == "pair";
        std::vector<float> ids, types, labels;
        for (size_t b = 0; b < B; ++b) {
            const size_t a_len = pair ? 3 + b : T - 2;  // a pair: b takes T − 3 − a_len tokens
            ids.push_back(float(data::kClsId));
            types.push_back(0);
            for (size_t t = 0; t < a_len; ++t) {
                ids.push_back(float(5 + rng.below(V - 5)));
                types.push_back(0);
            }
            ids.push_back(float(data::kSepId));
            types.push_back(0);
            while (pair && ids.size() < (b + 1) * T - 1) {
                ids.push_back(float(5 + rng.below(V - 5)));
                types.push_back(1);
            }
            if (pair) {
                ids.push_back(float(data::kSepId));
                types.push_back(1);
            }
            labels.push_back(float(b % K));  // every class present
        }
        REQUIRE(ids.size() == B * T);
        const std::string prefix = std::string("batch.") + kind + ".";
        tensors.push_back({prefix + "input_ids", {B, T}, ids});
        tensors.push_back({prefix + "token_type_ids", {B, T}, types});
        tensors.push_back({prefix + "labels", {B}, labels});
    }
    const std::string path = reference_path("init_classifier.safetensors");
    write_safetensors(path, tensors,
                      {{"format", "roformer-cpp parity classifier init"},
                       {"written_by",
                        "tests/lesson/test_parity_writers.cpp: test_roformer -tc=\"parity: write "
                        "init_classifier*\" --no-skip"},
                       {"seed", std::to_string(seed)},
                       {"classifier.num_labels", std::to_string(K)},
                       {"data.batch_size", std::to_string(B)},
                       {"data.seq_len", std::to_string(T)},
                       {"train.steps", "10"},
                       {"train.lr", "0.003"},
                       {"train.min_lr_ratio", "0"},
                       {"train.warmup_steps", "3"},
                       {"train.schedule", "linear"},
                       {"train.beta1", "0.9"},
                       {"train.beta2", "0.999"},
                       {"train.eps", "1e-08"},
                       {"train.weight_decay", "0.01"},
                       {"train.grad_clip", "1"}});
    MESSAGE("wrote " << path);
}
