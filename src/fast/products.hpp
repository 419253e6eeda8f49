// Room — fast: how the fast path runs its products — one large product's rows split over the
// OpenMP threads with BLAS held to one thread (gemm_rows_parallel, which set_threading installs
// as the core's float product: ops/gemm.hpp), many small products run in parallel
// (for_each_product), and each block in the library model.products chose (block_gemm). The
// composed path uses none of it: its gemm() is one sgemm call (src/ops/matmul.cpp).
#pragma once

#include <cblas.h>

#include <algorithm>
#include <cstddef>
#include <exception>

#include "fast/openmp.hpp"
#include "fast/threading.hpp"
#include "ops/ops.hpp"

namespace rf {

// A leading dimension as CBLAS takes it: an int, at least 1 (gemm_leading, threading.hpp).
inline int gemm_ld(size_t leading) { return int(gemm_leading(leading)); }

// OpenBLAS's own product, C[M,N] = op(A)·op(B) + beta·C with ops/gemm.hpp's arguments: what
// each block runs unless model.products installed another library's (never the core's gemm(),
// which would come back here through the float product this room installs).
inline void blas_gemm(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const float* A,
                 size_t lda, const float* B, size_t ldb, float beta, float* C, size_t ldc) {
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, int(M), int(N), int(K), 1.0f, A, gemm_ld(lda),
                B, gemm_ld(ldb), beta, C, gemm_ld(ldc));
}
inline void blas_gemm(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const double* A,
                 size_t lda, const double* B, size_t ldb, double beta, double* C, size_t ldc) {
    cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, int(M), int(N), int(K), 1.0, A, gemm_ld(lda),
                B, gemm_ld(ldb), beta, C, gemm_ld(ldc));
}

// The fast path's product of one block: blas_gemm(), or the float product model.products chose
// (Threading::block_product), run with this thread's signals held back (oneDNN's kernels:
// threading.hpp, HoldSignals). Double is always blas_gemm().
// An empty product is answered here, before any library sees it: oneDNN refuses M = 0 (a batch
// with no masked token gives a 0-row head), BLAS accepts it. M or N = 0 leaves nothing to write;
// K = 0 is an empty sum, C = beta·C as BLAS defines it (beta = 0 writes zeros, never reads C).
inline void block_gemm(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const float* A,
                       size_t lda, const float* B, size_t ldb, float beta, float* C, size_t ldc) {
    if (M == 0 || N == 0) return;
    if (K == 0) {
        for (size_t i = 0; i < M; ++i)
            for (size_t j = 0; j < N; ++j)
                C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
        return;
    }
    if (const FloatProduct product = threading().block_product) {
        const HoldSignals held;
        product(trans_a, trans_b, M, N, K, A, lda, B, ldb, beta, C, ldc);
    } else
        blas_gemm(trans_a, trans_b, M, N, K, A, lda, B, ldb, beta, C, ldc);
}
inline void block_gemm(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const double* A,
                       size_t lda, const double* B, size_t ldb, double beta, double* C,
                       size_t ldc) {
    blas_gemm(trans_a, trans_b, M, N, K, A, lda, B, ldb, beta, C, ldc);
}

// Runs body(i) for i in [0, count): in parallel over OpenMP threads when there is more than
// one product and more than one thread. OpenBLAS's pthread build would otherwise also try to
// thread each small product and oversubscribe the cores, so it is held to one thread for the
// duration (on the fast path it already runs one thread: threading.cpp). Its OpenMP build
// (openblas_get_parallel() == 2: -DRF_OPENBLAS_OPENMP=ON, or Debian's libopenblas alternative
// set to it) runs one thread inside our parallel loop by itself — and there
// openblas_set_num_threads would set OpenMP's own count, our loop's too, so it is left alone.
// With one OpenMP thread the products run in order and OpenBLAS may thread each.
// Small batches (< ~1 MFLOP in all) stay on one thread: waking a second costs more.
// Each body(i) must write only its own outputs, so results do not depend on scheduling.
template <class Body>
void for_each_product(size_t count, size_t flops_per_product, Body body) {
    if (count <= 1 || omp_get_max_threads() <= 1 || count * flops_per_product < (1u << 20)) {
        for (size_t i = 0; i < count; ++i) body(i);
        return;
    }
    const int blas_threads = openblas_get_parallel() == 1 ? openblas_get_num_threads() : 1;
    if (blas_threads > 1) openblas_set_num_threads(1);
    const long n = static_cast<long>(count);
    // An exception may not leave an OpenMP region (std::terminate): the first one is kept and
    // thrown again after the loop, so a library's refusal stays a one-line error.
    std::exception_ptr failed;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) {
        try {
            body(static_cast<size_t>(i));
        } catch (...) {
#pragma omp critical(rf_for_each_product)
            if (!failed) failed = std::current_exception();
        }
    }
    if (blas_threads > 1) openblas_set_num_threads(blas_threads);
    if (failed) std::rethrow_exception(failed);
}

