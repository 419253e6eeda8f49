// The fast path's element-wise ops (src/ops/fused.cpp) against the composed ops they replace:
// values and gradients in float32, over lanes, tails and the multi-threaded chunk loop.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "ops/ops.hpp"

using namespace rf;

namespace {
Tensor spread(size_t n, double range, uint64_t seed) {
    Rng rng(seed);
    Tensor t = Tensor::zeros({n}, true);
    for (size_t i = 0; i < n; ++i) t.data()[i] = Real(range * rng.normal());
    return t;
}
}  // namespace

TEST_CASE("gelu_vectorized equals gelu: values and gradient (lanes, tail, 2 chunks+)") {
    for (size_t n : {size_t(3), size_t(37), size_t(50001)}) {
        CAPTURE(n);
        Tensor x = spread(n, 3.0, n);
        Tensor up = spread(n, 1.0, n + 1);
        Tensor fast = gelu_vectorized(x);
        fast.backward(up.value());
        const Array dfast = x.grad();
        x.zero_grad();
        Tensor plain = gelu(x);
        plain.backward(up.value());
        double worst_y = 0, worst_g = 0;
        for (size_t i = 0; i < n; ++i) {
            worst_y = std::max(worst_y, std::abs(double(fast.data()[i] - plain.data()[i])) /
                                            (1e-6 + std::abs(double(plain.data()[i]))));
            worst_g = std::max(worst_g, std::abs(double(dfast.data()[i] - x.grad().data()[i])) /
                                            (1e-3 + std::abs(double(x.grad().data()[i]))));
        }
        CHECK(worst_y < 1e-4);  // relative, down to gelu's far tail (|y| ~ 1e-6 at x = −5)
        CHECK(worst_g < 1e-4);
    }
}

TEST_CASE("add_layer_norm equals layer_norm(add(x, r)): values and every gradient") {
    for (size_t rows : {size_t(5), size_t(300)}) {  // 300 × 128 rows: the threaded backward
        CAPTURE(rows);
        const size_t C = 128;
        Tensor x = spread(rows * C, 1.0, 1), r = spread(rows * C, 1.0, 2);
        Tensor gamma = spread(C, 1.0, 3), beta = spread(C, 1.0, 4), up = spread(rows * C, 1.0, 5);
        x = reshape(x.detach(), {rows, C}).set_requires_grad(true);
        r = reshape(r.detach(), {rows, C}).set_requires_grad(true);
        up = reshape(up.detach(), {rows, C});
        Tensor fast = add_layer_norm(x, r, gamma, beta, Real(1e-12));
        fast.backward(up.value());
        const Array dx = x.grad(), dr = r.grad(), dg = gamma.grad(), db = beta.grad();
        for (Tensor* t : {&x, &r, &gamma, &beta}) t->zero_grad();
        Tensor plain = layer_norm(add(x, r), gamma, beta, Real(1e-12));
        plain.backward(up.value());
        auto worst = [](const Real* a, const Real* b, size_t n) {
            double w = 0;
            for (size_t i = 0; i < n; ++i)
                w = std::max(w, std::abs(double(a[i] - b[i])) / (1.0 + std::abs(double(b[i]))));
            return w;
        };
        CHECK(worst(fast.data(), plain.data(), rows * C) < 1e-5);
        CHECK(worst(dx.data(), x.grad().data(), rows * C) < 1e-5);
        CHECK(worst(dr.data(), r.grad().data(), rows * C) < 1e-5);
        CHECK(worst(dg.data(), gamma.grad().data(), C) < 1e-4);
        CHECK(worst(db.data(), beta.grad().data(), C) < 1e-4);
    }
}
