// Room — train: the training loop, for both objectives (train.objective, data/objective.hpp).
//
//   train: every step draws B random windows (mlm: and fresh masks) from Rng(seed, step), so
//          a resumed run sees exactly the batches an uninterrupted one would
//   mlm: loss on the masked positions; clm: loss on every next token, causal attention
//   evaluation on the fixed validation set of data/prepare.hpp; checkpoints in checkpoint.hpp
// docs/training.md has the loop as pseudo-code; train() reads the same.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

#include "config/config.hpp"
#include "data/prepare.hpp"
#include "train/evaluate.hpp"

namespace rf {

class Communicator;  // train/communicator.hpp

struct TrainOptions {
    std::string out_dir;    // the run directory (created; must be new unless resume)
    bool resume = false;    // continue from out_dir's checkpoint
    size_t stop_after = 0;  // stop (with a checkpoint) after this step; 0 = train.steps
    bool quiet = false;     // no progress output
    // Watches the engine during the training steps (not evaluations): `--profile` passes the
    // profiler (src/inspect/profile.hpp). nullptr: nothing watches.
    EngineObserver* observer = nullptr;
    // The ranks that train this model together (data parallelism, train/data_parallel.hpp);
    // null: this process alone (a SingleProcess). cli/cmd_train.cpp passes mpirun's ranks.
    Communicator* communicator = nullptr;
    // Called at the start of each training step (end = false) and at its end (true), with the
    // step's index (0 = step 1): a coverage build of `roformer train` counts step 1's lines
    // with it (cli/cmd_train.cpp, RF_COVERAGE). Empty: nothing is called.
    std::function<void(size_t step, bool end)> around_step;
};

struct TrainSummary {
    size_t steps = 0;       // the step the run is at when train() returns
    size_t start_step = 0;  // the step it started (resumed) from
    EvalResult final_eval;
    double unigram_entropy = 0;  // of the validation labels (PreparedData::unigram_entropy)
    double tokens_per_s = 0;     // tokens trained by this call / seconds spent in
                                 // training steps (evaluations, checkpoints excluded)
    double forward_flops_per_token = 0;
    double step_seconds = 0;  // seconds spent in this call's training steps
    double elapsed_s = 0;
    int interrupted_by = 0;  // SIGINT / SIGTERM that stopped the run (after a checkpoint), or 0
};

// Trains `config` into options.out_dir (see checkpoint.hpp for what it writes). Output goes to
// `log`: a one-line progress bar on a terminal, plain lines otherwise.
TrainSummary train(const Config& config, const TrainOptions& options, std::ostream& log);

}  // namespace rf
