// Stage 2 — ops: the one call into BLAS, C = op(A)·op(B) + beta·C (float → sgemm, double →
// dgemm). Defined in matmul.cpp, its one user in the core.
#pragma once

#include <cstddef>

namespace rf {

// C[M,N] = op(A)·op(B) + beta·C, row-major, op(X) = Xᵀ when its flag is set (never copied);
// lda, ldb, ldc are the row strides, so a head's [T, D] block inside a [B, T, C] tensor is
// addressed in place with stride C.
void gemm(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const float* A, size_t lda,
          const float* B, size_t ldb, float beta, float* C, size_t ldc);
void gemm(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const double* A, size_t lda,
          const double* B, size_t ldb, double beta, double* C, size_t ldc);

// The fast path's way in: a float product with gemm()'s arguments that computes the same C
// (its rows split over threads, or another library's sgemm: src/fast/products.hpp). The fast
// room installs one for model.fused = true; the composed path has none, and gemm() is sgemm.
using FloatProduct = void (*)(bool trans_a, bool trans_b, size_t M, size_t N, size_t K,
                              const float* A, size_t lda, const float* B, size_t ldb, float beta,
                              float* C, size_t ldc);
void set_float_product(FloatProduct product);  // nullptr: plain sgemm again

}  // namespace rf
