// Stage 3 — nn: AdamW, the optimizer, plus global-norm gradient clipping.
//
// For every parameter w with gradient g (element-wise), at update t = 1, 2, …:
//   w ← w − lr·wd·w                       decoupled weight decay (only when decay is on)
//   m ← β1·m + (1−β1)·g                   first moment
//   v ← β2·v + (1−β2)·g²                  second moment
//   m̂ = m / (1−β1ᵗ),  v̂ = v / (1−β2ᵗ)    bias correction (moments start at 0)
//   w ← w − lr · m̂ / (√v̂ + ε)
// (PyTorch's torch.optim.AdamW, Loshchilov & Hutter 2019.) Which parameters decay is the
// caller's choice, carried by NamedParameter::decay: this project decays every 2-D weight,
// including the token embeddings (as BERT does), and never biases or LayerNorm γ/β (1-D).
// The scalar factors are computed in double; per element the update is done in double and
// stored as Real, so the result does not depend on the number of threads.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "nn/layers.hpp"
#include "tensor/tensor.hpp"

namespace rf {

struct AdamWOptions {
    double beta1 = 0.9;
    double beta2 = 0.98;
    double eps = 1e-6;
    double weight_decay = 0.01;
};

// Everything needed to resume bit-identically: the update count and both moments per
// parameter, keyed by the parameter's name.
struct AdamWState {
    struct Moments {
        std::string name;
        std::vector<Real> m;  // first moment, same element order as the parameter
        std::vector<Real> v;  // second moment
    };
    size_t step = 0;  // updates applied so far
    std::vector<Moments> params;
};

// decay = (tensor is at least 2-D): the project's rule for which parameters decay.
std::vector<NamedParameter> with_default_decay(const std::vector<Tensor>& params);

class AdamW {
public:
    // Parameters need distinct names (Tensor::name; unnamed ones are called "param.<i>").
    AdamW(std::vector<NamedParameter> params, AdamWOptions options);

    // One update with learning rate `lr` (from the schedule). Parameters without a gradient
    // buffer are left untouched (no decay, no moment update).
    void step(double lr);
    void zero_grad();

    // Scales all gradients by max_norm / ‖g‖ when the global norm ‖g‖ = √(Σ g²) (over every
    // parameter, summed in double) exceeds max_norm > 0. Returns ‖g‖ before clipping. A
    // non-finite norm is returned as is and nothing is scaled (the caller decides).
    double clip_grad_norm(double max_norm);
    // ‖g‖ without changing anything.
    double grad_norm() const;

    size_t steps_taken() const { return step_; }
    const AdamWOptions& options() const { return options_; }
    const std::vector<NamedParameter>& parameters() const { return params_; }
    const std::string& name_of(size_t i) const { return names_[i]; }

    AdamWState export_state() const;
    // Needs exactly one entry per parameter, matched by name, with matching sizes; throws
    // std::invalid_argument naming the parameter otherwise.
    void import_state(const AdamWState& state);

    // For an update written outside this class (the fast path's adamw_step_vectorized,
    // src/fast/adamw_vectorized.hpp): count one more update, returning t; the moments of
    // parameter i, in its element order.
    size_t count_update() { return ++step_; }
    std::vector<Real>& first_moment(size_t i) { return m_[i]; }
    std::vector<Real>& second_moment(size_t i) { return v_[i]; }

private:
    std::vector<NamedParameter> params_;
    std::vector<std::string> names_;
    std::vector<std::vector<Real>> m_, v_;
    AdamWOptions options_;
    size_t step_ = 0;
};

}  // namespace rf
