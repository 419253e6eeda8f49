// Room — train: validation loss and accuracy of a model on fixed batches.
// The same for both objectives: every position with a label counts — the masked tokens of an
// MLM batch, every next token of a causal-LM batch (data/objective.hpp).
#pragma once

#include <cstddef>
#include <vector>

#include "data/mlm.hpp"
#include "model/roformer.hpp"

namespace rf {

struct EvalResult {
    double loss = 0;         // mean cross-entropy over every labelled position (nats)
    double accuracy = 0;     // share of labelled positions whose arg-max is the label
    size_t predictions = 0;  // labelled positions counted
};

// One batch's share: Σ loss over its labelled positions, how many the arg-max got right, and
// how many there are.
struct BatchScore {
    double loss_sum = 0;
    size_t correct = 0, predictions = 0;
};
BatchScore score_batch(RoFormer& model, const Batch& batch);
// The batches' scores summed in order into a result; throws as evaluate() does.
EvalResult combine_scores(const std::vector<BatchScore>& scores);

// No gradients, no dropout. max_batches = 0: all of them. Throws std::runtime_error when
// the batches hold no labelled position (nothing to score) or the loss is not finite.
EvalResult evaluate(RoFormer& model, const std::vector<Batch>& batches,
                    size_t max_batches = 0);

}  // namespace rf
