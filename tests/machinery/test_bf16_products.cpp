// model.precision = bf16 (src/fast/onednn_bf16_products.hpp): the fast path's block products on
// bfloat16 operands with float32 sums. Each product form against a double product of the
// operands rounded to bfloat16 here (transposes, strided tiles, beta, split over threads), held
// to float32 summation's error bound; a short training run beside float32's; the config key's
// refusals and its round trip. Skipped (with a message) where this build or CPU has no bf16.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "config/config.hpp"
#include "error_of.hpp"
#include "fast/onednn_bf16_products.hpp"
#include "model/roformer.hpp"
#include "nn/adamw.hpp"
#include "fast/products.hpp"
#include "fast/threading.hpp"
#include "run/threads.hpp"
#include "tensor/random.hpp"
#include "tiny_model.hpp"

using namespace rf;
using rf::testing::contains;
using rf::testing::error_of;

namespace {

struct KeepThreading {  // restores the process's threading setting when a test ends
    Threading before = threading();
    ~KeepThreading() { set_threading(before); }
};

// True (and a message saying why) when this build or CPU cannot run bf16: the test then checks
// the refusal instead.
bool skip_bf16() {
    const std::string why = bf16_unavailable();
    if (why.empty()) return false;
    MESSAGE("bf16 skipped: " << why);
    CHECK(contains(error_of([] { bf16_product(); }), "model.precision"));
    return true;
}

// x rounded to the nearest bfloat16, ties to even, computed without the bit trick the CPU
// uses: of the two bfloat16 values around x (x with its low 16 bits cleared, and the next one
// away from zero) take the nearer; on a tie, the one whose last kept bit is 0.
double bf16_rounded(float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    const uint32_t low_bits = bits & 0xFFFF0000u, high_bits = low_bits + 0x10000u;
    float low, high;
    std::memcpy(&low, &low_bits, 4);
    std::memcpy(&high, &high_bits, 4);
    const double to_low = std::fabs(double(x) - low), to_high = std::fabs(double(high) - x);
    if (to_low != to_high) return to_low < to_high ? low : high;
    return (low_bits & 0x10000u) == 0 ? low : high;
}

std::vector<float> random_values(size_t n, uint64_t seed, double scale) {
    Rng rng(seed);
    std::vector<float> v(n);
    for (float& x : v) x = float(scale * rng.normal());
    return v;
}

struct Case {
    bool ta, tb;
    size_t M, N, K, extra_ld;  // extra_ld: every leading dimension this much wider
    float beta;
};

struct Outcome {
    bool within_bound = true;          // every element within float32 summation's bound
    bool past_n_untouched = true;      // C's padding columns never written
    bool within_operand_bound = true;  // … and within bf16 rounding's bound of the exact product
    double rounding_effect = 0;  // max |C − exact product of the unrounded operands| / bound
    double relative_error = 0;   // max |C − exact unrounded| / max |exact unrounded|
};

// Runs one case through `product` (block_gemm via gemm_rows_parallel) and holds each element
// of C to the double product of the bf16-rounded operands. Error bound of a float32 sum of K
// exact terms (bf16·bf16 has at most 16 significant bits, so every term is exact in float32)
// plus beta·C and the final rounding, in any order (Higham, Accuracy and Stability, §3.1):
// |ĉ − c| ≤ γ(K+2)·(Σ|a·b| + |beta·C|), γ(n) = n·u/(1 − n·u), u = 2⁻²⁴.
Outcome run_case(const Case& c, size_t threads) {
    const size_t rows_a = c.ta ? c.K : c.M, cols_a = c.ta ? c.M : c.K;
    const size_t rows_b = c.tb ? c.N : c.K, cols_b = c.tb ? c.K : c.N;
    const size_t lda = cols_a + c.extra_ld, ldb = cols_b + c.extra_ld, ldc = c.N + c.extra_ld;
    const std::vector<float> A = random_values(rows_a * lda, 1 + c.M, 1.0),
                             B = random_values(rows_b * ldb, 2 + c.N, 0.05),
                             C0 = random_values(c.M * ldc, 3 + c.K, 1.0);
    std::vector<float> C = C0;
    set_threading({threads, true, bf16_product()});
    gemm_rows_parallel(c.ta, c.tb, c.M, c.N, c.K, A.data(), lda, B.data(), ldb, c.beta, C.data(),
                       ldc);
    const double u = std::ldexp(1.0, -24), n = double(c.K + 2), gamma = n * u / (1 - n * u);
    Outcome out;
    double largest = 0;
    std::vector<double> exact(c.M * c.N);
    for (size_t i = 0; i < c.M; ++i)
        for (size_t j = 0; j < c.N; ++j) {
            double rounded = 0, magnitude = 0, unrounded = 0, unrounded_magnitude = 0;
            for (size_t k = 0; k < c.K; ++k) {
                const float a = c.ta ? A[k * lda + i] : A[i * lda + k];
                const float b = c.tb ? B[j * ldb + k] : B[k * ldb + j];
                rounded += bf16_rounded(a) * bf16_rounded(b);
                magnitude += std::fabs(bf16_rounded(a) * bf16_rounded(b));
                unrounded += double(a) * double(b);
                unrounded_magnitude += std::fabs(double(a) * double(b));
            }
            const double old = double(c.beta) * C0[i * ldc + j];
            const double bound = gamma * (magnitude + std::fabs(old));
            const double got = C[i * ldc + j];
            if (!(std::fabs(got - (rounded + old)) <= bound)) out.within_bound = false;
            // Against the unrounded operands: each is off by at most 2⁻⁹ of itself (bf16 keeps
            // 8 significant bits), each term so by (1 + 2⁻⁹)² − 1 of |a·b|, then the sums.
            const double e = std::ldexp(1.0, -9), term = (1 + e) * (1 + e) - 1;
            if (!(std::fabs(got - (unrounded + old)) <=
                  (term + gamma * (1 + e) * (1 + e)) * unrounded_magnitude +
                      gamma * std::fabs(old)))
                out.within_operand_bound = false;
            out.rounding_effect =
                std::max(out.rounding_effect, std::fabs(got - (unrounded + old)) / bound);
            exact[i * c.N + j] = unrounded;
            largest = std::max(largest, std::fabs(unrounded));
            out.relative_error = std::max(out.relative_error, std::fabs(got - old - unrounded));
        }
    out.relative_error /= std::max(largest, std::numeric_limits<double>::min());
    for (size_t i = 0; i < c.M; ++i)
        for (size_t j = c.N; j < ldc; ++j)
            if (C[i * ldc + j] != C0[i * ldc + j]) out.past_n_untouched = false;
    return out;
}

}  // namespace

