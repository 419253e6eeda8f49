// Gradient checks (Real = double) for the element-wise ops in src/ops/elementwise.cpp:
// same shape, broadcasting in both directions, scalars, and non-contiguous producers
// (inputs that come out of permute / transpose / slice). Forward values of the broadcasting
// binary ops are compared against a naive index loop written here.
#include <cmath>

#include "gradcheck/gradcheck.hpp"

using rf::Shape;
using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

namespace {

// Values in [0.5, 2.5): safe for log, sqrt and as a divisor.
Tensor positive(const Shape& shape, rf::Rng& rng) {
    Tensor t = Tensor::zeros(shape, true);
    for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = 0.5 + 2.0 * rng.uniform();
    return t;
}

// Checks one broadcasting binary op on shapes (sa, sb); b positive so div is safe.
void check_binary(Tensor (*op)(const Tensor&, const Tensor&), const Shape& sa, const Shape& sb,
                  uint64_t seed) {
    rf::Rng rng(seed);
    gradcheck([op](const Inputs& in) { return op(in[0], in[1]); },
              {randn(sa, rng), positive(sb, rng)});
}

}  // namespace

// ---- forward values against a naive loop --------------------------------------------------
TEST_CASE("forward add/mul/sub/div broadcast [2,3,4] with [3,1] match an index loop") {
    rf::Rng rng(1);
    Tensor a = randn({2, 3, 4}, rng, 1.0, false), b = positive({3, 1}, rng);
    const Tensor sum = rf::add(a, b), prod = rf::mul(a, b), diff = rf::sub(b, a),
                 quot = rf::div(a, b);
    REQUIRE(sum.shape() == Shape{2, 3, 4});
    REQUIRE(diff.shape() == Shape{2, 3, 4});
    for (size_t i = 0; i < 2; ++i)
        for (size_t j = 0; j < 3; ++j)
            for (size_t k = 0; k < 4; ++k) {
                const double x = a.value()(i, j, k), y = b.value()(j, 0);
                CHECK(sum.value()(i, j, k) == doctest::Approx(x + y));
                CHECK(prod.value()(i, j, k) == doctest::Approx(x * y));
                CHECK(diff.value()(i, j, k) == doctest::Approx(y - x));
                CHECK(quot.value()(i, j, k) == doctest::Approx(x / y));
            }
}

TEST_CASE("forward add broadcast [2,1,4]+[3,1] stretches both inputs to [2,3,4]") {
    rf::Rng rng(2);
    Tensor a = randn({2, 1, 4}, rng, 1.0, false), b = randn({3, 1}, rng, 1.0, false);
    const Tensor y = rf::add(a, b);
    REQUIRE(y.shape() == Shape{2, 3, 4});
    for (size_t i = 0; i < 2; ++i)
        for (size_t j = 0; j < 3; ++j)
            for (size_t k = 0; k < 4; ++k)
                CHECK(y.value()(i, j, k) == doctest::Approx(a.value()(i, 0, k) + b.value()(j, 0)));
}

// ---- add ------------------------------------------------------------------------------------
TEST_CASE("gradcheck add same shape [2,3,4]") { check_binary(rf::add, {2, 3, 4}, {2, 3, 4}, 10); }
TEST_CASE("gradcheck add broadcast [2,3,4]+[3,1]") { check_binary(rf::add, {2, 3, 4}, {3, 1}, 11); }
TEST_CASE("gradcheck add broadcast [2,3,4]+[4] (bias)") {
    check_binary(rf::add, {2, 3, 4}, {4}, 12);
}
TEST_CASE("gradcheck add broadcast [1,3,1]+[2,3,4]") {
    check_binary(rf::add, {1, 3, 1}, {2, 3, 4}, 13);
}
TEST_CASE("gradcheck add broadcast [2,3,4]+scalar{}") { check_binary(rf::add, {2, 3, 4}, {}, 14); }
TEST_CASE("gradcheck add broadcast [2,1,4]+[3,1] both stretched") {
    check_binary(rf::add, {2, 1, 4}, {3, 1}, 15);
}

// ---- sub ------------------------------------------------------------------------------------
TEST_CASE("gradcheck sub same shape [2,3,4]") { check_binary(rf::sub, {2, 3, 4}, {2, 3, 4}, 20); }
TEST_CASE("gradcheck sub broadcast [2,3,4]-[3,1]") { check_binary(rf::sub, {2, 3, 4}, {3, 1}, 21); }
TEST_CASE("gradcheck sub broadcast [4]-[2,3,4]") { check_binary(rf::sub, {4}, {2, 3, 4}, 22); }
TEST_CASE("gradcheck sub broadcast scalar{}-[2,3,4]") { check_binary(rf::sub, {}, {2, 3, 4}, 23); }

// ---- mul ------------------------------------------------------------------------------------
TEST_CASE("gradcheck mul same shape [2,3,4]") { check_binary(rf::mul, {2, 3, 4}, {2, 3, 4}, 30); }
TEST_CASE("gradcheck mul broadcast [2,3,4]*[3,1]") { check_binary(rf::mul, {2, 3, 4}, {3, 1}, 31); }
TEST_CASE("gradcheck mul broadcast [2,3,4]*[4]") { check_binary(rf::mul, {2, 3, 4}, {4}, 32); }
TEST_CASE("gradcheck mul broadcast [1,3,1]*[2,3,4]") {
    check_binary(rf::mul, {1, 3, 1}, {2, 3, 4}, 33);
}
TEST_CASE("gradcheck mul broadcast scalar{}*[2,3,4]") { check_binary(rf::mul, {}, {2, 3, 4}, 34); }
TEST_CASE("gradcheck mul x*x fan-out") {
    rf::Rng rng(35);
    gradcheck([](const Inputs& in) { return rf::mul(in[0], in[0]); }, {randn({3, 4}, rng)});
}

