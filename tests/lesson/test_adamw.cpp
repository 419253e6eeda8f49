// Tests for stage 3 — AdamW: updates against the numbers of a plain double-precision loop
// (adamw_expected.hpp, written by tests/reference/adamw_snapshot.cpp for the case of
// adamw_case.hpp), decay only where flagged, global-norm clipping, state export/import for
// bit-identical resume.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "lesson/adamw_case.hpp"
#include "lesson/adamw_expected.hpp"
#include "nn/adamw.hpp"

namespace {

// A named leaf parameter holding `values` with `shape`.
rf::Tensor make_param(const rf::Shape& shape, const std::vector<double>& values,
                      const std::string& name) {
    rf::Array a = rf::Array::from_shape(shape);
    REQUIRE(a.size() == values.size());
    for (size_t i = 0; i < values.size(); ++i) a.data()[i] = rf::Real(values[i]);
    rf::Tensor t(a, true);
    t.set_name(name);
    return t;
}

// Every parameter's gradient at update t (adamw_case.hpp).
void set_grads(std::vector<rf::Tensor>& params, size_t t) {
    for (size_t p = 0; p < params.size(); ++p) {
        rf::Array& g = params[p].grad();
        for (size_t j = 0; j < g.size(); ++j)
            g.data()[j] = rf::Real(adamw_case::grad_value(p, j, t));
    }
}

using adamw_case::kB;
using adamw_case::kW;

}  // namespace

TEST_CASE("adamw: several steps match a reference loop in double") {
    std::vector<rf::Tensor> params = {make_param({2, 3}, kW, "w"), make_param({3}, kB, "b")};
    rf::AdamWOptions options;
    options.beta1 = adamw_case::kBeta1;
    options.beta2 = adamw_case::kBeta2;
    options.eps = adamw_case::kEps;
    options.weight_decay = adamw_case::kWeightDecay;
    rf::AdamW opt(rf::with_default_decay(params), options);
    CHECK(opt.parameters()[0].decay);        // 2-D weight
    CHECK_FALSE(opt.parameters()[1].decay);  // 1-D bias

    const std::vector<double>& lrs = adamw_case::kLearningRates;
    REQUIRE(adamw_case::kExpected.size() == lrs.size());
    std::string steps_right = "none";  // logged: "step 1 ok" when only later steps drift
    size_t right_so_far = 0;
    CAPTURE(steps_right);
    for (size_t s = 0; s < lrs.size(); ++s) {
        set_grads(params, s + 1);
        opt.step(lrs[s]);
        opt.zero_grad();
        CHECK(opt.steps_taken() == s + 1);
        const size_t step = s + 1;
        CAPTURE(step);
        bool right = true;
        for (size_t p = 0; p < 2; ++p)
            for (size_t j = 0; j < params[p].numel(); ++j) {
                const double got = params[p].data()[j], want = adamw_case::kExpected[s][p][j];
                right = right && got == doctest::Approx(want).epsilon(1e-5);
                CHECK(got == doctest::Approx(want).epsilon(1e-5));
            }
        if (right && right_so_far == s) {  // every step so far right
            right_so_far = step;
            steps_right = step == 1 ? "step 1 ok" : "step 1 ok up to step " + std::to_string(step);
        }
    }
    // the first step of Adam moves every element by ≈ lr (m̂/√v̂ = ±1), plus decay: check the
    // values actually moved a meaningful amount
    CHECK(std::abs(double(params[0].data()[0]) - kW[0]) > 1e-2);
}

TEST_CASE("adamw: weight decay only where flagged, and it is decoupled") {
    // zero gradients: Adam's part of the update is 0, only the decay acts
    std::vector<rf::Tensor> params = {make_param({2, 3}, kW, "w"), make_param({3}, kB, "b")};
    rf::AdamWOptions options;
    options.weight_decay = 0.5;
    rf::AdamW opt({{params[0], true}, {params[1], false}}, options);
    params[0].grad();  // allocate zero gradients
    params[1].grad();
    opt.step(0.1);
    for (size_t j = 0; j < 6; ++j)
        CHECK(double(params[0].data()[j]) == doctest::Approx(kW[j] * (1 - 0.1 * 0.5)));
    for (size_t j = 0; j < 3; ++j) CHECK(double(params[1].data()[j]) == doctest::Approx(kB[j]));

    // a parameter without a gradient buffer is skipped entirely
    rf::Tensor idle = make_param({2, 2}, {1, 2, 3, 4}, "idle");
    rf::AdamW opt2({{idle, true}}, options);
    opt2.step(0.1);
    CHECK(idle.data()[3] == rf::Real(4));
}

