// Stage 5 — model: the encoder's size, the [model] table of a config file.
#pragma once

#include <cstddef>
#include <string>

namespace rf {

// [model] — the encoder's size (BERT-style post-LN RoFormer encoder + MLM head).
struct ModelConfig {
    size_t vocab_size = 0;           // token rows; 0 = take the size of the trained tokenizer
    size_t hidden = 128;             // C: width of every token vector
    size_t num_heads = 4;            // H: attention heads, head size D = hidden / num_heads
    size_t num_layers = 4;           // N: encoder blocks
    size_t ffn = 512;                // inner width of each block's feed-forward (GELU) layer
    double dropout = 0.0;            // on embeddings and block outputs (Cramming: none for
                                     // short pretraining, the model is far from overfitting)
    double attention_dropout = 0.0;  // on the attention probabilities
    double layer_norm_eps = 1e-12;   // ε inside every LayerNorm (BERT / RoFormer value)
    double init_std = 0.02;          // weights drawn from normal(0, init_std²); biases zero
    std::string attention = "softmax";   // softmax | linear (kernelised, O(T), docs/linear_attention.md)
    std::string feature_map = "elu1";    // linear: elu1 (elu + 1) | favor (Performer's FAVOR+)
    size_t random_features = 64;         // favor: M random features per head (even for RoPE);
                                         // drawn once from the seed, saved, never trained
    bool fused = true;  // softmax attention as one op per (batch, head) tile
                        // (src/model/fused_attention.hpp); false runs the composed ops
                        // (split_heads, rope, matmul, softmax, …) a student reads first
    // Not a config key: true for a causal LM (train.objective = clm), set by
    // resolved_model_config; attention then sees only positions ≤ its own.
    bool causal = false;
};

}  // namespace rf
