// Room — train: the training loop, for both objectives (train.objective, data/objective.hpp).
//
//   train: every step draws B random windows (mlm: and fresh masks) from Rng(seed, step), so
//          a resumed run sees exactly the batches an uninterrupted one would
//   mlm: loss on the masked positions; clm: loss on every next token, causal attention
//   evaluation on the fixed validation set of data/prepare.hpp; checkpoints in checkpoint.hpp
// docs/training.md has the loop as pseudo-code; train() reads the same.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "data/prepare.hpp"
#include "step/train_step.hpp"
#include "train/evaluate.hpp"

namespace rf {

class Communicator;  // train/communicator.hpp

// One update of the model on the step's batch: the loop runs train_step (src/step/) unless
// something from outside replaces it — data parallelism (train/data_parallel.hpp: this rank's
// rows, the gradients summed over the ranks between the step's two halves) or the profiler
// (cli/cmd_train.cpp: the engine watched during the step).
using StepFunction = std::function<StepResult(RoFormer& model, AdamW& optimizer,
                                              const Batch& batch, uint64_t dropout_seed,
                                              double grad_clip, double lr, size_t step)>;
// The validation loss and accuracy on the first max_batches batches (0: all): evaluate()
// unless replaced (data parallelism splits the batches over the ranks).
using EvaluateFunction = std::function<EvalResult(RoFormer& model, const std::vector<Batch>& batches,
                                                  size_t max_batches)>;
// Asked after every step, with the seconds the step and its evaluation took: a stop signal's
// number (the run checkpoints and returns) or 0. The command line installs the signal handlers
// (run/interrupt.hpp) and answers from them; with P ranks every rank must agree.
using StopFunction = std::function<int(double work_seconds)>;

struct TrainOptions {
    std::string out_dir;    // the run directory (created; must be new unless resume)
    bool resume = false;    // continue from out_dir's checkpoint
    size_t stop_after = 0;  // stop (with a checkpoint) after this step; 0 = train.steps
    bool quiet = false;     // no progress output
    // ---- what plugs in from outside; the command line assembles it (cli/cmd_train.cpp) ----
    StepFunction step = train_step;
    EvaluateFunction evaluate = rf::evaluate;
    StopFunction stop = [](double) { return 0; };  // never asked to stop
    // The ranks that train this model together, for the set-up around the loop (one run
    // directory, the same data and settings, rank 0's weights; train/data_parallel.hpp); null:
    // this process alone. The loop itself sees only `step`, `evaluate` and `stop`.
    Communicator* communicator = nullptr;
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
