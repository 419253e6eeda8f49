// The reverse-mode engine (src/tensor/tensor.cpp) seen through the float32 library: fan-out
// accumulation, repeated backward, NoGradGuard, detach, error messages, and GELU forward
// values against std::erf evaluated here in double.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/ops.hpp"
#include "tensor/tensor.hpp"

using rf::Real;
using rf::Shape;
using rf::Tensor;

namespace {

Tensor from_values(const Shape& shape, const std::vector<double>& values, bool requires_grad) {
    Tensor t = Tensor::zeros(shape, requires_grad);
    REQUIRE(values.size() == t.numel());
    for (size_t i = 0; i < values.size(); ++i) t.data()[i] = static_cast<Real>(values[i]);
    return t;
}

// The exception message of f(), or "" if it did not throw std::invalid_argument.
template <class F>
std::string invalid_argument_message(F f) {
    try {
        f();
    } catch (const std::invalid_argument& e) { return e.what(); }
    return "";
}

}  // namespace

TEST_CASE("engine: fan-out y = x*x gives dy/dx = 2x") {
    Tensor x = from_values({4}, {-1.5, 0.0, 0.25, 3.0}, true);
    rf::sum(rf::mul(x, x)).backward();
    for (size_t i = 0; i < 4; ++i) CHECK(x.grad().data()[i] == doctest::Approx(2.0 * x.data()[i]));
}

TEST_CASE("engine: a tensor feeding two branches receives both contributions") {
    // L = Σ (3x + x⊙c)  →  dL/dx = 3 + c
    Tensor x = from_values({3}, {0.5, -2.0, 1.0}, true);
    Tensor c = from_values({3}, {4.0, 0.5, -1.0}, false);
    rf::sum(rf::add(rf::mul_scalar(x, Real(3)), rf::mul(x, c))).backward();
    for (size_t i = 0; i < 3; ++i) CHECK(x.grad().data()[i] == doctest::Approx(3.0 + c.data()[i]));

    // diamond through a shared intermediate: h = tanh(x), L = Σ (h⊙h + h) → (2h + 1)(1 − h²)
    Tensor z = from_values({3}, {0.3, -0.7, 1.2}, true);
    Tensor h = rf::tanh(z);
    rf::sum(rf::add(rf::mul(h, h), h)).backward();
    for (size_t i = 0; i < 3; ++i) {
        const double th = std::tanh(static_cast<double>(z.data()[i]));
        const double want = (2.0 * th + 1.0) * (1.0 - th * th);
        CHECK(z.grad().data()[i] == doctest::Approx(want).epsilon(1e-5));
    }
}

TEST_CASE("engine: gradients accumulate across backward() calls until zero_grad") {
    Tensor x = from_values({2}, {1.0, -2.0}, true);
    auto loss = [&] { return rf::sum(rf::mul_scalar(rf::mul(x, x), Real(0.5))); };  // dL/dx = x
    loss().backward();
    loss().backward();
    CHECK(x.grad().data()[0] == doctest::Approx(2.0));
    CHECK(x.grad().data()[1] == doctest::Approx(-4.0));
    x.zero_grad();
    CHECK(x.grad().data()[0] == 0.0f);
    CHECK(x.grad().data()[1] == 0.0f);
    loss().backward();
    CHECK(x.grad().data()[0] == doctest::Approx(1.0));
    CHECK(x.grad().data()[1] == doctest::Approx(-2.0));
}

TEST_CASE("engine: NoGradGuard records no node and results do not require grad") {
    Tensor x = from_values({2, 2}, {1, 2, 3, 4}, true);
    {
        rf::NoGradGuard no_grad;
        CHECK_FALSE(rf::grad_enabled());
        Tensor y = rf::sum(rf::exp(rf::add(x, x)), {0});
        CHECK_FALSE(y.requires_grad());
        CHECK(y.node() == nullptr);
        { rf::NoGradGuard nested; }
        CHECK_FALSE(rf::grad_enabled());  // leaving a nested guard keeps grad off
        rf::Array ones = rf::Array::from_shape({2});
        ones.fill(Real(1));
        CHECK_THROWS_AS(y.backward(ones), std::logic_error);  // nothing to differentiate
    }
    CHECK(rf::grad_enabled());
    Tensor y = rf::add(x, x);
    CHECK(y.requires_grad());
    REQUIRE(y.node() != nullptr);
    CHECK(std::string(y.node()->op) == "add");

    // inputs that do not require grad never produce a node either
    Tensor a = from_values({2}, {1, 2}, false);
    Tensor b = rf::mul(a, a);
    CHECK_FALSE(b.requires_grad());
    CHECK(b.node() == nullptr);
}

TEST_CASE("engine: backward() on a non-scalar without dout throws; wrong dout shape throws") {
    Tensor x = from_values({2, 3}, {1, 2, 3, 4, 5, 6}, true);
    Tensor y = rf::mul_scalar(x, Real(2));
    CHECK_THROWS_AS(y.backward(), std::invalid_argument);
    const std::string msg = invalid_argument_message([&] {
        y.backward(rf::Array::from_shape({3, 2}));
    });
    CHECK(msg.find("[3, 2]") != std::string::npos);
    CHECK(msg.find("[2, 3]") != std::string::npos);
    // the right shape works: d(2x) with dout = 1 everywhere is 2
    rf::Array ones = rf::Array::from_shape({2, 3});
    ones.fill(Real(1));
    y.backward(ones);
    for (size_t i = 0; i < 6; ++i) CHECK(x.grad().data()[i] == doctest::Approx(2.0));
}

