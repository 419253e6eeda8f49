// Stage 5 — model: the RoFormer encoder (BERT-style post-LN) with a tied MLM head.
//
// Legend: B batch, T tokens, C hidden, F FFN size, V vocabulary, L layers, M masked positions,
//         E embedding width (model.embedding_size; E = C unless set).
//   h = word_emb[ids] + type_emb[0]  (+ absolute positions)      [B,T,E]
//   h = dropout(LN(h))          (E ≠ C: then h = h·Wpᵀ + bp, to [B,T,C])
//   L × { a = dropout(SelfAttention(h));  h = LN(h + a)
//         f = dropout(W2·gelu(W1·h + b1) + b2);  h = LN(h + f) }
//   MLM head on the M rows that carry a label:
//   z = LN(gelu(h·Wtᵀ + bt))                                      [M,E]
//   logits = z·word_embᵀ + bias                                     [M,V]   (decoder tied)
// Parameter names are HF RoFormerForMaskedLM's, so model.safetensors loads there by name.
// ModelConfig::causal (train.objective = clm) masks the future (attention.hpp); the encoder and
// head are unchanged. The model's swappable ops (swappable_ops.hpp) may swap each layer's softmax for
// kernelised attention (model.attention = linear, src/linear/); their fixed tensors are the
// model's buffers: saved, never trained.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/attention.hpp"
#include "model/swappable_ops.hpp"
#include "model/model_config.hpp"
#include "nn/layers.hpp"
#include "position/position.hpp"

namespace rf {

// One encoder block, post-LN (BERT, RoFormer). Its forward is written here and nowhere else:
// training, evaluation, attention maps and the graph drawing all run these two functions.
struct EncoderLayer {
    SelfAttention attention;
    LayerNorm attention_norm;  // attention.output.LayerNorm
    Linear intermediate;       // intermediate.dense  [F, C]
    Linear output;             // output.dense        [C, F]
    LayerNorm output_norm;     // output.LayerNorm
    // the model's swappable ops (swappable_ops.hpp); none: the composed ops, called directly
    const SwappableOps* ops = nullptr;

    // h:[B,T,C] → LN(h + dropout(SelfAttention(h)))
    Tensor attention_block(const Tensor& h, PositionScheme& position, bool training,
                           Real dropout_p, Rng& rng) const;
    // h:[B,T,C] → LN(h + dropout(W2·gelu(W1·h + b1) + b2))
    Tensor feed_forward_block(const Tensor& h, bool training, Real dropout_p, Rng& rng) const;
    // the whole block: feed_forward_block(attention_block(h))
    Tensor forward(const Tensor& h, PositionScheme& position, bool training, Real dropout_p,
                   Rng& rng) const;
};

// The result of one forward pass.
struct ModelOutput {
    // [M, V] logits at the selected rows; on the fast path (SwappableOps::decoder_loss) a
    // constant without graph: differentiate the loss
    Tensor logits;
    Tensor loss;            // scalar mean cross-entropy (undefined without labels)
    std::vector<int> rows;  // which of the B·T positions the logits rows are
};

class RoFormer {
public:
    // ops: the kernels its layers and head run (swappable_ops.hpp), handed in by whoever builds
    // the model (src/assembly/ builds them from the config); none: the composed ops a student
    // reads. model.attention = linear has no composed form: its kernels must be handed in.
    RoFormer(const ModelConfig& config, const PositionConfig& position, uint64_t init_seed,
             std::shared_ptr<const SwappableOps> ops = nullptr);

