// Forward values (float32) of the ops in matmul.cpp, softmax.cpp (causal_softmax included),
// layernorm.cpp, embedding.cpp and elementwise.cpp's dropout, against cases worked out by hand and against
// naive reference loops; plus
// the error messages for bad shapes, targets and ids.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/ops.hpp"

using rf::Real;
using rf::Shape;
using rf::Tensor;

namespace {

Tensor from_values(const Shape& shape, const std::vector<Real>& values) {
    Tensor t = Tensor::zeros(shape);
    REQUIRE(t.numel() == values.size());
    for (size_t i = 0; i < values.size(); ++i) t.data()[i] = values[i];
    return t;
}

Tensor randn(const Shape& shape, rf::Rng& rng, double scale) {
    Tensor t = Tensor::zeros(shape);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = Real(scale * rng.normal());
    return t;
}

Tensor uniform(const Shape& shape, rf::Rng& rng) {
    Tensor t = Tensor::zeros(shape);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = Real(2.0 * rng.uniform() - 1.0);
    return t;
}

// C[b] = op(A[b])·op(B[b or shared]) by the textbook triple loop, in double.
std::vector<double> naive_matmul(const Tensor& a, const Tensor& b, size_t batch, size_t M, size_t K,
                                 size_t N, bool ta, bool tb, bool shared_b) {
    std::vector<double> c(batch * M * N, 0.0);
    for (size_t s = 0; s < batch; ++s) {
        const Real* A = a.data() + s * M * K;
        const Real* B = b.data() + (shared_b ? 0 : s * K * N);
        for (size_t i = 0; i < M; ++i)
            for (size_t j = 0; j < N; ++j) {
                double total = 0.0;
                for (size_t k = 0; k < K; ++k)
                    total += double(ta ? A[k * M + i] : A[i * K + k]) *
                             double(tb ? B[j * K + k] : B[k * N + j]);
                c[(s * M + i) * N + j] = total;
            }
    }
    return c;
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) { return e.what(); }
    return "(no exception)";
}

}  // namespace

// ---- softmax ------------------------------------------------------------------------------
TEST_CASE("softmax of [1, 2, 3] is e^i / (e + e² + e³)") {
    const Tensor y = rf::softmax(from_values({3}, {1, 2, 3}));
    CHECK(y.data()[0] == doctest::Approx(0.09003057));
    CHECK(y.data()[1] == doctest::Approx(0.24472847));
    CHECK(y.data()[2] == doctest::Approx(0.66524096));
}

TEST_CASE("softmax and log_softmax of [1000, 1001] are finite and exact (max-subtracted)") {
    const Tensor x = from_values({2, 2}, {1000, 1001, -1001, -1000});
    const Tensor y = rf::softmax(x), l = rf::log_softmax(x);
    for (size_t row = 0; row < 2; ++row) {
        CHECK(y.data()[2 * row] == doctest::Approx(1.0 / (1.0 + M_E)));      // 0.26894142
        CHECK(y.data()[2 * row + 1] == doctest::Approx(M_E / (1.0 + M_E)));  // 0.73105858
        CHECK(l.data()[2 * row] == doctest::Approx(-std::log1p(M_E)));       // −1.31326169
        CHECK(l.data()[2 * row + 1] == doctest::Approx(1.0 - std::log1p(M_E)));
    }
}

