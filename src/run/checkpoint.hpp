// Room — run: a run directory and the checkpoints in it.
//
// runs/NAME/
//   config.toml             the resolved config (every key), reloadable
//   tokenizer.json          the tokenizer trained on the training split
//   split.txt               which blocks of the corpus are validation (one line)
//   corpus.json             the corpus's path, size and FNV-1a hash, checked by --resume
//   metrics.csv             one row per logged step (docs/training.md explains the columns)
//   model.safetensors       weights under HF RoFormerForMaskedLM names (+ FAVOR's fixed
//                           projections, model.buffers()); __metadata__ holds the config,
//                           position scheme, pairing, step and "recorded_by" (the run has a
//                           record in checkpoint.json: run/checkpoint_commit.hpp)
//   optimizer.safetensors   AdamW moments + step, for --resume
//   checkpoint.json         the commit record: step, size + hash of the two files above
//                           and of the run's own files, corpus.json included
//                           (run/checkpoint_commit.hpp)
//   lock                    the writer's pid (the flock is on the directory: run/run_lock.hpp)
#pragma once

#include <map>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "data/tokenizer.hpp"
#include "model/roformer.hpp"
#include "nn/adamw.hpp"

namespace rf {

std::string run_file(const std::string& run_dir, const std::string& name);

// Writes model.safetensors (+ optimizer.safetensors when `optimizer` is given) as one
// checkpoint, committed with checkpoint.json (run/checkpoint_commit.hpp).
// `extra` adds entries to the model file's __metadata__ (the trainer's resume bookkeeping).
void save_checkpoint(const std::string& run_dir, const RoFormer& model, const Config& config,
                     size_t step, const AdamW* optimizer,
                     const std::map<std::string, std::string>& extra = {});

// The __metadata__ map of a model checkpoint.
std::map<std::string, std::string> read_checkpoint_metadata(const std::string& path);

// Copies the weights of `path` into `model`. Refuses (std::runtime_error, one line) when the
// checkpoint's position scheme, pairing or model config differ from the model's, or when a
// tensor (parameter or buffer) is missing or has another shape. Returns the checkpoint's step.
size_t load_model_weights(RoFormer& model, const Config& config, const std::string& path);
void load_optimizer_state(AdamW& optimizer, const std::string& path);
// The bytes of optimizer.safetensors (AdamW's moments + step) for commit_checkpoint: for a
// writer of another model file (finetune/finetune.cpp) that commits the optimizer beside it.
std::string optimizer_file_bytes(const AdamW& optimizer);

// A trained run, ready to evaluate or predict.
struct LoadedRun {
    Config config;
    std::unique_ptr<data::Tokenizer> tokenizer;
    std::unique_ptr<RoFormer> model;
    size_t step = 0;
};

// Loads config.toml, tokenizer.json and model.safetensors from `run_dir`. `overrides` are
// applied to the saved config first; only evaluation-time keys may change (data.*,
// position.interpolation_factor, position.ntk_factor, position.scaling and its knobs,
// train.threads, train.eval_batches) —
// anything that changes the model is refused with a message naming the key.
LoadedRun load_run(const std::string& run_dir, const std::vector<std::string>& overrides = {});

// ModelConfig with vocab_size filled from the tokenizer.
ModelConfig resolved_model_config(const Config& config, size_t tokenizer_vocab_size);

}  // namespace rf
