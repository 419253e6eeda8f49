// A WRONG solution of graded task mlm_masking: [MASK] with the random share and vice versa.
// scripts/grade.sh --check grades it and requires the hint below in the console
// (students/hints.txt). Not an answer; left out of a handout.
// expected hint: mlm_masking.shares
#include "data/mlm.hpp"
#include "data/tokenizer.hpp"

namespace rf::data {

int masked_token_for(int original, double action, size_t vocab_size, const MaskingOptions& options,
                     Rng& rng) {
    if (action < options.random_share) return kMaskId;
    if (action < options.mask_share + options.random_share)
        return kNumSpecialTokens + static_cast<int>(rng.below(vocab_size - kNumSpecialTokens));
    return original;
}

}  // namespace rf::data
