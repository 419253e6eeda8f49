// Stage 6 — step: one batch of token windows, whatever the objective.
//
// Legend: B batch (rows), T seq_len (positions per row).
// Every objective (src/data/mlm.hpp: masked positions; clm.hpp: the next token at every
// position) fills the same two arrays: what the model reads, and what it should predict where.
// The model's forward(), the step and evaluation take a Batch and never ask why a position
// carries a label.
#pragma once

#include <cstddef>
#include <vector>

#include "ops/ops.hpp"  // kIgnoreLabel, the −100 of "no prediction asked here"

namespace rf {

struct Batch {
    size_t batch = 0, seq_len = 0;  // B, T
    std::vector<int> input_ids;     // [B, T] row-major, what the model embeds
    std::vector<int> labels;        // [B, T] the id to predict, kIgnoreLabel where none is asked
    size_t n_selected() const;      // positions with a label
};

}  // namespace rf
