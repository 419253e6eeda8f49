// Stage 6 — step: one training step, the heart of the loop (src/train/trainer.cpp runs it
// once a step; train_step.cpp has the step in equations).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "step/batch.hpp"
#include "model/roformer.hpp"
#include "nn/adamw.hpp"

namespace rf {

struct StepResult {
    double loss = 0;       // the batch's mean loss, before the update
    double grad_norm = 0;  // ‖g‖ before clipping
};

// The loss of a step was not finite. Its message names the step and the usual cause (train.lr);
// the trainer, which knows the whole config, rethrows it with every candidate
// (trainer.cpp, divergence_candidates).
struct NonFiniteLoss : std::runtime_error {
    NonFiniteLoss(const std::string& message, double loss, size_t step)
        : std::runtime_error(message), loss(loss), step(step) {}
    double loss;
    size_t step;  // 1-based: the step whose forward gave it
};

// One update of `model` on `batch`: the composed step a student reads. Throws NonFiniteLoss
// when the loss is not finite.
StepResult train_step(RoFormer& model, AdamW& optimizer, const Batch& batch,
                      uint64_t dropout_seed, double grad_clip, double lr, size_t step);

// The step's two halves, for a wrapper that puts something between them (the gradient sum of
// data parallelism, src/train/data_parallel.cpp), each as train_step runs it:
// zero_grad, forward and backward; returns the batch's loss (throws NonFiniteLoss).
double compute_gradients(RoFormer& model, AdamW& optimizer, const Batch& batch,
                         uint64_t dropout_seed, size_t step);
// ‖g‖ before clipping, the gradients clipped to grad_clip when it is > 0.
double clip_gradients(AdamW& optimizer, double grad_clip);

}  // namespace rf
