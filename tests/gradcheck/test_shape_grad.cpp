// Gradient checks (Real = double) for reshape, permute, transpose, slice and concat in
// src/ops/shape.cpp, plus forward values against index arithmetic written here.
#include "gradcheck/gradcheck.hpp"

using rf::Shape;
using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

// ---- forward values -------------------------------------------------------------------------
TEST_CASE("forward permute (2,0,1) and transpose match index arithmetic") {
    rf::Rng rng(1);
    Tensor x = randn({2, 3, 4}, rng, 1.0, false);
    const Tensor p = rf::permute(x, {2, 0, 1});  // y[k,i,j] = x[i,j,k]
    const Tensor t = rf::transpose(x, 0, -1);    // y[k,j,i] = x[i,j,k]
    REQUIRE(p.shape() == Shape{4, 2, 3});
    REQUIRE(t.shape() == Shape{4, 3, 2});
    for (size_t i = 0; i < 2; ++i)
        for (size_t j = 0; j < 3; ++j)
            for (size_t k = 0; k < 4; ++k) {
                const double want = x.data()[(i * 3 + j) * 4 + k];
                CHECK(p.data()[(k * 2 + i) * 3 + j] == want);
                CHECK(t.data()[(k * 3 + j) * 2 + i] == want);
            }
}

TEST_CASE("forward reshape infers -1 and keeps row-major order") {
    rf::Rng rng(2);
    Tensor x = randn({2, 3, 4}, rng, 1.0, false);
    const Tensor y = rf::reshape(x, {size_t(-1), 4});
    REQUIRE(y.shape() == Shape{6, 4});
    for (size_t i = 0; i < 24; ++i) CHECK(y.data()[i] == x.data()[i]);
    CHECK_THROWS_WITH_AS(rf::reshape(x, {5, 5}), doctest::Contains("[2, 3, 4]"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(rf::reshape(x, {5, 5}), doctest::Contains("[5, 5]"),
                         std::invalid_argument);
    CHECK_THROWS_AS(rf::reshape(x, {size_t(-1), 5}), std::invalid_argument);
}

TEST_CASE("forward slice and concat match index arithmetic") {
    rf::Rng rng(3);
    Tensor a = randn({2, 3, 4}, rng, 1.0, false), b = randn({2, 1, 4}, rng, 1.0, false);
    const Tensor s = rf::slice(a, 1, 1, 3);  // [2,2,4]
    REQUIRE(s.shape() == Shape{2, 2, 4});
    for (size_t i = 0; i < 2; ++i)
        for (size_t j = 0; j < 2; ++j)
            for (size_t k = 0; k < 4; ++k) CHECK(s.value()(i, j, k) == a.value()(i, j + 1, k));

    const Tensor c = rf::concat({a, b, a}, -2);  // [2,7,4]
    REQUIRE(c.shape() == Shape{2, 7, 4});
    for (size_t i = 0; i < 2; ++i)
        for (size_t k = 0; k < 4; ++k) {
            for (size_t j = 0; j < 3; ++j) {
                CHECK(c.value()(i, j, k) == a.value()(i, j, k));
                CHECK(c.value()(i, j + 4, k) == a.value()(i, j, k));
            }
            CHECK(c.value()(i, 3, k) == b.value()(i, 0, k));
        }
    CHECK_THROWS_WITH_AS(rf::concat({a, Tensor::zeros({2, 3, 5})}, 1),
                         doctest::Contains("[2, 3, 5]"), std::invalid_argument);
    CHECK_THROWS_AS(rf::slice(a, 2, 3, 5), std::invalid_argument);
}

// ---- gradient checks ------------------------------------------------------------------------
TEST_CASE("gradcheck reshape [2,3,4]->[4,-1]") {
    rf::Rng rng(10);
    gradcheck(
        [](const Inputs& in) {
            return rf::reshape(in[0], {4, size_t(-1)});
        },
        {randn({2, 3, 4}, rng)});
}
TEST_CASE("gradcheck reshape of a permute (non-contiguous source)") {
    rf::Rng rng(11);
    gradcheck(
        [](const Inputs& in) {
            return rf::reshape(rf::permute(in[0], {1, 0, 2}), {3, 8});
        },
        {randn({2, 3, 4}, rng)});
}
TEST_CASE("gradcheck permute (2,0,1) [2,3,4]") {
    rf::Rng rng(12);
    gradcheck(
        [](const Inputs& in) {
            return rf::permute(in[0], {2, 0, 1});
        },
        {randn({2, 3, 4}, rng)});
}
TEST_CASE("gradcheck permute (0,2,1,3) [2,3,4,2] (head split layout)") {
    rf::Rng rng(13);
    gradcheck(
        [](const Inputs& in) {
            return rf::permute(in[0], {0, 2, 1, 3});
        },
        {randn({2, 3, 4, 2}, rng)});
}
TEST_CASE("gradcheck transpose (0,-1) [2,3,4] and of a slice") {
    rf::Rng rng(14);
    gradcheck([](const Inputs& in) { return rf::transpose(in[0], 0, -1); },
              {randn({2, 3, 4}, rng)});
    gradcheck([](const Inputs& in) { return rf::transpose(rf::slice(in[0], 0, 1, 3), 0, 1); },
              {randn({4, 3}, rng)});
}
TEST_CASE("gradcheck slice axis 0, middle axis and last axis") {
    rf::Rng rng(15);
    gradcheck([](const Inputs& in) { return rf::slice(in[0], 0, 1, 2); }, {randn({3, 2, 4}, rng)});
    gradcheck([](const Inputs& in) { return rf::slice(in[0], 1, 1, 3); }, {randn({2, 4, 3}, rng)});
    gradcheck([](const Inputs& in) { return rf::slice(in[0], -1, 2, 5); }, {randn({2, 3, 5}, rng)});
}
TEST_CASE("gradcheck two overlapping slices of one tensor accumulate") {
    rf::Rng rng(16);
    gradcheck(
        [](const Inputs& in) {
            return rf::mul(rf::slice(in[0], 1, 0, 3), rf::slice(in[0], 1, 1, 4));
        },
        {randn({2, 4}, rng)});
}
TEST_CASE("gradcheck concat axis 1 of three tensors with different sizes") {
    rf::Rng rng(17);
    gradcheck(
        [](const Inputs& in) {
            return rf::concat({in[0], in[1], in[2]}, 1);
        },
        {randn({2, 1, 3}, rng), randn({2, 3, 3}, rng), randn({2, 2, 3}, rng)});
}
TEST_CASE("gradcheck concat axis 0, axis -1, and the same tensor twice") {
    rf::Rng rng(18);
    gradcheck(
        [](const Inputs& in) {
            return rf::concat({in[0], in[1]}, 0);
        },
        {randn({2, 3}, rng), randn({1, 3}, rng)});
    gradcheck(
        [](const Inputs& in) {
            return rf::concat({in[0], in[1]}, -1);
        },
        {randn({2, 3}, rng), randn({2, 2}, rng)});
    gradcheck(
        [](const Inputs& in) {
            return rf::concat({in[0], in[0]}, -1);
        },
        {randn({2, 3}, rng)});
}
TEST_CASE("gradcheck concat of transposed and sliced inputs") {
    rf::Rng rng(19);
    gradcheck(
        [](const Inputs& in) {
            return rf::concat({rf::transpose(in[0], 0, 1), rf::slice(in[1], 0, 0, 2)}, 1);
        },
        {randn({3, 2}, rng), randn({3, 4}, rng)});
}