TEST_CASE("model.precision = bf16: each product is the bf16-rounded operands' product, f32 sums") {
    if (skip_bf16()) return;
    const KeepThreading keep;
    const std::vector<Case> cases = {
        {false, true, 700, 96, 64, 0, 0.f},     // x·Wᵀ: a linear layer
        {false, false, 700, 64, 96, 5, 0.f},    // dY·W: its input gradient
        {true, false, 96, 64, 700, 3, 1.f},     // dYᵀ·X, accumulated: its weight gradient
        {false, true, 256, 256, 32, 96, 0.f},   // q·kᵀ inside packed [T, 3C] rows (ld = 128)
        {false, false, 256, 32, 256, 96, 1.f},  // p·v added into a strided context tile
        {true, true, 33, 17, 29, 2, 0.5f},
        {false, false, 9, 7, 5, 0, 1.f},
        {false, true, 1, 1, 1, 0, 0.f},
        {false, false, 4, 3, 0, 1, 0.5f}};  // K = 0: C = beta·C
    for (const size_t threads : {size_t(1), size_t(2)})
        for (const Case& c : cases) {
            CAPTURE(threads);
            CAPTURE(c.M);
            CAPTURE(c.N);
            CAPTURE(c.K);
            CAPTURE(c.ta);
            CAPTURE(c.tb);
            const Outcome out = run_case(c, threads);
            CHECK(out.within_bound);
            CHECK(out.past_n_untouched);
            CHECK(out.within_operand_bound);
            // The operands really were rounded: against the unrounded operands' product some
            // element misses float32's bound (bf16 keeps 8 bits, float32 24).
            if (c.K >= 16) CHECK(out.rounding_effect > 1);
        }
}

