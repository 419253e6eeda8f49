// Benchmark: matrix products through our matmul op against raw cblas_sgemm (float32).
//
//   big       C[4096,256] = A[4096,256]·B[256,256]    (a linear layer on 32×128 tokens)
//             dA = dC·Bᵀ   dB = Aᵀ·dC                  (its two backward products)
//   attention S[32,4,128,128] = Q[32,4,128,32]·K[32,4,128,32]ᵀ, and dQ = dS·K, dK = dSᵀ·Q
//
// Each line is the median of 7 repetitions (each repetition times several calls), printed as
// GFLOP/s = 2·M·N·K·batch / seconds, with 1 and with 2 threads (OpenBLAS and OpenMP alike).
// Run it on an otherwise idle machine: the wall-clock numbers assume the cores are yours.
// The op's backward is timed by calling the output node's backward closure directly, with
// only the input of interest requiring grad, so each line is exactly one product.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <vector>

#include "ops/ops.hpp"

using rf::Real;
using rf::Tensor;

namespace {

struct Timing {
    double wall = 0;  // seconds per call, median over repetitions
    double cpu = 0;   // process CPU seconds per call (all threads), same repetition
};

Timing median_time_per_call(const std::function<void()>& call, int calls_per_rep) {
    call();  // warm-up: first-touch allocations, thread start-up
    std::vector<Timing> reps;
    for (int r = 0; r < 7; ++r) {
        const std::clock_t cpu_start = std::clock();
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls_per_rep; ++i) call();
        const auto stop = std::chrono::steady_clock::now();
        const std::clock_t cpu_stop = std::clock();
        reps.push_back({std::chrono::duration<double>(stop - start).count() / calls_per_rep,
                        double(cpu_stop - cpu_start) / CLOCKS_PER_SEC / calls_per_rep});
    }
    std::sort(reps.begin(), reps.end(),
              [](const Timing& x, const Timing& y) { return x.wall < y.wall; });
    return reps[reps.size() / 2];
}

// Wall-clock GFLOP/s is the headline; GFLOP per CPU-second is printed beside it because on
// a shared machine other processes steal time slices (it also counts spinning threads).
void report(const char* what, double flops, const std::function<void()>& call, int calls) {
    const Timing t = median_time_per_call(call, calls);
    std::printf("  %-32s %8.1f GFLOP/s  (%7.3f ms)  %8.1f GFLOP/cpu-s\n", what,
                flops / t.wall * 1e-9, t.wall * 1e3, flops / t.cpu * 1e-9);
}

Tensor random_tensor(const rf::Shape& shape, rf::Rng& rng, bool requires_grad) {
    Tensor t = Tensor::zeros(shape, requires_grad);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = Real(rng.normal());
    return t;
}

// Times node->backward for C = matmul(a, b, ta, tb) with the given upstream gradient.
std::function<void()> op_backward(const Tensor& a, const Tensor& b, bool tb, const Tensor& dout) {
    Tensor c = rf::matmul(a, b, false, tb);
    c.impl()->grad = dout.value();
    return [c]() mutable { c.node()->backward(*c.impl()); };
}

void bench_big(rf::Rng& rng) {
    const int M = 4096, K = 256, N = 256;
    const double flops = 2.0 * M * N * K;
    Tensor a = random_tensor({size_t(M), size_t(K)}, rng, false);
    Tensor b = random_tensor({size_t(K), size_t(N)}, rng, false);
    Tensor dc = random_tensor({size_t(M), size_t(N)}, rng, false);
    std::vector<float> c(size_t(M) * N), da(size_t(M) * K, 0.f), db(size_t(K) * N, 0.f);
    const float *A = a.data(), *B = b.data(), *dC = dc.data();

    std::printf(" [4096x256]*[256x256]\n");
    report(
        "raw  C  = A*B", flops,
        [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.f, A, K, B, N, 0.f,
                        c.data(), N);
        },
        10);
    report(
        "raw  dA += dC*B^T", flops,
        [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, K, N, 1.f, dC, N, B, N, 1.f,
                        da.data(), K);
        },
        10);
    report(
        "raw  dB += A^T*dC", flops,
        [&] {
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, N, M, 1.f, A, K, dC, N, 1.f,
                        db.data(), N);
        },
        10);

    report(
        "op   C  = matmul(A, B)", flops, [&] { rf::matmul(a, b); }, 10);
    Tensor a_grad = random_tensor({size_t(M), size_t(K)}, rng, true);
    Tensor b_grad = random_tensor({size_t(K), size_t(N)}, rng, true);
    report("op   dA (backward)", flops, op_backward(a_grad, b, false, dc), 10);
    report("op   dB (backward)", flops, op_backward(a, b_grad, false, dc), 10);
}

void bench_attention(rf::Rng& rng) {
    const size_t B = 32, H = 4, T = 128, D = 32, batch = B * H;
    const double flops = 2.0 * double(batch) * T * T * D;
    Tensor q = random_tensor({B, H, T, D}, rng, false);
    Tensor k = random_tensor({B, H, T, D}, rng, false);
    Tensor ds = random_tensor({B, H, T, T}, rng, false);
    std::vector<float> s(batch * T * T);
    const float *Q = q.data(), *K = k.data();

    std::printf(" [32,4,128,32]*[32,4,128,32]^T\n");
    report(
        "raw  S = Q*K^T (serial loop)", flops,
        [&] {
            for (size_t i = 0; i < batch; ++i)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(T), int(T), int(D), 1.f,
                            Q + i * T * D, int(D), K + i * T * D, int(D), 0.f, s.data() + i * T * T,
                            int(T));
        },
        5);
    // The same loop split over OpenMP threads while OpenBLAS keeps its own thread count: what
    // the op would do without holding OpenBLAS to one thread inside its parallel loop.
    report(
        "raw  S (omp loop, blas threaded)", flops,
        [&] {
#pragma omp parallel for schedule(static)
            for (long i = 0; i < long(batch); ++i)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(T), int(T), int(D), 1.f,
                            Q + size_t(i) * T * D, int(D), K + size_t(i) * T * D, int(D), 0.f,
                            s.data() + size_t(i) * T * T, int(T));
        },
        5);
    report(
        "op   S = matmul(Q, K, *, trans)", flops, [&] { rf::matmul(q, k, false, true); }, 5);
    Tensor q_grad = random_tensor({B, H, T, D}, rng, true);
    Tensor k_grad = random_tensor({B, H, T, D}, rng, true);
    report("op   dQ = dS*K (backward)", flops, op_backward(q_grad, k, true, ds), 5);
    report("op   dK = dS^T*Q (backward)", flops, op_backward(q, k_grad, true, ds), 5);
}

}  // namespace

int main() {
    static_assert(sizeof(Real) == sizeof(float), "the benchmark uses the float32 library");
    for (int threads : {1, 2}) {
        openblas_set_num_threads(threads);
        omp_set_num_threads(threads);
        std::printf("threads = %d\n", threads);
        rf::Rng rng(42);
        bench_big(rng);
        bench_attention(rng);
    }
    return 0;
}