    // ids, labels: row-major [B,T]; labels are −100 where no prediction is asked for.
    // The head runs only on rows whose label is not −100 (sparse prediction); the loss is
    // their mean cross-entropy.
    ModelOutput forward(const std::vector<int>& ids, const std::vector<int>& labels, size_t batch,
                        size_t seq_len, bool training);
    // Logits at every position (fill-mask, inspection): [B·T, V]; token_types as in embed.
    Tensor logits_all(const std::vector<int>& ids, size_t batch, size_t seq_len,
                      const std::vector<int>& token_types = {});
    // The encoder's last hidden states [B·T, C]: embed, then every layer's forward.
    Tensor encode(const std::vector<int>& ids, size_t batch, size_t seq_len, bool training,
                  const std::vector<int>& token_types = {});
    // The encoder's input: dropout(LN(word_emb[ids] + type_emb[types] + absolute positions)),
    // projected from E to C when they differ; ids, token_types:[B,T] → [B,T,C]. No
    // token_types: every token is type 0 (one segment); a sentence pair marks segment b with 1
    // (model/classifier.hpp).
    Tensor embed(const std::vector<int>& ids, size_t batch, size_t seq_len, bool training,
                 const std::vector<int>& token_types = {});

    const ModelConfig& config() const { return config_; }
    const PositionConfig& position_config() const { return position_config_; }
    // The swappable ops its layers and head run (swappable_ops.hpp), handed in at construction;
    // none (nullptr): the composed ops, called directly.
    const SwappableOps* swappable_ops() const;
    // One update of `optimizer` at learning rate lr, as its ops run it: AdamW::step when it was
    // handed none (the vectorised twin on the fast path).
    void optimizer_step(AdamW& optimizer, double lr) const;
    PositionScheme& position() { return *position_; }
    // The scheme layer i attends with: position() or, where position.layer_schemes says
    // `none`, a scheme that adds nothing (layers_with_position, position.hpp).
    PositionScheme& layer_position(size_t i) { return *layer_positions_.at(i); }
    // The encoder layers, in order (attention_maps.hpp reads their attention).
    const std::vector<EncoderLayer>& layers() const { return layers_; }
    // Every trainable tensor, in a fixed order, with names and weight-decay flags.
    const std::vector<NamedParameter>& parameters() const { return parameters_; }
    size_t num_parameters() const;
    // Fixed named tensors that are saved and loaded with the weights but never trained: its
    // swappable ops' buffers() — with linear attention and model.feature_map = favor, the FAVOR
    // projection W:[M, D] of every layer ("roformer.encoder.layer.{i}.attention.self.
    // feature_projection"); empty otherwise.
    std::vector<Tensor> buffers() const;
    // Forward FLOPs per token with the head on a fraction `head_fraction` of positions
    // (2 per multiply-add; attention's T-dependent terms included). Training ≈ 3× this.
    double forward_flops_per_token(size_t seq_len, double head_fraction) const;
    // Dropout randomness (re-seeded by the trainer for bit-identical resumes).
    Rng& dropout_rng();

private:
    Tensor head_transform(const Tensor& hidden_rows);  // [M,C] → z:[M,E], before the decoder

    ModelConfig config_;
    PositionConfig position_config_;
    std::shared_ptr<const SwappableOps> ops_;  // none: the composed ops, called directly
    size_t embedding_width_;                   // E (model_config.hpp, embedding_width)
    Tensor word_embeddings;        // [V, E]
    Tensor token_type_embeddings;  // [types, E]: segment a (0) and b (1) of a sentence pair, …
    LayerNorm embedding_norm;
    Linear embeddings_project;     // roformer.embeddings_project [C, E], only when E ≠ C
    std::unique_ptr<PositionScheme> position_;
    std::unique_ptr<PositionScheme> no_position_;    // for layers marked `none`
    std::vector<PositionScheme*> layer_positions_;  // per layer: position_ or no_position_
    std::vector<EncoderLayer> layers_;
    Linear transform;          // cls.predictions.transform.dense
    LayerNorm transform_norm;  // cls.predictions.transform.LayerNorm
    Tensor decoder_bias;       // cls.predictions.bias [V]
    std::vector<NamedParameter> parameters_;
    Rng dropout_rng_;
};

}  // namespace rf
