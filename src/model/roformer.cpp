// Stage 5 — model: RoFormer encoder + MLM head (see roformer.hpp for the equations).
#include "model/roformer.hpp"

#include <cassert>
#include <stdexcept>

namespace rf {

RoFormer::RoFormer(const ModelConfig& config, const PositionConfig& position, uint64_t init_seed,
                   std::shared_ptr<const SwappableOps> ops)
    : config_(config),
      position_config_(position),
      ops_(std::move(ops)),
      embedding_width_(embedding_width(config)),
      dropout_rng_(init_seed ^ 0x9E3779B97F4A7C15ULL) {
    if (config.vocab_size == 0) throw std::invalid_argument("model.vocab_size must be > 0");
    // The position config was validated at load (config/validate.cpp); only asserted here.
    assert(config.num_heads > 0 && config.hidden % config.num_heads == 0);
    validate_model_options(config, position);
    const size_t C = config.hidden, V = config.vocab_size, F = config.ffn;
    const size_t E = embedding_width_;  // the embedding tables' width (C unless set)
    const double std = config.init_std, eps = config.layer_norm_eps;
    Rng rng(init_seed);

    // Parameters are created (and drawn from rng) in HF's state-dict order.
    word_embeddings =
        normal_parameter({V, E}, std, rng, "roformer.embeddings.word_embeddings.weight");
    token_type_embeddings = normal_parameter({config.type_vocab_size, E}, std, rng,
                                             "roformer.embeddings.token_type_embeddings.weight");
    embedding_norm = LayerNorm(E, eps, "roformer.embeddings.LayerNorm");
    if (E != C) embeddings_project = Linear(E, C, std, rng, "roformer.embeddings_project");
    // Position parameters (only `learned` has any) come from their own generator, so every
    // other weight is the same draw whatever the scheme: within a seed, runs of different
    // schemes start from identical encoders.
    Rng position_rng(init_seed ^ 0xA5A5A5A5DEADBEEFULL);
    position_ = make_position_scheme(position, C, config.num_heads, position_rng);
    // position.layer_schemes: the layers marked `none` attend without positions
    // (position.hpp); every other layer uses the one scheme above.
    PositionConfig no_position = position;
    no_position.scheme = PositionKind::none;
    no_position_ = make_position_scheme(no_position, C, config.num_heads, position_rng);
    for (bool with : layers_with_position(position, config.num_layers))
        layer_positions_.push_back(with ? position_.get() : no_position_.get());
    // (The ops handed in draw any fixed tensors of their own, the linear kernels' FAVOR
    // projections, from generators of their own, so every weight is the same draw whatever the
    // ops.) Linear attention has no composed form: refused without its kernels.
    if (config.attention == AttentionKind::linear && !(ops_ && ops_->is_linear_attention()))
        throw std::invalid_argument(
            "model.attention = linear needs the linear-attention kernels handed to the model "
            "(swappable_ops_for, src/assembly/swappable_ops_for.hpp)");
    for (size_t i = 0; i < config.num_layers; ++i) {
        const std::string p = "roformer.encoder.layer." + std::to_string(i);
        EncoderLayer layer;
        layer.attention = SelfAttention(config, rng, p + ".attention");
        layer.attention_norm = LayerNorm(C, eps, p + ".attention.output.LayerNorm");
        layer.intermediate = Linear(C, F, std, rng, p + ".intermediate.dense");
        layer.output = Linear(F, C, std, rng, p + ".output.dense");
        layer.output_norm = LayerNorm(C, eps, p + ".output.LayerNorm");
        layer.ops = ops_.get();
        layers_.push_back(std::move(layer));
    }
    transform = Linear(C, E, std, rng, "cls.predictions.transform.dense");
    transform_norm = LayerNorm(E, eps, "cls.predictions.transform.LayerNorm");
    decoder_bias = constant_parameter({V}, Real(0), "cls.predictions.bias");

    parameters_.emplace_back(word_embeddings);  // decay follows decays_by_default
    parameters_.emplace_back(token_type_embeddings);
    embedding_norm.collect(parameters_);
    if (E != C) embeddings_project.collect(parameters_);
    for (Tensor& t : position_->parameters()) parameters_.emplace_back(t);
    for (const EncoderLayer& layer : layers_) {
        layer.attention.collect(parameters_);
        layer.attention_norm.collect(parameters_);
        layer.intermediate.collect(parameters_);
        layer.output.collect(parameters_);
        layer.output_norm.collect(parameters_);
    }
    transform.collect(parameters_);
    transform_norm.collect(parameters_);
    parameters_.emplace_back(decoder_bias);
}

void RoFormer::optimizer_step(AdamW& optimizer, double lr) const {
    if (ops_)
        ops_->optimizer_step(optimizer, lr);
    else
        optimizer.step(lr);
}

Rng& RoFormer::dropout_rng() { return dropout_rng_; }

// ---- the composed answers of the swappable ops (swappable_ops.hpp) ------------------------
// LN(h + r)
Tensor residual_norm(const LayerNorm& norm, const Tensor& h, const Tensor& r) {
    return norm(add(h, r));
}

// logits = z·Eᵀ + bias
Tensor tied_decoder(const Tensor& z, const Tensor& embeddings, const Tensor& bias) {
    return add(matmul(z, embeddings, false, true), bias);
}

Tensor decoder_loss(const Tensor& z, const Tensor& embeddings, const Tensor& bias,
                    const std::vector<int>& targets, int ignore_index, Tensor* logits) {
    *logits = tied_decoder(z, embeddings, bias);
    return cross_entropy(*logits, targets, ignore_index);
}

// ---- one encoder block (post-LN) ---------------------------------------------------------
// At each of the swappable places: the ops handed in, or (none) the composed op itself.
Tensor EncoderLayer::attention_block(const Tensor& h, PositionScheme& position, bool training,
                                     Real dropout_p, Rng& rng) const {
    Tensor a = ops ? ops->self_attention(attention, h, position, training, rng)
                   : attention(h, position, training, rng);
    const Tensor r = dropout(a, dropout_p, training, rng);
    return ops ? ops->residual_norm(attention_norm, h, r) : residual_norm(attention_norm, h, r);
}

Tensor EncoderLayer::feed_forward_block(const Tensor& h, bool training, Real dropout_p,
                                        Rng& rng) const {
    const Tensor u = intermediate(h);
    Tensor f = output(ops ? ops->gelu(u) : gelu(u));
    const Tensor r = dropout(f, dropout_p, training, rng);
    return ops ? ops->residual_norm(output_norm, h, r) : residual_norm(output_norm, h, r);
}

Tensor EncoderLayer::forward(const Tensor& h, PositionScheme& position, bool training,
                             Real dropout_p, Rng& rng) const {
    return feed_forward_block(attention_block(h, position, training, dropout_p, rng), training,
                              dropout_p, rng);
}

// ---- the encoder --------------------------------------------------------------------------
// ids, types:[B,T] → dropout(LN(word_emb[ids] + type_emb[types] + positions)):[B,T,E],
// then projected to [B,T,C] when E ≠ C
Tensor RoFormer::embed(const std::vector<int>& ids, size_t batch, size_t seq_len, bool training,
                       const std::vector<int>& token_types) {
    if (ids.size() != batch * seq_len)
        throw std::invalid_argument("encode: got " + std::to_string(ids.size()) + " ids for [" +
                                    std::to_string(batch) + ", " + std::to_string(seq_len) + "]");
    if (!token_types.empty() && token_types.size() != ids.size())
        throw std::invalid_argument("encode: got " + std::to_string(token_types.size()) +
                                    " token types for " + std::to_string(ids.size()) + " ids");
    for (int t : token_types)
        if (t < 0 || size_t(t) >= config_.type_vocab_size)
            throw std::invalid_argument("encode: token type " + std::to_string(t) +
                                        " is outside 0.." +
                                        std::to_string(config_.type_vocab_size - 1) +
                                        " (model.type_vocab_size)");
    Tensor h = embedding(word_embeddings, ids, {batch, seq_len});  // [B,T,E]
    if (token_types.empty())
        h = add(h, slice(token_type_embeddings, 0, 0, 1));  // + type_emb[0]
    else
        h = add(h, embedding(token_type_embeddings, token_types, {batch, seq_len}));
    h = position_->embed(h);  // + absolute pos
    h = dropout(embedding_norm(h), static_cast<Real>(config_.dropout), training, dropout_rng_);
    return embedding_width_ == config_.hidden ? h : embeddings_project(h);  // E → C
}

// ids:[B,T] → hidden:[B·T, C]
Tensor RoFormer::encode(const std::vector<int>& ids, size_t batch, size_t seq_len, bool training,
                        const std::vector<int>& token_types) {
    const Real p = static_cast<Real>(config_.dropout);
    Tensor h = embed(ids, batch, seq_len, training, token_types);
    for (size_t i = 0; i < layers_.size(); ++i) {  // each layer's forward, its two blocks
        h = layers_[i].attention_block(h, *layer_positions_[i], training, p, dropout_rng_);
        h = layers_[i].feed_forward_block(h, training, p, dropout_rng_);
    }
    return reshape(h, {batch * seq_len, config_.hidden});
}

// z = LN(gelu(x·Wtᵀ + bt))   x:[M,C] → z:[M,E]
Tensor RoFormer::head_transform(const Tensor& hidden_rows) {
    const Tensor u = transform(hidden_rows);
    return transform_norm(ops_ ? ops_->gelu(u) : gelu(u));
}

ModelOutput RoFormer::forward(const std::vector<int>& ids, const std::vector<int>& labels,
                              size_t batch, size_t seq_len, bool training) {
    if (labels.size() != ids.size())
        throw std::invalid_argument("forward: labels has " + std::to_string(labels.size()) +
                                    " entries but ids has " + std::to_string(ids.size()));
    ModelOutput out;
    std::vector<int> targets;
    for (size_t i = 0; i < labels.size(); ++i)
        if (labels[i] != kIgnoreLabel) {
            out.rows.push_back(static_cast<int>(i));
            targets.push_back(labels[i]);
        }
    Tensor hidden = encode(ids, batch, seq_len, training);
    // Gather the labelled rows (the embedding op is exactly a row gather with scatter-add
    // backward), then run the head on those M rows only.
    Tensor rows = embedding(hidden, out.rows, {out.rows.size()});
    // logits = z·word_embᵀ + bias and their mean cross-entropy (one op on the fast path)
    const Tensor z = head_transform(rows);
    out.loss =
        ops_ ? ops_->decoder_loss(z, word_embeddings, decoder_bias, targets, kIgnoreLabel,
                                  &out.logits)
             : decoder_loss(z, word_embeddings, decoder_bias, targets, kIgnoreLabel, &out.logits);
    return out;
}

Tensor RoFormer::logits_all(const std::vector<int>& ids, size_t batch, size_t seq_len,
                            const std::vector<int>& token_types) {
    // logits = z·word_embᵀ + bias at every row   z:[B·T,E] word_emb:[V,E] → [B·T,V]
    const Tensor z = head_transform(encode(ids, batch, seq_len, false, token_types));
    return tied_decoder(z, word_embeddings, decoder_bias);
}

size_t RoFormer::num_parameters() const {
    size_t n = 0;
    for (const NamedParameter& p : parameters_) n += p.tensor.numel();
    return n;
}

const SwappableOps* RoFormer::swappable_ops() const { return ops_.get(); }

std::vector<Tensor> RoFormer::buffers() const {
    return ops_ ? ops_->buffers() : std::vector<Tensor>{};
}

// Per token and layer (2 FLOPs per multiply-add), H heads of size D, C = H·D:
//   softmax: q·kᵀ and probs·v, T·D each per head                 2·2·T·C
//   linear:  state Σ k_num v_nᵀ and its read q_numᵀS, F·D each   2·2·F·C
//            denominators z and q_den·z, F each per head          + 2·2·F·H
//            favor also projects q and k: W·x̃, M·D each          + 2·2·M·C
// The elementwise feature maps, RoPE and softmax's exp are not counted.
double RoFormer::forward_flops_per_token(size_t seq_len, double head_fraction) const {
    const double C = double(config_.hidden), F = double(config_.ffn);
    const double V = double(config_.vocab_size), T = double(seq_len);
    const double H = double(config_.num_heads), E = double(embedding_width_);
    double attention = 2.0 * 2.0 * T * C;  // q·kᵀ and probs·v
    if (config_.attention == AttentionKind::linear) {
        const double features = double(attention_feature_size(config_));
        attention = 2.0 * 2.0 * features * C + 2.0 * 2.0 * features * H;
        if (config_.feature_map == FeatureMap::favor) attention += 2.0 * 2.0 * features * C;
    }
    const double per_layer = 2.0 * 4.0 * C * C    // q, k, v, output projections
                             + 2.0 * 2.0 * C * F  // FFN up and down
                             + attention;
    const double head = head_fraction * (2.0 * C * E + 2.0 * E * V);
    const double project = E != C ? 2.0 * E * C : 0.0;  // roformer.embeddings_project
    return double(config_.num_layers) * per_layer + head + project;
}

}  // namespace rf
