// Gradient checks (Real = double) for src/ops/elementwise.cpp (dropout). The lambda re-seeds its Rng, so
// every call draws the same mask (the checker's perturbed evaluations run under NoGradGuard,
// which does not change dropout: only `training` does).

#include "tensor/xtensor_headers.hpp"  // xt::ones

#include "gradcheck/gradcheck.hpp"

using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

namespace {

Tensor dropout_in_grad_mode(const Tensor& x, double p, uint64_t seed) {
    rf::Rng rng(seed);
    return rf::dropout(x, p, true, rng);
}

}  // namespace

TEST_CASE("dropout gradient in training mode (same seed → same mask)") {
    rf::Rng rng(1);
    gradcheck([](const Inputs& in) { return dropout_in_grad_mode(in[0], 0.3, 99); },
              {randn({6, 7}, rng)});
}

TEST_CASE("dropout gradient: some elements dropped, kept ones scaled by 1/(1-p)") {
    Tensor x = Tensor::full({200}, 1.0, true);
    rf::Rng rng(5);
    Tensor y = rf::dropout(x, 0.5, true, rng);
    y.backward(rf::Array(xt::ones<double>({200})));
    size_t dropped = 0;
    for (size_t i = 0; i < 200; ++i) {
        CHECK(x.grad().data()[i] == y.data()[i]);  // dy = 1, so dx = mask = y / x
        const bool ok = y.data()[i] == 0.0 || y.data()[i] == doctest::Approx(2.0);
        CHECK(ok);
        dropped += y.data()[i] == 0.0;
    }
    CHECK(dropped > 0);
    CHECK(dropped < 200);
}
