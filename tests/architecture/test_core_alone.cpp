// The core links alone: this program is linked to the six core libraries only (tensor, ops,
// nn, position, model, step; tests/CMakeLists.txt) — no fast path, linear attention, assembly,
// inspect, files, config, runs, MPI or command line — and trains two composed steps with it.
// The RoPE lab (src/ropelab/) is not plugged in either: its keys are refused, each by name.
// A call from the core into a room would leave a symbol undefined here: the link would fail.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/roformer.hpp"
#include "position/rope_lab_socket.hpp"
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

TEST_CASE("core alone: the paper's RoPE needs no lab, and a key of the lab is refused by name") {
    // Nothing plugs the lab in here (src/ropelab/ is not linked): position/rope_lab_socket.hpp.
    CHECK(rope_lab() == nullptr);
    PositionConfig plain = testing::tiny_position_config("rope");
    plain.base = 500.0;
    plain.pairing = RopePairing::half;
    CHECK(position_lab_key(plain) == nullptr);
    CHECK_NOTHROW(validate_position_config(plain, 16, 2));
    const auto refused = [](PositionConfig c, const std::string& key) {
        REQUIRE(position_lab_key(c) != nullptr);
        CHECK(std::string(position_lab_key(c)) == key);
        try {
            validate_position_config(c, 16, 2, 2);
            FAIL("accepted " << key << " without the RoPE lab");
        } catch (const std::invalid_argument& e) {
            const std::string message = e.what();
            CHECK(message.rfind(key + " needs the RoPE lab", 0) == 0);
        }
    };
    PositionConfig c = plain;
    c.scaling = RopeScaling::yarn;
    refused(c, "position.scaling");
    c = plain;
    c.rope_p = 0.5;
    refused(c, "position.rope_p");
    c = plain;
    c.xpos = true;
    refused(c, "position.xpos");
    c = plain;
    c.layer_schemes = "rope,none";
    refused(c, "position.layer_schemes");
    // A table asked for directly is refused the same way.
    RopeOptions o = rope_options_from_config(plain, 8);
    o.ntk_factor = 2.0;
    CHECK_THROWS_WITH_AS(RopeTable{o}, doctest::Contains("position.ntk_factor needs the RoPE lab"),
                         std::invalid_argument);
}
