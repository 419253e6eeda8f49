// Tests for linear attention's ops (src/linear/): Performer's FAVOR+ features (favor_features,
// orthogonal_random_features in src/linear/linear_attention.cpp and random_features.cpp): the
// estimate of exp(q·k/√D) is unbiased, the stabiliser cancels inside attention, and the
// projection's blocks are orthogonal with chi-distributed row norms. docs/linear_attention.md §2.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "linear/linear_attention.hpp"
#include "ops/ops.hpp"

using rf::Array;
using rf::Real;
using rf::Shape;
using rf::Tensor;

namespace {

Tensor randn(const Shape& shape, rf::Rng& rng, double scale = 1.0) {
    Tensor t = Tensor::zeros(shape);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = Real(scale * rng.normal());
    return t;
}

}  // namespace

TEST_CASE("favor_features is unbiased: mean φ(q)·φ(k) over draws of W → exp(q·k/√D)") {
    // S independent orthogonal projections; the estimate of each is φ(q)·φ(k), the truth
    // exp(q·k/√D). Pass if |mean − truth| ≤ 4·SE, SE = sample sd/√S (a 4-sigma band, about
    // 6e-5 two-sided for a Gaussian mean). Without the −|x̃|²/2 term every estimate is
    // multiplied by exp((|q̃|² + |k̃|²)/2): that mean must fall outside the same band.
    const size_t D = 8, M = 16, S = 2000;
    rf::Rng master(2024);
    for (int pair = 0; pair < 3; ++pair) {
        CAPTURE(pair);
        Tensor x = randn({2, D}, master, 0.3 + 0.2 * pair);  // row 0 = q, row 1 = k
        if (pair == 1)                                       // make q·k clearly negative
            for (size_t d = 0; d < D; ++d)
                x.data()[D + d] = -x.data()[d] + Real(0.05 * master.normal());
        double qk = 0.0, qq = 0.0, kk = 0.0;
        for (size_t d = 0; d < D; ++d) {
            qk += double(x.data()[d]) * x.data()[D + d];
            qq += double(x.data()[d]) * x.data()[d];
            kk += double(x.data()[D + d]) * x.data()[D + d];
        }
        const double truth = std::exp(qk / std::sqrt(double(D)));
        const double no_norm_term = std::exp((qq + kk) / (2.0 * std::sqrt(double(D))));
        double sum = 0.0, sum_sq = 0.0;
        for (size_t s = 0; s < S; ++s) {
            rf::Rng rng(master.next_u64());
            const Tensor W = rf::orthogonal_random_features(M, D, rng);
            Tensor phi = rf::favor_features(x, W, true, false);
            double estimate = 0.0;
            for (size_t j = 0; j < M; ++j) estimate += double(phi.data()[j]) * phi.data()[M + j];
            sum += estimate;
            sum_sq += estimate * estimate;
        }
        const double mean = sum / double(S);
        const double sd = std::sqrt((sum_sq - double(S) * mean * mean) / double(S - 1));
        const double se = sd / std::sqrt(double(S));
        CAPTURE(truth);
        CAPTURE(mean);
        CAPTURE(se);
        CHECK(se < 0.02 * truth);  // enough draws for the test to have power
        CHECK(std::abs(mean - truth) <= 4.0 * se);
        CHECK(std::abs(mean * no_norm_term - truth) > 4.0 * se * no_norm_term);
    }
}

