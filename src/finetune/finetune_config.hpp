// Room — finetune: the fine-tuning table (`roformer finetune --config FILE --set key=value`).
//
// One flat [finetune] table; every key has a default here, a file or --set overrides it, and
// the resolved table is saved as finetune.toml in the run directory. The encoder's own
// settings (sizes, position scheme) come from the pre-trained run and cannot change here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rf {

// The most passes finetune.epochs may ask for (finetune_config.cpp says why).
inline constexpr size_t kMaxFinetuneEpochs = 1000;

struct FinetuneConfig {
    std::string task = "kjv-testament";   // which task (finetune/tasks.hpp lists them)
    std::string corpus = "data/kjv.txt";  // the text the KJV tasks are built from
    std::string fortunes_dir = "/usr/share/games/fortunes";  // fortunes-topic's topic files
    double lr = 1e-4;   // peak AdamW learning rate (BERT fine-tunes at 1e-5…1e-4)
    size_t epochs = 2;  // passes over the task's training examples
    size_t batch_size = 32;
    size_t warmup_steps = 100;      // linear warm-up, then linear decay to 0
    double dropout = 0.1;           // encoder and head dropout while fine-tuning
    double weight_decay = 0.01;     // AdamW, on 2-D weights only (nn/layers.hpp)
    double grad_clip = 1.0;         // global gradient-norm clip; 0 = none
    size_t max_len = 64;            // tokens per example incl. [CLS]/[SEP]; longer is cut
    size_t max_train_examples = 0;  // 0 = all; else a fixed-seed subset (faster runs)
    size_t eval_every = 0;          // also evaluate every N steps (0: after each epoch)
    // Early stopping (0 = off): stop when this many evaluations in a row have not raised the
    // validation macro-F1. The validation examples are a fixed 10 % of the training examples,
    // held out of training only when patience > 0; the best model is kept as best.safetensors.
    size_t patience = 0;
    size_t seed = 1;  // head init, example order, dropout
    size_t threads = 2;
};

// Defaults, then the [finetune] table of `path` (if given), then each "key=value" override
// (the key with or without "finetune."). Unknown keys and bad values: std::invalid_argument
// naming the key and the file.
FinetuneConfig load_finetune_config(const std::optional<std::string>& path,
                                    const std::vector<std::string>& overrides = {});
std::string to_toml(const FinetuneConfig& config);

}  // namespace rf