TEST_CASE(
    "model.precision = bf16: the round-off of one product at K = 256 (docs/mixed-precision.md)") {
    if (skip_bf16()) return;
    const KeepThreading keep;
    const Outcome out = run_case({false, true, 512, 256, 256, 0, 0.f}, 2);
    CHECK(out.within_bound);
    CHECK(out.within_operand_bound);
    MESSAGE("bf16 product [512×256]·[256×256]: max |error| / max |exact| = " << out.relative_error);
}

TEST_CASE("model.precision = bf16 trains: the loss falls, stays finite and near float32's") {
    if (skip_bf16()) return;
    const KeepThreading keep;
    const size_t B = 4, T = 16, V = 40;
    std::vector<int> ids(B * T), labels(B * T, -100);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int(5 + (i * 11) % (V - 5));
    for (size_t i = 0; i < ids.size(); i += 3) labels[i] = int(5 + (i * 7) % (V - 5));
    const PositionConfig position = testing::tiny_position_config("rope");
    const ModelConfig config = testing::tiny_model_config(V, 0.1);
    const auto train = [&](FloatProduct product) {
        set_threading({2, true, product});
        RoFormer model = assembled_model(config, position, 21);
        AdamW opt(model.parameters(), {});
        std::vector<float> losses;
        for (int step = 0; step < 8; ++step) {
            ModelOutput out = model.forward(ids, labels, B, T, true);
            losses.push_back(out.loss.item());
            opt.zero_grad();
            out.loss.backward();
            opt.step(1e-2);
        }
        return losses;
    };
    const std::vector<float> bf16 = train(bf16_product());
    const std::vector<float> fp32 = train(nullptr);
    CHECK(bf16 == train(bf16_product()));  // the same setting twice: the same bits
    CHECK(bf16 != fp32);                   // and the setting did something
    for (const float loss : bf16) CHECK(std::isfinite(loss));
    CHECK(bf16.back() < bf16.front());
    // Loose: the operands carry ~2⁻⁹ relative error, so the losses should agree to far better
    // than a hundredth of the starting loss after a few steps.
    CHECK(std::fabs(bf16.back() - fp32.back()) < 0.01 * fp32.front());
}

TEST_CASE("model.precision: fp32 by default; bf16 installed only with fused oneDNN products") {
    const KeepThreading keep;
    Config config = default_config();
    CHECK(config.fast.precision == Precision::fp32);
    apply_threading(config, 2);
    if (bf16_unavailable().empty()) CHECK((threading().block_product != bf16_product()));
    const std::string no_fused = error_of([] {
        load_config(std::nullopt,
                    {"model.precision=bf16", "model.products=onednn", "model.fused=false"});
    });
    CHECK(contains(no_fused, "model.precision"));
    CHECK(contains(no_fused, "model.fused"));
    const std::string openblas = error_of(
        [] { load_config(std::nullopt, {"model.precision=bf16", "model.products=openblas"}); });
    CHECK(contains(openblas, "model.precision"));
    CHECK(contains(openblas, "model.products = auto or onednn"));
    CHECK(contains(error_of([] { load_config(std::nullopt, {"model.precision=fp16"}); }),
                   "fp32, bf16"));
    if (skip_bf16()) return;
    const Config bf16 = load_config(std::nullopt, {"model.precision=bf16"});  // products: auto
    apply_threading(bf16, 2);
    CHECK((threading().block_product == bf16_product()));
    CHECK(contains(fast_path_line(bf16.fast), "bf16"));
    // Recorded in the run's config.toml and read back from it (eval and resume load that file).
    const std::string written = to_toml(bf16);
    CHECK(contains(written, "precision = \"bf16\""));
    Config read_back = default_config();
    apply_toml_text(read_back, written, "config.toml");
    CHECK(read_back.fast.precision == Precision::bf16);
}

TEST_CASE("model.precision = bf16: every reason it cannot run, in one message") {
    const std::string all = error_of([] {
        load_config(std::nullopt,
                    {"model.precision=bf16", "model.products=openblas", "model.fused=false"});
    });
    CHECK(contains(all, "model.fused = true"));
    CHECK(contains(all, "model.products = auto"));
    if (!bf16_unavailable().empty()) CHECK(contains(all, bf16_unavailable()));
    CHECK(all.find('\n') == std::string::npos);
}
