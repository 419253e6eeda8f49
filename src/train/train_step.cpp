// Stage 7 — train: one training step, the heart of the loop (trainer.cpp runs it once a step).
//
//   optimizer.zero_grad()                       every gradient buffer back to 0
//   loss = model.forward(batch, training)       mean cross-entropy over the labelled positions
//   loss.backward()                             d loss / d every parameter, into .grad
//   (sum_gradients: several processes add their gradients; docs/distributed.md)
//   ‖g‖ clipped to grad_clip (when > 0)         g ← g · grad_clip / ‖g‖ if ‖g‖ > grad_clip
//   AdamW at learning rate lr                   the schedule's, schedule.hpp
// Dropout draws from Rng(dropout_seed): a run resumed at this step draws the same masks.
// ObservedScope names the phases that are not ops for an engine observer (tensor.hpp), such
// as `--profile`'s; without one they cost a pointer test.
#include "train/train_step.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace rf {

StepResult train_step(RoFormer& model, AdamW& optimizer, const data::Batch& batch,
                      uint64_t dropout_seed, double grad_clip, double lr, size_t step,
                      const GradientSum& sum_gradients) {
    model.dropout_rng() = Rng(dropout_seed);
    StepResult r;
    {
        const ObservedScope phase("optimizer: zero_grad", true);
        optimizer.zero_grad();
    }
    // (Of several processes, one whose rows hold no label has no loss to differentiate.)
    if (batch.n_selected() > 0 || !sum_gradients) {
        ModelOutput out =
            model.forward(batch.input_ids, batch.labels, batch.batch, batch.seq_len, true);
        r.loss = out.loss.item();
        if (!std::isfinite(r.loss))
            throw NonFiniteLoss("training loss became " + std::to_string(r.loss) + " at step " +
                                    std::to_string(step + 1) +
                                    "; lower train.lr or raise train.warmup_steps",
                                r.loss, step + 1);
        out.loss.backward();
        const ObservedScope phase("free graph", true);
        out = ModelOutput{};  // free the graph before the update
    }
    if (sum_gradients) {
        const ObservedScope phase("allreduce", true);
        r.loss = sum_gradients(optimizer, r.loss);
    }
    const ObservedScope phase("optimizer: clip + step", true);
    r.grad_norm = grad_clip > 0 ? optimizer.clip_grad_norm(grad_clip) : optimizer.grad_norm();
    model.kernels().optimizer_step(optimizer, lr);
    return r;
}

}  // namespace rf
