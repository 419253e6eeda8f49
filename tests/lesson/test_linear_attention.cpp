// Forward values (float32) of src/linear/linear_attention.cpp and random_features.cpp: linear
// attention against the explicit T×T weight matrix (RoPE on the numerator, eq. 19 of RoFormer);
// causality bit for bit, against causal_softmax too; RoPE weights depending on n − m only; 1 vs
// 2 OpenMP threads bit for bit; the shape errors. FAVOR+ (unbiasedness, the stabiliser, the
// orthogonal random features) is tests/lesson/test_favor_features.cpp; gradients are checked in
// tests/gradcheck/test_linear_attention_grad.cpp.
//
// Legend: B batch, H heads, T tokens, D head size, F feature size, M random features.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/openmp.hpp"
#include "linear/linear_attention.hpp"
#include "ops/ops.hpp"
#include "position/rope.hpp"
#include "rope_options.hpp"

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

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::invalid_argument& e) { return e.what(); }
    return "(no std::invalid_argument)";
}

// The O(T²) definition, in double: per row r, the explicit weights
//   A[m,n] = q_num_m·k_num_n / Σ_{n'} q_den_m·k_den_n'   (n, n' ≤ m when causal)
// and out_m = Σ_n A[m,n] v_n. `scale` receives Σ_n |A[m,n]|·|v_n| per output, the size of
// the terms, which bounds the float rounding of the op.
std::vector<double> naive_linear_attention(const Tensor& qn, const Tensor& kn, const Tensor& v,
                                           const Tensor& qd, const Tensor& kd, bool causal,
                                           std::vector<double>& scale) {
    const size_t T = qn.size(-2), F = qn.size(-1), D = v.size(-1), N = qn.numel() / (T * F);
    std::vector<double> out(N * T * D, 0.0);
    scale.assign(N * T * D, 0.0);
    std::vector<double> A(T * T, 0.0);
    for (size_t r = 0; r < N; ++r) {
        const auto at = [&](const Tensor& x, size_t t, size_t f, size_t width) {
            return double(x.data()[(r * T + t) * width + f]);
        };
        for (size_t m = 0; m < T; ++m) {
            const size_t last = causal ? m : T - 1;
            double den = 0.0;
            for (size_t n = 0; n <= last; ++n)
                for (size_t f = 0; f < F; ++f) den += at(qd, m, f, F) * at(kd, n, f, F);
            for (size_t n = 0; n < T; ++n) {
                double num = 0.0;
                for (size_t f = 0; f < F; ++f) num += at(qn, m, f, F) * at(kn, n, f, F);
                A[m * T + n] = n <= last ? num / den : 0.0;
            }
        }
        for (size_t m = 0; m < T; ++m)
            for (size_t d = 0; d < D; ++d)
                for (size_t n = 0; n < T; ++n) {
                    out[(r * T + m) * D + d] += A[m * T + n] * at(v, n, d, D);
                    scale[(r * T + m) * D + d] += std::abs(A[m * T + n] * at(v, n, d, D));
                }
    }
    return out;
}

// Elements [start, start + count) of a and b are identical bit for bit.
bool same_prefix(const Tensor& a, const Tensor& b, size_t start, size_t count) {
    return std::memcmp(a.data() + start, b.data() + start, count * sizeof(Real)) == 0;
}

// softmax attention with 1/√D scaling; causal masks the future through causal_softmax
Tensor softmax_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
    Tensor scores =
        rf::mul_scalar(rf::matmul(q, k, false, true), Real(1.0 / std::sqrt(double(q.size(-1)))));
    return rf::matmul(causal ? rf::causal_softmax(scores) : rf::softmax(scores), v);
}

}  // namespace

