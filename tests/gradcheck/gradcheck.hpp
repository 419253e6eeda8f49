// The one gradient checker every op test uses (built against the Real = double library).
//
// For an op f(x_1, …, x_k) → out, pick a fixed random R of out's shape and the scalar
//     L = sum(out ⊙ R).
// Analytic: run f, call out.backward(R) (that is dL/dout = R), read each input's grad.
// Numeric: for EVERY element j of every input, perturb it by ±h and take
//     (L(x + h e_j) − L(x − h e_j)) / 2h
// in double precision. Each element is compared on its own:
//     |analytic − numeric| ≤ atol + rtol · |numeric|.
// Perturbing one element at a time is the point: perturbing a whole tensor at once tests
// only the sum of the gradient and misses wrong-element bugs.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "ops/ops.hpp"
#include "tensor/random.hpp"
#include "tensor/tensor.hpp"

namespace rf::testing {

static_assert(sizeof(Real) == 8, "gradient checks must be built against roformer_core_f64");

struct GradcheckOptions {
    double h = 1e-6;
    double atol = 1e-7;
    double rtol = 1e-5;
};

// A tensor of shape `shape` filled with N(0, scale²) values, requiring grad.
inline Tensor randn(const Shape& shape, Rng& rng, double scale = 1.0, bool requires_grad = true) {
    Tensor t = Tensor::zeros(shape, requires_grad);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = scale * rng.normal();
    return t;
}

// Runs the check; reports every mismatching element (up to a few) through doctest.
// `f` must be deterministic (reseed any dropout rng inside it).
inline void gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                      std::vector<Tensor> inputs, GradcheckOptions opt = {}, uint64_t seed = 1234) {
    Tensor out = f(inputs);
    Rng rng(seed);
    Array R = Array::from_shape(out.value().shape());
    for (auto& r : R) r = rng.normal();

    for (auto& x : inputs) x.zero_grad();
    out.backward(R);

    auto loss = [&]() {
        NoGradGuard no_grad;
        Tensor o = f(inputs);
        double total = 0.0;
        for (size_t i = 0; i < o.numel(); ++i) total += o.data()[i] * R.data()[i];
        return total;
    };

    for (size_t k = 0; k < inputs.size(); ++k) {
        Tensor& x = inputs[k];
        if (!x.requires_grad()) continue;
        REQUIRE_MESSAGE(x.has_grad(), "input " << k << " received no gradient");
        const Array analytic = x.grad();
        int reported = 0;
        size_t failures = 0;
        for (size_t j = 0; j < x.numel(); ++j) {
            const double saved = x.data()[j];
            x.data()[j] = saved + opt.h;
            const double plus = loss();
            x.data()[j] = saved - opt.h;
            const double minus = loss();
            x.data()[j] = saved;
            const double numeric = (plus - minus) / (2.0 * opt.h);
            const double a = analytic.data()[j];
            if (!(std::abs(a - numeric) <= opt.atol + opt.rtol * std::abs(numeric))) {
                ++failures;
                if (reported++ < 5)
                    FAIL_CHECK("input " << k << " element " << j << ": analytic " << a
                                        << " vs numeric " << numeric);
            }
        }
        CHECK_MESSAGE(failures == 0, "input " << k << " shape " << shape_str(x.shape()) << ": "
                                              << failures << " of " << x.numel()
                                              << " elements mismatch");
    }
}

}  // namespace rf::testing
