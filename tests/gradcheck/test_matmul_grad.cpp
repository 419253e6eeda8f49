// Gradient checks (Real = double) for src/ops/matmul.cpp: 2-D products under all four
// transpose-flag combinations, batched 3-D and 4-D products, a batched A against a shared 2-D
// B (both the folded path and the per-batch path taken when A is transposed), linear with and
// without bias on 2-D and 3-D inputs, and inputs produced by permute / transpose.
#include "gradcheck/gradcheck.hpp"

using rf::Shape;
using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

namespace {

// Stored shapes of A and B for op(A):[lead..., M, K] · op(B):[lead_b..., K, N].
Shape stored(Shape lead, size_t rows, size_t cols, bool transposed) {
    lead.push_back(transposed ? cols : rows);
    lead.push_back(transposed ? rows : cols);
    return lead;
}

void check_matmul(const Shape& lead_a, const Shape& lead_b, bool ta, bool tb, uint64_t seed) {
    const size_t M = 3, K = 4, N = 5;
    rf::Rng rng(seed);
    Tensor a = randn(stored(lead_a, M, K, ta), rng);
    Tensor b = randn(stored(lead_b, K, N, tb), rng);
    gradcheck([ta, tb](const Inputs& in) { return rf::matmul(in[0], in[1], ta, tb); }, {a, b});
}

}  // namespace

TEST_CASE("matmul 2-D, all four transpose-flag combinations") {
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            CAPTURE(ta);
            CAPTURE(tb);
            check_matmul({}, {}, ta, tb, 10 + 2 * ta + tb);
        }
}

TEST_CASE("matmul batched 3-D, all four transpose-flag combinations") {
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            CAPTURE(ta);
            CAPTURE(tb);
            check_matmul({2}, {2}, ta, tb, 20 + 2 * ta + tb);
        }
}

TEST_CASE("matmul batched 4-D (attention layout: Q·Kᵀ and P·V)") {
    check_matmul({2, 3}, {2, 3}, false, true, 30);
    check_matmul({2, 3}, {2, 3}, false, false, 31);
}

TEST_CASE("matmul batched A against a shared 2-D B, all four transpose-flag combinations") {
    for (bool ta : {false, true})
        for (bool tb : {false, true}) {
            CAPTURE(ta);
            CAPTURE(tb);
            check_matmul({2, 2}, {}, ta, tb, 40 + 2 * ta + tb);
        }
}

TEST_CASE("matmul with only one operand requiring grad") {
    rf::Rng rng(50);
    Tensor a = randn({2, 3, 4}, rng), b = randn({2, 4, 5}, rng, 1.0, false);
    gradcheck([](const Inputs& in) { return rf::matmul(in[0], in[1]); }, {a, b});
    CHECK_FALSE(b.has_grad());
}

TEST_CASE("matmul on inputs produced by transpose and permute") {
    rf::Rng rng(60);
    gradcheck([](const Inputs& in) { return rf::matmul(rf::transpose(in[0], 0, 1), in[1]); },
              {randn({4, 3}, rng), randn({4, 5}, rng)});  // [4,3]ᵀ·[4,5]
    gradcheck(
        [](const Inputs& in) {
            return rf::matmul(rf::permute(in[0], {2, 0, 1}), rf::permute(in[1], {1, 2, 0}), false,
                              false);
        },
        {randn({3, 4, 2}, rng), randn({5, 2, 4}, rng)});  // [2,3,4]·[2,4,5]
}

TEST_CASE("linear with and without bias, 2-D and 3-D input") {
    rf::Rng rng(70);
    const size_t in_features = 4, out_features = 3;
    SUBCASE("with bias, x:[5, in]") {
        gradcheck([](const Inputs& in) { return rf::linear(in[0], in[1], in[2]); },
                  {randn({5, in_features}, rng), randn({out_features, in_features}, rng),
                   randn({out_features}, rng)});
    }
    SUBCASE("without bias, x:[5, in]") {
        gradcheck([](const Inputs& in) { return rf::linear(in[0], in[1], Tensor()); },
                  {randn({5, in_features}, rng), randn({out_features, in_features}, rng)});
    }
    SUBCASE("with bias, x:[2, 3, in]") {
        gradcheck([](const Inputs& in) { return rf::linear(in[0], in[1], in[2]); },
                  {randn({2, 3, in_features}, rng), randn({out_features, in_features}, rng),
                   randn({out_features}, rng)});
    }
    SUBCASE("with bias, x from a permute") {
        gradcheck(
            [](const Inputs& in) {
                return rf::linear(rf::permute(in[0], {1, 0, 2}), in[1], in[2]);
            },
            {randn({3, 2, in_features}, rng), randn({out_features, in_features}, rng),
             randn({out_features}, rng)});
    }
}
