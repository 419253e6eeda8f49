// Stage 4 tests — a safety net from outside (issue 33): our RoPE against the numbers other
// projects assert in their own test suites. Nobody here wrote those numbers, so a shared
// misreading of a paper between src/ and our other tests cannot hide here.
//
// Legend: B batch, H heads, T length, D head size, r rotary dims, h = r/2 pairs,
//         θ_i = base^(−2i/r), L₀ the trained length, s the scaling factor, m a position.
// Each TEST_CASE names the project, file and test its numbers come from; the numbers are
// re-typed facts (inputs, expected values, tolerances), the checks are our own.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "position/rope.hpp"
#include "ropelab/rope_scaling.hpp"
#include "rope_options.hpp"
#include "tensor/random.hpp"

using namespace rf;

namespace {

// ---- Hugging Face RoFormer: the rotated query ----------------------------------------------
// query[0, 0, :6, :8] after RoPE, for query = arange(2·12·16·64).reshape(2, 12, 16, 64) / 100.
const double kRoformerQuery[6][8] = {
    {0.0000, 0.0100, 0.0200, 0.0300, 0.0400, 0.0500, 0.0600, 0.0700},
    {-0.2012, 0.8897, 0.0263, 0.9401, 0.2074, 0.9463, 0.3481, 0.9343},
    {-1.7057, 0.6271, -1.2145, 1.3897, -0.6303, 1.7647, -0.1173, 1.8985},
    {-2.1731, -1.6397, -2.7358, 0.2854, -2.1840, 1.7183, -1.3018, 2.4871},
    {0.2717, -3.6173, -2.9206, -2.1988, -3.6638, 0.3858, -2.9155, 2.2980},
    {3.9859, -2.1580, -0.7984, -4.4904, -4.1181, -2.0252, -4.4782, 1.1253}};

// query (sign +1) or key = −query (sign −1): [2, 12, 16, 64], entry k = sign · k / 100.
Tensor roformer_input(Real sign) {
    Tensor x = Tensor::zeros({2, 12, 16, 64});
    for (size_t k = 0; k < x.numel(); ++k) x.data()[k] = sign * static_cast<Real>(k) / Real(100);
    return x;
}

// The largest |ours − theirs| over [0, 0, :6, :8]; their key is −(their query).
double roformer_max_error(const Tensor& rotated, double sign) {
    double worst = 0.0;
    for (size_t t = 0; t < 6; ++t)
        for (size_t d = 0; d < 8; ++d)
            worst = std::max(worst, std::abs(double(rotated.data()[t * 64 + d]) -
                                             sign * kRoformerQuery[t][d]));
    return worst;
}

// ---- Hugging Face rope utils: head dim 128, base 10000, L₀ = 2048 -------------------------
constexpr size_t kHeadDim = 128, kPairs = 64, kTrainedLength = 2048;

RopeOptions llama_head(RopeScaling scaling = RopeScaling::none, double s = 1.0) {
    RopeOptions o = testing::rope_options(RopePairing::half, kHeadDim, kHeadDim);
    o.scaling = scaling;
    o.scaling_factor = s;
    o.original_max_positions = kTrainedLength;
    return o;
}

// θ_i = 10000^(−2i/128) from exp/log, not pow: shares no code with rope_frequencies. Used for
// the pairs their tests say "equal default" — the default itself is pinned by their numbers.
double default_theta(size_t i) {
    return std::exp(-2.0 * static_cast<double>(i) / double(kHeadDim) * std::log(10000.0));
}

// torch.testing.assert_close for float32: |actual − expected| ≤ atol + rtol·|expected|.
// Our frequencies are double, so the comparison is in double (a stricter check than theirs,
// which first rounds both sides to float32).
bool hf_close(double actual, double expected) {
    return std::abs(actual - expected) <= 1e-5 + 1.3e-6 * std::abs(expected);
}

// CHECKs θ'_i for i in [first, first + expected.size()) against their listed values.
void check_listed(const std::vector<double>& theta, size_t first,
                  const std::vector<double>& expected) {
    for (size_t k = 0; k < expected.size(); ++k) {
        CAPTURE(first + k);
        CAPTURE(theta[first + k]);
        CHECK(hf_close(theta[first + k], expected[k]));
    }
}

// CHECKs θ'_i = default θ_i / divisor for i in [first, last].
void check_default_over(const std::vector<double>& theta, size_t first, size_t last,
                        double divisor) {
    for (size_t i = first; i <= last; ++i) {
        CAPTURE(i);
        CHECK(hf_close(theta[i], default_theta(i) / divisor));
    }
}

// ---- llama.cpp's composition property -------------------------------------------------------
Tensor random_tensor(const Shape& shape, Rng& rng) {
    Tensor t = Tensor::zeros(shape);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<Real>(rng.normal());
    return t;
}

// Σ|rope(rope(x, 100 + t), −67) − rope(x, 33 + t)| / Σ|rope(x, 33 + t)|, x:[H, T, D] random.
// We have no negative positions: the table holds rows m ≥ 0 only. But R_m is a rotation, so
// R_{−m} = R_mᵀ = R_m⁻¹, and rope_kernel turns by the angles its tables hold: row 67 with
// its sines negated (sin(−α) = −sin α) is the shift by −67.
double composition_error(RopePairing pairing, size_t D, size_t r) {
    const size_t H = 3, T = 10, h = r / 2, shift = 67;
    RopeTable table(testing::rope_options(pairing, D, r));
    Rng rng(33);
    const Tensor x = random_tensor({H, T, D}, rng);
    const Tensor far = rope(x, table, 100);  // row t rotated by R_{100+t}
    const Tensor near = rope(x, table, 33);  // row t rotated by R_{33+t}
    table.reserve(shift + 1);
    std::vector<Real> cos(T * h), sin(T * h);  // every row t: the angles of position −67
    for (size_t t = 0; t < T; ++t)
        for (size_t i = 0; i < h; ++i) {
            cos[t * h + i] = table.cos_row(shift)[i];
            sin[t * h + i] = -table.sin_row(shift)[i];
        }
    std::vector<Real> back(far.numel());
    rope_kernel(far.data(), back.data(), H, T, D, r, pairing, cos.data(), sin.data(), false);
    double difference = 0.0, size = 0.0;
    for (size_t k = 0; k < back.size(); ++k) {
        difference += std::abs(double(back[k]) - double(near.data()[k]));
        size += std::abs(double(near.data()[k]));
    }
    return difference / size;
}

}  // namespace

