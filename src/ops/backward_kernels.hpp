// Stage 2 — ops: the raw-loop backward kernels of two ops, each a graded task (a marked region
// of its op's file, right under the forward, that a student build swaps for the student's
// file: students/, docs/graded-tasks.md).
//
// Legend: R rows = product of all dims but the last, C size of the last axis; every buffer is
//         row-major [R, C] (or [R] for per-row statistics), contiguous.
#pragma once

#include <cstddef>

#include "tensor/tensor.hpp"

namespace rf {

// softmax backward, one row of n entries: dx += the gradient of x given y and dy
//   y: the forward's output, dy: its gradient, dx: x's gradient (added to), each n long.
// softmax runs it on every row of [R, C]; causal_softmax on the first i + 1 entries of row i.
// In softmax.cpp; derivation in docs/backward.md.
void softmax_row_backward(const Real* y, const Real* dy, Real* dx, size_t n);

// layer_norm backward for x, per row, with g = dY ⊙ γ and xhat = (X − mean)·rstd:
//   dX += the gradient of x (of this row: it moves the mean and rstd too)
//   X, dY, dX: [R, C]; gamma: [C]; mean, rstd: [R] (saved by the forward).
// In layernorm.cpp; derivation in docs/backward.md.
void layer_norm_backward_x(const Real* X, const Real* gamma, const Real* dY, const Real* mean,
                           const Real* rstd, Real* dX, size_t R, size_t C);

}  // namespace rf