TEST_CASE("linear_attention equals the explicit T×T weights, RoPE in the numerator") {
    const size_t B = 2, H = 3, T = 7, F = 8, D = 5;
    rf::Rng rng(11);
    rf::RopeTable table(rf::testing::rope_options(rf::RopePairing::interleaved, F, F, 100.0));
    Tensor qf = rf::elu_plus_one(randn({B, H, T, F}, rng));
    Tensor kf = rf::elu_plus_one(randn({B, H, T, F}, rng));
    Tensor v = randn({B, H, T, D}, rng);
    Tensor qn = rf::rope(qf, table), kn = rf::rope(kf, table);
    for (bool causal : {false, true}) {
        CAPTURE(causal);
        std::vector<double> scale;
        const std::vector<double> ref = naive_linear_attention(qn, kn, v, qf, kf, causal, scale);
        Tensor out = rf::linear_attention(qn, kn, v, qf, kf, causal);
        REQUIRE(out.shape() == Shape{B, H, T, D});
        size_t bad = 0;
        for (size_t i = 0; i < ref.size(); ++i)
            if (!(std::abs(out.data()[i] - ref[i]) <= 1e-5 * (1.0 + scale[i]))) ++bad;
        CHECK(bad == 0);
    }
    // The last position sees every token either way: causal and bidirectional agree there.
    Tensor bi = rf::linear_attention(qn, kn, v, qf, kf, false);
    Tensor ca = rf::linear_attention(qn, kn, v, qf, kf, true);
    for (size_t r = 0; r < B * H; ++r)
        for (size_t d = 0; d < D; ++d) {
            const size_t i = (r * T + T - 1) * D + d;
            CHECK(ca.data()[i] == doctest::Approx(bi.data()[i]).epsilon(1e-5));
        }
}

TEST_CASE("linear_attention weights sum to 1 only without rotating the numerator") {
    // v = 1: out_m = Σ_n A[m,n]. Unrotated: numerator = denominator, so out = 1. Rotated
    // (eq. 19): the numerator changes, the denominator does not — the sum is no longer 1.
    const size_t T = 6, F = 4;
    rf::Rng rng(12);
    rf::RopeTable table(rf::testing::rope_options(rf::RopePairing::half, F, F, 10.0));
    Tensor qf = rf::elu_plus_one(randn({2, T, F}, rng));
    Tensor kf = rf::elu_plus_one(randn({2, T, F}, rng));
    Tensor ones = Tensor::full({2, T, 1}, Real(1));
    for (bool causal : {false, true}) {
        CAPTURE(causal);
        Tensor plain = rf::linear_attention(qf, kf, ones, qf, kf, causal);
        for (size_t i = 0; i < plain.numel(); ++i)
            CHECK(plain.data()[i] == doctest::Approx(1.0).epsilon(1e-6));
        Tensor rotated =
            rf::linear_attention(rf::rope(qf, table), rf::rope(kf, table), ones, qf, kf, causal);
        double largest = 0.0;  // position 0 of a causal row sees only itself: R_0 = I, sum 1
        for (size_t i = 0; i < rotated.numel(); ++i)
            largest = std::max(largest, std::abs(double(rotated.data()[i]) - 1.0));
        CHECK(largest > 1e-2);
    }
}

