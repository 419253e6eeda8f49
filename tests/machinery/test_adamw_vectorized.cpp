// The fast path's AdamW (adamw_step_vectorized, src/fast/adamw_vectorized.cpp) against the
// readable one (AdamW::step, src/nn/adamw.cpp) over several updates, on every
// instruction set of the kernels this CPU runs: weights and both moments to float rounding,
// decay only where flagged, parameters without a gradient untouched; and the execution plan
// choosing between them (model.fused).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "model/swappable_ops.hpp"
#include "fast/adamw_vectorized.hpp"
#include "nn/adamw.hpp"
#include "simd_isas.hpp"
#include "tensor/random.hpp"

using namespace rf;

namespace {

// Parameters of awkward sizes (lanes and tails; one over the 8192-element chunk), one decaying,
// one not, and one that never gets a gradient.
std::vector<NamedParameter> make_params(uint64_t seed) {
    Rng rng(seed);
    std::vector<NamedParameter> params;
    const std::vector<Shape> shapes{{37, 5}, {19}, {3, 4}, {8200}};
    for (size_t i = 0; i < shapes.size(); ++i) {
        Tensor t = Tensor::zeros(shapes[i], true);
        for (size_t j = 0; j < t.numel(); ++j) t.data()[j] = Real(rng.normal());
        t.set_name("p" + std::to_string(i));
        params.push_back({t, shapes[i].size() == 2});
    }
    return params;
}

// Gradients at update t, the same for both optimizers; parameter 2 has none.
void set_grads(std::vector<NamedParameter>& params, size_t t) {
    Rng rng(100 + t);
    for (size_t i = 0; i < params.size(); ++i) {
        if (i == 2) continue;
        Array& g = params[i].tensor.grad();
        for (size_t j = 0; j < g.size(); ++j) g.data()[j] = Real(rng.normal() * (i + 1) * 0.1);
    }
}

// max |a − b| over the tensor, relative to its largest |b| (a value near 0 after cancellation,
// m = β1·m + (1−β1)·g, carries the rounding of its terms, not of itself)
double worst_scaled(const Real* a, const Real* b, size_t n) {
    double worst = 0, scale = 0;
    for (size_t j = 0; j < n; ++j) {
        worst = std::max(worst, std::abs(double(a[j]) - double(b[j])));
        scale = std::max(scale, std::abs(double(b[j])));
    }
    return scale > 0 ? worst / scale : worst;  // all zero (no gradient yet): the gap itself
}

}  // namespace

TEST_CASE("adamw_vectorized equals AdamW::step to float rounding over 5 updates, every ISA") {
    testing::for_each_isa([](SimdIsa) {
        std::vector<NamedParameter> fast = make_params(3), readable = make_params(3);
        const AdamWOptions options{0.9, 0.98, 1e-6, 0.1};
        AdamW opt_fast(fast, options), opt_readable(readable, options);
        const Array untouched = fast[2].tensor.value();
        for (size_t t = 1; t <= 5; ++t) {
            set_grads(fast, t);
            set_grads(readable, t);
            adamw_step_vectorized(opt_fast, 1e-2 * double(t));
            opt_readable.step(1e-2 * double(t));
        }
        CHECK(opt_fast.steps_taken() == 5);
        const AdamWState sf = opt_fast.export_state(), sr = opt_readable.export_state();
        for (size_t i = 0; i < fast.size(); ++i) {
            CAPTURE(i);
            const size_t n = fast[i].tensor.numel();
            // a few float ulps of each tensor's scale (float eps ≈ 6e-8)
            CHECK(worst_scaled(fast[i].tensor.data(), readable[i].tensor.data(), n) < 1e-6);
            CHECK(worst_scaled(sf.params[i].m.data(), sr.params[i].m.data(), n) < 1e-6);
            CHECK(worst_scaled(sf.params[i].v.data(), sr.params[i].v.data(), n) < 1e-6);
        }
        for (size_t j = 0; j < untouched.size(); ++j)  // no gradient: no decay, no update
            CHECK(fast[2].tensor.data()[j] == untouched.data()[j]);
        // the updates did move the weights (the comparison above is not vacuous)
        CHECK(std::abs(double(fast[0].tensor.data()[0]) -
                       double(make_params(3)[0].tensor.data()[0])) > 1e-3);
    });
}

TEST_CASE("adamw_vectorized: same ISA, same inputs → the same bits") {
    testing::for_each_isa([](SimdIsa) {
        std::vector<NamedParameter> a = make_params(4), b = make_params(4);
        AdamW opt_a(a, {}), opt_b(b, {});
        for (size_t t = 1; t <= 3; ++t) {
            set_grads(a, t);
            set_grads(b, t);
            adamw_step_vectorized(opt_a, 1e-2);
            adamw_step_vectorized(opt_b, 1e-2);
        }
        for (size_t i = 0; i < a.size(); ++i)
            for (size_t j = 0; j < a[i].tensor.numel(); ++j)
                REQUIRE(a[i].tensor.data()[j] == b[i].tensor.data()[j]);
    });
}

TEST_CASE("the model's swappable ops run the vectorised AdamW with model.fused, the readable one without") {
    FastConfig fused, composed;
    composed.fused = false;
    // The composed path hands the model no ops: it calls AdamW::step itself.
    CHECK(swappable_ops_for(ModelConfig{}, PositionConfig{}, 0, composed) == nullptr);
    ModelConfig config;
    config.vocab_size = 8;
    // Each model's update is bit-identical to calling its AdamW step directly.
    for (const bool vectorized : {false, true}) {
        CAPTURE(vectorized);
        std::vector<NamedParameter> via_kernels = make_params(5), direct = make_params(5);
        AdamW opt_kernels(via_kernels, {}), opt_direct(direct, {});
        set_grads(via_kernels, 1);
        set_grads(direct, 1);
        const RoFormer model =
            assembled_model(config, PositionConfig{}, 0, vectorized ? fused : composed);
        model.optimizer_step(opt_kernels, 1e-2);
        if (vectorized)
            adamw_step_vectorized(opt_direct, 1e-2);
        else
            opt_direct.step(1e-2);
        for (size_t i = 0; i < direct.size(); ++i)
            for (size_t j = 0; j < direct[i].tensor.numel(); ++j)
                REQUIRE(via_kernels[i].tensor.data()[j] == direct[i].tensor.data()[j]);
    }
}
