// Stage 4 tests — p-RoPE (position.rope_p; Barbero et al., "Round and Round We Go! What makes
// Rotary Positional Encodings useful?", ICLR 2025, arXiv:2410.06205, §6): the head keeps its
// ladder θ_i = base^(−2i/D), and only the round(p·D/2) fastest pairs turn.
//
// Legend: D head size, h = D/2 pairs, k rotated pairs, r rotary dims (rotary_fraction·D),
//         m a position. Expected angles come from exp/log written here, never from the library.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "model/roformer.hpp"
#include "position/rope.hpp"
#include "rope_options.hpp"
#include "tiny_model.hpp"

using namespace rf;

namespace {

// θ_i = base^(−2i/width) for i < count, by exp/log (the library uses pow)
std::vector<double> ladder(double base, size_t width, size_t count) {
    std::vector<double> theta(count);
    for (size_t i = 0; i < count; ++i)
        theta[i] = std::exp(-2.0 * double(i) / double(width) * std::log(base));
    return theta;
}

Tensor random_tensor(const Shape& shape, Rng& rng) {
    Tensor t = Tensor::zeros(shape);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<Real>(rng.normal());
    return t;
}

std::string message(const PositionConfig& c, size_t hidden = 16, size_t heads = 2) {
    try {
        validate_position_config(c, hidden, heads);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("p-RoPE keeps the head's ladder and zeroes the slow pairs; partial rotary re-spaces it") {
    const double base = 100.0;
    RopeOptions p_rope = testing::rope_options(RopePairing::interleaved, 8, 8, base);
    p_rope.rope_p = 0.5;  // h = 4 pairs → k = 2 turn
    const std::vector<double> expected = ladder(base, 8, 4);
    const std::vector<double> theta = RopeTable(p_rope).frequencies();
    REQUIRE(theta.size() == 4);
    CHECK(theta[0] == doctest::Approx(expected[0]).epsilon(1e-14));
    CHECK(theta[1] == doctest::Approx(expected[1]).epsilon(1e-14));  // 100^(−1/4)
    CHECK(theta[2] == 0.0);
    CHECK(theta[3] == 0.0);
    // rotary_fraction = 0.5 also turns dims 0 … 3 (pairs 0, 1), but by 100^(−2i/4): pair 1 turns
    // at 100^(−1/2) = 0.1, not 100^(−1/4) ≈ 0.316.
    const RopeTable partial(testing::rope_options(RopePairing::interleaved, 8, 4, base));
    const std::vector<double> partial_expected = ladder(base, 4, 2);
    REQUIRE(partial.frequencies().size() == 2);
    CHECK(partial.frequencies()[1] == doctest::Approx(partial_expected[1]).epsilon(1e-14));
    CHECK(std::abs(partial.frequencies()[1] - theta[1]) > 0.2);
    // … so the same x at the same position comes out differently in dims 2, 3 only
    Rng rng(1);
    const Tensor x = random_tensor({1, 6, 8}, rng);
    RopeTable a(p_rope), b(testing::rope_options(RopePairing::interleaved, 8, 4, base));
    const Tensor ya = rope(x, a), yb = rope(x, b);
    const size_t m = 5;
    for (size_t d = 0; d < 8; ++d) {
        const double gap = std::abs(double(ya.data()[m * 8 + d]) - double(yb.data()[m * 8 + d]));
        CAPTURE(d);
        if (d == 2 || d == 3)
            CHECK(gap > 1e-2);
        else
            CHECK(gap == 0.0);
    }
}

TEST_CASE("p-RoPE's forward: the fast pairs turn by m·θ_i, the slow ones pass through, both pairings") {
    for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
        const std::string pairing_name = rope_pairing_name(pairing);
        CAPTURE(pairing_name);
        RopeOptions o = testing::rope_options(pairing, 12, 12, 50.0);
        o.rope_p = 2.0 / 6.0;  // h = 6 → k = 2
        RopeTable table(o);
        Rng rng(2);
        const size_t T = 9, D = 12, h = 6, k = 2;
        const Tensor x = random_tensor({T, D}, rng);
        const Tensor y = rope(x, table);
        const std::vector<double> theta = ladder(50.0, D, h);
        for (size_t m = 0; m < T; ++m)
            for (size_t i = 0; i < h; ++i) {
                const size_t lo = pairing == RopePairing::interleaved ? 2 * i : i;
                const size_t hi = pairing == RopePairing::interleaved ? 2 * i + 1 : i + h;
                const double angle = i < k ? double(m) * theta[i] : 0.0;
                const double x0 = x.data()[m * D + lo], x1 = x.data()[m * D + hi];
                CHECK(y.data()[m * D + lo] ==
                      doctest::Approx(x0 * std::cos(angle) - x1 * std::sin(angle)).epsilon(1e-5));
                CHECK(y.data()[m * D + hi] ==
                      doctest::Approx(x1 * std::cos(angle) + x0 * std::sin(angle)).epsilon(1e-5));
                if (i >= k) {  // untouched, bit for bit
                    CHECK(y.data()[m * D + lo] == x.data()[m * D + lo]);
                    CHECK(y.data()[m * D + hi] == x.data()[m * D + hi]);
                }
            }
    }
}

TEST_CASE("p = 1 is plain RoPE bit for bit: θ_i = pow(base, −2i/D), every pair turning") {
    RopeOptions o = testing::rope_options(RopePairing::half, 16, 16, 10000.0);
    REQUIRE(o.rope_p == 1.0);  // the default
    const std::vector<double> theta = RopeTable(o).frequencies();
    REQUIRE(theta.size() == 8);
    for (size_t i = 0; i < 8; ++i) CHECK(theta[i] == std::pow(10000.0, -2.0 * double(i) / 16.0));
}

TEST_CASE("p = 0 gives NoPE: the same logits as position.scheme = none, composed and fused") {
    ModelConfig m = testing::tiny_model_config(40, 0.5);
    const size_t B = 2, T = 12;
    std::vector<int> ids(B * T);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int(5 + (i * 7) % 35);
    PositionConfig none = testing::tiny_position_config("none");
    PositionConfig p0 = testing::tiny_position_config();
    p0.rope_p = 0.0;
    PositionConfig plain = testing::tiny_position_config();
    for (bool fused : {false, true}) {
        CAPTURE(fused);
        FastConfig fast;
        fast.fused = fused;
        auto logits = [&](const PositionConfig& p) {
            RoFormer model = assembled_model(m, p, 3, fast);
            NoGradGuard no_grad;
            const Tensor l = model.logits_all(ids, B, T);
            return std::vector<Real>(l.data(), l.data() + l.numel());
        };
        const std::vector<Real> a = logits(none), b = logits(p0), c = logits(plain);
        CHECK(a == b);
        CHECK(a != c);  // and the test can tell: plain RoPE moves them
    }
}

TEST_CASE("position.rope_p: the rules, each naming the key") {
    PositionConfig c = testing::tiny_position_config();  // hidden 16, 2 heads: D = 8, h = 4
    for (double p : {0.0, 0.25, 0.5, 0.75, 1.0}) {
        c.rope_p = p;
        CHECK(message(c) == "");
    }
    for (double bad : {-0.25, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
        c.rope_p = bad;
        CHECK(contains(message(c), "position.rope_p"));
    }
    c.rope_p = 0.3;  // 1.2 pairs: refused, the nearest whole number suggested
    CHECK(contains(message(c), "position.rope_p = 0.25"));
    c.rope_p = 0.5;
    c.rotary_fraction = 0.5;
    CHECK(contains(message(c), "position.rotary_fraction"));
    c.rotary_fraction = 1.0;
    c.learned_frequencies = true;
    CHECK(contains(message(c), "position.learned_frequencies"));
    c.learned_frequencies = false;
    c.xpos = true;
    CHECK(contains(message(c), "position.xpos"));
    c.xpos = false;
    for (const char* scheme : {"none", "learned", "sinusoidal", "alibi"}) {
        PositionConfig other = testing::tiny_position_config(scheme);
        other.rope_p = 0.5;
        CAPTURE(std::string(scheme));
        CHECK(contains(message(other), "position.rope_p"));
    }
    // composes with a scaling (it rescales the pairs that still turn) and with rotate_values
    c.scaling = RopeScaling::yarn;
    c.scaling_factor = 2;
    c.original_max_positions = 16;
    c.rotate_values = true;
    CHECK(message(c) == "");
    RopeOptions o = rope_options_from_config(c, 8);
    const std::vector<double> theta = RopeTable(o).frequencies();
    CHECK(theta[1] > 0.0);
    CHECK(theta[2] == 0.0);
    CHECK(theta[3] == 0.0);
}

TEST_CASE("rope_p_rotated_pairs rounds p·pairs to the nearest, halves up (linear attention's features)") {
    CHECK(rope_p_rotated_pairs(1.0, 4) == 4);
    CHECK(rope_p_rotated_pairs(0.0, 4) == 0);
    CHECK(rope_p_rotated_pairs(0.5, 3) == 2);   // 1.5 → 2
    CHECK(rope_p_rotated_pairs(0.25, 3) == 1);  // 0.75 → 1
    CHECK(rope_p_rotated_pairs(0.1, 3) == 0);   // 0.3 → 0
}
