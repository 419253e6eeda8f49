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
