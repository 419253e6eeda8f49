// Room — data: masked-language-model batches from a split's token ids.
//
// Legend: B batch (rows), T seq_len (positions per row), V vocab size.
// A window is T positions: [CLS] t[s] t[s+1] … t[s+T−3] [SEP] — T−2 consecutive tokens of
// the split (crossing verse and chapter boundaries freely), framed like a BERT sentence, so a
// fill-mask sentence encoded with Tokenizer::encode_for_model looks like training input.
// Masking (BERT): each non-special position is selected with probability p (default 0.15);
// a selected position becomes [MASK] with prob. 0.8, a uniformly random non-special token
// (id in [5, V)) with prob. 0.1, and stays unchanged otherwise. labels hold the original id
// at selected positions and −100 (kIgnoreLabel) elsewhere: the loss is taken only there.
//   Training: window starts uniform in [0, n − (T−2)], masks drawn per batch from
//             Rng(batch_seed(seed, k)), so batch k is the same whatever came before
//             (resume = seek(k)). A training row with no selected position gets one.
//   Validation: fixed windows and fixed masks. The masking decision for each token of the
//             split is drawn once from Rng(seed), in order, so it depends only on the token's
//             position in the split — windows of any length that contain it see the same
//             mask. Every call with the same arguments returns identical batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "step/batch.hpp"
#include "tensor/random.hpp"

namespace rf::data {

constexpr size_t kFramingTokens = 2;  // [CLS] and [SEP] in every window

struct MaskingOptions {
    double select_probability = 0.15;  // share of non-special positions that get a label
    double mask_share = 0.8;           // of those: replaced by [MASK]
    double random_share = 0.1;         // of those: replaced by a random non-special token
                                       // (the remaining 1 − mask − random stay unchanged)
    void validate() const;             // throws std::invalid_argument naming the bad field
};

// Writes the window starting at text token `start` into out[0..seq_len): [CLS] … [SEP].
void frame_window(const std::vector<int>& tokens, size_t start, size_t seq_len, int* out);

// The token a selected position shows the model (BERT's 80/10/10 rule): [MASK] when
// action < mask_share, else a uniformly random non-special id in [5, vocab_size) (one
// rng.below draw, only in this case) when action < mask_share + random_share, else `original`.
// action is a uniform draw in [0, 1). In mlm.cpp (a graded task: students/tasks/).
int masked_token_for(int original, double action, size_t vocab_size, const MaskingOptions& options,
                     Rng& rng);

class MlmSampler {
public:
    // tokens: the training split's ids. Throws if it cannot fill one window.
    MlmSampler(std::vector<int> tokens, size_t seq_len, size_t vocab_size, uint64_t seed,
               MaskingOptions options = {});
    Batch next(size_t batch_size);  // batch_at(drawn++, …)
    Batch batch_at(uint64_t index, size_t batch_size) const;
    uint64_t batches_drawn() const { return drawn_; }
    void seek(uint64_t batches_drawn) { drawn_ = batches_drawn; }
    size_t n_tokens() const { return tokens_.size(); }

private:
    std::vector<int> tokens_;
    size_t seq_len_, vocab_size_;
    uint64_t seed_, drawn_ = 0;
    MaskingOptions options_;
};

// Starts of n_windows windows spread evenly over the split (first at 0, last at the end);
// n_windows is capped at the number of distinct starts; 0 means as many non-overlapping
// windows as fit, back to back. A window holds seq_len − framing_tokens tokens of the split
// (MLM: [CLS] and [SEP] frame it; a causal LM window has no framing, pass 0).
std::vector<size_t> validation_window_starts(size_t n_tokens, size_t seq_len, size_t n_windows,
                                             size_t framing_tokens = kFramingTokens);

// The fixed validation set: windows from validation_window_starts, grouped into batches of
// batch_size rows (the last batch may be smaller), masks fixed by `seed`.
std::vector<Batch> make_validation_batches(const std::vector<int>& tokens, size_t seq_len,
                                              size_t n_windows, size_t batch_size,
                                              size_t vocab_size, uint64_t seed,
                                              const MaskingOptions& options = {});

// For length extrapolation: the first max_text_tokens tokens of the split (0 = all) cut
// into back-to-back windows of length L (the remainder shorter than L−2 is dropped). The
// masks are the same per-position masks as make_validation_batches with the same seed, so
// evaluations at different L score the same tokens with different amounts of context.
std::vector<Batch> make_length_eval_batches(const std::vector<int>& tokens, size_t length,
                                               size_t batch_size, size_t vocab_size, uint64_t seed,
                                               const MaskingOptions& options = {},
                                               size_t max_text_tokens = 0);

}  // namespace rf::data
