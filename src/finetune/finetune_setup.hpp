// Room — finetune: the set-up of a fine-tune (used by finetune.cpp): the --from run, the
// task's examples, the run directory (fresh or resumed), the encoder, the floors, the steps.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nn/adamw.hpp"
#include "run/checkpoint.hpp"
#include "run/checkpoint_commit.hpp"
#include "finetune/finetune.hpp"
#include "finetune/finetune_data.hpp"
#include "run/run_directory.hpp"
#include "run/run_lock.hpp"

namespace rf::finetune_setup {

// The --from run: config, tokenizer, encoder (from scratch: config and tokenizer only, so a
// baseline can run beside a pre-training that has not finished). Refuses a causal-LM run.
LoadedRun load_source(const FinetuneOptions& options);

// The task and its examples as token ids (a fixed-seed subset of the training examples when
// finetune.max_train_examples is set; with early stopping, a fixed 10 % of those held out as
// the validation examples).
struct TaskData {
    data::ClassificationTask task;
    EncodedExamples train, validation, test;
};
TaskData load_task(const FinetuneConfig& fc, const LoadedRun& source);

// The task itself (every split, as text): finetune.task built from finetune.corpus (or
// fortunes_dir), its test chapters those the pre-training held out (the encoder config's
// data.validation_fraction). load_task and `classify --test-split` both build it here.
data::ClassificationTask build_task(const FinetuneConfig& fc, const Config& encoder_config);

// Early stopping's validation examples: a fixed draw (whatever the run's seed) of 10 % (at
// least 1) of the training examples; both parts keep the examples' order.
void hold_out_validation(std::vector<data::LabelledExample>& train,
                         std::vector<data::LabelledExample>& validation);

// The run directory: a fresh one (locked, empty) gets its fixed files; a resumed one is
// checked against this invocation and its last checkpoint recovered.
struct OpenedRun {
    std::optional<RunDirectory> fresh;
    std::optional<RunLock> resume_lock;
    CheckpointState resumed;
};
OpenedRun open_run_directory(const FinetuneConfig& fc, const FinetuneOptions& options,
                             const Config& encoder_config, const TaskData& d,
                             const LoadedRun& source);

// The encoder: the architecture of the --from run, its weights copied in unless from scratch.
std::unique_ptr<RoFormer> make_encoder(const FinetuneConfig& fc, const FinetuneOptions& options,
                                       const Config& encoder_config, const LoadedRun& source);

// A resumed run: the model and the optimizer state of its last checkpoint.
void restore_checkpoint(const std::string& dir, SequenceClassifier& model, AdamW& optimizer);

// The floors on the test split: bag of words and the majority class (floor.json when `write`).
void score_floors(const TaskData& d, const FinetuneConfig& fc, size_t vocab, bool write,
                  const std::string& dir, FinetuneSummary& summary);

// The steps: batches by length, steps per epoch, the learning-rate schedule.
struct StepPlan {
    std::vector<size_t> lengths;  // each training example's framed length
    size_t per_epoch = 0, total_steps = 0;
    TrainConfig schedule;  // the fine-tune schedule in the trainer's terms: linear to 0
};
StepPlan plan_steps(const FinetuneConfig& fc, const EncodedExamples& train);

}  // namespace rf::finetune_setup