TEST_CASE("causal_softmax: rows sum to 1, the future is exactly 0, the past is a softmax") {
    const size_t T = 5;
    rf::Rng rng(17);
    Tensor x = randn({2, 3, T, T}, rng, 3.0);
    for (size_t j = 0; j < T; ++j) x.data()[T * 3 + j] += Real(80);  // one row of large values
    Tensor y = rf::causal_softmax(x);
    REQUIRE(y.shape() == x.shape());
    for (size_t r = 0; r < 6 * T; ++r) {
        const size_t i = r % T;
        const Real* xr = x.data() + r * T;
        const Real* yr = y.data() + r * T;
        double m = xr[0], total = 0.0, probabilities = 0.0;  // naive, in double, over j ≤ i
        for (size_t j = 0; j <= i; ++j) m = std::max(m, double(xr[j]));
        for (size_t j = 0; j <= i; ++j) total += std::exp(double(xr[j]) - m);
        for (size_t j = 0; j < T; ++j) {
            if (j > i) {
                CHECK(yr[j] == Real(0));
            } else {
                CHECK(yr[j] == doctest::Approx(std::exp(double(xr[j]) - m) / total).epsilon(1e-5));
                probabilities += yr[j];
            }
        }
        CHECK(probabilities == doctest::Approx(1.0).epsilon(1e-6));
    }
    // masked entries get no gradient
    Tensor xs = x.detach();
    xs.set_requires_grad(true);
    rf::Array upstream = rf::Array::from_shape(xs.value().shape());
    for (auto& g : upstream) g = Real(rng.normal());
    rf::causal_softmax(xs).backward(upstream);
    for (size_t r = 0; r < 6 * T; ++r)
        for (size_t j = r % T + 1; j < T; ++j) CHECK(xs.grad().data()[r * T + j] == Real(0));
}

// ---- cross_entropy ------------------------------------------------------------------------
TEST_CASE("cross_entropy on a 2×3 example with one ignored row") {
    // Row 0: logits [1,2,3], target 0 → −log(e/(e+e²+e³)) = log(1 + e + e²) = 2.40760596.
    // Row 1: ignored. Mean over the one counted row.
    Tensor logits = from_values({2, 3}, {1, 2, 3, 1, 1, 1});
    logits.set_requires_grad(true);
    Tensor loss = rf::cross_entropy(logits, {0, -100});
    CHECK(loss.item() == doctest::Approx(2.40760596));
    loss.backward();
    // d/dlogits of row 0 = softmax − onehot; row 1 gets nothing.
    const Real expected[6] = {Real(0.09003057 - 1), Real(0.24472847), Real(0.66524096), 0, 0, 0};
    for (size_t i = 0; i < 6; ++i) CHECK(logits.grad().data()[i] == doctest::Approx(expected[i]));
    // Both rows counted: (log(1 + e + e²) + log 3) / 2 = 1.75310913.
    CHECK(rf::cross_entropy(logits, {0, 1}).item() == doctest::Approx(1.75310913));
}

TEST_CASE("cross_entropy rejects an out-of-range target, naming the row and the value") {
    const Tensor logits = Tensor::zeros({3, 4});
    const std::string msg = message_of([&] { rf::cross_entropy(logits, {0, 7, 1}); });
    CHECK(msg.find("row 1") != std::string::npos);
    CHECK(msg.find("7") != std::string::npos);
    CHECK_THROWS_AS(rf::cross_entropy(logits, {0, -1, 1}), std::invalid_argument);
    CHECK_THROWS_AS(rf::cross_entropy(logits, {0, 1}), std::invalid_argument);  // count
}

// ---- layer_norm ---------------------------------------------------------------------------
TEST_CASE("layer_norm of [1, 2, 3, 4] computed by hand") {
    // mean 2.5, var (2.25 + 0.25 + 0.25 + 2.25)/4 = 1.25, rstd = 1/√1.25 = 0.89442719
    // xhat = [−1.5, −0.5, 0.5, 1.5]·rstd = [−1.34164079, −0.4472136, 0.4472136, 1.34164079]
    // γ = [1, 2, 1, 0.5], β = [0, 1, 0, −1] → y = [−1.34164079, 0.10557281, 0.4472136, −0.32917961]
    const Tensor x = from_values({2, 4}, {1, 2, 3, 4, 11, 12, 13, 14});  // row 2 = row 1 + 10
    const Tensor y =
        rf::layer_norm(x, from_values({4}, {1, 2, 1, 0.5}), from_values({4}, {0, 1, 0, -1}));
    const double expected[4] = {-1.34164079, 0.10557281, 0.4472136, -0.32917961};
    for (size_t row = 0; row < 2; ++row)
        for (size_t j = 0; j < 4; ++j)
            CHECK(y.data()[row * 4 + j] == doctest::Approx(expected[j]).epsilon(1e-5));
}

