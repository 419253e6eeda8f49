// Stage 2 — ops: which BLAS library runs gemm() (gemm.hpp). OpenBLAS is always linked; BLIS
// (Debian's libblis, its OpenMP build) is linked when CMake finds it (RF_BLIS, on by default)
// and is called through its own typed API (bli_sgemm_ex), never through cblas_sgemm/sgemm_,
// which both libraries export: our cblas_* calls resolve to OpenBLAS because it comes first
// on the link line. The choice is made at run time: RF_BLAS=openblas|blis in the environment,
// read at the first product, or set_blas_backend() (tests, benchmarks). docs/performance.md,
// "A second BLAS", has the measurements behind the default.
#pragma once

#include <cstddef>
#include <string>

namespace rf {

enum class BlasBackend { openblas, blis };

// The backend gemm() calls. The first call resolves RF_BLAS (unset or empty → openblas);
// an unknown value or "blis" in a build without BLIS throws a one-line error naming the fix.
BlasBackend blas_backend();
void set_blas_backend(BlasBackend backend);  // throws when the backend is not available
bool blas_backend_available(BlasBackend backend);
bool blis_linked();  // this build has BLIS (blis_gemm.cpp)
const char* blas_backend_name(BlasBackend backend);
// One line for run logs and scripts/bench.sh, e.g. "BLIS 0.9.0, sub-configuration skx
// (chosen by us: the CPU has AVX-512), OpenMP build".
std::string blis_describe();

// BLIS's product, C[M,N] = op(A)·op(B) + beta·C, row-major with row strides lda, ldb, ldc —
// the same contract as gemm(). threads = 0: BLIS uses omp_get_max_threads() outside a
// parallel region for a product of 4 MFLOP or more, else 1 (inside one: a block of our row
// split, an attention tile); threads > 0: exactly that many.
// The first call picks BLIS's kernels for this CPU (blis_gemm.cpp, blis_select_arch).
void blis_gemm(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const float* A, size_t lda,
               const float* B, size_t ldb, float beta, float* C, size_t ldc, int threads = 0);
void blis_gemm(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const double* A,
               size_t lda, const double* B, size_t ldb, double beta, double* C, size_t ldc,
               int threads = 0);

}  // namespace rf
