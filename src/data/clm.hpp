// Room — data: causal-language-model batches from a split's token ids.
//
// Legend: B batch (rows), T seq_len (positions per row), x the split's token ids.
// A window is T consecutive tokens of the split, unframed (no [CLS]/[SEP], nothing masked).
// At every position t the model predicts the token that follows:
//   input_ids[t] = x[s+t]                       t = 0 … T−1
//   labels[t]    = x[s+t+1]                     t = 0 … T−2
//   labels[T−1]  = −100 (kIgnoreLabel)          its next token is outside the window
// so a row asks for T−1 predictions and the loss is their mean cross-entropy. Nothing hides
// x[s+t+1] from position t in the input: the causal attention (ModelConfig::causal, set for
// train.objective = clm) is what keeps every position from looking ahead.
// The batches reuse Batch {input_ids, labels}: the model does not care why a
// position carries a label.
//   Training:    starts uniform in [0, n − T], drawn per batch from Rng(batch_seed(seed, k)),
//                so batch k is the same whatever came before (resume = batch_at(k)).
//   Validation:  fixed windows (validation_window_starts, no framing), no randomness at all.
//   Length eval: windows of L tokens that overlap by one, starts 0, L−1, 2(L−1), …: each
//                window predicts the L−1 tokens after its first, so every token but the very
//                first is predicted exactly once, whatever L is — evaluations at different L
//                score the same tokens with more or less context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/mlm.hpp"

namespace rf::data {

// Writes the window starting at token `start` of `tokens`: ids[0..seq_len) and labels[0..seq_len).
void clm_window(const std::vector<int>& tokens, size_t start, size_t seq_len, int* ids,
                int* labels);

class ClmSampler {
public:
    // tokens: the training split's ids. Throws if it cannot fill one window of seq_len ≥ 2.
    ClmSampler(std::vector<int> tokens, size_t seq_len, uint64_t seed);
    Batch batch_at(uint64_t index, size_t batch_size) const;  // [B, T], B = batch_size
    size_t n_tokens() const { return tokens_.size(); }

private:
    std::vector<int> tokens_;
    size_t seq_len_;
    uint64_t seed_;
};

// The fixed validation set: n_windows windows spread evenly over the split (0 = back to
// back), in batches of batch_size rows (the last batch may be smaller).
std::vector<Batch> make_clm_validation_batches(const std::vector<int>& tokens, size_t seq_len,
                                                  size_t n_windows, size_t batch_size);

// For length extrapolation: the first max_text_tokens tokens of the split (0 = all) cut into
// windows of `length` tokens overlapping by one (see above); a remainder too short for one
// more window is dropped.
std::vector<Batch> make_clm_length_eval_batches(const std::vector<int>& tokens, size_t length,
                                                   size_t batch_size, size_t max_text_tokens = 0);

}  // namespace rf::data
