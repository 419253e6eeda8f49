// Stage 7 — train: evaluation (see evaluate.hpp).
#include "train/evaluate.hpp"

#include <algorithm>

namespace rf {

EvalResult evaluate(RoFormerMLM& model, const std::vector<data::MlmBatch>& batches,
                    size_t max_batches) {
    NoGradGuard no_grad;
    EvalResult result;
    double loss_sum = 0;
    size_t correct = 0;
    const size_t n = max_batches ? std::min(max_batches, batches.size()) : batches.size();
    for (size_t b = 0; b < n; ++b) {
        const data::MlmBatch& batch = batches[b];
        MlmOutput out =
            model.forward(batch.input_ids, batch.labels, batch.batch, batch.seq_len, false);
        const size_t M = out.rows.size(), V = out.logits.size(1);
        if (M == 0) continue;
        loss_sum += double(out.loss.item()) * double(M);
        const Real* logits = out.logits.data();
        for (size_t r = 0; r < M; ++r) {
            const Real* row = logits + r * V;
            size_t best = 0;
            for (size_t v = 1; v < V; ++v)
                if (row[v] > row[best]) best = v;
            correct += int(best) == batch.labels[size_t(out.rows[r])];
        }
        result.predictions += M;
    }
    if (result.predictions) {
        result.loss = loss_sum / double(result.predictions);
        result.accuracy = double(correct) / double(result.predictions);
    }
    return result;
}

}  // namespace rf
