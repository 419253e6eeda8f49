// Room — fast: the table of the fast path's element-wise kernels, one table per instruction
// set (simd.hpp chooses one at start; simd_kernels.hpp holds the bodies).
//
// Every kernel works on plain contiguous buffers and one thread: the ops that call them
// (fused.cpp, fast/fused_attention.cpp, fast/adamw_vectorized.cpp) split the work over
// threads and own the autograd. This header includes nothing heavy on purpose: the per-ISA
// files compiled with -mavx2 / -mavx512* include it, and nothing they include may define an
// inline function another file also uses (simd_kernels.hpp explains why).
//
// Legend: n elements, C a row's length, lanes = Reals per vector register of the table's ISA.
#pragma once

#include <cstddef>

#include "tensor/real.hpp"

namespace rf {

// The scalars of one AdamW update (adamw.hpp's formulas), computed once per step in double:
//   m ← b1·m + (1−b1)·g;  v ← b2·v + (1−b2)·g²;  w ← w·shrink − step·m / (√(v·inv_c2) + eps)
// with step = lr / (1 − β1ᵗ) and inv_c2 = 1 / (1 − β2ᵗ).
struct AdamWScalars {
    Real b1, one_minus_b1, b2, one_minus_b2, step, inv_c2, eps, shrink;
};

struct SimdKernels {
    const char* name;  // "sse2", "avx2", "avx512"; on arm64 "arm64+neon"
    size_t lanes;      // Reals per register

    // y = x·Φ(x), Φ(x) = ½·erfc(−x/√2); cdf ← Φ(x) unless cdf is null.   x, y, cdf: [n]
    void (*gelu_forward)(const Real* x, Real* y, Real* cdf, size_t n);
    // dx += dy ⊙ (Φ(x) + x·φ(x)), φ the normal density.   x, cdf, dy, dx: [n]
    void (*gelu_backward)(const Real* x, const Real* cdf, const Real* dy, Real* dx, size_t n);
    // One row of LN(x + r)·γ + β: s ← x + r, y ← (s − mean)·rstd·γ + β, stats ← {mean, rstd}.
    void (*add_layer_norm_row)(const Real* x, const Real* r, const Real* gamma, const Real* beta,
                               Real eps, size_t C, Real* s, Real* y, Real* stats);
    // Its backward for one row, x̂ = (s − mean)·rstd, g = dy⊙γ:
    //   d = rstd·(g − mean(g) − x̂·mean(g⊙x̂));  dx += d, dr += d (either may be null);
    //   dgamma += dy⊙x̂, dbeta += dy (double accumulators).
    void (*add_layer_norm_row_backward)(const Real* s, const Real* dy, const Real* gamma, Real mean,
                                        Real rstd, size_t C, Real* dx, Real* dr, double* dgamma,
                                        double* dbeta);
    // A row of scores → probabilities in place: s ← s·scale, softmax over j < n, zeros to T.
    void (*softmax_row)(Real* s, size_t n, size_t T, Real scale);
    // A row of dprobs → dscores in place: dp_j ← p_j·(dp_j − Σ dp·p)·scale for j < n, zeros to T.
    void (*softmax_row_backward)(const Real* p, Real* dp, size_t n, size_t T, Real scale);
    // RoPE on T rows of length D in place (row t = position t): the first r dims in pairs, y_lo
    // = c·x_lo − s·x_hi, y_hi = s·x_lo + c·x_hi with c, s = cos, sin_sign·sin of row t's angle
    // for the pair (sin_sign = −1 rotates back: R_mᵀ). Interleaved pairs (2i, 2i+1) take the
    // angle tables expanded to [T, r]: cos2 = (c_0, c_0, c_1, c_1, …), sin2 = (−s_0, s_0, −s_1,
    // s_1, …); half pairs (i, i + r/2) take them as they are, [T, r/2].
    void (*rope_rows_interleaved)(Real* x, size_t T, size_t D, size_t r, const Real* cos2,
                                  const Real* sin2, Real sin_sign);
    void (*rope_rows_half)(Real* x, size_t T, size_t D, size_t r, const Real* cos, const Real* sin,
                           Real sin_sign);
    // One AdamW update of n elements (AdamWScalars above).
    void (*adamw_update)(Real* w, const Real* g, Real* m, Real* v, size_t n, const AdamWScalars& k);
};

// The tables, one per translation unit (simd_sse2.cpp, simd_avx2.cpp, simd_avx512.cpp). Call
// the wide ones only on a CPU that has their instructions (simd.cpp checks).
const SimdKernels& simd_kernels_sse2();
const SimdKernels& simd_kernels_avx2();
const SimdKernels& simd_kernels_avx512();

}  // namespace rf
