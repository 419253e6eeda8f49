// Benchmark: the fast path's element-wise kernels (src/fast/simd_table.hpp) on each instruction
// set this CPU runs, one thread, at the bench preset's shapes (configs/bench.toml: B = 32,
// T = 128, C = 128, H = 4, ffn 512; a step's worth of one layer):
//   gelu          forward + backward over [B·T, ffn]             = 2 097 152 elements
//   add_layernorm forward + backward over [B·T, C]               = 4 096 rows of 128
//   softmax rows  forward + backward, B·H·T rows of T = 128      = 16 384 rows
//   rope tiles    the fused attention's rotations (interleaved, D = r = 32): q and k, forward
//                 and backward, B·H tiles of [T, D]              = 512 tiles
//   adamw         one update of 1 000 000 parameters
// and last the whole AdamW step (AdamW::step, the readable double loop, against
// adamw_step_vectorized on each ISA) over 790 000 parameters (the bench model's size).
// Each line: the median of 7 repetitions in ms of the thread's CPU time (so a busy machine's
// preemptions do not count; caches shared with other jobs still do), and the speed-up over
// sse2. The ISAs are interleaved (each repetition runs every ISA once). One thread throughout.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "fast/openmp.hpp"
#include "fast/fused_ops.hpp"
#include "fast/adamw_vectorized.hpp"
#include "nn/adamw.hpp"
#include "fast/simd.hpp"
#include "tensor/random.hpp"

using rf::Real;
using rf::SimdIsa;
using rf::SimdKernels;