// The same product as blas_gemm(), with C's rows split into one contiguous block per OpenMP thread
// and BLAS held to one thread inside each block. For this library's products (thousands of
// rows, 128–512 columns) OpenBLAS's own threading gained nothing from a second core on one
// machine and did better on another, where the row split gained only 4 % over it
// (docs/performance.md, "What the fast path does", item 2, has both measurements). Every
// element of C is one dot product over all K, yet OpenBLAS's AVX2 kernels (Haswell, Zen) sum
// a block's rows in another order than the whole's. Below ~4 MFLOP or on one thread: one call.
// Each block is block_gemm(): OpenBLAS's sgemm, or the library model.products chose. With
// split_products off it is one blas_gemm() that OpenBLAS threads itself.
// row (a bias [N], or nullptr): C's rows are first set to it, so beta = 1 gives
// C = op(A)·op(B) + row. Each block sets its own rows just before its product, so the copy is
// split like the product instead of one serial pass before it; the bits are the same.
template <class Real>
void gemm_rows_parallel(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const Real* A,
                        size_t lda, const Real* B, size_t ldb, Real beta, Real* C, size_t ldc,
                        const Real* row = nullptr) {
    const auto set_rows = [&](size_t m0, size_t rows) {
        if (row)
            for (size_t m = m0; m < m0 + rows; ++m) std::copy(row, row + N, C + m * ldc);
    };
    const size_t threads = size_t(std::max(1, omp_get_max_threads()));
    if (!threading().split_products) {  // OpenBLAS threads it
        set_rows(0, M);
        blas_gemm(trans_a, trans_b, M, N, K, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    if (threads == 1 || M < 2 * threads || 2 * M * N * K < (size_t(1) << 22)) {
        set_rows(0, M);
        block_gemm(trans_a, trans_b, M, N, K, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    const size_t block = (M + threads - 1) / threads;
    for_each_product(threads, size_t(1) << 30, [&](size_t i) {
        const size_t m0 = std::min(M, i * block), rows = std::min(M, m0 + block) - m0;
        if (rows == 0) return;
        set_rows(m0, rows);
        // A's row m0 is at A + m0·lda, or column m0 when A is stored transposed ([K, M]).
        const Real* a = trans_a ? A + m0 : A + m0 * lda;
        block_gemm(trans_a, trans_b, rows, N, K, a, lda, B, ldb, beta, C + m0 * ldc, ldc);
    });
}

// sums[j] += Σ_r Y[r, j] for Y:[rows, n] (a bias's gradient), r added in order 0, 1, … for
// every j. A large one is split by columns over the OpenMP threads, each thread taking whole
// columns, so every sum is added in the order one thread would: the same bits.
template <class Real>
void add_column_sums(const Real* Y, size_t rows, size_t n, Real* sums) {
    const size_t threads = size_t(std::max(1, omp_get_max_threads()));
    const size_t parts = rows * n < (size_t(1) << 16) ? 1 : std::min(threads, (n + 15) / 16);
    const size_t width = (n + parts - 1) / parts;
#pragma omp parallel for schedule(static) if (parts > 1)
    for (long p = 0; p < long(parts); ++p) {
        const size_t j0 = std::min(n, size_t(p) * width), j1 = std::min(n, j0 + width);
        for (size_t r = 0; r < rows; ++r)
            for (size_t j = j0; j < j1; ++j) sums[j] += Y[r * n + j];
    }
}

}  // namespace rf
