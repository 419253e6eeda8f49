// RoPE lab tests — xPos, learned frequencies and 2-D axial RoPE (src/ropelab/rope_variants.*),
// rope() with explicit position ids, interpolation and NTK scaling against the naive matrix:
// the forward against an independent computation, the relative property each promises, and
// the schemes' wiring (fused path opted out, θ a named parameter saved with the model).
// Gradients: tests/gradcheck/test_rope_variants_grad.cpp.
//
// Legend: r rotary dims, m/n query/key positions, ζ_i xPos decay bases, B scale base.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "model/attention.hpp"
#include "model/swappable_ops.hpp"
#include "position/position.hpp"
#include "position/rope.hpp"
#include "ropelab/rope_scaling.hpp"
#include "ropelab/rope_variants.hpp"
#include "position/schemes.hpp"
#include "rope_naive.hpp"
#include "rope_options.hpp"
#include "tensor/random.hpp"

using namespace rf;
using rf::testing::matvec;
using rf::testing::naive_rotation;
using rf::testing::random_tensor;

namespace {

// One [1, D] row placed at position m of a zero [1, m+1, D] sequence, rotated by f, row m back.
template <class F>
std::vector<double> at_position(const Tensor& row, size_t m, F f) {
    const size_t D = row.size(-1);
    Tensor x = Tensor::zeros({1, m + 1, D});
    for (size_t d = 0; d < D; ++d) x.data()[m * D + d] = row.data()[d];
    const Tensor y = f(x);
    return std::vector<double>(y.data() + m * D, y.data() + (m + 1) * D);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

}  // namespace

TEST_CASE("xpos: decay bases and the forward, pair by pair, from the paper's formula") {
    // ζ_i = (2i/r + γ)/(1 + γ), r = 8, γ = 0.4: ζ_0 = 0.4/1.4, ζ_3 = (0.75 + 0.4)/1.4
    const std::vector<double> zeta = xpos_decay_bases(8, 0.4);
    CHECK(zeta[0] == doctest::Approx(0.4 / 1.4));
    CHECK(zeta[3] == doctest::Approx(1.15 / 1.4));
    for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
        RopeTable table(testing::rope_options(pairing, 10, 8, 100.0));  // dims 8, 9 pass
        Rng rng(1);
        const Tensor x = random_tensor({2, 5, 10}, rng);
        for (int direction : {+1, -1}) {
            const Tensor y = xpos(x, table, 0.4, 16.0, direction, 3);
            for (size_t b = 0; b < 2; ++b)
                for (size_t t = 0; t < 5; ++t) {
                    const double m = 3.0 + t;
                    const Real* xr = x.data() + (b * 5 + t) * 10;
                    const Real* yr = y.data() + (b * 5 + t) * 10;
                    for (size_t i = 0; i < 4; ++i) {
                        const size_t lo = pairing == RopePairing::interleaved ? 2 * i : i;
                        const size_t hi = pairing == RopePairing::interleaved ? 2 * i + 1 : i + 4;
                        const double angle = m * std::pow(100.0, -2.0 * i / 8.0);
                        const double decay = std::pow(zeta[i], direction * m / 16.0);
                        CHECK(yr[lo] == doctest::Approx(decay * (std::cos(angle) * xr[lo] -
                                                                 std::sin(angle) * xr[hi]))
                                            .epsilon(1e-5));
                        CHECK(yr[hi] == doctest::Approx(decay * (std::sin(angle) * xr[lo] +
                                                                 std::cos(angle) * xr[hi]))
                                            .epsilon(1e-5));
                    }
                    CHECK(yr[8] == xr[8]);
                    CHECK(yr[9] == xr[9]);
                }
        }
    }
}

