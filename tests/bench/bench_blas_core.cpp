// Benchmark: raw cblas_sgemm at the model's own product shapes, under whichever kernel set
// ("core") OpenBLAS runs — the measurement behind the BLAS core rule (src/fast/blas_core.cpp).
//
//   forward   C[M,N] = A[M,K]·B[K,N]      backward  dA = dC·Bᵀ   dB = Aᵀ·dC
//   M = 4096 rows (a 32 × 128-token batch); (K, N) = (128, 128), (128, 512), (256, 256)
//
// Each product is timed with 1 thread, with 2 threads inside OpenBLAS, and with 2 OpenMP
// threads each running half of C's rows on a 1-thread BLAS (the fast path's row split,
// gemm_rows_parallel in src/fast/products.hpp). Each line is the median of 7 repetitions.
// To compare two cores, run the same binary under each, alternating, on an idle machine:
//
//   for i in 1 2 3; do for c in Haswell SkylakeX; do
//     OPENBLAS_CORETYPE=$c OMP_WAIT_POLICY=passive build/tests/bench_blas_core; done; done
//
// (OMP_WAIT_POLICY=passive as the roformer binary runs: with libgomp's default, spinning
// threads of the 2-thread lines take the cores from a busy machine's other work and back.)
//
// Each product is reported as GFLOP/s of wall time and GFLOP per CPU-second (all threads'
// CPU time): on a shared machine the second is the kernel's own speed, the first what is
// left of it. The last line ("geomean") is the geometric mean of every product's rate.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <random>
#include <vector>

#include "fast/openmp.hpp"
#include "fast/blas_core.hpp"

namespace {

struct Seconds {
    double wall, cpu;  // per call: wall clock, and CPU time of the whole process (all threads)
};

double cpu_now() {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// Medians of 7 repetitions, wall and CPU each on its own (a repetition that lost its core to
// another process has a long wall time but not a long CPU time).
Seconds median_seconds(const std::function<void()>& call, int calls) {
    call();  // warm-up
    std::vector<double> wall, cpu;
    for (int r = 0; r < 7; ++r) {
        const double cpu_start = cpu_now();
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) call();
        wall.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
            calls);
        cpu.push_back((cpu_now() - cpu_start) / calls);
    }
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

// C[M,N] = op(A)·op(B), row-major, C's rows split over `split` OpenMP threads (1 = no split).
void sgemm(bool ta, bool tb, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
           float* C, int ldc, int split) {
    const auto run = [&](int m0, int rows) {
        const float* a = ta ? A + m0 : A + size_t(m0) * lda;
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                    rows, N, K, 1.0f, a, lda, B, ldb, 0.0f, C + size_t(m0) * ldc, ldc);
    };
    if (split <= 1) return run(0, M);
    const int block = (M + split - 1) / split;
#pragma omp parallel for num_threads(split) schedule(static)
    for (int i = 0; i < split; ++i) run(i * block, std::min(M, (i + 1) * block) - i * block);
}

}  // namespace

int main() {
    std::printf("%s\nconfig: %s\n", rf::blas_core_line().c_str(), openblas_get_config());
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    const int M = 4096;
    const int shapes[][2] = {{128, 128}, {128, 512}, {256, 256}};  // (K, N)
    struct Mode {
        const char* name;
        int blas_threads, split;
    };
    const Mode modes[] = {{"1 thread", 1, 1}, {"2 threads, BLAS", 2, 1}, {"2 threads, rows", 1, 2}};
    double log_wall = 0, log_cpu = 0;
    int lines = 0;
    for (const auto& [K, N] : shapes) {
        std::vector<float> A(size_t(M) * K), B(size_t(K) * N), dC(size_t(M) * N);
        for (auto* v : {&A, &B, &dC})
            for (float& x : *v) x = normal(rng);
        std::vector<float> C(size_t(M) * N), dA(size_t(M) * K), dB(size_t(K) * N);
        const double flops = 2.0 * M * N * K;
        const int calls = std::max(1, int(2e9 / flops));
        for (const Mode& mode : modes) {
            openblas_set_num_threads(mode.blas_threads);
            const int s = mode.split;
            const Seconds t[3] = {
                median_seconds(
                    [&] { sgemm(false, false, M, N, K, A.data(), K, B.data(), N, C.data(), N, s); },
                    calls),
                median_seconds(  // dA[M,K] = dC[M,N]·B[K,N]ᵀ
                    [&] {
                        sgemm(false, true, M, K, N, dC.data(), N, B.data(), N, dA.data(), K, s);
                    },
                    calls),
                median_seconds(  // dB[K,N] = A[M,K]ᵀ·dC[M,N]
                    [&] {
                        sgemm(true, false, K, N, M, A.data(), K, dC.data(), N, dB.data(), N, s);
                    },
                    calls),
            };
            std::printf(
                "  [%d×%d]·[%d×%d]  %-16s  fwd %6.1f  dA %6.1f  dB %6.1f  GFLOP/s   "
                "fwd %6.1f  dA %6.1f  dB %6.1f  GFLOP/cpu-s\n",
                M, K, K, N, mode.name, flops / t[0].wall * 1e-9, flops / t[1].wall * 1e-9,
                flops / t[2].wall * 1e-9, flops / t[0].cpu * 1e-9, flops / t[1].cpu * 1e-9,
                flops / t[2].cpu * 1e-9);
            for (const Seconds& s_ : t) {
                log_wall += std::log(flops / s_.wall * 1e-9), ++lines;
                log_cpu += std::log(flops / s_.cpu * 1e-9);
            }
        }
    }
    std::printf("geomean %.1f GFLOP/s, %.1f GFLOP/cpu-s over %d products (core %s)\n",
                std::exp(log_wall / lines), std::exp(log_cpu / lines), lines,
                openblas_get_corename());
    return 0;
}
