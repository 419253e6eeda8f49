// Room — fast: the fast path's ops (model.fused = true), each equal to composed ops of ops.hpp and
// held to them, values and gradients, by tests/machinery/test_fused_ops.cpp and test_fused_products.cpp.
// Only the fast kernels (fast_kernels.cpp) call them; the model a student reads never does.
#pragma once

#include <vector>

#include "ops/ops.hpp"

namespace rf {

// ---- fused.cpp --------------------------------------------------------------------------
// gelu(x), its erfc and exp computed in SIMD lanes (xsimd); the backward recomputes Φ(x) and
// φ(x) from x instead of saving them.   x:[...] → [...]
Tensor gelu_vectorized(const Tensor& x);
// layer_norm(add(x, r), γ, β, eps) in one op: the post-LN residual step, row sums in lanes.
// x, r:[..., C] γ,β:[C] → [..., C]
Tensor add_layer_norm(const Tensor& x, const Tensor& r, const Tensor& gamma, const Tensor& beta,
                      Real eps = 1e-12);

// ---- fused_products.cpp: wider products ----------------------------------------------------
// Several linear layers of one input as ONE product: y = x·[W_0; W_1; …]ᵀ + [b_0; b_1; …],
// y[..., o_i : o_i + out_i] = linear(x, W_i, b_i) (o_i = Σ_{j<i} out_j). The weights stay
// separate tensors; biases: one per weight, or none.   x:[..., C] W_i:[out_i, C] → [..., Σ out_i]
Tensor stacked_linear(const Tensor& x, const std::vector<Tensor>& weights,
                      const std::vector<Tensor>& biases);
// cross_entropy(linear(x, W, b), targets, ignore_index) as one op that writes the logits once
// and builds their gradient a block of rows at a time; *logits (when given) receives the
// logits [R, V] as a constant tensor (no graph: differentiate the loss).
//   x:[R, C] W:[V, C] b:[V] (may be undefined) targets:[R] → scalar
Tensor linear_cross_entropy(const Tensor& x, const Tensor& weight, const Tensor& bias,
                            const std::vector<int>& targets, int ignore_index = kIgnoreLabel,
                            Tensor* logits = nullptr);

}  // namespace rf
