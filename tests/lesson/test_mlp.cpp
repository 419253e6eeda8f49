// End-to-end (float32): a 2-layer MLP, linear → tanh → linear, trained with plain SGD written
// here, must learn XOR — a function no linear model can fit. Two versions: a 2-class
// cross-entropy head and a 1-output mean-squared-error head (the latter through the
// element-wise and reduction ops). Both must end below a stated loss and classify all four
// points correctly.
#include <doctest/doctest.h>

#include <vector>

#include "ops/ops.hpp"

using rf::Real;
using rf::Tensor;

namespace {

const Real kInputs[4][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
const int kXor[4] = {0, 1, 1, 0};

struct Mlp {
    Tensor w1, b1, w2, b2;

    Mlp(size_t hidden, size_t outputs, uint64_t seed) {
        rf::Rng rng(seed);
        auto normal = [&rng](const rf::Shape& shape, double scale) {
            Tensor t = Tensor::zeros(shape, true);
            for (size_t i = 0; i < t.numel(); ++i) t.data()[i] = Real(scale * rng.normal());
            return t;
        };
        w1 = normal({hidden, 2}, 1.0);
        b1 = Tensor::zeros({hidden}, true);
        w2 = normal({outputs, hidden}, 0.5);
        b2 = Tensor::zeros({outputs}, true);
    }

    Tensor forward(const Tensor& x) const {
        return rf::linear(rf::tanh(rf::linear(x, w1, b1)), w2, b2);
    }

    // p ← p − lr·∂L/∂p, then clear the gradients for the next step.
    void sgd_step(Real lr) {
        rf::NoGradGuard no_grad;
        for (Tensor* p : {&w1, &b1, &w2, &b2}) {
            const rf::Array& g = p->grad();
            for (size_t i = 0; i < p->numel(); ++i) p->data()[i] -= lr * g.data()[i];
            p->zero_grad();
        }
    }
};

Tensor xor_inputs() {
    Tensor x = Tensor::zeros({4, 2});
    for (size_t i = 0; i < 4; ++i)
        for (size_t j = 0; j < 2; ++j) x.data()[i * 2 + j] = kInputs[i][j];
    return x;
}

}  // namespace

TEST_CASE("MLP with a cross-entropy head learns XOR with SGD") {
    const Tensor x = xor_inputs();
    const std::vector<int> targets(kXor, kXor + 4);
    Mlp mlp(8, 2, 1);
    const Real first_loss = rf::cross_entropy(mlp.forward(x), targets).item();
    Real loss_value = first_loss;
    for (int step = 0; step < 2000; ++step) {
        Tensor loss = rf::cross_entropy(mlp.forward(x), targets);
        loss_value = loss.item();
        loss.backward();
        mlp.sgd_step(Real(0.5));
    }
    CAPTURE(first_loss);
    CHECK(first_loss > Real(0.5));   // it did not start solved
    CHECK(loss_value < Real(0.05));  // final mean cross-entropy (nats)
    const Tensor logits = mlp.forward(x);
    for (size_t i = 0; i < 4; ++i) {
        CAPTURE(i);
        const int predicted = logits.data()[i * 2 + 1] > logits.data()[i * 2] ? 1 : 0;
        CHECK(predicted == kXor[i]);
    }
}

TEST_CASE("MLP with a mean-squared-error head learns XOR with SGD") {
    const Tensor x = xor_inputs();
    Tensor y = Tensor::zeros({4, 1});
    for (size_t i = 0; i < 4; ++i) y.data()[i] = Real(kXor[i]);
    Mlp mlp(8, 1, 2);
    auto mse = [&](const Tensor& prediction) {
        const Tensor diff = rf::sub(prediction, y);
        return rf::mean(rf::mul(diff, diff));
    };
    Real loss_value = 0;
    for (int step = 0; step < 2000; ++step) {
        Tensor loss = mse(mlp.forward(x));
        loss_value = loss.item();
        loss.backward();
        mlp.sgd_step(Real(0.2));
    }
    CHECK(loss_value < Real(0.01));  // final mean squared error
    const Tensor prediction = mlp.forward(x);
    for (size_t i = 0; i < 4; ++i) {
        CAPTURE(i);
        CHECK((prediction.data()[i] > Real(0.5)) == (kXor[i] == 1));
    }
}
