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
Tensor tanh(const Tensor& x);  // for tests and teaching: the MLP of tests/lesson/test_mlp.cpp
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
// The target of a position where no prediction is asked (PyTorch's ignore_index), the one
// definition of −100: a batch's labels (step/batch.hpp), the model's head and the losses.
constexpr int kIgnoreLabel = -100;
// Mean negative log-likelihood over positions whose target != ignore_index.
// logits:[N, V] targets:[N] → scalar. All positions ignored → 0 with zero gradient.
Tensor cross_entropy(const Tensor& logits, const std::vector<int>& targets,
                     int ignore_index = kIgnoreLabel);
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

// ---- elementwise.cpp (its end): inverted dropout ----------------------------------------
// Training: keep with probability 1−p and scale kept values by 1/(1−p). Identity when
// !training or p == 0 (evaluation); grad mode does not matter, as in PyTorch.
Tensor dropout(const Tensor& x, Real p, bool training, Rng& rng);

}  // namespace rf