TEST_CASE("causal attention never looks ahead: linear_attention and causal_softmax") {
    const size_t T = 6, F = 4, D = 3;
    rf::Rng rng(13);
    rf::RopeTable table(rf::testing::rope_options(rf::RopePairing::interleaved, F, F, 100.0));
    const Tensor q = randn({2, 2, T, F}, rng), k = randn({2, 2, T, F}, rng),
                 v = randn({2, 2, T, D}, rng);
    // linear attention with RoPE on the numerator, φ = elu + 1
    const auto linear = [&](const Tensor& qx, const Tensor& kx, const Tensor& vx, bool causal) {
        Tensor qf = rf::elu_plus_one(qx), kf = rf::elu_plus_one(kx);
        return rf::linear_attention(rf::rope(qf, table), rf::rope(kf, table), vx, qf, kf, causal);
    };
    using Attention = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&, bool)>;
    for (const Attention& attention : {Attention(linear), Attention(softmax_attention)}) {
        for (size_t t = 0; t + 1 < T; ++t) {
            CAPTURE(t);
            // change q, k and v at position t + 1 in every (batch, head) row
            Tensor q2 = q.detach(), k2 = k.detach(), v2 = v.detach();
            for (size_t r = 0; r < 4; ++r) {
                for (size_t f = 0; f < F; ++f) {
                    q2.data()[(r * T + t + 1) * F + f] += Real(0.7);
                    k2.data()[(r * T + t + 1) * F + f] -= Real(0.9);
                }
                for (size_t d = 0; d < D; ++d) v2.data()[(r * T + t + 1) * D + d] += Real(1.3);
            }
            for (bool causal : {true, false}) {
                CAPTURE(causal);
                Tensor before = attention(q, k, v, causal), after = attention(q2, k2, v2, causal);
                bool unchanged = true;  // outputs at positions 0 … t of every row
                for (size_t r = 0; r < 4; ++r)
                    unchanged = unchanged && same_prefix(before, after, r * T * D, (t + 1) * D);
                CHECK(unchanged == causal);
            }
        }
    }
}

TEST_CASE("linear_attention with RoPE: weights depend on n − m only") {
    const size_t T = 5, F = 6, D = 3;
    rf::Rng rng(14);
    rf::RopeTable table(rf::testing::rope_options(rf::RopePairing::interleaved, F, F, 1000.0));
    Tensor qf = rf::elu_plus_one(randn({3, T, F}, rng));
    Tensor kf = rf::elu_plus_one(randn({3, T, F}, rng));
    Tensor v = randn({3, T, D}, rng);
    Tensor q0 = rf::rope(qf, table, 0), k0 = rf::rope(kf, table, 0);
    for (size_t s : {size_t(3), size_t(250)}) {
        CAPTURE(s);
        Tensor qs = rf::rope(qf, table, s), ks = rf::rope(kf, table, s);
        // the numerator weights q_num_m·k_num_n themselves
        for (size_t r = 0; r < 3; ++r)
            for (size_t m = 0; m < T; ++m)
                for (size_t n = 0; n < T; ++n) {
                    double w0 = 0.0, ws = 0.0, size = 0.0;
                    for (size_t f = 0; f < F; ++f) {
                        const size_t im = (r * T + m) * F + f, in = (r * T + n) * F + f;
                        w0 += double(q0.data()[im]) * k0.data()[in];
                        ws += double(qs.data()[im]) * ks.data()[in];
                        size += std::abs(double(qf.data()[im]) * kf.data()[in]);
                    }
                    CHECK(std::abs(w0 - ws) <= 1e-5 * size);
                }
        for (bool causal : {false, true}) {
            CAPTURE(causal);
            Tensor a = rf::linear_attention(q0, k0, v, qf, kf, causal);
            Tensor b = rf::linear_attention(qs, ks, v, qf, kf, causal);
            for (size_t i = 0; i < a.numel(); ++i)
                CHECK(b.data()[i] == doctest::Approx(a.data()[i]).epsilon(1e-4).scale(1.0));
        }
    }
    // Shifting the queries only does change the output: the test above can fail.
    Tensor shifted = rf::linear_attention(rf::rope(qf, table, 3), k0, v, qf, kf, false);
    Tensor a = rf::linear_attention(q0, k0, v, qf, kf, false);
    double largest = 0.0;
    for (size_t i = 0; i < a.numel(); ++i)
        largest = std::max(largest, std::abs(double(a.data()[i]) - shifted.data()[i]));
    CHECK(largest > 1e-2);
}

