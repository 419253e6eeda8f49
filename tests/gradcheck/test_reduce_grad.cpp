// Gradient checks (Real = double) for sum and mean in src/ops/reduce.cpp, plus forward values
// against naive loops written here: all elements, one axis, several axes, negative axes,
// keepdims on and off, and non-contiguous producers.
#include "gradcheck/gradcheck.hpp"

using rf::Shape;
using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

// ---- forward values -------------------------------------------------------------------------
TEST_CASE("forward sum/mean over all and over axes match naive loops on [2,3,4]") {
    rf::Rng rng(1);
    Tensor x = randn({2, 3, 4}, rng, 1.0, false);
    const auto& v = x.value();

    double total = 0.0;
    for (size_t i = 0; i < x.numel(); ++i) total += x.data()[i];
    const Tensor s = rf::sum(x), m = rf::mean(x);
    CHECK(s.shape() == Shape{});
    CHECK(s.item() == doctest::Approx(total));
    CHECK(m.item() == doctest::Approx(total / 24.0));

    // over axis 1 → [2,4]; keepdims → [2,1,4]
    const Tensor s1 = rf::sum(x, {1}), s1k = rf::sum(x, {1}, true), m1 = rf::mean(x, {-2});
    REQUIRE(s1.shape() == Shape{2, 4});
    REQUIRE(s1k.shape() == Shape{2, 1, 4});
    REQUIRE(m1.shape() == Shape{2, 4});
    for (size_t i = 0; i < 2; ++i)
        for (size_t k = 0; k < 4; ++k) {
            double acc = 0.0;
            for (size_t j = 0; j < 3; ++j) acc += v(i, j, k);
            CHECK(s1.value()(i, k) == doctest::Approx(acc));
            CHECK(s1k.value()(i, 0, k) == doctest::Approx(acc));
            CHECK(m1.value()(i, k) == doctest::Approx(acc / 3.0));
        }

    // over axes {0, -1} → [3]; keepdims → [1,3,1]
    const Tensor s02 = rf::sum(x, {0, -1}), m02k = rf::mean(x, {-1, 0}, true);
    REQUIRE(s02.shape() == Shape{3});
    REQUIRE(m02k.shape() == Shape{1, 3, 1});
    for (size_t j = 0; j < 3; ++j) {
        double acc = 0.0;
        for (size_t i = 0; i < 2; ++i)
            for (size_t k = 0; k < 4; ++k) acc += v(i, j, k);
        CHECK(s02.value()(j) == doctest::Approx(acc));
        CHECK(m02k.value()(0, j, 0) == doctest::Approx(acc / 8.0));
    }
}

TEST_CASE("sum/mean reject a repeated or out-of-range axis, naming the shape") {
    Tensor x = Tensor::zeros({2, 3});
    CHECK_THROWS_WITH_AS(rf::sum(x, {1, -1}), doctest::Contains("[2, 3]"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(rf::mean(x, {2}), doctest::Contains("[2, 3]"), std::invalid_argument);
}

// ---- gradient checks ------------------------------------------------------------------------
TEST_CASE("gradcheck sum all [2,3,4]") {
    rf::Rng rng(10);
    gradcheck([](const Inputs& in) { return rf::sum(in[0]); }, {randn({2, 3, 4}, rng)});
}
TEST_CASE("gradcheck mean all [2,3,4] of a permute") {
    rf::Rng rng(11);
    gradcheck(
        [](const Inputs& in) {
            return rf::mean(rf::permute(in[0], {2, 0, 1}));
        },
        {randn({2, 3, 4}, rng)});
}
TEST_CASE("gradcheck sum axis 1 [2,3,4]") {
    rf::Rng rng(12);
    gradcheck([](const Inputs& in) { return rf::sum(in[0], {1}); }, {randn({2, 3, 4}, rng)});
}
TEST_CASE("gradcheck sum axes {0,-1} keepdims [2,3,4]") {
    rf::Rng rng(13);
    gradcheck(
        [](const Inputs& in) {
            return rf::sum(in[0], {0, -1}, true);
        },
        {randn({2, 3, 4}, rng)});
}
TEST_CASE("gradcheck sum all axes {0,1,2} [2,3,4]") {
    rf::Rng rng(14);
    gradcheck([](const Inputs& in) { return rf::sum(in[0], {0, 1, 2}); }, {randn({2, 3, 4}, rng)});
}
TEST_CASE("gradcheck mean axis -1 [2,3,4]") {
    rf::Rng rng(15);
    gradcheck([](const Inputs& in) { return rf::mean(in[0], {-1}); }, {randn({2, 3, 4}, rng)});
}
TEST_CASE("gradcheck mean axes {1,2} keepdims of a transpose") {
    rf::Rng rng(16);
    gradcheck(
        [](const Inputs& in) {
            return rf::mean(rf::transpose(in[0], 0, 2), {1, 2}, true);
        },
        {randn({4, 3, 2}, rng)});
}
TEST_CASE("gradcheck sum axis 0 of a slice") {
    rf::Rng rng(17);
    gradcheck([](const Inputs& in) { return rf::sum(rf::slice(in[0], 1, 1, 4), {0}); },
              {randn({3, 5, 2}, rng)});
}
TEST_CASE("gradcheck mean then broadcast back: x - mean(x, -1, keepdims)") {
    rf::Rng rng(18);
    gradcheck([](const Inputs& in) { return rf::sub(in[0], rf::mean(in[0], {-1}, true)); },
              {randn({3, 5}, rng)});
}