// ---- div ------------------------------------------------------------------------------------
TEST_CASE("gradcheck div same shape [2,3,4]") { check_binary(rf::div, {2, 3, 4}, {2, 3, 4}, 40); }
TEST_CASE("gradcheck div broadcast [2,3,4]/[3,1]") { check_binary(rf::div, {2, 3, 4}, {3, 1}, 41); }
TEST_CASE("gradcheck div broadcast [2,3,4]/[4]") { check_binary(rf::div, {2, 3, 4}, {4}, 42); }
TEST_CASE("gradcheck div broadcast [4]/[1,3,1]") { check_binary(rf::div, {4}, {1, 3, 1}, 43); }
TEST_CASE("gradcheck div broadcast [2,3,4]/scalar{}") { check_binary(rf::div, {2, 3, 4}, {}, 44); }

// ---- non-contiguous producers feeding binary ops ---------------------------------------------
TEST_CASE("gradcheck add of transpose [4,3,2]->[2,3,4] with [3,1]") {
    rf::Rng rng(50);
    gradcheck([](const Inputs& in) { return rf::add(rf::transpose(in[0], 0, 2), in[1]); },
              {randn({4, 3, 2}, rng), randn({3, 1}, rng)});
}
TEST_CASE("gradcheck mul of permute(1,2,0) with slice along axis 1") {
    rf::Rng rng(51);
    // permute [3,4,2] → [4,2,3]; slice [4,5,3] axis 1 [1,3) → [4,2,3]
    gradcheck(
        [](const Inputs& in) {
            return rf::mul(rf::permute(in[0], {1, 2, 0}), rf::slice(in[1], 1, 1, 3));
        },
        {randn({3, 4, 2}, rng), randn({4, 5, 3}, rng)});
}
TEST_CASE("gradcheck div of slice by transposed [3,1]") {
    rf::Rng rng(52);
    gradcheck(
        [](const Inputs& in) {
            return rf::div(rf::slice(in[0], -1, 0, 2), rf::transpose(in[1], 0, 1));
        },
        {randn({2, 3, 5}, rng), positive({1, 3}, rng)});
}

// ---- scalar ops -------------------------------------------------------------------------------
TEST_CASE("gradcheck add_scalar [2,3]") {
    rf::Rng rng(60);
    gradcheck([](const Inputs& in) { return rf::add_scalar(in[0], 1.75); }, {randn({2, 3}, rng)});
}
TEST_CASE("gradcheck mul_scalar [2,3] of transpose") {
    rf::Rng rng(61);
    gradcheck([](const Inputs& in) { return rf::mul_scalar(rf::transpose(in[0], 0, 1), -2.5); },
              {randn({3, 2}, rng)});
}
TEST_CASE("gradcheck neg [2,3,4]") {
    rf::Rng rng(62);
    gradcheck([](const Inputs& in) { return rf::neg(in[0]); }, {randn({2, 3, 4}, rng)});
}

// ---- unary math -------------------------------------------------------------------------------
TEST_CASE("gradcheck exp [2,3,4] and of a permute") {
    rf::Rng rng(70);
    gradcheck([](const Inputs& in) { return rf::exp(in[0]); }, {randn({2, 3, 4}, rng)});
    gradcheck(
        [](const Inputs& in) {
            return rf::exp(rf::permute(in[0], {2, 0, 1}));
        },
        {randn({2, 3, 4}, rng)});
}
TEST_CASE("gradcheck log [3,4] positive and of a slice") {
    rf::Rng rng(71);
    gradcheck([](const Inputs& in) { return rf::log(in[0]); }, {positive({3, 4}, rng)});
    gradcheck([](const Inputs& in) { return rf::log(rf::slice(in[0], 0, 1, 3)); },
              {positive({4, 3}, rng)});
}
TEST_CASE("gradcheck sqrt [3,4] positive and of a transpose") {
    rf::Rng rng(72);
    gradcheck([](const Inputs& in) { return rf::sqrt(in[0]); }, {positive({3, 4}, rng)});
    gradcheck([](const Inputs& in) { return rf::sqrt(rf::transpose(in[0], 0, 1)); },
              {positive({3, 4}, rng)});
}
TEST_CASE("gradcheck tanh [2,3,4] and of a permute") {
    rf::Rng rng(73);
    gradcheck([](const Inputs& in) { return rf::tanh(in[0]); }, {randn({2, 3, 4}, rng, 1.5)});
    gradcheck(
        [](const Inputs& in) {
            return rf::tanh(rf::permute(in[0], {1, 0}));
        },
        {randn({3, 5}, rng, 1.5)});
}
TEST_CASE("gradcheck gelu [4,6] wide range and of a slice") {
    rf::Rng rng(74);
    gradcheck([](const Inputs& in) { return rf::gelu(in[0]); }, {randn({4, 6}, rng, 2.5)});
    gradcheck([](const Inputs& in) { return rf::gelu(rf::slice(in[0], 1, 2, 5)); },
              {randn({3, 6}, rng, 2.0)});
}

// ---- a small composite: y = tanh(a*b + c) / sqrt(d) with broadcasting everywhere -------------
TEST_CASE("gradcheck composite tanh(a*b+c)/sqrt(d) with broadcasting") {
    rf::Rng rng(80);
    gradcheck(
        [](const Inputs& in) {
            return rf::div(rf::tanh(rf::add(rf::mul(in[0], in[1]), in[2])), rf::sqrt(in[3]));
        },
        {randn({2, 3, 4}, rng), randn({4}, rng), randn({3, 1}, rng), positive({2, 1, 1}, rng)});
}
