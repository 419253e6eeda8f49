// Empty products and batches with no labelled token, on every product library: a 0-row
// product (a batch with no masked token gives the head 0 rows) writes nothing, a K = 0 product
// is C = beta·C, and a batch with no label is counted, not computed — no library ever sees
// it (src/fast/products.hpp, block_gemm; src/step/train_step.cpp; src/train/evaluate.cpp).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "step/batch.hpp"
#include "fast/onednn_bf16_products.hpp"
#include "fast/onednn_products.hpp"
#include "fast/products.hpp"
#include "fast/threading.hpp"
#include "model/roformer.hpp"
#include "nn/adamw.hpp"
#include "tiny_model.hpp"
#include "train/evaluate.hpp"
#include "step/train_step.hpp"

using namespace rf;

namespace {

struct KeepThreading {
    Threading before = threading();
    ~KeepThreading() { set_threading(before); }
};

// Every float product this build can install, by name: OpenBLAS, oneDNN, oneDNN's bf16.
std::vector<std::pair<std::string, FloatProduct>> products() {
    std::vector<std::pair<std::string, FloatProduct>> all{{"openblas", nullptr}};
    if (onednn_built()) all.emplace_back("onednn", onednn_product());
    if (bf16_unavailable().empty()) all.emplace_back("bf16", bf16_product());
    return all;
}

}  // namespace

TEST_CASE("empty products on every product library: M or N = 0 write nothing, K = 0 is beta·C") {
    const KeepThreading keep;
    for (const auto& [name, product] : products()) {
        CAPTURE(name);
        set_threading({2, true, product});
        const std::vector<float> A(64 * 64, 1.0f), B(64 * 64, 1.0f);
        // M = 0 (the head of a batch with no masked token) and N = 0: C untouched
        std::vector<float> untouched(64 * 64, 7.0f);
        gemm_rows_parallel(false, true, 0, 64, 64, A.data(), 64, B.data(), 64, 0.0f,
                           untouched.data(), 64);
        gemm_rows_parallel(false, false, 64, 0, 64, A.data(), 64, B.data(), 64, 0.0f,
                           untouched.data(), 64);
        block_gemm(true, false, 0, 64, 64, A.data(), 64, B.data(), 64, 1.0f, untouched.data(), 64);
        CHECK(untouched == std::vector<float>(64 * 64, 7.0f));
        // K = 0: an empty sum, C = beta·C (beta = 0 writes zeros without reading C)
        std::vector<float> C(8 * 8, 3.0f);
        block_gemm(false, false, 8, 8, 0, A.data(), 1, B.data(), 8, 0.5f, C.data(), 8);
        CHECK(C == std::vector<float>(8 * 8, 1.5f));
        block_gemm(false, false, 8, 8, 0, A.data(), 1, B.data(), 8, 0.0f, C.data(), 8);
        CHECK(C == std::vector<float>(8 * 8, 0.0f));
    }
}

TEST_CASE("a batch with no labelled token: eval counts it, a step leaves every gradient 0") {
    const KeepThreading keep;
    const size_t V = 40, B = 2, T = 8;
    Batch batch;
    batch.batch = B;
    batch.seq_len = T;
    batch.input_ids.resize(B * T);
    for (size_t i = 0; i < B * T; ++i) batch.input_ids[i] = int(5 + i % (V - 5));
    batch.labels.assign(B * T, kIgnoreLabel);
    for (const auto& [name, product] : products()) {
        for (const bool fused : {true, false}) {
            CAPTURE(name);
            CAPTURE(fused);
            if (!fused && product) continue;  // the composed path runs OpenBLAS alone
            set_threading({2, fused, product});
            FastConfig fast;
            fast.fused = fused;
            RoFormer model = assembled_model(testing::tiny_model_config(V),
                                             testing::tiny_position_config("rope"), 5, fast);
            const BatchScore score = score_batch(model, batch);
            CHECK(score.predictions == 0);
            CHECK(score.loss_sum == 0.0);
            AdamW optimizer(model.parameters(), {});
            for (const NamedParameter& p : model.parameters()) Tensor(p.tensor).zero_grad();
            const double loss = compute_gradients(model, optimizer, batch, 1, 0);
            CHECK(loss == 0.0);
            for (const NamedParameter& p : model.parameters()) {
                if (!p.tensor.has_grad()) continue;
                for (const float g : Tensor(p.tensor).grad()) REQUIRE(g == 0.0f);
            }
            // and the same batch with one label scores one token
            Batch one = batch;
            one.labels[3] = 9;
            CHECK(score_batch(model, one).predictions == 1);
        }
    }
}