TEST_CASE("engine: detach cuts history") {
    Tensor x = from_values({3}, {1.0, 2.0, -3.0}, true);
    Tensor y = rf::mul(x, x);
    Tensor d = y.detach();
    CHECK_FALSE(d.requires_grad());
    CHECK(d.node() == nullptr);
    for (size_t i = 0; i < 3; ++i) CHECK(d.data()[i] == y.data()[i]);
    // L = Σ d⊙x: with d treated as a constant, dL/dx = d = x² (not 3x²)
    rf::sum(rf::mul(d, x)).backward();
    for (size_t i = 0; i < 3; ++i)
        CHECK(x.grad().data()[i] == doctest::Approx(x.data()[i] * x.data()[i]));
    // and the copy is independent of the original's storage
    d.data()[0] = Real(100);
    CHECK(y.data()[0] == doctest::Approx(1.0));
}

TEST_CASE("engine: shape errors throw invalid_argument naming the op and both shapes") {
    Tensor a = Tensor::zeros({2, 3}), b = Tensor::zeros({4});
    for (auto op : {rf::add, rf::sub, rf::mul, rf::div}) {
        const std::string msg = invalid_argument_message([&] { op(a, b); });
        CHECK(msg.find("[2, 3]") != std::string::npos);
        CHECK(msg.find("[4]") != std::string::npos);
    }
    CHECK(invalid_argument_message([&] { rf::add(a, b); }).find("add") != std::string::npos);
    CHECK(invalid_argument_message([&] { rf::div(a, b); }).find("div") != std::string::npos);

    const std::string reshape_msg = invalid_argument_message([&] { rf::reshape(a, {4, 2}); });
    CHECK(reshape_msg.find("[2, 3]") != std::string::npos);
    CHECK(reshape_msg.find("[4, 2]") != std::string::npos);

    const std::string concat_msg = invalid_argument_message([&] {
        rf::concat({a, Tensor::zeros({3, 3})}, 1);
    });
    CHECK(concat_msg.find("[2, 3]") != std::string::npos);
    CHECK(concat_msg.find("[3, 3]") != std::string::npos);

    CHECK_THROWS_AS(rf::permute(a, {0, 0}), std::invalid_argument);
    CHECK_THROWS_AS(rf::transpose(a, 0, 2), std::invalid_argument);
    CHECK_THROWS_AS(rf::slice(a, 1, 2, 2), std::invalid_argument);
}

TEST_CASE("engine: GELU forward matches 0.5·x·(1 + erf(x/√2)) computed in double") {
    const std::vector<double> points = {-4.0, -2.0, -1.0, -0.5, -0.1, 0.1, 0.5, 1.0, 1.7, 3.0};
    Tensor x = from_values({points.size()}, points, false);
    Tensor y = rf::gelu(x);
    for (size_t i = 0; i < points.size(); ++i) {
        const double v = points[i];
        const double want = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
        CHECK(y.data()[i] == doctest::Approx(want).epsilon(1e-5));
    }
    // known values: GELU(0) = 0; GELU(x) → x for large x, → 0 for very negative x;
    // GELU(1) = Φ(1) = 0.8413447460685429 (standard normal table)
    Tensor known = rf::gelu(from_values({4}, {0.0, 12.0, -12.0, 1.0}, false));
    CHECK(known.data()[0] == 0.0f);
    CHECK(known.data()[1] == doctest::Approx(12.0));
    CHECK(std::abs(known.data()[2]) < 1e-6);
    CHECK(known.data()[3] == doctest::Approx(0.8413447460685429).epsilon(1e-6));
}

TEST_CASE("engine: GELU keeps relative precision in the negative tail") {
    // In float, 1 + erf(x/√2) cancels to (nearly) nothing below x ≈ −5; the exact value is tiny
    // but not zero and should still be right to a relative 1e-4.
    const std::vector<double> points = {-5.0, -6.0, -7.5};
    Tensor y = rf::gelu(from_values({points.size()}, points, false));
    for (size_t i = 0; i < points.size(); ++i) {
        const double v = points[i];
        const double want = 0.5 * v * std::erfc(-v / std::sqrt(2.0));  // double reference
        CHECK(std::abs(y.data()[i] - want) <= 1e-4 * std::abs(want));
    }
}

// A gradient starts at zero however large (the threads write a large one's zeros), on memory
// that held other values: the allocator hands back the block just freed.
TEST_CASE("engine: a fresh gradient is all zeros, large or small") {
    for (size_t n : {size_t(5), size_t(1) << 18}) {
        CAPTURE(n);
        { std::vector<Real> dirty(n, Real(7)); }  // freed: the next block of n may be this one
        Tensor x = Tensor::zeros({n}, true);
        const Real* g = x.grad().data();
        size_t nonzero = 0;
        for (size_t i = 0; i < n; ++i) nonzero += g[i] != Real(0);
        CHECK(nonzero == 0);
    }
}
