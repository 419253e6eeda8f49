// Benchmark: our matmul op (forward, and its backward closures) against raw cblas_sgemm at
// [4096×256]·[256×256] and at attention's batched product (float32), through gemm(), on 1
// and 2 threads. The library alone, at every product of the model: bench_matmul.cpp.
//
//   build/tests/bench_matmul_op          both tables (~30 s on 2 idle cores)
//   --reps N                             repetitions per median (default 7)
//
// GFLOP/s = 2·M·N·K·batch / wall seconds, the median over N repetitions; GFLOP per CPU-second
// beside it (on a shared machine others take time slices; it also counts spinning threads).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "fast/threading.hpp"
#include "ops/ops.hpp"

using rf::Real;
using rf::Tensor;

namespace {

int g_reps = 7;

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Timing {
    double wall = 0;  // seconds per call, median over repetitions
    double cpu = 0;   // process CPU seconds per call (all threads), same repetition
};

Timing median_time_per_call(const std::function<void()>& call, int calls_per_rep) {
    call();  // warm-up: first-touch allocations, thread start-up
    std::vector<Timing> reps;
    for (int r = 0; r < g_reps; ++r) {
        const std::clock_t cpu_start = std::clock();
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < calls_per_rep; ++i) call();
        const double wall = seconds_since(start);
        const std::clock_t cpu_stop = std::clock();
        reps.push_back(
            {wall / calls_per_rep, double(cpu_stop - cpu_start) / CLOCKS_PER_SEC / calls_per_rep});
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

void bench_op_big(rf::Rng& rng) {
    const int M = 4096, K = 256, N = 256;
    const double flops = 2.0 * M * N * K;
    Tensor a = random_tensor({size_t(M), size_t(K)}, rng, false);
    Tensor b = random_tensor({size_t(K), size_t(N)}, rng, false);
    Tensor dc = random_tensor({size_t(M), size_t(N)}, rng, false);
    std::vector<float> c(size_t(M) * N);
    const float *A = a.data(), *B = b.data();

    std::printf(" [4096x256]*[256x256]\n");
    report(
        "raw  C  = A*B (cblas_sgemm)", flops,
        [&] {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.f, A, K, B, N, 0.f,
                        c.data(), N);
        },
        10);
    report(
        "op   C  = matmul(A, B)", flops, [&] { rf::matmul(a, b); }, 10);
    Tensor a_grad = random_tensor({size_t(M), size_t(K)}, rng, true);
    Tensor b_grad = random_tensor({size_t(K), size_t(N)}, rng, true);
    report("op   dA (backward)", flops, op_backward(a_grad, b, false, dc), 10);
    report("op   dB (backward)", flops, op_backward(a, b_grad, false, dc), 10);
}

void bench_op_attention(rf::Rng& rng) {
    const size_t B = 32, H = 4, T = 128, D = 32, batch = B * H;
    const double flops = 2.0 * double(batch) * T * T * D;
    Tensor q = random_tensor({B, H, T, D}, rng, false);
    Tensor k = random_tensor({B, H, T, D}, rng, false);
    Tensor ds = random_tensor({B, H, T, T}, rng, false);
    std::printf(" [32,4,128,32]*[32,4,128,32]^T\n");
    report(
        "op   S = matmul(Q, K, *, trans)", flops, [&] { rf::matmul(q, k, false, true); }, 5);
    Tensor q_grad = random_tensor({B, H, T, D}, rng, true);
    Tensor k_grad = random_tensor({B, H, T, D}, rng, true);
    report("op   dQ = dS*K (backward)", flops, op_backward(q_grad, k, true, ds), 5);
    report("op   dK = dS^T*Q (backward)", flops, op_backward(q, k_grad, true, ds), 5);
}

void bench_op() {
    std::printf("\nmatmul op vs raw sgemm\n");
    for (int threads : {1, 2}) {
        rf::set_threading({size_t(threads), true});
        std::printf("threads = %d\n", threads);
        rf::Rng rng(42);
        bench_op_big(rng);
        bench_op_attention(rng);
    }
}

}  // namespace

int main(int argc, char** argv) {
    static_assert(sizeof(Real) == sizeof(float), "the benchmark uses the float32 library");
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--reps" && i + 1 < argc && std::atoi(argv[i + 1]) > 0) {
            g_reps = std::atoi(argv[++i]);
        } else {
            std::fprintf(stderr, "bench_matmul_op: unknown argument '%s'; use --reps N (N > 0)\n",
                         arg.c_str());
            return 2;
        }
    }
    try {
        bench_op();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_matmul_op: %s\n", e.what());
        return 1;
    }
    return 0;
}
