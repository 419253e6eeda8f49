// Gradient checks (Real = double) for src/ops/layernorm.cpp: dx, dγ and dβ of the fused
// LayerNorm over the last axis, for a 2-D and a 3-D input, with a non-trivial γ and β.
#include "gradcheck/gradcheck.hpp"

using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

TEST_CASE("layer_norm gradient for x, gamma and beta") {
    rf::Rng rng(1);
    SUBCASE("x:[4, 6], eps 1e-5") {
        gradcheck([](const Inputs& in) { return rf::layer_norm(in[0], in[1], in[2], 1e-5); },
                  {randn({4, 6}, rng, 2.0), randn({6}, rng), randn({6}, rng)});
    }
    SUBCASE("x:[2, 3, 5] with an offset, default eps") {
        Tensor x = randn({2, 3, 5}, rng);
        for (size_t i = 0; i < x.numel(); ++i) x.data()[i] += 3.0;
        gradcheck([](const Inputs& in) { return rf::layer_norm(in[0], in[1], in[2]); },
                  {x, randn({5}, rng), randn({5}, rng)});
    }
}

TEST_CASE("layer_norm gradient when only x requires grad") {
    rf::Rng rng(2);
    Tensor gamma = randn({7}, rng, 1.0, false), beta = randn({7}, rng, 1.0, false);
    gradcheck([&](const Inputs& in) { return rf::layer_norm(in[0], gamma, beta, 1e-5); },
              {randn({3, 7}, rng)});
}

TEST_CASE("layer_norm gradient accumulates on fan-out") {
    // x feeds two LayerNorm nodes: both contributions must arrive in x's gradient (dX +=, never
    // dX =), as in a residual block that reads its input twice.
    rf::Rng rng(3);
    Tensor gamma = randn({5}, rng, 1.0, false), beta = randn({5}, rng, 1.0, false);
    gradcheck([&](const Inputs& in) {
        return rf::add(rf::layer_norm(in[0], gamma, beta, 1e-5), rf::layer_norm(in[0], gamma, beta, 1e-5));
    },
              {randn({3, 5}, rng)});
}
