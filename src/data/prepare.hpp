// Stage 6 — data: from the [data] table to what training and evaluation consume.
//
//   corpus → split (whole blocks) → tokenizer trained on the train split → token ids
//   validation: a fixed list of windows with fixed masks (one constant seed for every run),
//          so every evaluation of every run is on identical inputs
// (Training windows are drawn per step by data::MlmSampler, see mlm.hpp.)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/data_config.hpp"
#include "data/mlm.hpp"
#include "data/tokenizer.hpp"

namespace rf {

// The validation masks' seed: the same for every run, whatever train.seed is.
constexpr uint64_t kValidationSeed = 20210420;

struct PreparedData {
    std::string split_summary;
    std::vector<int> train_ids, validation_ids;
    std::vector<data::MlmBatch> validation;  // the fixed validation set at data.seq_len
    double masked_unigram_entropy = 0;  // nats: −mean log p_train(label) over validation labels
};

// Loads and splits data.path, tokenizes both splits (training the tokenizer when `tokenizer`
// is null), checks that one window fits and builds the fixed validation set in batches of
// `batch_size` windows. Throws one-line errors naming the file.
PreparedData prepare_data(const DataConfig& config, size_t batch_size,
                          std::unique_ptr<data::Tokenizer>& tokenizer);

}  // namespace rf
