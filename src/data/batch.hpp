// Stage 6 — data: one batch of token windows, whatever the objective.
//
// Legend: B batch (rows), T seq_len (positions per row).
// Every objective (mlm.hpp: masked positions; clm.hpp: the next token at every position)
// fills the same two arrays: what the model reads, and what it should predict where.
// The model's forward(), evaluate() and the trainer take a Batch and never ask why a
// position carries a label.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rf::data {

constexpr int kIgnoreLabel = -100;  // "no prediction asked here" (PyTorch's ignore_index)

struct Batch {
    size_t batch = 0, seq_len = 0;  // B, T
    std::vector<int> input_ids;     // [B, T] row-major, what the model embeds
    std::vector<int> labels;        // [B, T] the id to predict, −100 where none is asked
    size_t n_selected() const;      // positions with a label
};

// The seed of training batch `index` (splitmix64 of seed and index, spread over all 64 bits):
// every sampler (MlmSampler in mlm.hpp, ClmSampler in clm.hpp) seeds batch k's Rng with it.
uint64_t batch_seed(uint64_t seed, uint64_t index);

}  // namespace rf::data
