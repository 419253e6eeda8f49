// Stage 5 — model: text from a causal LM (train.objective = clm), one token at a time.
//
// Legend: V vocabulary, L context (the longest window the model reads), z logits [V].
//   ids = prompt
//   repeat max_new_tokens times:
//       window = the last ≤ L tokens of ids
//       z = logits_all(window)[last position]     the model's scores for the token after ids
//       next = sample(z); ids.push_back(next)
// Sampling one row z (sample_next_token):
//   temperature τ = 0, or top_k = 1:  greedy, next = arg max_v z_v (the lowest id on a tie)
//   otherwise: keep the top_k largest logits (0 = keep all V), p_v = exp((z_v − z_max)/τ) / Σ,
//              draw u uniform in [0, 1) from the seeded Rng and take the first kept v (by
//              descending logit) at which the running sum of p passes u.
//   τ < 1 sharpens the distribution toward the arg-max, τ > 1 flattens it; top_k cuts the long
//   tail of unlikely tokens that would otherwise be drawn now and then.
// Same model, prompt, options and seed → the same text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/roformer.hpp"
#include "tensor/random.hpp"

namespace rf {

struct SamplingOptions {
    long long max_new_tokens = 200;  // tokens to generate (≥ 1)
    double temperature = 0.8;        // τ ≥ 0; 0 = greedy
    long long top_k = 40;            // sample among the k most likely tokens; 0 = no limit
    uint64_t seed = 1;               // the sampling Rng's seed
    // Throws std::invalid_argument naming the field (top_k, …) and the fix; the command that
    // fills these in from its flags checks them under its own flag names first.
    void validate() const;
};

// The next token from one row of logits [V] (the rule above). Greedy draws nothing from rng.
int sample_next_token(const Real* logits, size_t vocab_size, const SamplingOptions& options,
                      Rng& rng);

// Continues `prompt` (at least one id) by options.max_new_tokens tokens, reading at most
// `context` tokens per step; calls on_token(id) right after each token is chosen (to print
// it). Returns the new tokens only. No gradients, no dropout.
std::vector<int> generate(RoFormer& model, const std::vector<int>& prompt, size_t context,
                          const SamplingOptions& options,
                          const std::function<void(int)>& on_token = {});

}  // namespace rf
