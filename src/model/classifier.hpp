// Stage 5 — model: sequence classification on top of the encoder (the second half of BERT's
// life: pre-train with MLM, then fine-tune on labelled sentences).
//
// Legend: B batch, T tokens, C hidden, K classes.
//   input (finetune/sentence_pair.hpp)
//           single sentence: [CLS] a [SEP]            token types 0 … 0
//           sentence pair:   [CLS] a [SEP] b [SEP]    token types 0 … 0 1 … 1 (b and its [SEP])
//   h = RoFormer::encode(ids, types)                                     [B·T, C]
//   x = h[b·T + 0]            the first token ([CLS]) of every sequence  [B, C]
//   logits = out_proj(dropout(gelu(dense(dropout(x)))))                  [B, K]
//   loss = mean cross-entropy against the labels
// This is HF RoFormerForSequenceClassification: its RoFormerClassificationHead reads
// features[:, 0, :] (no pooler), applies dropout, dense, the model's hidden_act (GELU),
// dropout, out_proj; the tensors are "classifier.dense.{weight,bias}" [C,C], [C] and
// "classifier.out_proj.{weight,bias}" [K,C], [K], beside the encoder's "roformer.*" ones.
// The MLM head (cls.predictions.*) is not part of the classifier: it is neither trained nor
// saved. docs/finetune.md explains why the first token is enough.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/roformer.hpp"

namespace rf {

// HF RoFormerClassificationHead: x:[B,C] → logits:[B,K].
struct ClassificationHead {
    Linear dense;     // classifier.dense     [C, C]
    Linear out_proj;  // classifier.out_proj  [K, C]
    ClassificationHead() = default;
    ClassificationHead(size_t hidden, size_t num_labels, double init_std, Rng& rng);
    // kernels: the encoder's swappable ops, or none (the composed gelu).
    Tensor operator()(const Tensor& first_tokens, const SwappableOps* kernels, bool training,
                      Real dropout_p, Rng& rng) const;
    void collect(std::vector<NamedParameter>& params) const;
};

struct ClassifierOutput {
    Tensor logits;  // [B, K]
    Tensor loss;    // scalar mean cross-entropy (undefined without labels)
};

// The encoder of a RoFormer plus a classification head.
class SequenceClassifier {
public:
    // `encoder`: a fresh or pre-trained RoFormer (its MLM head is left unused). The head is
    // drawn from Rng(head_seed) with the encoder's init_std.
    SequenceClassifier(std::unique_ptr<RoFormer> encoder, size_t num_labels, uint64_t head_seed);

    // ids, token_types: row-major [B,T] (types may be empty: all 0); labels: B class ids, or
    // empty for logits only.
    ClassifierOutput forward(const std::vector<int>& ids, const std::vector<int>& token_types,
                             const std::vector<int>& labels, size_t batch, size_t seq_len,
                             bool training);

    RoFormer& encoder() { return *encoder_; }
    const RoFormer& encoder() const { return *encoder_; }
    size_t num_labels() const { return num_labels_; }
    // What fine-tuning trains: the encoder's parameters (embeddings, positions, layers — not
    // the unused cls.predictions.* MLM head), then the classification head's.
    const std::vector<NamedParameter>& parameters() const { return parameters_; }

private:
    std::unique_ptr<RoFormer> encoder_;
    size_t num_labels_;
    ClassificationHead head_;
    std::vector<NamedParameter> parameters_;
};

}  // namespace rf
