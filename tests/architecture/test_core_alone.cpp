// The core links alone: this program is linked to the six core libraries only (tensor, ops,
// nn, position, model, step; tests/CMakeLists.txt) — no fast path, linear attention, assembly,
// inspect, files, config, runs, MPI or command line — and trains two composed steps with it.
// A call from the core into a room would leave a symbol undefined here: the link would fail.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "model/roformer.hpp"
#include "nn/adamw.hpp"
#include "step/batch.hpp"
#include "step/train_step.hpp"
#include "tensor/random.hpp"
#include "tiny_model.hpp"

using namespace rf;

namespace {

// One batch of random windows, every third position labelled with its own token.
Batch random_batch(size_t B, size_t T, size_t V, uint64_t seed) {
    Rng rng(seed);
    Batch b{B, T, std::vector<int>(B * T), std::vector<int>(B * T, kIgnoreLabel)};
    for (size_t i = 0; i < B * T; ++i) {
        b.input_ids[i] = int(rng.next_u64() % V);
        if (i % 3 == 0) b.labels[i] = b.input_ids[i];
    }
    return b;
}

}  // namespace

TEST_CASE("core alone: two composed training steps, every parameter updated, the loss lower") {
    const size_t V = 24;
    // No ops handed in: the composed ops a student reads (model/swappable_ops.hpp).
    RoFormer model(testing::tiny_model_config(V), testing::tiny_position_config("rope"), 7);
    AdamW optimizer(model.parameters(), AdamWOptions{});
    const Batch batch = random_batch(2, 12, V, 3);
    std::vector<std::vector<Real>> before;
    for (const NamedParameter& p : model.parameters())
        before.emplace_back(p.tensor.data(), p.tensor.data() + p.tensor.numel());

    const StepResult first = train_step(model, optimizer, batch, 11, 1.0, 1e-2, 0);
    const StepResult second = train_step(model, optimizer, batch, 12, 1.0, 1e-2, 1);
    CHECK(std::isfinite(first.loss));
    CHECK(first.grad_norm > 0);
    CHECK(second.loss < first.loss);  // the same batch, after one update
    CHECK(optimizer.steps_taken() == 2);
    size_t changed = 0;
    for (size_t i = 0; i < before.size(); ++i) {
        const Tensor& t = model.parameters()[i].tensor;
        changed += !std::equal(before[i].begin(), before[i].end(), t.data());
    }
    CHECK(changed == before.size());
}