// Hugging Face transformers, tests/models/roformer/test_modeling_roformer.py,
// test_apply_rotary_position_embeddings: interleaved pairs, base 10000, D = 64, positions
// 0…15, atol 1e-4 on query[0, 0, :6, :8] and on the key (= −query, so every entry negated).
TEST_CASE("peers: HF RoFormer's rotated query and key (interleaved pairing)") {
    RopeTable table(testing::rope_options(RopePairing::interleaved, 64, 64));
    const Tensor query = rope(roformer_input(Real(1)), table);
    const Tensor key = rope(roformer_input(Real(-1)), table);
    CHECK(roformer_max_error(query, 1.0) <= 1e-4);
    CHECK(roformer_max_error(key, -1.0) <= 1e-4);
}

// Same test, same numbers: the half pairing rotates other dims together, so it fails their
// check (atol 1e-4) — their numbers pin the pairing, not only the angles.
TEST_CASE("peers: HF RoFormer's numbers refuse the half pairing") {
    RopeTable table(testing::rope_options(RopePairing::half, 64, 64));
    const Tensor query = rope(roformer_input(Real(1)), table);
    CHECK(roformer_max_error(query, 1.0) > 1e-4);
}

// Hugging Face transformers, tests/utils/test_modeling_rope_utils.py,
// test_default_rope_numerically: θ_i = 10000^(−2i/128), the first three and the last listed.
TEST_CASE("peers: HF rope utils, default inverse frequencies") {
    const RopeOptions o = llama_head();
    const std::vector<double> theta = rope_frequencies(o).theta;
    REQUIRE(theta.size() == kPairs);
    check_listed(theta, 0, {1.0000e+00, 8.6596e-01, 7.4989e-01});
    check_listed(theta, kPairs - 1, {1.1548e-04});
    check_default_over(theta, 0, kPairs - 1, 1.0);  // our reference agrees with ours throughout
    CHECK(rope_attention_factor(o) == 1.0);
}

// Hugging Face transformers, tests/utils/test_modeling_rope_utils.py,
// test_linear_rope_numerically: linear (position interpolation) with factor f gives
// default / f, attention factor 1. We keep θ_i and divide the position instead (angle =
// (m / f)·θ_i, RopeFrequencies::position_divisor), so what must equal theirs is θ_i / divisor
// — and the table's angle at a position, the thing a model actually uses.
TEST_CASE("peers: HF rope utils, linear scaling is default / factor") {
    for (double f : {2.0, 10.0, 20.0}) {
        CAPTURE(f);
        const RopeOptions o = llama_head(RopeScaling::linear, f);
        const std::vector<double> theta = rope_frequencies(o).theta;
        const double divisor = rope_frequencies(o).position_divisor;
        std::vector<double> effective(kPairs);
        for (size_t i = 0; i < kPairs; ++i) effective[i] = theta[i] / divisor;
        check_default_over(effective, 0, kPairs - 1, f);
        CHECK(rope_attention_factor(o) == 1.0);
        // The table at position m = 1000: sin of 1000·θ_i/f, for a fast, a middle, a slow pair.
        RopeTable table(o);
        table.reserve(1001);
        for (size_t i : {size_t(0), size_t(20), size_t(63)}) {
            CAPTURE(i);
            CHECK(double(table.sin_row(1000)[i]) ==
                  doctest::Approx(std::sin(1000.0 * default_theta(i) / f)).epsilon(1e-5));
        }
    }
}