TEST_CASE("xpos: q'_m·k'_n depends on m − n only, and decays as the key lies further back") {
    RopeTable table(testing::rope_options(RopePairing::interleaved, 8, 8, 100.0));
    Rng rng(2);
    const Tensor q = random_tensor({1, 8}, rng), k = random_tensor({1, 8}, rng);
    auto score = [&](size_t m, size_t n) {
        const auto qm =
            at_position(q, m, [&](const Tensor& x) { return xpos(x, table, 0.4, 8.0, +1); });
        const auto kn =
            at_position(k, n, [&](const Tensor& x) { return xpos(x, table, 0.4, 8.0, -1); });
        return dot(qm, kn);
    };
    for (size_t shift : {1, 5, 17})
        for (auto [m, n] : {std::pair<size_t, size_t>{4, 1}, {6, 6}, {2, 9}})
            CHECK(score(m + shift, n + shift) == doctest::Approx(score(m, n)).epsilon(1e-4));
    // Same vector as query and key: |R q|² at Δ = 0, then each pair shrinks by ζ_i^(Δ/B) < 1.
    const Tensor same = q;
    auto self = [&](size_t m, size_t n) {
        const auto a =
            at_position(same, m, [&](const Tensor& x) { return xpos(x, table, 0.4, 8.0, +1); });
        const auto b =
            at_position(same, n, [&](const Tensor& x) { return xpos(x, table, 0.4, 8.0, -1); });
        return dot(a, b);
    };
    const std::vector<double> zeta = xpos_decay_bases(8, 0.4);
    // pair-by-pair: at Δ = m − n the pair contributes ζ_i^(Δ/B)·|x_pair|²·cos(Δθ_i)
    const size_t m = 20, n = 4;
    double expected = 0;
    for (size_t i = 0; i < 4; ++i) {
        const double norm2 = double(q.data()[2 * i]) * q.data()[2 * i] +
                             double(q.data()[2 * i + 1]) * q.data()[2 * i + 1];
        expected += std::pow(zeta[i], (double(m) - n) / 8.0) * norm2 *
                    std::cos((double(m) - n) * std::pow(100.0, -2.0 * i / 8.0));
    }
    CHECK(self(m, n) == doctest::Approx(expected).epsilon(1e-4));
}

TEST_CASE("2-D rope: half the pairs turn by the row, half by the column") {
    for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
        const RopeOptions full = testing::rope_options(pairing, 10, 8, 100.0);
        RopeTable axis(rope_2d_axis_options(full));  // r = 4 per axis: φ_j = 100^(−2j/4)
        Rng rng(3);
        const Tensor x = random_tensor({3, 4, 10}, rng);
        const std::vector<size_t> rows{0, 2, 2, 7}, cols{5, 0, 3, 1};
        const Tensor y = rope_2d(x, axis, rows, cols);
        for (size_t b = 0; b < 3; ++b)
            for (size_t t = 0; t < 4; ++t) {
                const Real* xr = x.data() + (b * 4 + t) * 10;
                const Real* yr = y.data() + (b * 4 + t) * 10;
                for (size_t i = 0; i < 4; ++i) {
                    const size_t lo = pairing == RopePairing::interleaved ? 2 * i : i;
                    const size_t hi = pairing == RopePairing::interleaved ? 2 * i + 1 : i + 4;
                    const double where = i < 2 ? double(rows[t]) : double(cols[t]);
                    const double angle = where * std::pow(100.0, -2.0 * double(i % 2) / 4.0);
                    CHECK(yr[lo] ==
                          doctest::Approx(std::cos(angle) * xr[lo] - std::sin(angle) * xr[hi])
                              .epsilon(1e-5));
                    CHECK(yr[hi] ==
                          doctest::Approx(std::sin(angle) * xr[lo] + std::cos(angle) * xr[hi])
                              .epsilon(1e-5));
                }
                CHECK(yr[8] == xr[8]);
            }
    }
    CHECK_THROWS_WITH_AS(rope_2d_axis_options(testing::rope_options(RopePairing::half, 6, 6)),
                         doctest::Contains("multiple of 4"), std::invalid_argument);
}

