// Benchmark: the fast path's block products in float32 (model.products = onednn, dnnl_sgemm)
// against bfloat16 operands (model.precision = bf16, oneDNN's matmul), both under our row split
// (gemm_rows_parallel), at the presets' shapes with 4096 token rows:
//   fwd  C[M,N] = A[M,K]·W[N,K]ᵀ     dA = dC·W     dW = dCᵀ·A (accumulated, beta = 1)
// for q, k, v as one product, the FFN's two layers and the tied decoder of configs/bench.toml
// (C = 128, FFN 512) and configs/bench_long.toml (C = 256, FFN 1024).
//
//   build/tests/bench_bf16_products [--threads N] [--reps N]
//
// Each cell: the median of N samples of 4 products, the two ways of a row interleaved. Two
// columns each: GFLOP/s by the wall clock, and by the process's CPU time divided by the
// threads — on a shared machine the second is less disturbed by other processes.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fast/onednn_bf16_products.hpp"
#include "fast/onednn_products.hpp"
#include "fast/products.hpp"
#include "fast/threading.hpp"

namespace {

double cpu_seconds() {  // every thread of the process, user + system
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

struct Shape {
    std::string name;
    bool ta, tb;
    size_t M, N, K;
    float beta;
};

struct Timing {
    std::vector<double> wall, cpu;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    size_t threads = 2;
    int reps = 7;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--threads")) threads = std::stoul(argv[i + 1]);
        if (!std::strcmp(argv[i], "--reps")) reps = std::stoi(argv[i + 1]);
    }
    if (!rf::bf16_unavailable().empty()) {
        std::printf("%s\n", rf::bf16_unavailable().c_str());
        return 2;
    }
    const size_t R = 4096;
    std::vector<Shape> shapes;
    for (const auto& [C, F] : {std::pair<size_t, size_t>{128, 512}, {256, 1024}}) {
        const std::string at = " C=" + std::to_string(C);
        for (const auto& [layer, in, out] :
             {std::tuple<std::string, size_t, size_t>{"qkv", C, 3 * C},
              {"ffn in", C, F},
              {"ffn out", F, C},
              {"decoder", C, 2048}}) {
            shapes.push_back({layer + " fwd" + at, false, true, R, out, in, 0.f});
            shapes.push_back({layer + " dA" + at, false, false, R, in, out, 0.f});
            shapes.push_back({layer + " dW" + at, true, false, out, in, R, 1.f});
        }
    }
    const rf::FloatProduct products[2] = {rf::onednn_product(), rf::bf16_product()};
    std::printf("%zu threads, %d repetitions; GFLOP/s (wall | CPU time / threads)\n", threads,
                reps);
    std::printf("%-22s %18s %18s %12s\n", "product", "f32 (dnnl_sgemm)", "bf16 (matmul)",
                "bf16 / f32");
    for (const Shape& s : shapes) {
        const size_t rows_a = s.ta ? s.K : s.M, rows_b = s.tb ? s.N : s.K;
        std::vector<float> A(rows_a * (s.ta ? s.M : s.K), 0.5f),
            B(rows_b * (s.tb ? s.K : s.N), 0.25f), C(s.M * s.N, 0.f);
        for (size_t i = 0; i < A.size(); ++i) A[i] = float(int(i % 97) - 48) / 64;
        for (size_t i = 0; i < B.size(); ++i) B[i] = float(int(i % 89) - 44) / 64;
        const size_t lda = s.ta ? s.M : s.K, ldb = s.tb ? s.K : s.N;
        Timing timing[2];
        for (int r = -1; r < reps; ++r)  // r = -1: warm-up (primitives made, pages touched)
            for (int p = 0; p < 2; ++p) {
                rf::set_threading({threads, true, products[p]});
                const double cpu0 = cpu_seconds();
                const auto t0 = std::chrono::steady_clock::now();
                for (int k = 0; k < 4; ++k)  // a few products a sample: long enough to time
                    rf::gemm_rows_parallel(s.ta, s.tb, s.M, s.N, s.K, A.data(), lda, B.data(), ldb,
                                           s.beta, C.data(), s.N);
                const double wall =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                const double cpu = (cpu_seconds() - cpu0) / double(threads);
                if (r >= 0) {
                    timing[p].wall.push_back(wall);
                    timing[p].cpu.push_back(cpu);
                }
            }
        const double gflop = 4 * 2e-9 * double(s.M) * double(s.N) * double(s.K);
        double wall[2], cpu[2];
        for (int p = 0; p < 2; ++p) {
            wall[p] = gflop / median(timing[p].wall);
            cpu[p] = gflop / std::max(1e-6, median(timing[p].cpu));
        }
        std::printf("%-22s %8.1f | %7.1f %8.1f | %7.1f %5.2f | %4.2f\n", s.name.c_str(), wall[0],
                    cpu[0], wall[1], cpu[1], wall[1] / wall[0], cpu[1] / cpu[0]);
    }
}
