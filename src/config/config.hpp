// Room — config: the run configuration, in one place.
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

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "data/data_config.hpp"
#include "data/objective.hpp"
#include "fast/fast_config.hpp"
#include "model/model_config.hpp"
#include "position/position.hpp"

namespace rf {

// [model] — the encoder's size: rf::ModelConfig in model/model_config.hpp.
// [position] — the position scheme: rf::PositionConfig in position/position.hpp.
// [data] — the corpus, the tokenizer and the MLM windows: rf::DataConfig in data/data_config.hpp.

// train.schedule, the learning rate after warm-up (train/schedule.hpp)
enum class Schedule { cosine, linear, constant };
constexpr std::array<NamedValue<Schedule>, 3> named_values(Schedule) {
    return {{{Schedule::cosine, "cosine"},
             {Schedule::linear, "linear"},
             {Schedule::constant, "constant"}}};
}

// [train] — optimisation and bookkeeping.
struct TrainConfig {
    data::Objective objective =
        data::Objective::mlm;   // mlm: masked-language modelling (BERT),
                                // bidirectional; clm: predict token t+1 from tokens ≤ t,
                                // causal attention (data/objective.hpp)
    size_t seed = 1;            // seeds init, masking and batch order (same seed →
                                // bit-identical run on the same machine and threads)
    size_t batch_size = 32;     // B: windows per step
    size_t steps = 2000;        // optimizer updates in the run
    double lr = 1e-3;           // peak learning rate (reached at the end of warmup)
    double min_lr_ratio = 0.1;  // the decay ends at min_lr_ratio · lr
    size_t warmup_steps = 100;  // linear warmup from lr/warmup_steps up to lr
    Schedule schedule = Schedule::cosine;  // after warmup: cosine | linear | constant
    double beta1 = 0.9;                    // AdamW first-moment decay
    double beta2 = 0.98;                   // AdamW second-moment decay (BERT/RoBERTa-style 0.98)
    double eps = 1e-6;                     // AdamW denominator ε
    double weight_decay = 0.01;            // decoupled decay on 2-D weights (incl. embeddings);
                                           // never on biases or LayerNorm
    double grad_clip = 1.0;                // clip the global gradient norm to this; 0 = no clipping
    size_t eval_every = 100;               // evaluate every N steps; 0 = only the final evaluation
    size_t eval_batches = 0;               // validation batches per evaluation; 0 = all windows
    size_t log_every = 10;                 // log / write a metrics row every N steps
    size_t threads = 1;                    // worker threads (OpenMP + OpenBLAS); 0 = all cores.
                                           // 1 by default, so that runs side by side (roformer
                                           // compare, notebooks, tests) never share a core; a run
                                           // alone on 2 free cores is 1.5× faster with 2 (README,
                                           // Performance)
    size_t checkpoint_every = 0;           // save a checkpoint every N steps; 0 = only at the end
};

struct Config {
    ModelConfig model;
    FastConfig fast;  // [model] fused, isa, products, precision: the fast path's (fast/)
    PositionConfig position;  // [position] — see position/position.hpp for every field
    DataConfig data;
    TrainConfig train;
};

// The defaults above, as a value.
Config default_config();

// ---- the key table: the ONE list of "table.key → member of Config" -----------------------
// TOML files, --set overrides, to_toml, operator==, checkpoint compatibility and the
// comparison's per-run overrides all walk it, so a new knob is added in two places only: its
// member (with default and comment) in its struct and its row in config_fields().
// An enum member (model.attention, position.scheme, …): read and written as its word, parsed
// once when the config is read (tensor/named_enum.hpp); a word that is not one of the enum's
// is refused there, naming the key and the allowed words.
struct EnumField {
    std::function<std::string()> get;                                          // "linear"
    std::function<void(const std::string& word, const std::string& key)> set;  // throws
    std::function<std::string()> choices;                                      // "softmax, linear"
};
using ConfigValue = std::variant<size_t*, double*, bool*, std::string*, EnumField>;
struct ConfigField {
    const char* table;  // "model", "position", "data", "train"
    const char* key;    // "hidden", ...
    // true: the key may differ when a trained model is evaluated (data.*, train.*, dropout,
    // position.interpolation_factor / ntk_factor, position.scaling and its knobs); false: it
    // defines the trained model, so a checkpoint is refused when it differs.
    bool eval_time;
    ConfigValue value;  // points into the Config the table was made for
    std::string name() const { return std::string(table) + "." + key; }
};
// Every field of `config`, in declaration order, pointing into `config`.
std::vector<ConfigField> config_fields(Config& config);
// The field called "table.key"; throws std::invalid_argument naming it (with a did-you-mean
// and the known keys) when there is no such key. `where` is appended to the message.
ConfigField find_config_field(Config& config, const std::string& name,
                              const std::string& where = "");
// The value as to_toml writes it: 128, 0.001, true, "rope".
std::string render_value(const ConfigValue& value);

// The keys that define the trained model (eval_time = false) with their rendered values,
// "model.hidden" → "128": what a checkpoint records and is checked against on load.
std::map<std::string, std::string> model_signature(const Config& config);

// Applies every key of a TOML file (only overrides). Throws std::runtime_error on a missing
// file or malformed TOML (with line:column), std::invalid_argument on an unknown key or a
// wrong type, always naming the file and the key. Tables named in `other_tables` belong to
// another reader (e.g. [compare]) and are skipped.
void apply_toml_file(Config& config, const std::string& path,
                     const std::vector<std::string>& other_tables = {});
// The same for TOML text already read; `path` names it in messages.
void apply_toml_text(Config& config, const std::string& text, const std::string& path,
                     const std::vector<std::string>& other_tables = {});
// A config file larger than this is refused unread (ours are < 2 kB).
inline constexpr uintmax_t kMaxConfigBytes = uintmax_t(1) << 20;

// Applies one "table.key=value" override (the value as it would be written in TOML; string
// keys also accept bare text: data.path=data/x.txt). Throws std::invalid_argument naming the key.
void apply_override(Config& config, const std::string& assignment);

// Throws std::invalid_argument naming the key when a value cannot work (sizes, ranges,
// hidden % num_heads, the position scheme's constraints, seq_len vs learned max_positions, ...).
void validate(const Config& config);
// Part of validate(): every number key finite (inf / nan refused, naming the key).
void validate_finite(const Config& config);
// Part of validate(): each size key under its ceiling, and the estimated memory of training
// (parameters, AdamW state, activations) under the machine's memory (config/limits.cpp).
void validate_limits(const Config& config);
// One of those ceilings: throws std::invalid_argument when `value` is over the ceiling of
// `key` ("train.threads"), naming it `shown_as` — another table's key that means the same
// (finetune.threads), so the two share one rule.
void check_size_limit(const std::string& key, size_t value, const std::string& shown_as);

// The resolved config, every key, grouped in tables; apply_toml_file of it gives back an
// identical Config (floats printed in shortest round-trip form).
std::string to_toml(const Config& config);

// defaults → the file (if given) → after_file (if given) → the overrides in order → validate().
// A run's own config.toml (to_toml's header) meets the idle-key rule only in what the overrides
// change (validate_effects.hpp). after_file: how a reader adjusts a run's file (run_config.hpp).
Config load_config(const std::optional<std::string>& path,
                   const std::vector<std::string>& overrides = {},
                   const std::function<void(Config&)>& after_file = {});

// Every key as "table.key", in declaration order (for help texts and tests).
std::vector<std::string> config_keys();

// The first key (in declaration order) whose value differs, as "train.lr is 0.001 there but
// 0.002 now"; "" when none does (values compared as to_toml writes them).
std::string config_difference(const Config& there, const Config& now);

// True when every key holds the same value (doubles compared exactly).
bool operator==(const Config& a, const Config& b);
inline bool operator!=(const Config& a, const Config& b) { return !(a == b); }

}  // namespace rf