TEST_CASE("favor_features: the stabiliser cancels in attention; the projection gets no gradient") {
    const size_t D = 4, M = 8, T = 5;
    rf::Rng rng(15);
    Tensor W = rf::orthogonal_random_features(M, D, rng);
    Tensor q = randn({2, T, D}, rng, 1.5), k = randn({2, T, D}, rng, 1.5);
    Tensor v = randn({2, T, 3}, rng);
    // stabilised features differ from the plain ones by e^{−c}: queries per row, keys per slice
    Tensor qs = rf::favor_features(q, W, true), qp = rf::favor_features(q, W, true, false);
    Tensor ks = rf::favor_features(k, W, false), kp = rf::favor_features(k, W, false, false);
    for (size_t r = 0; r < 2 * T; ++r) {
        // c_t = max_j W_j·x̃_t, so the row's largest feature is exp(−|x̃_t|²/2)/√M
        double largest = 0.0, sq = 0.0;
        for (size_t j = 0; j < M; ++j) largest = std::max(largest, double(qs.data()[r * M + j]));
        for (size_t d = 0; d < D; ++d) sq += double(q.data()[r * D + d]) * q.data()[r * D + d];
        const double half_sq = sq / (2.0 * std::sqrt(double(D)));  // |x̃|²/2, x̃ = x·D^(−1/4)
        CHECK(largest == doctest::Approx(std::exp(-half_sq) / std::sqrt(double(M))).epsilon(1e-5));
        for (size_t j = 1; j < M; ++j)  // a per-row factor: ratios within the row preserved
            CHECK(qs.data()[r * M + j] / qs.data()[r * M] ==
                  doctest::Approx(qp.data()[r * M + j] / qp.data()[r * M]).epsilon(1e-4));
    }
    for (size_t s = 0; s < 2; ++s) {  // one factor for the whole key slice
        const double ratio = double(ks.data()[s * T * M]) / kp.data()[s * T * M];
        for (size_t i = 0; i < T * M; ++i)
            CHECK(double(ks.data()[s * T * M + i]) / kp.data()[s * T * M + i] ==
                  doctest::Approx(ratio).epsilon(1e-4));
    }
    for (bool causal : {false, true}) {
        CAPTURE(causal);
        Tensor a = rf::linear_attention(qs, ks, v, qs, ks, causal);
        Tensor b = rf::linear_attention(qp, kp, v, qp, kp, causal);
        for (size_t i = 0; i < a.numel(); ++i)
            CHECK(a.data()[i] == doctest::Approx(b.data()[i]).epsilon(1e-4).scale(1.0));
    }
    // A projection that requires grad is still a constant: x gets a gradient, W none.
    Tensor Wg = W.detach();
    Wg.set_requires_grad(true);
    Tensor x = randn({2, T, D}, rng);
    x.set_requires_grad(true);
    rf::sum(rf::favor_features(x, Wg, true)).backward();
    CHECK(x.has_grad());
    CHECK_FALSE(Wg.has_grad());
}

TEST_CASE("orthogonal_random_features (favor_features): orthogonal blocks, chi norms, seeds") {
    const size_t M = 10, D = 4;  // blocks: rows 0–3, 4–7, 8–9
    rf::Rng rng(16);
    Tensor W = rf::orthogonal_random_features(M, D, rng);
    REQUIRE(W.shape() == Shape{M, D});
    CHECK_FALSE(W.requires_grad());
    const auto dot = [&](const Tensor& w, size_t i, size_t j) {
        double total = 0.0;
        for (size_t d = 0; d < D; ++d) total += double(w.data()[i * D + d]) * w.data()[j * D + d];
        return total;
    };
    double cross_block = 0.0;
    for (size_t i = 0; i < M; ++i)
        for (size_t j = i + 1; j < M; ++j) {
            const double cosine = dot(W, i, j) / std::sqrt(dot(W, i, i) * dot(W, j, j));
            if (i / D == j / D)
                CHECK(std::abs(cosine) <= 1e-6);
            else
                cross_block = std::max(cross_block, std::abs(cosine));
        }
    CHECK(cross_block > 1e-2);  // blocks are independent, not one orthogonal family

    rf::Rng same(16), other(17);
    Tensor again = rf::orthogonal_random_features(M, D, same);
    Tensor different = rf::orthogonal_random_features(M, D, other);
    CHECK(std::equal(W.data(), W.data() + W.numel(), again.data()));
    CHECK_FALSE(std::equal(W.data(), W.data() + W.numel(), different.data()));

    // Squared row norms are chi²(D): mean D, variance 2D. Over R rows the sample mean lies
    // within 4·√(2D/R) of D; the sample variance (sd ≈ √((μ₄ − σ⁴)/R), μ₄ = 12D(D+4)) near 2D.
    const size_t R = 4000;
    Tensor many = rf::orthogonal_random_features(R, D, rng);
    double sum = 0.0, sum_sq = 0.0;
    for (size_t i = 0; i < R; ++i) {
        const double n2 = dot(many, i, i);
        sum += n2;
        sum_sq += n2 * n2;
    }
    const double mean = sum / double(R), var = (sum_sq - double(R) * mean * mean) / double(R - 1);
    CHECK(std::abs(mean - double(D)) <= 4.0 * std::sqrt(2.0 * double(D) / double(R)));
    const double var_sd = std::sqrt((12.0 * D * (D + 4.0) - 4.0 * D * D) / double(R));
    CHECK(std::abs(var - 2.0 * double(D)) <= 4.0 * var_sd);
}
