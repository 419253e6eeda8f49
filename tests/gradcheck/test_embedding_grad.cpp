// Gradient checks (Real = double) for src/ops/embedding.cpp: the scatter-add backward with
// repeated ids (rows used several times accumulate; unused rows get zero).
#include "gradcheck/gradcheck.hpp"

using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

TEST_CASE("embedding gradient with repeated ids") {
    rf::Rng rng(1);
    const std::vector<int> ids{1, 3, 1, 1, 0, 3};  // row 1 three times, row 3 twice, row 2 never
    gradcheck(
        [&](const Inputs& in) {
            return rf::embedding(in[0], ids, {2, 3});
        },
        {randn({5, 4}, rng)});
}

TEST_CASE("embedding gradient of an unused row is zero, of a repeated row is the sum") {
    Tensor weight = Tensor::zeros({4, 2}, true);
    Tensor out = rf::embedding(weight, {2, 2, 0}, {3});
    rf::Array dout = rf::Array::from_shape({3, 2});
    for (size_t i = 0; i < 6; ++i) dout.data()[i] = double(i + 1);  // rows (1,2) (3,4) (5,6)
    out.backward(dout);
    const rf::Array& g = weight.grad();
    CHECK(g(0, 0) == 5.0);
    CHECK(g(0, 1) == 6.0);
    CHECK(g(1, 0) == 0.0);
    CHECK(g(2, 0) == 1.0 + 3.0);
    CHECK(g(2, 1) == 2.0 + 4.0);
    CHECK(g(3, 1) == 0.0);
}
