// Stage 7 — train: the MLM training loop, evaluation, and the data it runs on.
//
//   corpus → split (whole blocks) → tokenizer trained on the train split → token ids
//   train: every step draws B random windows and fresh masks from Rng(seed, step), so a
//          resumed run sees exactly the batches an uninterrupted one would
//   validation: a fixed list of windows with fixed masks (one constant seed for every run),
//          so every evaluation of every run is on identical inputs
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "data/mlm.hpp"
#include "data/tokenizer.hpp"
#include "model/roformer.hpp"
#include "train/config.hpp"

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
// is null), checks that one window fits and builds the fixed validation set. Throws one-line errors naming the file.
PreparedData prepare_data(const Config& config, std::unique_ptr<data::Tokenizer>& tokenizer);

struct EvalResult {
    double loss = 0;          // mean cross-entropy over every masked position (nats)
    double accuracy = 0;      // share of masked positions whose arg-max is the label
    size_t predictions = 0;   // masked positions counted
};
// max_batches = 0: all of them.
EvalResult evaluate(RoFormerMLM& model, const std::vector<data::MlmBatch>& batches,
                    size_t max_batches = 0);

struct TrainOptions {
    std::string out_dir;      // the run directory (created; must be new unless resume)
    bool resume = false;      // continue from out_dir's checkpoint
    size_t stop_after = 0;    // stop (with a checkpoint) after this step; 0 = train.steps
    bool quiet = false;       // no progress output
};

struct TrainSummary {
    size_t steps = 0;
    EvalResult final_eval;
    double unigram_entropy = 0;
    double tokens_per_s = 0;             // tokens trained by this call / seconds spent in
                                         // training steps (evaluations, checkpoints excluded)
    double forward_flops_per_token = 0;
    double elapsed_s = 0;
};

// Trains `config` into options.out_dir (see checkpoint.hpp for what it writes). Output goes to
// `log`: a one-line progress bar on a terminal, plain lines otherwise.
TrainSummary train(const Config& config, const TrainOptions& options, std::ostream& log);

}  // namespace rf
