// Gradient checks (Real = double) for src/ops/softmax.cpp: softmax, causal_softmax and
// log_softmax over the last axis of 2-D, 3-D and 4-D inputs (including a row of large values), and
// the cross-entropy op (log-sum-exp and NLL in one node) with some rows ignored, all rows ignored, and a custom ignore_index.
#include "gradcheck/gradcheck.hpp"

using rf::Tensor;
using rf::testing::gradcheck;
using rf::testing::randn;
using Inputs = std::vector<Tensor>;

TEST_CASE("softmax gradient, 2-D and 3-D, with a row of large values") {
    rf::Rng rng(1);
    Tensor x = randn({3, 5}, rng, 2.0);
    for (size_t j = 0; j < 5; ++j) x.data()[5 + j] += 500.0;  // row 1 near 500
    gradcheck([](const Inputs& in) { return rf::softmax(in[0]); }, {x});
    gradcheck([](const Inputs& in) { return rf::softmax(in[0]); }, {randn({2, 3, 4}, rng)});
}

TEST_CASE("softmax gradient accumulates on fan-out") {
    // x feeds two softmax nodes: both contributions must arrive in x's gradient (dx +=, never
    // dx =), as when one tensor is read twice.
    rf::Rng rng(11);
    gradcheck([](const Inputs& in) { return rf::add(rf::softmax(in[0]), rf::softmax(in[0])); },
              {randn({3, 5}, rng, 2.0)});
}

TEST_CASE("causal_softmax gradient, 3-D and 4-D, with a row of large values") {
    rf::Rng rng(7);
    Tensor x = randn({2, 4, 4}, rng, 2.0);
    for (size_t j = 0; j < 4; ++j) x.data()[4 * 6 + j] += 400.0;  // batch 1, row 2 near 400
    gradcheck([](const Inputs& in) { return rf::causal_softmax(in[0]); }, {x});
    gradcheck([](const Inputs& in) { return rf::causal_softmax(in[0]); },
              {randn({2, 2, 3, 3}, rng)});
}

TEST_CASE("log_softmax gradient, 2-D and 3-D, with a row of large values") {
    rf::Rng rng(2);
    Tensor x = randn({3, 5}, rng, 2.0);
    for (size_t j = 0; j < 5; ++j) x.data()[10 + j] -= 500.0;  // row 2 near −500
    gradcheck([](const Inputs& in) { return rf::log_softmax(in[0]); }, {x});
    gradcheck([](const Inputs& in) { return rf::log_softmax(in[0]); }, {randn({2, 3, 4}, rng)});
}

TEST_CASE("cross_entropy gradient with some ignored rows") {
    rf::Rng rng(3);
    const std::vector<int> targets{1, -100, 3, 0, -100, 2};
    gradcheck([&](const Inputs& in) { return rf::cross_entropy(in[0], targets); },
              {randn({6, 4}, rng, 2.0)});
    // A custom ignore index: −100 is then an invalid target, 0 is skipped.
    const std::vector<int> custom{0, 2, 0, 1};
    gradcheck([&](const Inputs& in) { return rf::cross_entropy(in[0], custom, 0); },
              {randn({4, 3}, rng)});
}

TEST_CASE("cross_entropy with every row ignored is 0 with a zero gradient") {
    rf::Rng rng(4);
    Tensor logits = randn({3, 4}, rng);
    Tensor loss = rf::cross_entropy(logits, {-100, -100, -100});
    CHECK(loss.item() == 0.0);
    loss.backward();
    REQUIRE(logits.has_grad());
    for (size_t i = 0; i < logits.numel(); ++i) CHECK(logits.grad().data()[i] == 0.0);
}