TEST_CASE("2-D rope: scores depend only on (Δrow, Δcol)") {
    RopeTable axis(rope_2d_axis_options(testing::rope_options(RopePairing::interleaved, 16, 16)));
    Rng rng(4);
    const Tensor q = random_tensor({1, 1, 16}, rng), k = random_tensor({1, 1, 16}, rng);
    auto score = [&](size_t r1, size_t c1, size_t r2, size_t c2) {
        const Tensor a = rope_2d(q, axis, {r1}, {c1}), b = rope_2d(k, axis, {r2}, {c2});
        double s = 0;
        for (size_t d = 0; d < 16; ++d) s += double(a.data()[d]) * b.data()[d];
        return s;
    };
    const double base = score(3, 1, 5, 4);                              // Δ = (−2, −3)
    CHECK(score(10, 1, 12, 4) == doctest::Approx(base).epsilon(1e-4));  // shift rows
    CHECK(score(3, 20, 5, 23) == doctest::Approx(base).epsilon(1e-4));  // shift columns
    CHECK(score(7, 9, 9, 12) == doctest::Approx(base).epsilon(1e-4));   // both
    // and it does depend on each axis: swapping the offsets changes the score
    CHECK(std::abs(score(3, 1, 6, 3) - base) > 1e-3);  // Δ = (−3, −2)
    CHECK(std::abs(score(3, 1, 5, 5) - base) > 1e-3);  // Δ = (−2, −4)
}

TEST_CASE("learned frequencies: initialised at base^(−2i/r), equal to RoPE there, a parameter") {
    PositionConfig c;
    c.learned_frequencies = true;
    c.base = 500.0;
    c.rotary_fraction = 0.5;  // D = 16 → r = 8, h = 4
    Rng init(5);
    auto scheme = make_position_scheme(c, 32, 2, init);
    auto* learned = dynamic_cast<LearnedFrequencyRope*>(scheme.get());
    REQUIRE(learned != nullptr);
    const std::vector<Tensor> params = scheme->parameters();
    REQUIRE(params.size() == 1);
    CHECK(params[0].name() == "roformer.embeddings.rotary_frequencies");
    CHECK(params[0].requires_grad());
    REQUIRE(params[0].numel() == 4);
    for (size_t i = 0; i < 4; ++i)
        CHECK(params[0].data()[i] == doctest::Approx(std::pow(500.0, -2.0 * i / 8.0)));
    RopeTable fixed(rope_options_from_config(c, 16));
    Rng rng(6);
    Tensor q = random_tensor({2, 2, 5, 16}, rng), k = random_tensor({2, 2, 5, 16}, rng), v = q;
    Tensor q2 = q, k2 = k;
    scheme->rotate(q2, k2, v, 2);
    const Tensor expected = rope(q, fixed, 2);
    for (size_t j = 0; j < q.numel(); ++j)
        CHECK(q2.data()[j] == doctest::Approx(expected.data()[j]).epsilon(1e-5));
    // Moving θ_1 changes only pair 1's dims (interleaved: 2, 3).
    learned->frequencies().data()[1] *= 2;
    Tensor q3 = q, k3 = k;
    scheme->rotate(q3, k3, v, 2);
    for (size_t t = 0; t < 5; ++t)
        for (size_t d = 0; d < 16; ++d) {
            const size_t j = t * 16 + d;
            if (d == 2 || d == 3)
                CHECK(q3.data()[j] != doctest::Approx(expected.data()[j]));
            else
                CHECK(q3.data()[j] == doctest::Approx(expected.data()[j]).epsilon(1e-5));
        }
}

