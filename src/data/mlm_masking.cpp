// Room — data: the MLM masking rule, what a selected position shows the model (declared in
// mlm.hpp; used by the training sampler and the validation masks in mlm.cpp). Its own file so
// a student build can swap it (students/tasks/mlm_masking.cpp, docs/graded-tasks.md); the
// default build compiles this one.
#include "data/mlm.hpp"
#include "data/tokenizer.hpp"

namespace rf::data {

// [MASK] with probability mask_share, a random non-special token with probability
// random_share, the original token otherwise (BERT, Devlin et al. 2019, §3.1: 80/10/10).
int masked_token_for(int original, double action, size_t vocab_size, const MaskingOptions& options,
                     Rng& rng) {
    if (action < options.mask_share) return kMaskId;
    if (action < options.mask_share + options.random_share)
        return kNumSpecialTokens + static_cast<int>(rng.below(vocab_size - kNumSpecialTokens));
    return original;
}

}  // namespace rf::data