namespace {

std::vector<Real> normal(size_t n, double scale, uint64_t seed) {
    rf::Rng rng(seed);
    std::vector<Real> v(n);
    for (Real& x : v) x = Real(scale * rng.normal());
    return v;
}

// The calling thread's CPU time of call(): on a shared machine a preemption does not count
// (every kernel here runs on the calling thread alone).
double seconds(const std::function<void()>& call) {
    timespec start{}, end{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    call();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
    return double(end.tv_sec - start.tv_sec) + 1e-9 * double(end.tv_nsec - start.tv_nsec);
}

}  // namespace

int main() {
    omp_set_num_threads(1);
    std::vector<SimdIsa> isas;
    for (SimdIsa isa : {SimdIsa::sse2, SimdIsa::avx2, SimdIsa::avx512})
        if (rf::cpu_supports(isa)) isas.push_back(isa);
    std::printf("kernels on %s (one thread; median of 7, ms; speed-up over sse2)\n",
                rf::supported_isas().c_str());

    const size_t gelu_n = 32 * 128 * 512, rows = 32 * 128, C = 128;
    const size_t T = 128, softmax_rows = 32 * 4 * 128, adam_n = 1000000;
    const std::vector<Real> gx = normal(gelu_n, 2.0, 1), gdy = normal(gelu_n, 1.0, 2);
    std::vector<Real> gy(gelu_n), gcdf(gelu_n), gdx(gelu_n);
    const std::vector<Real> lx = normal(rows * C, 1.0, 3), lr = normal(rows * C, 1.0, 4),
                            ldy = normal(rows * C, 1.0, 5), gamma = normal(C, 1.0, 6),
                            beta = normal(C, 1.0, 7);
    std::vector<Real> ls(rows * C), ly(rows * C), lstats(2 * rows), ldx(rows * C);
    std::vector<double> dgamma(C), dbeta(C);
    const std::vector<Real> scores = normal(softmax_rows * T, 3.0, 8),
                            dprobs = normal(softmax_rows * T, 1.0, 9);
    std::vector<Real> probs(scores.size()), dscores(scores.size());
    const size_t D = 32, rope_tiles = 32 * 4 * 4;  // B·H tiles, q and k, forward and back
    std::vector<Real> rx = normal(rope_tiles * T * D, 1.0, 12);
    std::vector<Real> cos2(T * D), sin2(T * D);
    for (size_t t = 0; t < T; ++t)
        for (size_t i = 0; i < D / 2; ++i) {
            const double angle = double(t) * std::pow(10000.0, -2.0 * double(i) / double(D));
            cos2[t * D + 2 * i] = cos2[t * D + 2 * i + 1] = Real(std::cos(angle));
            sin2[t * D + 2 * i] = Real(-std::sin(angle));
            sin2[t * D + 2 * i + 1] = Real(std::sin(angle));
        }
    const std::vector<Real> ag = normal(adam_n, 0.01, 10);
    std::vector<Real> aw = normal(adam_n, 0.1, 11), am(adam_n, 0), av(adam_n, 0);
    const rf::AdamWScalars scalars{0.9f, 0.1f, 0.98f, 0.02f, 1e-3f, 50.0f, 1e-6f, 0.99999f};

    struct Kernel {
        const char* name;
        std::function<void(const SimdKernels&)> run;
    };
    const std::vector<Kernel> kernels{
        {"gelu fwd+bwd",
         [&](const SimdKernels& k) {
             k.gelu_forward(gx.data(), gy.data(), gcdf.data(), gelu_n);
             k.gelu_backward(gx.data(), gcdf.data(), gdy.data(), gdx.data(), gelu_n);
         }},
        {"add_layernorm fwd+bwd",
         [&](const SimdKernels& k) {
             for (size_t r = 0; r < rows; ++r)
                 k.add_layer_norm_row(&lx[r * C], &lr[r * C], gamma.data(), beta.data(),
                                      Real(1e-12), C, &ls[r * C], &ly[r * C], &lstats[2 * r]);
             for (size_t r = 0; r < rows; ++r)
                 k.add_layer_norm_row_backward(&ls[r * C], &ldy[r * C], gamma.data(), lstats[2 * r],
                                               lstats[2 * r + 1], C, &ldx[r * C], nullptr,
                                               dgamma.data(), dbeta.data());
         }},
        {"softmax rows fwd+bwd",
         [&](const SimdKernels& k) {
             std::copy(scores.begin(), scores.end(), probs.begin());
             std::copy(dprobs.begin(), dprobs.end(), dscores.begin());
             for (size_t r = 0; r < softmax_rows; ++r)
                 k.softmax_row(&probs[r * T], T, T, Real(0.17677669529663687));
             for (size_t r = 0; r < softmax_rows; ++r)
                 k.softmax_row_backward(&probs[r * T], &dscores[r * T], T, T,
                                        Real(0.17677669529663687));
         }},
        {"rope tiles (interl.)",
         [&](const SimdKernels& k) {
             for (size_t tile = 0; tile < rope_tiles; ++tile)
                 k.rope_rows_interleaved(&rx[tile * T * D], T, D, D, cos2.data(), sin2.data(),
                                         Real(1));
         }},
        {"adamw update",
         [&](const SimdKernels& k) {
             k.adamw_update(aw.data(), ag.data(), am.data(), av.data(), adam_n, scalars);
         }},
    };
    for (const Kernel& kernel : kernels) {
        std::vector<std::vector<double>> times(isas.size());
        for (SimdIsa isa : isas) kernel.run(rf::simd_kernels(isa));  // warm-up
        for (int rep = 0; rep < 7; ++rep)
            for (size_t i = 0; i < isas.size(); ++i)
                times[i].push_back(seconds([&] { kernel.run(rf::simd_kernels(isas[i])); }));
        std::printf("%-22s", kernel.name);
        double base = 0;
        for (size_t i = 0; i < isas.size(); ++i) {
            std::sort(times[i].begin(), times[i].end());
            const double ms = times[i][3] * 1e3;
            if (i == 0) base = ms;
            std::printf("  %-6s %7.2f ms (%.2f×)", rf::enum_name(isas[i]), ms, base / ms);
        }
        std::printf("\n");
    }

    // The whole optimizer step, readable (double scalars) against the fast path's twin, on
    // the bench model's 0.79 M parameters as one tensor, with each ISA for the twin.
    rf::Tensor w(rf::Array(rf::Array::from_shape({790000})), true);
    for (size_t j = 0; j < w.numel(); ++j) w.data()[j] = aw[j];
    for (size_t j = 0; j < w.numel(); ++j) w.grad().data()[j] = ag[j];
    rf::AdamW optimizer({{w, true}}, {});
    std::vector<double> readable, fast[3];
    for (int rep = 0; rep < 7; ++rep) {
        readable.push_back(seconds([&] { optimizer.step(1e-3); }));
        for (size_t i = 0; i < isas.size(); ++i) {
            rf::set_simd_isa(isas[i]);
            fast[i].push_back(seconds([&] { adamw_step_vectorized(optimizer, 1e-3); }));
        }
    }
    std::sort(readable.begin(), readable.end());
    std::printf("AdamW::step (readable, double) %.2f ms; adamw_step_vectorized:", readable[3] * 1e3);
    for (size_t i = 0; i < isas.size(); ++i) {
        std::sort(fast[i].begin(), fast[i].end());
        std::printf("  %s %.2f ms (%.2f×)", rf::enum_name(isas[i]), fast[i][3] * 1e3,
                    readable[3] / fast[i][3]);
    }
    std::printf("\n");
}
