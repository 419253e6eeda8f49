// Stage 2 — ops: every differentiable operation, declared in one place.
//
// Each op lives in the .cpp named beside it, with its backward written directly below its
// forward and a one-line comment giving the math and the shapes. All outputs are contiguous.
// Broadcasting follows numpy: shapes are right-aligned, a dimension of 1 stretches; the
// backward of a broadcast input sums the upstream gradient over the stretched axes.
// Shape errors throw std::invalid_argument naming the op and both shapes.
#pragma once

#include <vector>

#include "tensor/random.hpp"
#include "tensor/tensor.hpp"

namespace rf {

// ---- matmul.cpp: products through cblas gemm with transpose flags ----------------------
// C = op(A)·op(B). 2-D: A:[M,K] B:[K,N] → [M,N] (with trans_a, A is stored [K,M]; with
// trans_b, B is stored [N,K]). Batched: A:[...,M,K] B:[...,K,N] with identical leading dims,
// or B 2-D and shared by every batch. Never materialises a transpose.
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false);
// y = x·Wᵀ + b   x:[..., in] W:[out, in] b:[out] (b may be undefined) → y:[..., out]
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// ---- threading.cpp: the process's one threading setting --------------------------------
// How many threads our OpenMP loops and OpenBLAS use, and how one large product (linear, a
// matmul whose B is shared by the batch) uses them. Process-wide, as OpenMP's and OpenBLAS's
// pools are; model.fused (run/threads.cpp) says which setting a
// run wants, and set_threading applies it.
struct Threading {
    size_t threads = 0;  // 0 = whatever OpenMP / OpenBLAS chose at start-up (every core)
    // true: a large product's rows are split over our OpenMP threads (gemm_rows_parallel in
    // gemm.hpp) and BLAS runs one thread throughout, so no BLAS thread waits beside ours
    // (threading.cpp) — the fast path's choice, and the library's default; false: OpenBLAS
    // threads each product itself — the composed path's choice, so model.fused = false
    // reproduces its numbers bit for bit.
    bool split_products = true;
};
// Sets OpenMP's and OpenBLAS's thread counts (threads = 0: every core) and the product split;
// returns the setting now in force (threads resolved to a count).
Threading set_threading(Threading setting);
const Threading& threading();  // the setting in force

// ---- elementwise.cpp: broadcasting binary ops, scalar ops, unary math ------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor add_scalar(const Tensor& x, Real s);  // x + s
Tensor mul_scalar(const Tensor& x, Real s);  // x · s
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor tanh(const Tensor& x);  // for tests and teaching: the MLP of tests/test_mlp.cpp
Tensor gelu(const Tensor& x);  // x·Φ(x) = ½x(1 + erf(x/√2)), the exact form

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& x) { return neg(x); }
inline Tensor operator+(const Tensor& x, Real s) { return add_scalar(x, s); }
inline Tensor operator*(const Tensor& x, Real s) { return mul_scalar(x, s); }
inline Tensor operator*(Real s, const Tensor& x) { return mul_scalar(x, s); }

// ---- shape.cpp: views are always materialised (contiguous copies) ----------------------
Tensor reshape(const Tensor& x, const Shape& shape);  // one dim may be size_t(-1)
Tensor permute(const Tensor& x, const std::vector<size_t>& axes);
Tensor slice(const Tensor& x, int axis, size_t start, size_t end);  // [start, end)
// For tests: the model never calls these two. The gradchecks use transpose to feed ops an
// input that came out of another op, and concat to check several outputs as one.
Tensor transpose(const Tensor& x, int axis0, int axis1);
Tensor concat(const std::vector<Tensor>& xs, int axis);

// ---- reduce.cpp ------------------------------------------------------------------------
Tensor sum(const Tensor& x);  // → scalar
Tensor sum(const Tensor& x, const std::vector<int>& axes, bool keepdims = false);
Tensor mean(const Tensor& x);  // → scalar
Tensor mean(const Tensor& x, const std::vector<int>& axes, bool keepdims = false);

// ---- softmax.cpp: over the last axis, max-subtracted for stability ---------------------
Tensor softmax(const Tensor& x);
// Softmax over the last axis with the future masked: y_ij = 0 exactly for j > i (i the
// second-to-last index).   scores:[..., T, T] → [..., T, T]
Tensor causal_softmax(const Tensor& scores);
// For tests and teaching: the model never calls it (cross_entropy computes the same
// log-sum-exp inside its one loss op); it is the readable form of that loss's first half.
Tensor log_softmax(const Tensor& x);
// Mean negative log-likelihood over positions whose target != ignore_index.
// logits:[N, V] targets:[N] → scalar. All positions ignored → 0 with zero gradient.
Tensor cross_entropy(const Tensor& logits, const std::vector<int>& targets,
                     int ignore_index = -100);
// The targets' rule of cross_entropy and linear_cross_entropy: the number of labelled rows
// (target ≠ ignore_index); throws std::invalid_argument naming `op`, the row and the target
// when a labelled target is outside [0, V).
size_t count_labelled_rows(const char* op, const std::vector<int>& targets, size_t V,
                           int ignore_index);

// ---- layernorm.cpp: one op, saves mean and rstd for backward ---------------------------
// y = (x − mean)·rstd·γ + β over the last axis; rstd = 1/sqrt(var + eps)   x:[..., C] γ,β:[C]
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, Real eps = 1e-12);

// ---- embedding.cpp: gather rows; backward scatter-adds ---------------------------------
// out[..., :] = weight[ids[...], :]   weight:[V, C] ids: ids_shape → out:[ids_shape..., C]
Tensor embedding(const Tensor& weight, const std::vector<int>& ids, const Shape& ids_shape);

// ---- dropout.cpp: inverted dropout ------------------------------------------------------
// Training: keep with probability 1−p and scale kept values by 1/(1−p). Identity when
// !training or p == 0 (evaluation); grad mode does not matter, as in PyTorch.
Tensor dropout(const Tensor& x, Real p, bool training, Rng& rng);

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
