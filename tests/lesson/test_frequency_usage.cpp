// Stage 5 tests — the RoPE frequency usage of `roformer frequencies`
// (src/model/frequency_usage.hpp): pair products against a brute-force double loop, shares
// that sum to 1 and land on the one pair that carries energy, offset masses that sum to 1.
//
// Legend: T tokens, D head size, r rotary dims, i, j pairs, m, n positions, δ = n − m.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "model/frequency_usage.hpp"
#include "tensor/random.hpp"
#include "tiny_model.hpp"

using namespace rf;

namespace {

std::vector<Real> random_rows(size_t n, Rng& rng) {
    std::vector<Real> v(n);
    for (Real& x : v) x = static_cast<Real>(rng.normal());
    return v;
}

std::vector<int> some_ids(size_t n) {
    std::vector<int> ids(n);
    for (size_t i = 0; i < n; ++i) ids[i] = int(5 + (i * 7) % 35);
    return ids;
}

}  // namespace

TEST_CASE("frequency usage: pair products equal a brute-force sum over (m, n), both masks") {
    const size_t T = 7, D = 8;
    Rng rng(1);
    const std::vector<Real> q = random_rows(T * D, rng), k = random_rows(T * D, rng);
    for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half})
        for (size_t r : {8, 4})
            for (bool causal : {false, true}) {
                std::vector<double> fast(D / 2, 0.0);
                add_pair_products(q.data(), k.data(), T, D, r, pairing, causal, fast.data());
                for (size_t i = 0; i < D / 2; ++i) {
                    // pair i's dims written out here: pairing inside r, then the rest in twos
                    size_t a, b;
                    if (i >= r / 2) {
                        a = r + 2 * (i - r / 2);
                        b = a + 1;
                    } else {
                        a = pairing == RopePairing::interleaved ? 2 * i : i;
                        b = pairing == RopePairing::interleaved ? 2 * i + 1 : i + r / 2;
                    }
                    double slow = 0.0;
                    for (size_t m = 0; m < T; ++m)
                        for (size_t n = 0; n < T; ++n) {
                            if (causal && n > m) continue;
                            slow += std::sqrt(double(q[m * D + a]) * q[m * D + a] +
                                              double(q[m * D + b]) * q[m * D + b]) *
                                    std::sqrt(double(k[n * D + a]) * k[n * D + a] +
                                              double(k[n * D + b]) * k[n * D + b]);
                        }
                    CAPTURE(i);
                    CAPTURE(r);
                    CAPTURE(causal);
                    CHECK(fast[i] == doctest::Approx(slow).epsilon(1e-12));
                }
            }
}

TEST_CASE("frequency usage: energy only in pair j puts the whole share on j") {
    const size_t T = 5, D = 8, j = 2;
    for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
        const std::pair<size_t, size_t> dims = pair_dims(j, D, D, pairing);
        std::vector<Real> q(T * D, 0), k(T * D, 0);
        for (size_t t = 0; t < T; ++t) {
            q[t * D + dims.first] = Real(1.0 + t);
            k[t * D + dims.second] = Real(2.0 - 0.1 * t);
        }
        FrequencyUsage u;
        u.layers = u.heads = 1;
        u.pairs = D / 2;
        u.product_sum.assign(u.pairs, 0.0);
        add_pair_products(q.data(), k.data(), T, D, D, pairing, false, u.product_sum.data());
        double total = 0.0;
        for (size_t i = 0; i < u.pairs; ++i) total += u.share(0, 0, i);
        CHECK(total == doctest::Approx(1.0));
        CHECK(u.share(0, 0, j) == doctest::Approx(1.0));
        for (size_t i = 0; i < u.pairs; ++i)
            if (i != j) CHECK(u.share(0, 0, i) == 0.0);
    }
}

TEST_CASE("frequency usage: the most-attended offset and its mass") {
    FrequencyUsage u;
    u.layers = u.heads = 1;
    u.length = 3;
    u.windows = 2;
    u.offset_sum = {0.5, 4.0, 1.0, 0.3, 0.2};  // δ = −2 … +2, 2 windows × 3 rows = 6
    CHECK(u.top_offset(0, 0).first == -1);
    CHECK(u.top_offset(0, 0).second == doctest::Approx(4.0 / 6.0));
}

TEST_CASE("frequency usage of a tiny model: shares and offset masses sum to 1 per head") {
    for (bool causal : {false, true}) {
        CAPTURE(causal);
        ModelConfig m = testing::tiny_model_config(40, 0.3);
        m.causal = causal;
        PositionConfig p = testing::tiny_position_config();
        p.rope_p = 0.5;  // two of the four pairs turn; the usage is over all four
        RoFormer model = assembled_model(m, p, 4);
        const size_t B = 2, T = 9;
        FrequencyUsage u = empty_frequency_usage(model, T);
        add_frequency_usage(model, some_ids(B * T), B, T, u);
        add_frequency_usage(model, some_ids(B * T), B, T, u);
        CHECK(u.windows == 2 * B);
        REQUIRE(u.pairs == 4);
        for (size_t l = 0; l < u.layers; ++l)
            for (size_t h = 0; h < u.heads; ++h) {
                double share = 0.0, mass = 0.0, ahead = 0.0;
                for (size_t i = 0; i < u.pairs; ++i) share += u.share(l, h, i);
                const double* offsets = u.offset_sum.data() + (l * u.heads + h) * (2 * T - 1);
                for (size_t d = 0; d < 2 * T - 1; ++d) {
                    mass += offsets[d] / double(u.windows * T);
                    if (d > T - 1) ahead += offsets[d];
                }
                CHECK(share == doctest::Approx(1.0).epsilon(1e-12));
                CHECK(mass == doctest::Approx(1.0).epsilon(1e-5));
                if (causal) CHECK(ahead == 0.0);  // a causal head never looks ahead
                const double top = u.top_offset(l, h).second;
                CHECK(top > 0.0);
                CHECK(top <= 1.0);
            }
        FrequencyUsage wrong = empty_frequency_usage(model, T + 1);
        CHECK_THROWS_AS(add_frequency_usage(model, some_ids(B * T), B, T, wrong),
                        std::invalid_argument);
    }
}

TEST_CASE("frequency usage refuses a scheme without RoPE and linear attention") {
    ModelConfig m = testing::tiny_model_config(40);
    RoFormer none = assembled_model(m, testing::tiny_position_config("none"), 4);
    FrequencyUsage u = empty_frequency_usage(none, 6);
    CHECK_THROWS_WITH_AS(add_frequency_usage(none, some_ids(6), 1, 6, u),
                         doctest::Contains("position.scheme = none"), std::invalid_argument);
    m.attention = AttentionKind::linear;
    RoFormer linear = assembled_model(m, testing::tiny_position_config(), 4);
    FrequencyUsage v = empty_frequency_usage(linear, 6);
    CHECK_THROWS_WITH_AS(add_frequency_usage(linear, some_ids(6), 1, 6, v),
                         doctest::Contains("model.attention = linear"), std::invalid_argument);
}
