// Stage 2 — ops: gemm() through BLIS's typed API (blas_backend.hpp). Built into its own small
// library (CMakeLists.txt, roformer_blis) so that blis.h — whose directory also holds a
// cblas.h — never meets OpenBLAS's cblas.h; without BLIS (RF_BLIS=OFF or libblis-dev
// missing) the functions below say so.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

#include "ops/blas_backend.hpp"

#ifdef RF_HAVE_BLIS
#include <blis.h>
#endif

namespace rf {

#ifdef RF_HAVE_BLIS

namespace {

std::string arch_choice;  // how blis_select_arch chose, for blis_describe()

// BLIS 0.9 picks its kernels once, from CPUID, at its first call. On CPUs newer than its
// tables it falls back to "generic" (plain C, no vector unit): an AMD family 26 (Zen 5) gets
// generic and runs sgemm at ~13 GFLOP/s on one core where its skx kernels run ~75
// (docs/performance.md, "A second BLAS"). The override is BLIS_ARCH_TYPE, which Debian's
// 0.9.0 reads as a number only (a name parses as 0, silently skx). So before the first call:
// a name the user set is translated to its number (an unknown name is an error), and when
// the user set nothing we choose the widest kernels the CPU supports from its CPUID flags:
// skx (AVX-512 F/DQ/BW/VL), else zen3 on AMD / haswell elsewhere (AVX2 + FMA), else BLIS's
// own choice.
void blis_select_arch() {
    const char* user = std::getenv("BLIS_ARCH_TYPE");
    if (user && *user) {
        char* end = nullptr;
        std::strtol(user, &end, 10);
        if (end && *end == '\0') {
            arch_choice = std::string("BLIS_ARCH_TYPE=") + user;
            return;
        }
        for (int id = 0; id < BLIS_NUM_ARCHS; ++id)
            if (std::string(bli_arch_string(arch_t(id))) == user) {
                setenv("BLIS_ARCH_TYPE", std::to_string(id).c_str(), 1);
                arch_choice = std::string("BLIS_ARCH_TYPE=") + user;
                return;
            }
        throw std::runtime_error(std::string("BLIS_ARCH_TYPE=") + user +
                                 " names no BLIS sub-configuration; use one such as skx, "
                                 "haswell, zen3, generic, or unset it");
    }
    int id = -1;
    const char* why = "";
    __builtin_cpu_init();
#ifdef BLIS_CONFIG_SKX
    if (id < 0 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        id = BLIS_ARCH_SKX, why = "the CPU has AVX-512";
#endif
#ifdef BLIS_CONFIG_ZEN3
    if (id < 0 && __builtin_cpu_is("amd") && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma"))
        id = BLIS_ARCH_ZEN3, why = "an AMD CPU with AVX2 + FMA";
#endif
#ifdef BLIS_CONFIG_HASWELL
    if (id < 0 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        id = BLIS_ARCH_HASWELL, why = "the CPU has AVX2 + FMA";
#endif
    if (id < 0) {
        arch_choice = "BLIS's own choice (no AVX2 + FMA)";
        return;
    }
    setenv("BLIS_ARCH_TYPE", std::to_string(id).c_str(), 1);
    arch_choice = std::string("chosen by us: ") + why;
}

void blis_init_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        blis_select_arch();
        bli_init();
    });
}

// threads = 0 (gemm()'s calls): one thread inside a parallel region (our row split, attention
// tiles) and for a product under 4 MFLOP — BLIS 0.9's threads wait for each other by
// spinning, which on a small product costs more than the second core gains (docs/
// performance.md, "A second BLAS") — else every OpenMP thread.
rntm_t runtime(int threads, double flops) {
    if (threads <= 0)
        threads =
            omp_in_parallel() || flops < double(1 << 22) ? 1 : std::max(1, omp_get_max_threads());
    rntm_t rntm = BLIS_RNTM_INITIALIZER;
    bli_rntm_set_num_threads(threads, &rntm);
    return rntm;
}

// Row-major: a stored matrix with row stride ld has strides (ld, 1); BLIS applies the
// transposition to the stored matrix, as cblas does.
template <class Real, class Gemm>
void blis_gemm_any(Gemm gemm_ex, bool trans_a, bool trans_b, size_t M, size_t N, size_t K,
                   const Real* A, size_t lda, const Real* B, size_t ldb, Real beta, Real* C,
                   size_t ldc, int threads) {
    if (M == 0 || N == 0) return;
    blis_init_once();
    rntm_t rntm = runtime(threads, 2.0 * double(M) * double(N) * double(K));
    Real one = 1;
    gemm_ex(trans_a ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
            trans_b ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, dim_t(M), dim_t(N), dim_t(K), &one,
            const_cast<Real*>(A), inc_t(std::max<size_t>(lda, 1)), inc_t(1), const_cast<Real*>(B),
            inc_t(std::max<size_t>(ldb, 1)), inc_t(1), &beta, C, inc_t(std::max<size_t>(ldc, 1)),
            inc_t(1), nullptr, &rntm);
}

}  // namespace

bool blis_linked() { return true; }

std::string blis_describe() {
    blis_init_once();
    std::string build = bli_info_get_enable_openmp()     ? "OpenMP build"
                        : bli_info_get_enable_pthreads() ? "pthread build"
                                                         : "serial build";
    return std::string("BLIS ") + bli_info_get_version_str() + ", sub-configuration " +
           bli_arch_string(bli_arch_query_id()) + " (" + arch_choice + "), " + build;
}

void blis_gemm(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const float* A, size_t lda,
               const float* B, size_t ldb, float beta, float* C, size_t ldc, int threads) {
    blis_gemm_any<float>(bli_sgemm_ex, trans_a, trans_b, M, N, K, A, lda, B, ldb, beta, C, ldc,
                         threads);
}
void blis_gemm(bool trans_a, bool trans_b, size_t M, size_t N, size_t K, const double* A,
               size_t lda, const double* B, size_t ldb, double beta, double* C, size_t ldc,
               int threads) {
    blis_gemm_any<double>(bli_dgemm_ex, trans_a, trans_b, M, N, K, A, lda, B, ldb, beta, C, ldc,
                          threads);
}

#else  // built without BLIS

namespace {
[[noreturn]] void no_blis() {
    throw std::runtime_error(
        "this build has no BLIS: apt-get install libblis-dev (scripts/setup.sh does), then "
        "reconfigure with -DRF_BLIS=ON");
}
}  // namespace

bool blis_linked() { return false; }
std::string blis_describe() { return "BLIS not linked"; }
void blis_gemm(bool, bool, size_t, size_t, size_t, const float*, size_t, const float*, size_t,
               float, float*, size_t, int) {
    no_blis();
}
void blis_gemm(bool, bool, size_t, size_t, size_t, const double*, size_t, const double*, size_t,
               double, double*, size_t, int) {
    no_blis();
}

#endif

}  // namespace rf
