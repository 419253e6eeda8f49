// A WRONG solution of graded task mlm_masking: the random token drawn from the whole vocabulary,
// special tokens ([PAD], [UNK], [CLS], [SEP], [MASK]) included.
// scripts/grade.sh --check grades it and requires the hint below in the console
// (students/hints.txt). Not an answer; left out of a handout.
// expected hint: mlm_masking.special
#include "data/mlm.hpp"
#include "data/tokenizer.hpp"

namespace rf::data {

int masked_token_for(int original, double action, size_t vocab_size, const MaskingOptions& options,
                     Rng& rng) {
    if (action < options.mask_share) return kMaskId;
    if (action < options.mask_share + options.random_share) return static_cast<int>(rng.below(vocab_size));
    return original;
}

}  // namespace rf::data
