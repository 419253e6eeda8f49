// Stage 3 — nn: the two layers every block is built from, and parameter bookkeeping.
//
// A layer owns its parameters as leaf Tensors (requires_grad) named with their checkpoint
// names (HF RoFormer's, see ../../docs/model.md), so a model's parameter list doubles as its
// safetensors layout. Weights are stored [out, in] like PyTorch's nn.Linear.
#pragma once

#include <string>
#include <vector>

#include "ops/ops.hpp"
#include "tensor/random.hpp"
#include "tensor/tensor.hpp"

namespace rf {

// The project's weight-decay rule, written once: AdamW decays every parameter with two or
// more dims (weights, embedding tables) and never a 1-D one (biases, LayerNorm γ/β).
inline bool decays_by_default(const Tensor& parameter) { return parameter.dim() >= 2; }

// A parameter plus whether AdamW's weight decay applies to it.
struct NamedParameter {
    Tensor tensor;
    bool decay;
    NamedParameter(Tensor t)
        : tensor(std::move(t)), decay(decays_by_default(tensor)) {}                 // the rule
    NamedParameter(Tensor t, bool decay_) : tensor(std::move(t)), decay(decay_) {}  // explicit
};

// A leaf tensor of `shape` drawn from normal(0, std²), named `name`.
Tensor normal_parameter(const Shape& shape, double std, Rng& rng, const std::string& name);
Tensor constant_parameter(const Shape& shape, Real value, const std::string& name);

// y = x·Wᵀ + b   x:[..., in] W:[out, in] b:[out]
struct Linear {
    Tensor weight;
    Tensor bias;
    Linear() = default;
    Linear(size_t in, size_t out, double init_std, Rng& rng, const std::string& prefix);
    Tensor operator()(const Tensor& x) const { return linear(x, weight, bias); }
    void collect(std::vector<NamedParameter>& params) const;
};

// y = LN(x)·γ + β over the last axis   x:[..., C] γ,β:[C]
struct LayerNorm {
    Tensor gamma;
    Tensor beta;
    Real eps = Real(1e-12);
    LayerNorm() = default;
    LayerNorm(size_t size, double eps, const std::string& prefix);
    Tensor operator()(const Tensor& x) const { return layer_norm(x, gamma, beta, eps); }
    void collect(std::vector<NamedParameter>& params) const;
};

}  // namespace rf
