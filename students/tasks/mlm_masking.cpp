// Graded task mlm_masking — BERT's masking rule (its place: src/data/mlm.cpp, marked there).
// Grade it:  scripts/grade.sh mlm_masking   (tests: tests/lesson/test_mlm.cpp — the shares of
//                                            [MASK] / random / unchanged, and reproducibility)
//
// The sampler (src/data/mlm.cpp) has already chosen which positions the loss is taken at
// (share options.select_probability, default 15 %). For each chosen position it calls
//     masked_token_for(original, action, vocab_size, options, rng)
// with action a fresh uniform draw in [0, 1), and shows the model what this returns:
//   - [MASK] (kMaskId, data/tokenizer.hpp)          with probability options.mask_share (0.8)
//   - a uniformly random NON-special token id        with probability options.random_share (0.1)
//     in [kNumSpecialTokens, vocab_size): draw it with rng.below(n) (tensor/random.hpp)
//   - the original token unchanged                   otherwise (the remaining 0.1)
// Use `action` to decide (compare it with the shares); draw from rng ONLY in the random case,
// once — the reproducibility tests expect the same stream of draws as ours.
// Why keep 10 % unchanged and 10 % random: Devlin et al. 2019 (BERT), §3.1 and appendix C.2;
// docs/model.md.
#include <stdexcept>

#include "data/mlm.hpp"
#include "data/tokenizer.hpp"

namespace rf::data {

int masked_token_for(int original, double action, size_t vocab_size, const MaskingOptions& options,
                     Rng& rng) {
    // TODO(student)
    throw std::logic_error(
        "masked_token_for: not implemented yet: "
        "write students/tasks/mlm_masking.cpp, "
        "grade it with scripts/grade.sh mlm_masking");
}

}  // namespace rf::data