// ---- matmul / linear ----------------------------------------------------------------------
TEST_CASE("matmul matches a naive triple loop for every transpose-flag combination") {
    rf::Rng rng(7);
    for (int trial = 0; trial < 3; ++trial) {
        const size_t M = 1 + rng.below(9), K = 1 + rng.below(9), N = 1 + rng.below(9);
        const size_t batch = 1 + rng.below(4);
        for (bool ta : {false, true})
            for (bool tb : {false, true})
                for (int layout = 0; layout < 3; ++layout) {  // 2-D, batched, batched × shared
                    CAPTURE(M);
                    CAPTURE(K);
                    CAPTURE(N);
                    CAPTURE(ta);
                    CAPTURE(tb);
                    CAPTURE(layout);
                    const size_t nb = layout == 0 ? 1 : batch;
                    Shape sa = {ta ? K : M, ta ? M : K}, sb = {tb ? N : K, tb ? K : N};
                    if (layout > 0) sa.insert(sa.begin(), nb);
                    if (layout == 1) sb.insert(sb.begin(), nb);
                    const Tensor a = uniform(sa, rng), b = uniform(sb, rng);
                    const Tensor c = rf::matmul(a, b, ta, tb);
                    Shape expected_shape = {M, N};
                    if (layout > 0) expected_shape.insert(expected_shape.begin(), nb);
                    REQUIRE(c.shape() == expected_shape);
                    const auto ref = naive_matmul(a, b, nb, M, K, N, ta, tb, layout == 2);
                    for (size_t i = 0; i < ref.size(); ++i)
                        CHECK(c.data()[i] == doctest::Approx(ref[i]).epsilon(1e-5));
                }
    }
}

TEST_CASE("matmul with an empty inner dimension is all zeros, with empty rows is empty") {
    const Tensor c = rf::matmul(Tensor::full({2, 0}, Real(1)), Tensor::full({0, 3}, Real(1)));
    REQUIRE(c.shape() == Shape{2, 3});
    for (size_t i = 0; i < 6; ++i) CHECK(c.data()[i] == Real(0));
    CHECK(rf::matmul(Tensor::zeros({2, 0, 4}), Tensor::zeros({4, 3})).shape() == Shape{2, 0, 3});
    CHECK(rf::linear(Tensor::zeros({0, 4}), Tensor::zeros({3, 4}), Tensor::zeros({3})).shape() ==
          Shape{0, 3});
}

TEST_CASE("linear matches x·Wᵀ + b by hand loops") {
    rf::Rng rng(8);
    const Tensor x = uniform({2, 3, 5}, rng), w = uniform({4, 5}, rng), b = uniform({4}, rng);
    const Tensor y = rf::linear(x, w, b), y_nobias = rf::linear(x, w, Tensor());
    REQUIRE(y.shape() == Shape{2, 3, 4});
    for (size_t r = 0; r < 6; ++r)
        for (size_t o = 0; o < 4; ++o) {
            double total = 0.0;
            for (size_t i = 0; i < 5; ++i)
                total += double(x.data()[r * 5 + i]) * w.data()[o * 5 + i];
            CHECK(y_nobias.data()[r * 4 + o] == doctest::Approx(total).epsilon(1e-5));
            CHECK(y.data()[r * 4 + o] == doctest::Approx(total + b.data()[o]).epsilon(1e-5));
        }
}

