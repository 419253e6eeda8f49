// Gradient checks (Real = double), on every instruction set of the kernels this CPU runs
// (src/fast/simd.hpp), for the fast path's element-wise ops (src/fast/fused.cpp),
// through both their SIMD lanes and their scalar tails (sizes that are not a lane multiple).
#include "fast/fused_ops.hpp"
#include "gradcheck/gradcheck.hpp"
#include "simd_isas.hpp"

using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

TEST_CASE("gradcheck gelu_vectorized: lanes and tail, a wide range") {
    rf::testing::for_each_isa([&](rf::SimdIsa) {
        rf::Rng rng(21);
        gradcheck([](const Inputs& in) { return rf::gelu_vectorized(in[0]); },
                  {randn({5, 7}, rng, 2.5)});
        gradcheck([](const Inputs& in) { return rf::gelu_vectorized(in[0]); },
                  {randn({3}, rng, 4.0)});
    });
}

TEST_CASE("gradcheck add_layer_norm: x, r, γ, β (C = 7: lanes and tail), and x fanning out") {
    rf::testing::for_each_isa([&](rf::SimdIsa) {
        rf::Rng rng(22);
        gradcheck(
            [](const Inputs& in) { return rf::add_layer_norm(in[0], in[1], in[2], in[3], 1e-5); },
            {randn({3, 2, 7}, rng), randn({3, 2, 7}, rng), randn({7}, rng), randn({7}, rng)});
        gradcheck(
            [](const Inputs& in) { return rf::add_layer_norm(in[0], in[0], in[1], in[2], 1e-5); },
            {randn({4, 9}, rng), randn({9}, rng), randn({9}, rng)});
    });
}
