// Stage 7 — train: the run configuration, in one place.
//
// Every knob of a run lives in `Config` below, with its default and a comment. A TOML file
// (configs/*.toml) holds ONLY the keys it changes; `--set table.key=value` on the command
// line overrides the file; validate() rejects values that cannot work, naming the key.
// The resolved Config is written into each run directory by to_toml() and reloads to the
// identical Config.
//
//   defaults (this file) → configs/NAME.toml → --set overrides → validate()
//
// Keys are `table.key` (e.g. "train.lr"); the tables are [model], [position], [data], [train].
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model_config.hpp"
#include "position/position.hpp"

namespace rf {

// [model] — the encoder's size: rf::ModelConfig in model/model_config.hpp.


// [data] — the corpus, the tokenizer and the MLM windows.
struct DataConfig {
    std::string path = "data/kjv.txt";  // UTF-8 text file to train on
    std::string tokenizer = "bpe";      // bpe | char
    size_t vocab_size = 2000;           // bpe: target vocabulary incl. the 5 special tokens
                                        // (char: ignored, the alphabet decides)
    size_t seq_len = 128;               // T: tokens per training window
    double validation_fraction = 0.05;  // share of the text (whole blocks) held out
    size_t val_windows = 256;           // fixed validation windows (fixed masks, seeded once)
    double mask_prob = 0.15;            // share of non-special tokens selected for the loss
};

// [train] — optimisation and bookkeeping.
struct TrainConfig {
    size_t seed = 1;                  // seeds init, masking and batch order (same seed →
                                      // bit-identical run on the same machine and threads)
    size_t batch_size = 32;           // B: windows per step
    size_t steps = 2000;              // optimizer updates in the run
    double lr = 1e-3;                 // peak learning rate (reached at the end of warmup)
    double min_lr_ratio = 0.1;        // the decay ends at min_lr_ratio · lr
    size_t warmup_steps = 100;        // linear warmup from lr/warmup_steps up to lr
    std::string schedule = "cosine";  // after warmup: cosine | linear | constant
    double beta1 = 0.9;               // AdamW first-moment decay
    double beta2 = 0.98;              // AdamW second-moment decay (BERT/RoBERTa-style 0.98)
    double eps = 1e-6;                // AdamW denominator ε
    double weight_decay = 0.01;       // decoupled decay on 2-D weights (incl. embeddings);
                                      // never on biases or LayerNorm
    double grad_clip = 1.0;           // clip the global gradient norm to this; 0 = no clipping
    size_t eval_every = 100;          // evaluate every N steps; 0 = only the final evaluation
    size_t eval_batches = 0;          // validation batches per evaluation; 0 = all windows
    size_t log_every = 10;            // log / write a metrics row every N steps
    size_t threads = 1;               // worker threads (OpenMP + OpenBLAS); 0 = all cores.
                                      // 1 by default, so that runs side by side (roformer
                                      // compare, notebooks, tests) never share a core; a run
                                      // alone on 2 free cores is 1.5× faster with 2 (README,
                                      // Performance)
    size_t checkpoint_every = 0;      // save a checkpoint every N steps; 0 = only at the end
};

struct Config {
    ModelConfig model;
    PositionConfig position;  // [position] — see position/position.hpp for every field
    DataConfig data;
    TrainConfig train;
};

// The defaults above, as a value.
Config default_config();

// Applies every key of a TOML file (only overrides). Throws std::runtime_error on a missing
// file or malformed TOML (with line:column), std::invalid_argument on an unknown key or a
// wrong type, always naming the file and the key.
void apply_toml_file(Config& config, const std::string& path);

// Applies one "table.key=value" override (the value as it would be written in TOML; string
// keys also accept bare text: data.path=data/x.txt). Throws std::invalid_argument naming the key.
void apply_override(Config& config, const std::string& assignment);

// Throws std::invalid_argument naming the key when a value cannot work (sizes, ranges,
// hidden % num_heads, the position scheme's constraints, seq_len vs learned max_positions, ...).
void validate(const Config& config);

// The resolved config, every key, grouped in tables; apply_toml_file of it gives back an
// identical Config (floats printed in shortest round-trip form).
std::string to_toml(const Config& config);

// defaults → the file (if given) → the overrides in order → validate().
Config load_config(const std::optional<std::string>& path,
                   const std::vector<std::string>& overrides = {});

// Every key as "table.key", in declaration order (for help texts and tests).
std::vector<std::string> config_keys();

// True when every key holds the same value (doubles compared exactly).
bool operator==(const Config& a, const Config& b);
inline bool operator!=(const Config& a, const Config& b) { return !(a == b); }

}  // namespace rf
