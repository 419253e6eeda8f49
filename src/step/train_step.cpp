// Stage 6 — step: one training step, the heart of the loop (src/train/trainer.cpp runs it once
// a step).
//
//   optimizer.zero_grad()                       every gradient buffer back to 0
//   loss = model.forward(batch, training)       mean cross-entropy over the labelled positions
//                                               (none labelled: no forward, gradients stay 0)
//   loss.backward()                             d loss / d every parameter, into .grad
//   ‖g‖ clipped to grad_clip (when > 0)         g ← g · grad_clip / ‖g‖ if ‖g‖ > grad_clip
//   AdamW at learning rate lr                   the schedule's, schedule.hpp
// Dropout draws from Rng(dropout_seed): a run resumed at this step draws the same masks.
#include "step/train_step.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rf {

namespace {

// Whether any position of the batch carries a label (kIgnoreLabel: none asked there).
bool has_labels(const Batch& batch) {
    return std::any_of(batch.labels.begin(), batch.labels.end(),
                       [](int label) { return label != kIgnoreLabel; });
}

// The batch's loss from the forward's output, after its backward (d loss / d every parameter,
// into .grad); NonFiniteLoss, naming the step, when it is not finite.
double backward_from(ModelOutput& out, size_t step) {
    const double loss = out.loss.item();
    if (!std::isfinite(loss))
        throw NonFiniteLoss("training loss became " + std::to_string(loss) + " at step " +
                                std::to_string(step + 1) +
                                "; lower train.lr or raise train.warmup_steps",
                            loss, step + 1);
    out.loss.backward();
    return loss;  // (out's graph is freed when out goes, before the update)
}

}  // namespace

StepResult train_step(RoFormer& model, AdamW& optimizer, const Batch& batch,
                      uint64_t dropout_seed, double grad_clip, double lr, size_t step) {
    StepResult r;
    model.dropout_rng() = Rng(dropout_seed);
    optimizer.zero_grad();
    // A batch with no labelled position has no mean loss: no forward, every gradient stays 0.
    if (has_labels(batch)) {
        ModelOutput out =
            model.forward(batch.input_ids, batch.labels, batch.batch, batch.seq_len, true);
        r.loss = backward_from(out, step);
    }
    r.grad_norm = clip_gradients(optimizer, grad_clip);
    // AdamW's update, as the model's ops run it: AdamW::step on the composed path, its
    // vectorised twin on the fast path (model/swappable_ops.hpp)
    model.optimizer_step(optimizer, lr);
    return r;
}

// ---- the step's two halves, for a wrapper that puts something between them -------------
double compute_gradients(RoFormer& model, AdamW& optimizer, const Batch& batch,
                         uint64_t dropout_seed, size_t step) {
    model.dropout_rng() = Rng(dropout_seed);
    optimizer.zero_grad();
    // (A training window always has a labelled position; a data-parallel rank's shard may
    // have none: its gradients are 0 in the sum, data_parallel.cpp.)
    if (!has_labels(batch)) return 0.0;
    ModelOutput out = model.forward(batch.input_ids, batch.labels, batch.batch, batch.seq_len, true);
    return backward_from(out, step);
}

double clip_gradients(AdamW& optimizer, double grad_clip) {
    return grad_clip > 0 ? optimizer.clip_grad_norm(grad_clip) : optimizer.grad_norm();
}

}  // namespace rf