TEST_CASE("linear attention ops are deterministic: 1 and 2 OpenMP threads agree bit for bit") {
    if (!rf::kOpenMP) {
        MESSAGE("a build without OpenMP runs one thread: no second thread count to compare");
        return;
    }
    // Shapes above every OpenMP threshold; forward values and every gradient compared.
    const size_t N = 16, T = 32, D = 16, M = 16;
    rf::Rng rng(18);
    const Tensor W = rf::orthogonal_random_features(M, D, rng);
    const Tensor q = randn({N, T, D}, rng), k = randn({N, T, D}, rng), v = randn({N, T, D}, rng);
    const Tensor s = randn({8, 64, 64}, rng);
    rf::RopeTable table(rf::testing::rope_options(rf::RopePairing::half, M, M, 10000.0));
    Array upstream = Array::from_shape({N, T, D}), upstream_s = Array::from_shape({8, 64, 64});
    for (auto& g : upstream) g = Real(rng.normal());
    for (auto& g : upstream_s) g = Real(rng.normal());
    const int saved = omp_get_max_threads();
    for (bool causal : {false, true}) {
        CAPTURE(causal);
        std::vector<Tensor> results[2];
        for (int threads : {1, 2}) {
            omp_set_num_threads(threads);
            Tensor qx = q.detach(), kx = k.detach(), vx = v.detach(), sx = s.detach();
            for (Tensor* t : {&qx, &kx, &vx, &sx}) t->set_requires_grad(true);
            Tensor qf = rf::favor_features(qx, W, true), kf = rf::favor_features(kx, W, false);
            Tensor out =
                rf::linear_attention(rf::rope(qf, table), rf::rope(kf, table), vx, qf, kf, causal);
            out.backward(upstream);
            Tensor probs = rf::causal_softmax(sx);
            probs.backward(upstream_s);
            results[threads - 1] = {out,
                                    probs,
                                    Tensor(qx.grad()),
                                    Tensor(kx.grad()),
                                    Tensor(vx.grad()),
                                    Tensor(sx.grad())};
        }
        for (size_t i = 0; i < results[0].size(); ++i) {
            CAPTURE(i);
            CHECK(same_prefix(results[0][i], results[1][i], 0, results[0][i].numel()));
        }
    }
    omp_set_num_threads(saved);
}

TEST_CASE("linear attention ops: shape errors name the op and the shapes") {
    const Tensor f = Tensor::zeros({2, 4, 3}), v = Tensor::zeros({2, 4, 5});
    CHECK(message_of([&] {
              rf::linear_attention(f, Tensor::zeros({2, 4, 2}), v, f, f, false);
          }).find("linear_attention: q_num, k_num, q_den and k_den") != std::string::npos);
    CHECK(message_of([&] {
              rf::linear_attention(f, f, v, f, Tensor::zeros({1, 4, 3}), true);
          }).find("k_den [1, 4, 3]") != std::string::npos);
    CHECK(message_of([&] {
              rf::linear_attention(f, f, Tensor::zeros({2, 3, 5}), f, f, false);
          }).find("linear_attention: v must be [..., T, D]") != std::string::npos);
    CHECK(message_of([&] {
              rf::linear_attention(f, f, Tensor::zeros({4, 5}), f, f, false);
          }).find("v [4, 5]") != std::string::npos);
    const Tensor flat = Tensor::zeros({3});
    CHECK(message_of([&] {
              rf::linear_attention(flat, flat, flat, flat, flat, false);
          }).find("linear_attention: features must be [..., T, F]") != std::string::npos);

    const Tensor W = Tensor::zeros({6, 4});
    CHECK(message_of([&] {
              rf::favor_features(f, W, true);
          }).find("favor_features: x must be [..., T, D]") != std::string::npos);
    CHECK(message_of([&] {
              rf::favor_features(f, Tensor::zeros({3}), false);
          }).find("projection [3]") != std::string::npos);

    CHECK(message_of([&] {
              rf::causal_softmax(Tensor::zeros({2, 3, 4}));
          }).find("causal_softmax: scores must be [..., T, T], got [2, 3, 4]") !=
          std::string::npos);
    rf::Rng rng(1);
    CHECK(message_of([&] {
              rf::orthogonal_random_features(4, 0, rng);
          }).find("orthogonal_random_features: D must be") != std::string::npos);
}
