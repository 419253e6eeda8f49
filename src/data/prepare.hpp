// Room — data: from the [data] table to what training and evaluation consume.
//
//   corpus → split (whole blocks) → tokenizer trained on the train split → token ids
//   validation: a fixed list of windows (mlm: with fixed masks, one constant seed for every
//          run; clm: nothing random), so every evaluation of every run is on identical inputs
//   training: batch k of a run is a function of (seed, k) — data::MlmSampler (mlm.hpp) or
//          data::ClmSampler (clm.hpp), chosen by the objective (objective.hpp)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/data_config.hpp"
#include "data/mlm.hpp"
#include "data/objective.hpp"
#include "data/tokenizer.hpp"

namespace rf {

// prepare_data warns (stderr) when more than this share of the training tokens are [UNK].
constexpr double kUnknownWarningShare = 0.2;

// The validation masks' seed: the same for every run, whatever train.seed is.
constexpr uint64_t kValidationSeed = 20210420;

struct PreparedData {
    std::string split_summary;
    std::vector<int> train_ids, validation_ids;
    size_t train_tokens = 0;  // train_ids.size(), still known once the ids moved into a sampler
    std::vector<Batch> validation;  // the fixed validation set at data.seq_len
    // nats: −mean log p_train(label) over the validation labels (the masked tokens for mlm,
    // the predicted next tokens for clm) — the loss of a model that knows only frequencies
    double unigram_entropy = 0;
};

// Loads and splits data.path, tokenizes both splits (training the tokenizer when `tokenizer`
// is null), checks that one window fits and builds the objective's fixed validation set in
// batches of `batch_size` windows. Throws one-line errors naming the file, or the key when the
// validation set has no token to score (data.mask_prob too small).
PreparedData prepare_data(const DataConfig& config, size_t batch_size,
                          std::unique_ptr<data::Tokenizer>& tokenizer, data::Objective objective);

// Evaluation at another window length L (roformer eval --seq-len, roformer extrapolate): the
// first max_text_tokens validation tokens (0 = all) cut into windows of L, so that every L
// scores the same tokens (mlm: the same per-token masks; clm: every token after the first).
std::vector<Batch> length_eval_batches(const DataConfig& config, data::Objective objective,
                                                const std::vector<int>& validation_ids,
                                                size_t length, size_t batch_size, size_t vocab_size,
                                                size_t max_text_tokens);

}  // namespace rf