TEST_CASE("yarn with rotate_values: q, k carry the temperature a, v turns by the angles alone") {
    PositionConfig c;
    c.scaling = RopeScaling::yarn;
    c.scaling_factor = 4;  // a = 0.1·ln 4 + 1 ≈ 1.139
    c.original_max_positions = 16;
    c.rotate_values = true;
    Rng init(8), rng(9);
    auto scheme = make_position_scheme(c, 32, 2, init);  // D = 16
    const double a = rope_attention_factor(rope_options_from_config(c, 16));
    REQUIRE(a > 1.1);
    Tensor q = random_tensor({1, 2, 5, 16}, rng), k = random_tensor({1, 2, 5, 16}, rng);
    Tensor v = random_tensor({1, 2, 5, 16}, rng);
    Tensor q2 = q, k2 = k, v2 = v;
    scheme->rotate(q2, k2, v2, 3);
    RopeOptions angles_only = rope_options_from_config(c, 16);
    angles_only.yarn_attention_factor = 1.0;
    RopeTable with_a(rope_options_from_config(c, 16)), without_a(angles_only);
    const Tensor q_expected = rope(q, with_a, 3);
    const Tensor v_expected = rope(v, without_a, 3);
    for (size_t j = 0; j < q.numel(); ++j) {
        CHECK(q2.data()[j] == doctest::Approx(q_expected.data()[j]).epsilon(1e-5));
        CHECK(v2.data()[j] == doctest::Approx(v_expected.data()[j]).epsilon(1e-5));
    }
    // A rotation keeps each row's length: |v2| = |v|, while |q2| = a·|q|.
    for (size_t row = 0; row < 10; ++row) {
        double vv = 0, vv2 = 0, qq = 0, qq2 = 0;
        for (size_t d = 0; d < 16; ++d) {
            const size_t j = row * 16 + d;
            vv += double(v.data()[j]) * v.data()[j];
            vv2 += double(v2.data()[j]) * v2.data()[j];
            qq += double(q.data()[j]) * q.data()[j];
            qq2 += double(q2.data()[j]) * q2.data()[j];
        }
        CHECK(std::sqrt(vv2) == doctest::Approx(std::sqrt(vv)).epsilon(1e-5));
        CHECK(std::sqrt(qq2) == doctest::Approx(a * std::sqrt(qq)).epsilon(1e-5));
    }
}

TEST_CASE("a new scheme that does not opt in is never run by the fused kernel") {
    // It adds a bias to the scores, which the fused kernel would skip; it overrides only that.
    struct BiasedScores : PositionScheme {
        std::string name() const override { return "biased"; }
        Tensor bias_scores(const Tensor& scores) override { return mul_scalar(scores, Real(2)); }
    } scheme;
    RopeOptions o;
    o.head_dim = o.rotary_dims = 4;
    RopeTable dummy(o);  // any table: the answer must reset the pointer
    RopeTable* table = &dummy;
    CHECK_FALSE(scheme.rotation_only(&table));
    CHECK(table == nullptr);
    // The fast kernels run such a scheme's attention through the composed ops: bit for bit.
    ModelConfig model;
    model.hidden = 32;
    model.num_heads = 2;
    Rng init(3), noise(5), unused(6);
    const SelfAttention attention(model, init, "attention");
    Tensor x = Tensor::zeros({1, 5, 32});
    for (size_t j = 0; j < x.numel(); ++j) x.data()[j] = Real(noise.normal());
    const Tensor fast = swappable_ops_for(model, PositionConfig{}, 0)
                             ->self_attention(attention, x, scheme, false, unused);
    const Tensor composed = attention(x, scheme, false, unused);
    for (size_t j = 0; j < x.numel(); ++j) REQUIRE(fast.data()[j] == composed.data()[j]);
}

TEST_CASE("rope variants opt out of the fused kernel; yarn and plain scaling keep it") {
    RopeTable* table = nullptr;
    Rng init(7);
    PositionConfig c;
    c.xpos = true;
    CHECK_FALSE(make_position_scheme(c, 32, 2, init)->rotation_only(&table));
    c = PositionConfig{};
    c.learned_frequencies = true;
    CHECK_FALSE(make_position_scheme(c, 32, 2, init)->rotation_only(&table));
    c = PositionConfig{};
    c.scaling = RopeScaling::dynamic_ntk;
    c.scaling_factor = 2;
    c.original_max_positions = 16;
    CHECK_FALSE(make_position_scheme(c, 32, 2, init)->rotation_only(&table));
    c.scaling = RopeScaling::yarn;
    CHECK(make_position_scheme(c, 32, 2, init)->rotation_only(&table));
    CHECK(table != nullptr);
}

