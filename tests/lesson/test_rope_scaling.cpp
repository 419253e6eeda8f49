// RoPE lab tests — scaling a trained RoPE model (src/ropelab/rope_scaling.*): dynamic NTK,
// YaRN and Llama 3 against numbers worked by hand from the published formulas (the working is
// in each comment), the old keys unchanged, and every refusal naming its key.
//
// Legend: r rotary dims, θ_i = base^(−2i/r), λ_i = 2π/θ_i, L₀ trained length, s factor.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/model_config.hpp"
#include "position/position.hpp"
#include "position/rope.hpp"
#include "ropelab/rope_scaling.hpp"
#include "rope_options.hpp"

using namespace rf;

namespace {

const double kPi = std::acos(-1.0);

// r = 32 (D = 32), base 10000, L₀ = 64, s = 4: the classroom model's head, stretched 4×.
RopeOptions classroom(RopeScaling scaling, double s = 4.0) {
    RopeOptions o = testing::rope_options(RopePairing::interleaved, 32, 32);
    o.scaling = scaling;
    o.scaling_factor = s;
    o.original_max_positions = 64;
    return o;
}

double theta(size_t i, size_t r = 32, double base = 10000.0) {
    return std::pow(base, -2.0 * double(i) / double(r));
}

std::string refusal(const RopeOptions& o) {
    try {
        validate_rope_options(o);
    } catch (const std::invalid_argument& e) { return e.what(); }
    return "";
}

std::string config_refusal(const PositionConfig& c, bool causal = true,
                           AttentionKind attention = AttentionKind::softmax) {
    try {
        validate_position_config(c, 64, 2);
        ModelConfig m;
        m.hidden = 64;
        m.num_heads = 2;
        m.causal = causal;
        m.attention = attention;
        validate_model_options(m, c);
    } catch (const std::invalid_argument& e) { return e.what(); }
    return "";
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("yarn: correction range, ramp and frequencies worked by hand") {
    // d(β) = r·ln(L₀/(2πβ)) / (2 ln base):
    //   d(32) = 32·ln(64/(64π)) / (2 ln 10⁴) = 32·(−1.14473)/18.42068 = −1.98860
    //   d(1)  = 32·ln(64/(2π))  / 18.42068    = 32·2.32100/18.42068    =  4.03200
    CHECK(yarn_correction_dim(32, 32, 10000.0, 64) == doctest::Approx(-1.98860).epsilon(1e-5));
    CHECK(yarn_correction_dim(1, 32, 10000.0, 64) == doctest::Approx(4.03200).epsilon(1e-5));
    // lo = max(⌊−1.99⌋, 0) = 0, hi = ⌈4.03⌉ = 5: γ_i = 1 − i/5 for i ≤ 5, then 0.
    const RopeOptions o = classroom(RopeScaling::yarn);
    const std::vector<double> keep = yarn_keep_fraction(o);
    const std::vector<double> by_hand = {1.0, 0.8, 0.6, 0.4, 0.2, 0.0, 0.0};
    for (size_t i = 0; i < by_hand.size(); ++i) CHECK(keep[i] == doctest::Approx(by_hand[i]));
    CHECK(keep.back() == 0.0);
    // θ'_i = θ_i·(1 − γ_i)/s + θ_i·γ_i: θ'_0 = θ_0 = 1; θ'_2 = 10^(−1/2)·(0.4/4 + 0.6) =
    // 0.316228·0.7 = 0.221359; θ'_15 = θ_15/4.
    const std::vector<double> scaled = rope_frequencies(o).theta;
    CHECK(scaled[0] == doctest::Approx(1.0));
    CHECK(scaled[2] == doctest::Approx(0.221359).epsilon(1e-5));
    CHECK(scaled[15] == doctest::Approx(theta(15) / 4.0));
    // a(4) = 0.1·ln 4 + 1 = 1.138629; a(1) = 1 (no temperature without scaling).
    CHECK(yarn_mscale(4.0) == doctest::Approx(1.138629).epsilon(1e-6));
    CHECK(yarn_mscale(1.0) == 1.0);
    CHECK(rope_attention_factor(o) == doctest::Approx(1.138629).epsilon(1e-6));
    RopeOptions fixed = o;
    fixed.yarn_attention_factor = 1.5;
    CHECK(rope_attention_factor(fixed) == 1.5);
    CHECK(rope_attention_factor(classroom(RopeScaling::llama3)) == 1.0);
}

TEST_CASE("yarn: the temperature is in the table, so q·k at one position grows by a²") {
    RopeTable table(classroom(RopeScaling::yarn));
    table.reserve(3);
    const double a = 0.1 * std::log(4.0) + 1.0;
    CHECK(table.cos_row(0)[5] == doctest::Approx(a));  // a·cos 0
    CHECK(table.sin_row(0)[5] == doctest::Approx(0.0));
    // row 2, pair 2: a·cos(2·θ'_2), a·sin(2·θ'_2)
    CHECK(table.cos_row(2)[2] == doctest::Approx(a * std::cos(2 * 0.2213594)).epsilon(1e-5));
    CHECK(table.sin_row(2)[2] == doctest::Approx(a * std::sin(2 * 0.2213594)).epsilon(1e-5));
    Tensor q = Tensor::zeros({1, 1, 32}), k = Tensor::zeros({1, 1, 32});
    for (size_t d = 0; d < 32; ++d) {
        q.data()[d] = Real(std::sin(1.0 + d));
        k.data()[d] = Real(std::cos(2.0 * d));
    }
    double plain = 0.0, scaled = 0.0;
    const Tensor rq = rope(q, table, 7), rk = rope(k, table, 7);
    for (size_t d = 0; d < 32; ++d) {
        plain += double(q.data()[d]) * k.data()[d];
        scaled += double(rq.data()[d]) * rk.data()[d];
    }
    CHECK(scaled == doctest::Approx(a * a * plain).epsilon(1e-5));
}

TEST_CASE("llama3: the three bands worked by hand") {
    // λ_i = 2π·10000^(i/16): λ_0 = 6.28, λ_1 = 11.17 (< L₀/high = 16: kept); λ_5 = 111.7
    // (> L₀/low = 64: divided by s = 4); λ_2 = 19.87 and λ_4 = 62.83 lie between, smoothed:
    // σ = (L₀/λ − 1)/3, θ' = (1 − σ)·θ/4 + σ·θ, which for low = 1, high = 4, s = 4 is
    // θ/4 + θ·(L₀θ/2π − 1)/4 = L₀·θ²/(8π): θ'_2 = 64·0.1/(8π) = 0.8/π = 0.254648.
    const std::vector<double> scaled = rope_frequencies(classroom(RopeScaling::llama3)).theta;
    CHECK(scaled[0] == doctest::Approx(theta(0)));
    CHECK(scaled[1] == doctest::Approx(theta(1)));
    CHECK(scaled[2] == doctest::Approx(0.8 / kPi).epsilon(1e-9));
    CHECK(scaled[4] == doctest::Approx(64.0 * theta(4) * theta(4) / (8.0 * kPi)).epsilon(1e-9));
    for (size_t i = 5; i < 16; ++i) CHECK(scaled[i] == doctest::Approx(theta(i) / 4.0));
}

TEST_CASE("dynamic ntk: base grows with the current length, only past L₀") {
    RopeOptions o = testing::rope_options(RopePairing::half, 8, 8);
    o.scaling = RopeScaling::dynamic_ntk;
    o.scaling_factor = 2.0;
    o.original_max_positions = 64;
    RopeTable table(o);
    CHECK(&table.for_length(64) == &table);  // L ≤ L₀: the trained angles
    CHECK(table.frequencies()[3] == doctest::Approx(theta(3, 8)));
    // L = 256: base' = 10⁴·(2·256/64 − 1)^(8/6) = 10⁴·7^(4/3) = 133 905.18
    CHECK(dynamic_ntk_base(o, 256) == doctest::Approx(133905.18).epsilon(1e-7));
    CHECK(rope_frequencies(o, 256).base == dynamic_ntk_base(o, 256));
    RopeTable& grown = table.for_length(256);
    CHECK(&grown != &table);
    CHECK(grown.frequencies()[3] == doctest::Approx(std::pow(133905.18, -6.0 / 8.0)).epsilon(1e-6));
    // The op picks the grown table for a 256-long sequence: position 1 turns pair 1 by
    // θ'_1 = 133905.18^(−1/4), position 1 of a 64-long one by θ_1 = 10⁴^(−1/4).
    for (size_t T : {64, 256}) {
        Tensor x = Tensor::zeros({1, T, 8});
        x.data()[8 + 1] = 1;  // t = 1, dim 1 (pair 1's first half-pairing element)
        const Tensor y = rope(x, table);
        const double angle = T == 64 ? theta(1, 8) : std::pow(133905.18, -0.25);
        CHECK(y.data()[8 + 1] == doctest::Approx(std::cos(angle)).epsilon(1e-6));
        CHECK(y.data()[8 + 1 + 4] == doctest::Approx(std::sin(angle)).epsilon(1e-6));
    }
    // s = 1 at length k·L₀ is fixed NTK with factor k (base·k^(r/(r−2))).
    o.scaling_factor = 1.0;
    RopeOptions ntk = testing::rope_options(RopePairing::half, 8, 8, 10000.0, 1.0, 4.0);
    CHECK(dynamic_ntk_base(o, 256) == doctest::Approx(rope_frequencies(ntk).base));
}

TEST_CASE("linear and ntk scaling are the old interpolation_factor and ntk_factor") {
    RopeOptions old_pi = testing::rope_options(RopePairing::interleaved, 16, 16, 500.0, 3.0);
    RopeOptions old_ntk = testing::rope_options(RopePairing::interleaved, 16, 16, 500.0, 1.0, 3.0);
    RopeOptions pi = testing::rope_options(RopePairing::interleaved, 16, 16, 500.0);
    pi.scaling = RopeScaling::linear;
    pi.scaling_factor = 3.0;
    RopeOptions ntk = pi;
    ntk.scaling = RopeScaling::ntk;
    for (auto [a, b] : {std::pair{old_pi, pi}, std::pair{old_ntk, ntk}}) {
        RopeTable ta(a), tb(b);
        ta.reserve(40);
        tb.reserve(40);
        for (size_t i = 0; i < 8; ++i) {
            CHECK(ta.cos_row(39)[i] == tb.cos_row(39)[i]);
            CHECK(ta.sin_row(39)[i] == tb.sin_row(39)[i]);
        }
    }
    // and none leaves the trained table alone
    RopeTable plain(testing::rope_options(RopePairing::interleaved, 16, 16, 500.0));
    CHECK(plain.frequencies()[7] == doctest::Approx(theta(7, 16, 500.0)));
}

TEST_CASE("scaling refusals name the key") {
    RopeOptions o = classroom(RopeScaling::yarn);
    o.scaling_factor = 0.5;
    CHECK(contains(refusal(o), "position.scaling_factor = 0.5"));
    o = classroom(RopeScaling::none);
    CHECK(contains(refusal(o), "position.scaling_factor = 4 has no effect"));
    o = classroom(RopeScaling::yarn);
    o.interpolation_factor = 2;
    CHECK(contains(refusal(o), "position.interpolation_factor = 2"));
    o = classroom(RopeScaling::ntk);
    o.ntk_factor = 2;
    CHECK(contains(refusal(o), "position.ntk_factor = 2"));
    for (RopeScaling s : {RopeScaling::dynamic_ntk, RopeScaling::yarn, RopeScaling::llama3}) {
        o = classroom(s);
        o.original_max_positions = 0;
        CHECK(contains(refusal(o), "needs position.original_max_positions"));
    }
    o = classroom(RopeScaling::linear);
    o.original_max_positions = 0;
    CHECK(refusal(o).empty());  // PI needs no trained length
    o = classroom(RopeScaling::yarn);
    o.yarn_beta_fast = 0.5;
    CHECK(contains(refusal(o), "position.yarn_beta_fast = 0.5"));
    o = classroom(RopeScaling::yarn);
    o.yarn_attention_factor = -1;
    CHECK(contains(refusal(o), "position.yarn_attention_factor = -1"));
    o = classroom(RopeScaling::llama3);
    o.high_freq_factor = 1;
    CHECK(contains(refusal(o), "position.high_freq_factor = 1"));
    o = classroom(RopeScaling::dynamic_ntk);
    o.rotary_dims = 2;
    CHECK(contains(refusal(o), "position.scaling = dynamic_ntk needs at least 4 rotary dims"));
    CHECK(refusal(classroom(RopeScaling::yarn)).empty());
}

TEST_CASE("rope variant refusals name the key: scheme, objective, attention, combinations") {
    PositionConfig c;
    c.scheme = PositionKind::alibi;
    c.scaling = RopeScaling::yarn;
    CHECK(contains(config_refusal(c), "position.scaling = yarn rescales RoPE"));
    c = PositionConfig{};
    c.scheme = PositionKind::sinusoidal;
    c.xpos = true;
    CHECK(contains(config_refusal(c), "position.xpos = true is a RoPE variant"));
    c = PositionConfig{};
    c.xpos = true;
    CHECK(config_refusal(c, true).empty());
    CHECK(contains(config_refusal(c, false), "needs train.objective = clm"));
    CHECK(contains(config_refusal(c, true, AttentionKind::linear), "model.attention = softmax"));
    c.learned_frequencies = true;
    CHECK(contains(config_refusal(c), "choose one"));
    c = PositionConfig{};
    c.learned_frequencies = true;
    CHECK(config_refusal(c, false).empty());
    c.rotate_values = true;
    CHECK(contains(config_refusal(c), "position.rotate_values = false"));
    c.rotate_values = false;
    c.interpolation_factor = 2;
    CHECK(contains(config_refusal(c), "no fixed table to rescale"));
    c = PositionConfig{};
    c.xpos = true;
    c.xpos_scale_base = 0;
    CHECK(contains(config_refusal(c), "position.xpos_scale_base = 0"));
    c.xpos_scale_base = 512;
    c.xpos_gamma = -1;
    CHECK(contains(config_refusal(c), "position.xpos_gamma = -1"));
}