TEST_CASE("adamw: clip_grad_norm returns the pre-clip norm and rescales to max_norm") {
    std::vector<rf::Tensor> params = {make_param({2, 1}, {0, 0}, "a"), make_param({1}, {0}, "b")};
    rf::AdamW opt(rf::with_default_decay(params), {});
    auto set = [&](double a0, double a1, double b0) {
        params[0].grad().data()[0] = rf::Real(a0);
        params[0].grad().data()[1] = rf::Real(a1);
        params[1].grad().data()[0] = rf::Real(b0);
    };
    set(2, 4, 4);  // ‖g‖ = √(4+16+16) = 6
    CHECK(opt.grad_norm() == doctest::Approx(6.0));
    CHECK(opt.clip_grad_norm(1.5) == doctest::Approx(6.0));
    CHECK(double(params[0].grad().data()[0]) == doctest::Approx(0.5));  // scaled by 1.5/6
    CHECK(double(params[0].grad().data()[1]) == doctest::Approx(1.0));
    CHECK(double(params[1].grad().data()[0]) == doctest::Approx(1.0));
    CHECK(opt.grad_norm() == doctest::Approx(1.5));
    // below the threshold, and max_norm = 0 (off): untouched
    set(0.3, 0.4, 0);
    CHECK(opt.clip_grad_norm(1.0) == doctest::Approx(0.5));
    CHECK(double(params[0].grad().data()[1]) == doctest::Approx(0.4));
    set(30, 40, 0);
    CHECK(opt.clip_grad_norm(0.0) == doctest::Approx(50.0));
    CHECK(double(params[0].grad().data()[1]) == doctest::Approx(40.0));
    // non-finite norms are reported, not spread into the gradients
    set(INFINITY, 1, 1);
    CHECK(std::isinf(opt.clip_grad_norm(1.0)));
    CHECK(double(params[1].grad().data()[0]) == 1.0);
}

TEST_CASE("adamw: exported state resumes bit-identically") {
    rf::AdamWOptions options;
    options.weight_decay = 0.05;
    // run A: 3 steps, export, then 2 more
    std::vector<rf::Tensor> a = {make_param({2, 3}, kW, "w"), make_param({3}, kB, "b")};
    rf::AdamW opt_a(rf::with_default_decay(a), options);
    for (size_t t = 1; t <= 3; ++t) {
        set_grads(a, t);
        opt_a.step(1e-2 * double(t));
        opt_a.zero_grad();
    }
    const rf::AdamWState state = opt_a.export_state();
    CHECK(state.step == 3);
    REQUIRE(state.params.size() == 2);
    CHECK(state.params[0].name == "w");
    CHECK(state.params[1].m.size() == 3);

    // run B: fresh parameters with A's values and a fresh optimizer given A's state (in the
    // opposite order, matching is by name)
    std::vector<rf::Tensor> b = {make_param({3}, {0, 0, 0}, "b"), make_param({2, 3}, kW, "w")};
    b[0].value() = a[1].value();
    b[1].value() = a[0].value();
    rf::AdamW opt_b(rf::with_default_decay(b), options);
    rf::AdamWState reversed = state;
    std::swap(reversed.params[0], reversed.params[1]);
    opt_b.import_state(reversed);
    CHECK(opt_b.steps_taken() == 3);

    std::vector<rf::Tensor> b_in_a_order = {b[1], b[0]};
    for (size_t t = 4; t <= 5; ++t) {
        set_grads(a, t);
        set_grads(b_in_a_order, t);
        opt_a.step(1e-2);
        opt_b.step(1e-2);
        opt_a.zero_grad();
        opt_b.zero_grad();
    }
    for (size_t j = 0; j < 6; ++j) CHECK(a[0].data()[j] == b[1].data()[j]);  // exact
    for (size_t j = 0; j < 3; ++j) CHECK(a[1].data()[j] == b[0].data()[j]);

    // a state that does not fit is refused, naming the parameter
    rf::AdamWState missing = state;
    missing.params.pop_back();
    CHECK_THROWS_WITH_AS(opt_b.import_state(missing), doctest::Contains("'b'"),
                         std::invalid_argument);
    rf::AdamWState wrong_size = state;
    wrong_size.params[0].v.push_back(0);
    CHECK_THROWS_WITH_AS(opt_b.import_state(wrong_size), doctest::Contains("'w'"),
                         std::invalid_argument);
    rf::AdamWState stranger = state;
    stranger.params[1].name = "c";
    CHECK_THROWS_WITH_AS(opt_b.import_state(stranger), doctest::Contains("'c'"),
                         std::invalid_argument);
    CHECK(opt_b.steps_taken() == 5);  // a refused import changes nothing
}

TEST_CASE("adamw: parameters need distinct names") {
    rf::Tensor x = make_param({2}, {1, 2}, "same");
    rf::Tensor y = make_param({2}, {1, 2}, "same");
    CHECK_THROWS_AS(rf::AdamW({{x, false}, {y, false}}, {}), std::invalid_argument);
    rf::Tensor u = make_param({2}, {1, 2}, "");
    rf::Tensor w = make_param({2}, {1, 2}, "");
    rf::AdamW opt({{u, false}, {w, false}}, {});
    CHECK(opt.name_of(0) == "param.0");
    CHECK(opt.name_of(1) == "param.1");
}

// A property of the bias correction, not a number to match: on the first update m̂ = g and
// v̂ = g², so every weight without decay moves by lr·g/(|g| + ε), which is lr to within ε/|g|.
TEST_CASE("adamw: the first update moves every weight by lr") {
    std::vector<rf::Tensor> params = {make_param({3}, kB, "b")};
    rf::AdamWOptions options;
    options.weight_decay = 0.0;
    rf::AdamW opt(rf::with_default_decay(params), options);
    set_grads(params, 1);
    const double lr = 0.01;
    std::vector<double> before(params[0].data(), params[0].data() + params[0].numel());
    opt.step(lr);
    for (size_t j = 0; j < before.size(); ++j) {
        const double g = params[0].grad().data()[j];
        const double first_step_ratio = std::abs(params[0].data()[j] - before[j]) / lr;
        CAPTURE(j);
        CAPTURE(g);
        CAPTURE(first_step_ratio);
        REQUIRE(std::abs(g) > 1e-2);  // so that ε/|g| ≤ 1e-4
        CHECK(std::abs(first_step_ratio - 1.0) < 1e-3);
    }
}