// Hugging Face transformers, tests/utils/test_modeling_rope_utils.py,
// test_dynamic_rope_numerically: factor 10; at current length 16384 the listed values (the
// first twelve and the last two); at a length ≤ L₀ = 2048 the default.
TEST_CASE("peers: HF rope utils, dynamic NTK") {
    RopeOptions o = llama_head(RopeScaling::dynamic_ntk, 10.0);
    for (size_t length : {size_t(0), size_t(1), size_t(2048)}) {
        CAPTURE(length);
        check_default_over(rope_frequencies(o, length).theta, 0, kPairs - 1, 1.0);
        CHECK(dynamic_ntk_base(o, length) == 10000.0);
    }
    RopeTable table(o);
    CHECK(&table.for_length(2048) == &table);  // no scaling up to L₀: the same table

    const std::vector<double> grown = rope_frequencies(o, 16384).theta;
    check_listed(grown, 0,
                 {1.0000e+00, 8.0931e-01, 6.5498e-01, 5.3008e-01, 4.2900e-01, 3.4720e-01,
                  2.8099e-01, 2.2741e-01, 1.8404e-01, 1.4895e-01, 1.2055e-01, 9.7558e-02});
    check_listed(grown, kPairs - 2, {2.0097e-06, 1.6265e-06});
    // The table a 16384-long sequence is rotated with carries the same frequencies.
    check_listed(table.for_length(16384).frequencies(), 1, {8.0931e-01});
    check_listed(table.for_length(16384).frequencies(), kPairs - 1, {1.6265e-06});
    CHECK(rope_attention_factor(o) == 1.0);
    // Not a linear factor (their test asserts this too): pair 1 is far from default / 10.
    CHECK_FALSE(hf_close(grown[1], default_theta(1) / 10.0));
}

// Hugging Face transformers, tests/utils/test_modeling_rope_utils.py,
// test_yarn_rope_numerically: factor 10, beta_fast 32, beta_slow 1, L₀ = 2048: pairs 0–16
// default, 17–40 listed, 41–63 default / 10; attention factor 0.1·ln 10 + 1, and an
// explicit attention factor 0.5 is returned as 0.5.
TEST_CASE("peers: HF rope utils, YaRN") {
    RopeOptions o = llama_head(RopeScaling::yarn, 10.0);
    o.yarn_beta_fast = 32.0;
    o.yarn_beta_slow = 1.0;
    const std::vector<double> theta = rope_frequencies(o).theta;
    REQUIRE(theta.size() == kPairs);
    check_default_over(theta, 0, 16, 1.0);
    check_listed(theta, 17,
                 {8.3479e-02, 6.9590e-02, 5.7925e-02, 4.8136e-02, 3.9931e-02, 3.3061e-02,
                  2.7315e-02, 2.2515e-02, 1.8512e-02, 1.5177e-02, 1.2403e-02, 1.0101e-02,
                  8.1924e-03, 6.6143e-03, 5.3120e-03, 4.2400e-03, 3.3599e-03, 2.6396e-03,
                  2.0520e-03, 1.5746e-03, 1.1882e-03, 8.7713e-04, 6.2810e-04, 4.3007e-04});
    check_default_over(theta, 41, kPairs - 1, 10.0);
    check_listed(theta, 41, {2.7384e-04});
    check_listed(theta, kPairs - 1, {1.1548e-05});
    CHECK(rope_attention_factor(o) == doctest::Approx(0.1 * std::log(10.0) + 1.0).epsilon(1e-12));
    o.yarn_attention_factor = 0.5;
    CHECK(rope_attention_factor(o) == 0.5);
}

// Hugging Face transformers, tests/utils/test_modeling_rope_utils.py,
// test_llama3_rope_numerically: factor 10, low_freq_factor 1, high_freq_factor 4, L₀ = 2048:
// pairs 0–30 default, 31–40 listed, 41–63 default / 10; attention factor 1.
TEST_CASE("peers: HF rope utils, Llama 3") {
    RopeOptions o = llama_head(RopeScaling::llama3, 10.0);
    o.low_freq_factor = 1.0;
    o.high_freq_factor = 4.0;
    const std::vector<double> theta = rope_frequencies(o).theta;
    REQUIRE(theta.size() == kPairs);
    check_default_over(theta, 0, 30, 1.0);
    check_listed(theta, 31,
                 {1.0730e-02, 7.7785e-03, 5.6009e-03, 3.9991e-03, 2.8248e-03, 1.9675e-03,
                  1.3449e-03, 8.9549e-04, 5.7363e-04, 3.4539e-04});
    check_default_over(theta, 41, kPairs - 1, 10.0);
    CHECK(rope_attention_factor(o) == 1.0);
}

// llama.cpp, tests/test-rope.cpp: rotating by 100 + i and then by −67 equals rotating once by
// 33 + i, Σ|difference| / Σ|result| < 1e-4 — for the interleaved (ggml NORMAL) and the half
// (ggml NEOX) pairing, and for partial rotary: 128 rotary dims of a 256-dim head.
TEST_CASE("peers: llama.cpp's rope composition R_{-67} R_{100+i} = R_{33+i}") {
    for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
        const std::string pairing_name = rope_pairing_name(pairing);
        CAPTURE(pairing_name);
        CHECK(composition_error(pairing, 128, 128) < 1e-4);
        CHECK(composition_error(pairing, 256, 128) < 1e-4);
    }
}
