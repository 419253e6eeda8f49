// Non-finite numbers are an error everywhere: the one rule for a model's outputs and parameters
// (src/model/finite_values.hpp), config numbers the library would hold as 0 or inf in float32
// (src/config/validate.cpp), and the fast AdamW agreeing with the readable one on a row with
// no gradient when ε is below float32's range (src/fast/adamw_vectorized.cpp vs
// src/nn/adamw.cpp). The end-to-end cases, one per command: cli_nonfinite.sh.
// The float32 limits are IEEE 754's (C's FLT_MIN / FLT_MAX), not numbers from this code.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "error_of.hpp"
#include "model/finite_values.hpp"
#include "fast/adamw_vectorized.hpp"
#include "nn/adamw.hpp"
#include "simd_isas.hpp"
#include "tensor/random.hpp"

using namespace rf;

namespace {

using rf::testing::contains;
using rf::testing::error_of;

std::string config_error(const std::string& override_) {
    return error_of([&] { load_config(std::nullopt, {override_}); });
}

const Real kNaN = std::numeric_limits<Real>::quiet_NaN();
const Real kInf = std::numeric_limits<Real>::infinity();

}  // namespace

TEST_CASE("non-finite: first_non_finite finds the first nan or inf, or n when there is none") {
    const std::vector<Real> clean{1, -2, 3e38f, FLT_MIN};
    CHECK(first_non_finite(clean.data(), clean.size()) == clean.size());
    const std::vector<Real> dirty{1, 2, kInf, kNaN};
    CHECK(first_non_finite(dirty.data(), dirty.size()) == 2);
    CHECK(first_non_finite(dirty.data() + 3, 1) == 0);
}

TEST_CASE("non-finite: a model output that is not finite is an error naming what and where") {
    const std::vector<Real> logits{0.5f, -1.0f, kNaN, 2.0f};
    const std::string message = error_of(
        [&] { require_finite_outputs("runs/x: the logits at [MASK] token 3", logits.data(), 4); });
    CHECK(contains(message, "runs/x: the logits at [MASK] token 3 hold nan (element 2 of 4)"));
    CHECK(contains(message, "the model's outputs are not finite"));
    CHECK(message.find('\n') == std::string::npos);  // one line
    CHECK_NOTHROW(require_finite_outputs("fine", logits.data(), 2));
    CHECK(contains(error_of([] { require_finite_output("the validation loss", double(kInf)); }),
                   "the validation loss is inf; the model's outputs are not finite"));
    CHECK_NOTHROW(require_finite_output("a loss", 3.5));
}

TEST_CASE("non-finite: parameters are checked in order and the first bad tensor is named") {
    std::vector<NamedParameter> params;
    for (const char* name : {"a.weight", "b.weight", "c.weight"}) {
        Tensor t = Tensor::zeros({3}, true);
        t.set_name(name);
        params.emplace_back(t);
    }
    CHECK_NOTHROW(require_finite_parameters("runs/x at step 4", params));
    params[2].tensor.data()[0] = kNaN;
    params[1].tensor.data()[2] = -kInf;
    const std::string message =
        error_of([&] { require_finite_parameters("runs/x at step 4", params); });
    CHECK(contains(message, "runs/x at step 4: parameter 'b.weight' holds -inf (element 2 of 3)"));
    CHECK(contains(message, "the checkpoint was not written"));
}

TEST_CASE("non-finite: config numbers that are 0 or inf in float32 are refused, naming the limit") {
    std::string m = config_error("train.eps=1e-50");  // the case: ε = 0 → 0/0 in AdamW
    CHECK(contains(m, "train.eps = 1e-50 is 0 in float32"));
    CHECK(contains(m, "the smallest usable value is 1.1754944e-38"));  // FLT_MIN
    CHECK(contains(config_error("train.lr=1e-40"), "train.lr = 1e-40 keeps only a few bits"));
    CHECK(contains(config_error("model.layer_norm_eps=1e-300"),
                   "model.layer_norm_eps = 1e-300 is 0"));
    m = config_error("model.init_std=1e39");
    CHECK(contains(m, "model.init_std = 1e+39 is inf in float32"));
    CHECK(contains(m, "the largest usable value is 3.4028235e+38"));  // FLT_MAX
    CHECK(contains(config_error("train.eps=1e300"), "train.eps = 1e+300 is inf"));
    // the limits themselves are usable
    CHECK_NOTHROW(load_config(std::nullopt, {"train.eps=1.1754944e-38"}));
    CHECK_NOTHROW(load_config(std::nullopt, {"model.init_std=3.4028234e38"}));
}

// A parameter whose gradient is 0 in half its elements (an embedding row no token of the batch
// uses): m = v = 0 there, and the update is m̂ / (√v̂ + ε) = 0 / ε. With ε = 1e-50 (0 in float32,
// allowed to AdamW used directly) the readable step adds ε in double (0); the fast one must not
// compute 0/0.
TEST_CASE("non-finite: fast AdamW = readable AdamW on zero-gradient elements with a tiny ε") {
    testing::for_each_isa([](SimdIsa) {
        auto make = [] {
            Tensor t = Tensor::zeros({37}, true);  // lanes and a tail
            Rng rng(7);
            for (size_t j = 0; j < t.numel(); ++j) t.data()[j] = Real(rng.normal());
            t.set_name("embedding");
            return std::vector<NamedParameter>{{t, false}};
        };
        std::vector<NamedParameter> fast = make(), readable = make();
        const AdamWOptions options{0.9, 0.999, 1e-50, 0.0};
        AdamW opt_fast(fast, options), opt_readable(readable, options);
        for (size_t t = 1; t <= 3; ++t) {
            for (auto* params : {&fast, &readable}) {
                Array& g = (*params)[0].tensor.grad();
                for (size_t j = 0; j < g.size(); ++j) g.data()[j] = j % 2 ? Real(0.1 * t) : Real(0);
            }
            adamw_step_vectorized(opt_fast, 1e-3);
            opt_readable.step(1e-3);
        }
        const Real* a = fast[0].tensor.data();
        const Real* b = readable[0].tensor.data();
        const std::vector<NamedParameter> initial = make();
        const Real* start = initial[0].tensor.data();
        for (size_t j = 0; j < 37; ++j) {
            CAPTURE(j);
            REQUIRE(std::isfinite(a[j]));
            if (j % 2 == 0) {  // no gradient: not moved, on both paths
                CHECK(a[j] == start[j]);
                CHECK(b[j] == start[j]);
            } else {
                CHECK(std::abs(double(a[j]) - double(b[j])) < 1e-5);
            }
        }
    });
}
