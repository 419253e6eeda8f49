// Stage 5 — model: the encoder's size, the [model] table of a config file.
#pragma once

#include <array>
#include <cstddef>

#include "tensor/named_enum.hpp"

namespace rf {

// model.attention: softmax — p = softmax(q·kᵀ/√D), T×T weights; linear — kernelised,
// φ(q)ᵀ(Σ φ(k) vᵀ) / φ(q)ᵀ(Σ φ(k)), O(T) (docs/linear_attention.md)
enum class AttentionKind { softmax, linear };
constexpr std::array<NamedValue<AttentionKind>, 2> named_values(AttentionKind) {
    return {{{AttentionKind::softmax, "softmax"}, {AttentionKind::linear, "linear"}}};
}

// model.feature_map, linear attention's φ: elu1 — elu(x) + 1; favor — Performer's FAVOR+
// positive random features (an unbiased estimate of softmax attention)
enum class FeatureMap { elu1, favor };
constexpr std::array<NamedValue<FeatureMap>, 2> named_values(FeatureMap) {
    return {{{FeatureMap::elu1, "elu1"}, {FeatureMap::favor, "favor"}}};
}

// [model] — the encoder's size (BERT-style post-LN RoFormer encoder + MLM head).
struct ModelConfig {
    size_t vocab_size = 0;           // token rows; 0 = take the size of the trained tokenizer
    size_t hidden = 128;             // C: width of every token vector
    size_t embedding_size = 0;       // E: width of the embedding tables; 0 = C. E ≠ C adds
                                     // roformer.embeddings_project (E → C) after the embedding
                                     // LayerNorm, and the head maps back to E before the tied
                                     // decoder (HF RoFormer's embedding_size)
    size_t type_vocab_size = 2;      // rows of the token-type table: segment a (0), b (1), …
    size_t num_heads = 4;            // H: attention heads, head size D = hidden / num_heads
    size_t num_layers = 4;           // N: encoder blocks
    size_t ffn = 512;                // inner width of each block's feed-forward (GELU) layer
    double dropout = 0.0;            // on embeddings and block outputs (Cramming: none for
                                     // short pretraining, the model is far from overfitting)
    double attention_dropout = 0.0;  // on the attention probabilities
    double layer_norm_eps = 1e-12;   // ε inside every LayerNorm (BERT / RoFormer value)
    double init_std = 0.02;          // weights drawn from normal(0, init_std²); biases zero
    AttentionKind attention = AttentionKind::softmax;  // softmax | linear (kernelised, O(T))
    FeatureMap feature_map = FeatureMap::elu1;         // linear: elu1 | favor (FAVOR+)
    size_t random_features = 64;       // favor: M random features per head (even for RoPE);
                                       // drawn once from the seed, saved, never trained
    // Not a config key: true for a causal LM (train.objective = clm), set by
    // resolved_model_config; attention then sees only positions ≤ its own.
    bool causal = false;
};

// E: the width of the word and token-type embeddings (model.embedding_size, or C when 0).
inline size_t embedding_width(const ModelConfig& m) {
    return m.embedding_size ? m.embedding_size : m.hidden;
}

struct PositionConfig;
// The rules between the model's options, written once (config validation and the model's
// constructor both call it): favor needs random features (an even number with RoPE, which
// rotates pairs of them); ALiBi cannot bias linear attention's never-formed T×T scores.
// Throws std::invalid_argument naming the key and the fix.
void validate_model_options(const ModelConfig& model, const PositionConfig& position);

}  // namespace rf
