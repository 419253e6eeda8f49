// Room — train: evaluation (see evaluate.hpp).
#include "train/evaluate.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/finite_values.hpp"

namespace rf {

BatchScore score_batch(RoFormer& model, const Batch& batch) {
    NoGradGuard no_grad;
    BatchScore score;
    if (batch.n_selected() == 0) return score;  // nothing to score: counted, not computed
    ModelOutput out =
        model.forward(batch.input_ids, batch.labels, batch.batch, batch.seq_len, false);
    const size_t M = out.rows.size(), V = out.logits.size(1);
    if (M == 0) return score;
    score.loss_sum = double(out.loss.item()) * double(M);
    const Real* logits = out.logits.data();
    for (size_t r = 0; r < M; ++r) {
        const Real* row = logits + r * V;
        size_t best = 0;
        for (size_t v = 1; v < V; ++v)
            if (row[v] > row[best]) best = v;
        score.correct += int(best) == batch.labels[size_t(out.rows[r])];
    }
    score.predictions = M;
    return score;
}

EvalResult combine_scores(const std::vector<BatchScore>& scores) {
    EvalResult result;
    double loss_sum = 0;
    size_t correct = 0;
    for (const BatchScore& s : scores) {  // in batch order: the sum's rounding is fixed
        loss_sum += s.loss_sum;
        correct += s.correct;
        result.predictions += s.predictions;
    }
    // A mean over nothing is not a loss of 0: say so, with what would give it tokens to score.
    if (result.predictions == 0)
        throw std::runtime_error(
            "the evaluation scored 0 tokens (" + std::to_string(scores.size()) +
            " batches, no labelled position); raise data.mask_prob or data.val_windows, or use "
            "a longer validation text");
    result.loss = loss_sum / double(result.predictions);
    result.accuracy = double(correct) / double(result.predictions);
    require_finite_output("the validation loss", result.loss);  // model/finite_values.hpp
    return result;
}

EvalResult evaluate(RoFormer& model, const std::vector<Batch>& batches, size_t max_batches) {
    const size_t n = max_batches ? std::min(max_batches, batches.size()) : batches.size();
    std::vector<BatchScore> scores(n);
    for (size_t b = 0; b < n; ++b) scores[b] = score_batch(model, batches[b]);
    return combine_scores(scores);
}

}  // namespace rf
