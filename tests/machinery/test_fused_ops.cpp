// The fast path's element-wise ops (src/fast/fused.cpp) against the composed ops they replace:
// values and gradients in float32, over lanes, tails and the multi-threaded chunk loop, on
// every instruction set of the kernels this CPU runs (src/fast/simd.hpp; tests/simd_isas.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fast/fused_ops.hpp"
#include "ops/ops.hpp"
#include "fast/simd.hpp"
#include "simd_isas.hpp"

using namespace rf;

namespace {
Tensor spread(size_t n, double range, uint64_t seed) {
    Rng rng(seed);
    Tensor t = Tensor::zeros({n}, true);
    for (size_t i = 0; i < n; ++i) t.data()[i] = Real(range * rng.normal());
    return t;
}
}  // namespace

TEST_CASE("gelu_vectorized equals gelu: values and gradient (lanes, tail, 2 chunks+), every ISA") {
    testing::for_each_isa([](SimdIsa) {
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
    });
}

TEST_CASE("add_layer_norm equals layer_norm(add(x, r)): values and every gradient, every ISA") {
    testing::for_each_isa([](SimdIsa) {
        for (size_t rows : {size_t(5), size_t(300)}) {  // 300 × 128 rows: the threaded backward
            CAPTURE(rows);
            const size_t C = 128;
            Tensor x = spread(rows * C, 1.0, 1), r = spread(rows * C, 1.0, 2);
            Tensor gamma = spread(C, 1.0, 3), beta = spread(C, 1.0, 4),
                   up = spread(rows * C, 1.0, 5);
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
    });
}

// Every CPU lacks the other architecture's ISAs (neon on x86-64; sse2, avx2, avx512 on arm64),
// so the refusal is exercised everywhere.
TEST_CASE("simd: auto is the widest ISA the CPU has; one it lacks is refused in one line") {
    CHECK(resolve_isa(SimdIsa::automatic) == widest_isa());
    CHECK(cpu_supports(baseline_isa()));
    CHECK(std::string(simd_kernels(baseline_isa()).name).size() > 0);
    CHECK(simd_kernels(baseline_isa()).lanes * sizeof(Real) == 16u);  // SSE2's and NEON's width
#if defined(__x86_64__)
    CHECK(baseline_isa() == SimdIsa::sse2);
#elif defined(__aarch64__)
    CHECK(baseline_isa() == SimdIsa::neon);
    CHECK(widest_isa() == SimdIsa::neon);
#endif
    bool refused_one = false;
    for (SimdIsa isa : {SimdIsa::sse2, SimdIsa::avx2, SimdIsa::avx512, SimdIsa::neon}) {
        if (cpu_supports(isa)) {
            CHECK(resolve_isa(isa) == isa);
            if (isa == SimdIsa::avx2 || isa == SimdIsa::avx512)
                CHECK(simd_kernels(isa).lanes * sizeof(Real) == (isa == SimdIsa::avx2 ? 32u : 64u));
            continue;
        }
        refused_one = true;
        const std::string refusal = "model.isa = " + std::string(enum_name(isa)) +
                                    ": this CPU lacks it (it has " + supported_isas();
        CHECK_THROWS_WITH_AS(resolve_isa(isa), doctest::Contains(refusal.c_str()),
                             std::invalid_argument);
        CHECK_THROWS_AS(set_simd_isa(isa), std::invalid_argument);
    }
    CHECK(refused_one);
    CHECK(simd_isa() == widest_isa());  // the default, when nothing chose another
}

// Same ISA, same inputs → the same bits (run twice, on several threads); and the ISAs agree
// with each other to float rounding.
TEST_CASE("simd: each ISA is deterministic, and the ISAs agree to float rounding") {
    const size_t rows = 300, C = 128;
    Tensor x = reshape(spread(rows * C, 2.0, 7).detach(), {rows, C});
    Tensor r = reshape(spread(rows * C, 1.0, 8).detach(), {rows, C});
    Tensor gamma = spread(C, 1.0, 9).detach(), beta = spread(C, 1.0, 10).detach();
    std::vector<std::vector<Real>> outputs;
    testing::for_each_isa([&](SimdIsa) {
        std::vector<Real> first;
        for (int run = 0; run < 2; ++run) {
            Tensor y = add_layer_norm(gelu_vectorized(x), r, gamma, beta, Real(1e-12));
            std::vector<Real> values(y.data(), y.data() + y.numel());
            if (run == 0)
                first = values;
            else
                CHECK(values == first);
        }
        outputs.push_back(first);
    });
    for (size_t i = 1; i < outputs.size(); ++i) {
        double worst = 0;
        for (size_t j = 0; j < outputs[0].size(); ++j)
            worst = std::max(worst, std::abs(double(outputs[i][j] - outputs[0][j])));
        CHECK(worst < 1e-4);  // y ~ N(0, 1)·γ + β: a few float ulps of the row's scale
    }
}
