// Stage 5 — model: the classification head (see classifier.hpp for the equations).
#include "model/classifier.hpp"

#include <stdexcept>

namespace rf {

ClassificationHead::ClassificationHead(size_t hidden, size_t num_labels, double init_std, Rng& rng)
    : dense(hidden, hidden, init_std, rng, "classifier.dense"),
      out_proj(hidden, num_labels, init_std, rng, "classifier.out_proj") {}

// x:[B,C] → out_proj(dropout(gelu(dense(dropout(x))))):[B,K]
Tensor ClassificationHead::operator()(const Tensor& x, const SwappableOps* kernels, bool training,
                                      Real p, Rng& rng) const {
    const Tensor u = dense(dropout(x, p, training, rng));
    Tensor z = kernels ? kernels->gelu(u) : gelu(u);
    return out_proj(dropout(z, p, training, rng));
}

void ClassificationHead::collect(std::vector<NamedParameter>& params) const {
    dense.collect(params);
    out_proj.collect(params);
}

SequenceClassifier::SequenceClassifier(std::unique_ptr<RoFormer> encoder, size_t num_labels,
                                       uint64_t head_seed)
    : encoder_(std::move(encoder)), num_labels_(num_labels) {
    if (!encoder_) throw std::invalid_argument("SequenceClassifier: no encoder");
    if (num_labels < 2)
        throw std::invalid_argument("classifier: " + std::to_string(num_labels) +
                                    " classes; a classification task needs at least 2");
    Rng rng(head_seed);
    head_ =
        ClassificationHead(encoder_->config().hidden, num_labels, encoder_->config().init_std, rng);
    for (const NamedParameter& p : encoder_->parameters())
        if (p.tensor.name().rfind("cls.", 0) != 0) parameters_.push_back(p);
    head_.collect(parameters_);
}

ClassifierOutput SequenceClassifier::forward(const std::vector<int>& ids,
                                             const std::vector<int>& token_types,
                                             const std::vector<int>& labels, size_t batch,
                                             size_t seq_len, bool training) {
    if (!labels.empty() && labels.size() != batch)
        throw std::invalid_argument("classifier: " + std::to_string(labels.size()) +
                                    " labels for a batch of " + std::to_string(batch));
    for (int y : labels)
        if (y < 0 || size_t(y) >= num_labels_)
            throw std::invalid_argument("classifier: label " + std::to_string(y) + " outside 0.." +
                                        std::to_string(num_labels_ - 1));
    Tensor hidden = encoder_->encode(ids, batch, seq_len, training, token_types);  // [B·T, C]
    std::vector<int> first(batch);
    for (size_t b = 0; b < batch; ++b) first[b] = static_cast<int>(b * seq_len);
    // The row gather (embedding op: scatter-add backward) of every sequence's first token.
    Tensor x = embedding(hidden, first, {batch});  // [B, C]
    ClassifierOutput out;
    out.logits = head_(x, encoder_->swappable_ops(), training, static_cast<Real>(encoder_->config().dropout),
                       encoder_->dropout_rng());
    if (!labels.empty()) out.loss = cross_entropy(out.logits, labels);
    return out;
}

}  // namespace rf
