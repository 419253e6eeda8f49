// Room — finetune: fine-tuning a pre-trained encoder on a classification task.
//
//   load the MLM run (--from): its config, tokenizer and encoder weights (the MLM head is
//     dropped); or, --from-scratch, the same architecture and tokenizer with fresh weights
//   build the task (finetune/tasks.hpp), tokenize, frame ([CLS] a [SEP] (b [SEP]))
//   attach a fresh classification head (model/classifier.hpp)
//   epochs × batches of equal-length examples (no padding, so no attention mask is needed):
//     AdamW, linear warm-up then linear decay to 0 (train/schedule.hpp's lr_at)
//   evaluate on the held-out test chapters after every epoch (and every eval_every steps):
//     loss, accuracy, macro-F1 → metrics.csv
//   the bag-of-words floor on the same split, once, → floor.json
//
// The fine-tune run directory (same lock and checkpoint commit as `roformer train`):
//   finetune.toml      the resolved fine-tune table
//   config.toml        the encoder's config (from the MLM run)
//   tokenizer.json     the MLM run's tokenizer, unchanged
//   task.json          task name, labels, pair or not, max_len, where the encoder came from
//   split.txt          which chapters are the test set
//   metrics.csv        step,epoch,train_loss,test_loss,accuracy,macro_f1,lr,elapsed_s
//                      (+ val_loss,val_accuracy,val_macro_f1 with early stopping)
//   floor.json         the bag-of-words floor and the majority-class baseline on the test set
//   model.safetensors  roformer.* + classifier.* (HF RoFormerForSequenceClassification names),
//                      committed with optimizer.safetensors and checkpoint.json after every
//                      epoch and on Ctrl-C / --stop-after (--resume continues from it)
//   best.safetensors   early stopping (finetune.patience > 0) only: the model of the evaluation
//                      with the highest validation macro-F1 (ties: the earlier), committed with
//                      every checkpoint beside early_stopping.json (the best step and score,
//                      evaluations since, whether the run stopped); `classify` reads it
//   lock
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "finetune/finetune_config.hpp"
#include "data/tokenizer.hpp"
#include "model/classifier.hpp"
#include "finetune/classification_metrics.hpp"

namespace rf {

struct FinetuneOptions {
    std::string from_run;       // the pre-trained MLM run directory
    bool from_scratch = false;  // keep its architecture and tokenizer, not its weights
    std::string out_dir;
    bool resume = false;    // continue out_dir from its last checkpoint
    size_t stop_after = 0;  // stop (with a checkpoint) after this step; 0 = run to the end
    bool quiet = false;
    std::string resume_command;  // what continues this run (kept for classify's warning)
};

struct FinetuneSummary {
    size_t steps = 0, total_steps = 0;
    ClassificationScore test;      // the last evaluation
    ClassificationScore floor;     // bag of words
    bool floor_converged = true;   // its training reached its tolerance (bag_of_words.hpp)
    size_t floor_iterations = 0;
    double majority_accuracy = 0;  // always the most frequent training class
    double elapsed_s = 0;
    int interrupted_by = 0;
    // Early stopping (finetune.patience > 0): the validation score of the best evaluation,
    // its step, and whether the run stopped before its last step because of it.
    bool early_stopping = false, stopped_early = false;
    size_t best_step = 0, validation_examples = 0;
    ClassificationScore best_validation;
    ClassificationScore best_test;  // the test score of that best model
    std::vector<std::string> warnings;  // one line each: what the served model is, if not plain
};

FinetuneSummary finetune(const FinetuneConfig& config, const FinetuneOptions& options,
                         std::ostream& log);

// What to add after the floor's accuracy: "" when its training converged and it is at least the
// majority class; otherwise says which (a floor below the majority class is never printed bare).
std::string floor_note(const FinetuneSummary& summary);

// The format tag of a fine-tuned run's model.safetensors (written by finetune, checked by
// load_classifier_run).
inline constexpr const char* kClassifierFormat = "roformer-cpp classifier";

// ---- classifier_run.cpp ------------------------------------------------------------------
// A finished (or interrupted) fine-tune run, ready to classify.
struct ClassifierRun {
    std::unique_ptr<data::Tokenizer> tokenizer;
    std::unique_ptr<SequenceClassifier> model;
    std::vector<std::string> labels;
    bool pair = false;
    size_t max_len = 0;
    std::string task;
    std::string weights;  // the file the model came from: best.safetensors if the run has one
};
ClassifierRun load_classifier_run(const std::string& run_dir);

// Class probabilities for one text (or pair): softmax of the logits.
std::vector<double> classify(ClassifierRun& run, const std::string& a, const std::string* b);

// The run's test split scored again with the model classify uses (`classify --test-split`):
// the task rebuilt from the run's finetune.toml and config.toml (the same text, the same held-out
// chapters), loss, accuracy, macro-F1 and the confusion matrix. Without early stopping this is
// the last metrics.csv row; with it, early_stopping.json's best test score. Throws if the task's
// labels are no longer the run's (a changed corpus or fortunes package).
ClassificationScore score_test_split(ClassifierRun& run, const std::string& run_dir);

}  // namespace rf