TEST_CASE("rope: explicit position ids equal the naive product at those positions") {
    Rng rng(8);
    const RopeOptions o = rf::testing::rope_options(RopePairing::half, 6, 6, 777.0);
    RopeTable table(o);
    const std::vector<size_t> positions{40, 0, 3, 3, 1000};
    Tensor x = random_tensor({2, 5, 6}, rng);
    Tensor y = rope(x, table, positions);
    for (size_t n = 0; n < 2; ++n)
        for (size_t t = 0; t < 5; ++t) {
            const auto expected =
                matvec(naive_rotation(o, double(positions[t])), x.data() + (n * 5 + t) * 6, 6);
            for (size_t d = 0; d < 6; ++d)
                CHECK(y.data()[(n * 5 + t) * 6 + d] == doctest::Approx(expected[d]).epsilon(1e-5));
        }
    CHECK_THROWS_AS(rope(x, table, std::vector<size_t>{1, 2}), std::invalid_argument);
    CHECK_THROWS_AS(rope(random_tensor({2, 5, 4}, rng), table), std::invalid_argument);
}

// The lab's table knobs, interpolation and NTK scaling, against the naive matrix (which applies
// both by their formulas); tests/lesson/test_rope.cpp checks the paper's RoPE alone.
TEST_CASE("rope: interpolation and NTK scaling equal the naive product (both pairings)") {
    Rng rng(7);
    const size_t B = 2, H = 3, T = 5, D = 8, offset = 11;
    for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
        const RopeOptions o = rf::testing::rope_options(pairing, D, 6, 10000.0, 2.5, 3.0);
        RopeTable table(o);
        Tensor x = random_tensor({B, H, T, D}, rng);
        Tensor y = rope(x, table, offset);
        double worst = 0.0;
        for (size_t n = 0; n < B * H; ++n)
            for (size_t t = 0; t < T; ++t) {
                const auto expected = matvec(naive_rotation(o, double(offset + t)),
                                             x.data() + (n * T + t) * D, D);
                for (size_t d = 0; d < D; ++d)
                    worst = std::max(worst, std::abs(y.data()[(n * T + t) * D + d] - expected[d]));
            }
        CHECK(worst < 2e-6);
        // and they change the angles: the paper's table gives other numbers
        RopeTable plain(rf::testing::rope_options(pairing, D, 6, 10000.0));
        const Tensor paper = rope(x, plain, offset);
        CHECK(std::abs(paper.data()[0] - y.data()[0]) + std::abs(paper.data()[D] - y.data()[D]) >
              1e-4);
        // the relative property holds on the scaled table: <R_m q, R_n k> = <R_{m+s} q, R_{n+s} k>
        Tensor q = random_tensor({1, 1, D}, rng), k = random_tensor({1, 1, D}, rng);
        auto score = [&](size_t m, size_t n) {
            const Tensor a = rope(q, table, m), b = rope(k, table, n);
            double sum = 0.0;
            for (size_t d = 0; d < D; ++d) sum += double(a.data()[d]) * double(b.data()[d]);
            return sum;
        };
        for (size_t s : {1, 250, 1999}) {
            CAPTURE(s);
            CHECK(std::abs(score(5, 300) - score(5 + s, 300 + s)) <
                  1e-4 * (1.0 + std::abs(score(5, 300))));
        }
        // and a row of the table does not depend on the lengths seen before
        RopeTable grown(o), fresh(o);
        grown.reserve(8);
        grown.reserve(3000);
        fresh.reserve(3000);
        CHECK(rf::testing::same_rows(fresh, grown, 3000, o.rotary_dims / 2));
    }
}
