// Room — linear: linear attention's differentiable ops: kernelised attention, the
// paper's second experiment (RoFormer §3.3), and its two feature maps. The classroom model
// (softmax attention, ops.hpp) never calls these; linear_kernels.hpp plugs them in.
#pragma once

#include "tensor/random.hpp"
#include "tensor/tensor.hpp"

namespace rf {

// ---- linear_attention.cpp, random_features.cpp: kernelised (linear) attention -----------
// RoFormer §3.3, eq. (19) (Su et al. 2021); docs/linear_attention.md derives every backward.
// Legend: B batch, H heads (leading dims "..."), T tokens, D head size, F feature size,
//         M random features (FAVOR+).

// φ(x) = elu(x) + 1 = x + 1 (x > 0), eˣ (x ≤ 0); positive everywhere (Katharopoulos et al.
// 2020).   x:[...] → [...]
Tensor elu_plus_one(const Tensor& x);

// out_m = Σ_n (q_num_m·k_num_n) v_n / Σ_n (q_den_m·k_den_n), n over all T (bidirectional) or
// n ≤ m (causal), in O(T·F·D) per row through the F×D state Σ_n k_num_n v_nᵀ — never a T×T
// matrix. q_num, k_num, q_den, k_den:[..., T, F] (one shape), v:[..., T, D] → [..., T, D].
// Numerator and denominator features are separate so RoPE can rotate the numerator only
// (eq. 19); without RoPE pass the same tensors twice (gradients accumulate). The caller keeps
// the denominators away from 0 (positive features, e.g. elu_plus_one or favor_features).
Tensor linear_attention(const Tensor& q_num, const Tensor& k_num, const Tensor& v,
                        const Tensor& q_den, const Tensor& k_den, bool causal);

// FAVOR+ positive random features (Choromanski et al. 2020), x:[..., T, D] W:[M, D] → [..., T, M]:
//   x̃ = x·D^(−1/4),  φ(x)_j = exp(W_j·x̃ − |x̃|²/2 − c) / √M,   E_W[φ(q)·φ(k)] = exp(q·k/√D)
// stabilise: c = max_j W_j·x̃ per row for queries (is_query), one c per leading slice (max over
// T and M) for keys; c cancels in the attention ratio and is a constant for the backward.
// !stabilise: c = 0 (the plain, exactly differentiable map). W is a constant: no gradient.
Tensor favor_features(const Tensor& x, const Tensor& projection, bool is_query,
                      bool stabilise = true);

// W:[M, D], ⌈M/D⌉ blocks of D rows, each block orthogonal (Gram–Schmidt of a Gaussian matrix,
// in double), every row rescaled to the norm of an independent D-dim standard Gaussian vector
// (chi distribution); the last block keeps its first M − D·⌊M/D⌋ rows. Same Rng state → same W.
Tensor orthogonal_random_features(size_t M, size_t D, Rng& rng);

}  // namespace rf
