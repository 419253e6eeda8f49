// Benchmark: softmax attention (O(T²)) against linear attention (O(T·F·D)) at growing T —
// the reason linear attention exists (docs/linear_attention.md). One attention layer's core,
// forward + backward, on [B, H, T, D] inputs, float32:
//
//   softmax  s = q·kᵀ/√D (+ RoPE on q, k)  p = softmax(s)  out = p·v        [B,H,T,T] scores
//   linear   φ = elu(x) + 1, out = linear_attention(Rφ(q), Rφ(k), v, φ(q), φ(k))  no T×T
//
// Both with RoPE (the paper's eq. 19 for linear attention), bidirectional. The batch shrinks as
// T grows so every row is ~B·T = 8192 tokens. Each line: median of 5 repetitions, printed as
// tokens per second (forward + backward) and peak scores memory. Threads: OMP_NUM_THREADS /
// the first argument (default 1). Run it on an otherwise idle machine.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "fast/openmp.hpp"
#include "linear/linear_attention.hpp"
#include "ops/ops.hpp"
#include "position/rope.hpp"

using rf::Real;
using rf::Tensor;

namespace {

double median_seconds(const std::function<void()>& call) {
    call();  // warm-up
    std::vector<double> reps;
    for (int r = 0; r < 5; ++r) {
        const auto start = std::chrono::steady_clock::now();
        call();
        reps.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(reps.begin(), reps.end());
    return reps[reps.size() / 2];
}

Tensor random_tensor(const rf::Shape& shape, rf::Rng& rng) {
    Tensor t = Tensor::zeros(shape, true);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<Real>(0.5 * rng.normal());
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
    const size_t H = 4, D = 32, tokens = 8192;
    std::printf(
        "attention core, forward + backward, H %zu, D %zu, RoPE, %d thread(s); "
        "median of 5\n",
        H, D, threads);
    std::printf("%6s %4s %16s %16s %8s %14s\n", "T", "B", "softmax tok/s", "linear tok/s", "ratio",
                "scores MiB");
    for (size_t T : {128, 256, 512, 1024, 2048}) {
        const size_t B = std::max<size_t>(1, tokens / T);
        rf::Rng rng(7);
        Tensor q = random_tensor({B, H, T, D}, rng), k = random_tensor({B, H, T, D}, rng),
               v = random_tensor({B, H, T, D}, rng);
        rf::RopeOptions options;
        options.head_dim = D;
        options.rotary_dims = D;
        rf::RopeTable table(options);
        auto run_softmax = [&] {
            Tensor s =
                rf::mul_scalar(rf::matmul(rf::rope(q, table), rf::rope(k, table), false, true),
                               Real(1.0 / std::sqrt(double(D))));
            Tensor out = rf::matmul(rf::softmax(s), v);
            q.zero_grad(), k.zero_grad(), v.zero_grad();
            rf::sum(out).backward();
        };
        auto run_linear = [&] {
            Tensor fq = rf::elu_plus_one(q), fk = rf::elu_plus_one(k);
            Tensor out =
                rf::linear_attention(rf::rope(fq, table), rf::rope(fk, table), v, fq, fk, false);
            q.zero_grad(), k.zero_grad(), v.zero_grad();
            rf::sum(out).backward();
        };
        const double ts = median_seconds(run_softmax), tl = median_seconds(run_linear);
        const double n = double(B * T);
        std::printf("%6zu %4zu %16.0f %16.0f %8.2f %14.1f\n", T, B, n / ts, n / tl, ts / tl,
                    double(B * H * T * T * sizeof(Real)) / (1 << 20));
        std::fflush(stdout);
    }
    return 0;
}