TEST_CASE("matmul and linear reject mismatched shapes, naming both") {
    const Tensor a = Tensor::zeros({2, 3}), b = Tensor::zeros({4, 5});
    const std::string msg = message_of([&] { rf::matmul(a, b); });
    CHECK(msg.find("[2, 3]") != std::string::npos);
    CHECK(msg.find("[4, 5]") != std::string::npos);
    CHECK_THROWS_AS(rf::matmul(Tensor::zeros({2, 3, 4}), Tensor::zeros({3, 4, 5})),
                    std::invalid_argument);  // batch dims differ
    CHECK_THROWS_AS(rf::matmul(Tensor::zeros({3}), Tensor::zeros({3, 2})), std::invalid_argument);
    CHECK_THROWS_AS(rf::linear(a, Tensor::zeros({4, 2}), Tensor()), std::invalid_argument);
    CHECK_THROWS_AS(rf::linear(a, Tensor::zeros({4, 3}), Tensor::zeros({3})),
                    std::invalid_argument);
}

// ---- embedding ----------------------------------------------------------------------------
TEST_CASE("embedding gathers rows and rejects out-of-range ids") {
    const Tensor w = from_values({3, 2}, {0, 1, 10, 11, 20, 21});
    const Tensor out = rf::embedding(w, {2, 0, 2, 1}, {2, 2});
    REQUIRE(out.shape() == Shape{2, 2, 2});
    const Real expected[8] = {20, 21, 0, 1, 20, 21, 10, 11};
    for (size_t i = 0; i < 8; ++i) CHECK(out.data()[i] == expected[i]);
    const std::string msg = message_of([&] { rf::embedding(w, {0, 3}, {2}); });
    CHECK(msg.find("3") != std::string::npos);
    CHECK_THROWS_AS(rf::embedding(w, {0, -1}, {2}), std::invalid_argument);
    CHECK_THROWS_AS(rf::embedding(w, {0, 1}, {3}), std::invalid_argument);
}

// ---- dropout ------------------------------------------------------------------------------
TEST_CASE("dropout keeps about 1 − p of the elements and scales them by 1/(1 − p)") {
    const size_t n = 200000;
    const Real p = Real(0.25);
    Tensor x = Tensor::full({400, n / 400}, Real(2), true);
    rf::Rng rng(11);
    const Tensor y = rf::dropout(x, p, true, rng);
    size_t kept = 0;
    bool values_ok = true;
    for (size_t i = 0; i < n; ++i) {
        if (y.data()[i] != Real(0)) {
            ++kept;
            values_ok &= std::abs(y.data()[i] - Real(2) / (Real(1) - p)) < 1e-6;
        }
    }
    CHECK(values_ok);
    // Binomial: std of the kept fraction = √(p(1−p)/n) ≈ 0.001; allow 5σ.
    const double kept_fraction = double(kept) / double(n);
    CAPTURE(kept_fraction);
    CHECK(std::abs(kept_fraction - 0.75) < 0.005);
    // Same seed, same mask.
    rf::Rng again(11);
    const Tensor y2 = rf::dropout(x, p, true, again);
    bool same = true;
    for (size_t i = 0; i < n; ++i) same &= y.data()[i] == y2.data()[i];
    CHECK(same);
}

TEST_CASE("dropout is the identity (the same tensor) in eval and at p = 0, and only there") {
    Tensor x = Tensor::full({4, 4}, Real(1), true);
    rf::Rng rng(3);
    CHECK(rf::dropout(x, Real(0.5), false, rng).impl() == x.impl());
    CHECK(rf::dropout(x, Real(0), true, rng).impl() == x.impl());
    {
        // Grad mode does not decide the mode: training under NoGradGuard still drops.
        rf::NoGradGuard no_grad;
        const Tensor y = rf::dropout(x, Real(0.5), true, rng);
        CHECK(y.impl() != x.impl());
        CHECK(!y.requires_grad());
    }
    CHECK_THROWS_AS(rf::dropout(x, Real(1), true, rng), std::invalid_argument);
    CHECK_THROWS_AS(rf::dropout(x, Real(-0.1), true, rng), std::invalid_argument);
}
