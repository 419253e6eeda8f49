// The parity fixtures' C++ halves, run by hand (never by ctest): the initial weights and batch
// (init.safetensors) and FAVOR's fixed projections (init_favor.safetensors) that
// tests/reference/make_reference.py reads. tests/test_parity.cpp says what the fixtures hold.
#include <sstream>

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
    RoFormer model(mc, pc, seed);

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
        {"written_by", "tests/test_parity.cpp: test_roformer -tc=\"parity: write*\" --no-skip"},
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
    RoFormer model(mc, pc, std::stoull(meta(init, "seed")));
    std::vector<NamedTensor> tensors;
    for (const Tensor& w : model.buffers()) tensors.push_back(to_named_tensor(w));
    REQUIRE(tensors.size() == mc.num_layers);
    const std::string path = reference_path("init_favor.safetensors");
    write_safetensors(path, tensors,
                      {{"format", "roformer-cpp parity favor projections"},
                       {"written_by",
                        "tests/test_parity_writers.cpp: test_roformer -tc=\"parity: write "
                        "init_favor*\" --no-skip"},
                       {"seed", meta(init, "seed")},
                       {"model.random_features", std::to_string(mc.random_features)},
                       {"model.head_size", std::to_string(mc.hidden / mc.num_heads)}});
    MESSAGE("wrote " << path);
}
