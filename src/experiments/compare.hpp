// Room — experiments: train every position scheme × seed on identical inputs and summarize.
//
//   roformer compare --config configs/compare.toml [--out runs/compare] [--seeds N]
//                    [--schemes a,b,...] [--set key=value ...]
// DIR/
//   <scheme>/seed<k>/   one ordinary run directory per scheme × seed (roformer train's layout)
//   curves.csv          scheme,seed,step,train_loss,val_loss,val_accuracy (validation rows only)
//   summary.md          per scheme: final loss, steps to a threshold, paired test vs learned
//   curves.png          drawn by scripts/plot_curves.py (the C++ writes no images)
//
// The preset is an ordinary config file plus an optional [compare] table, read here and
// stripped before the rest goes through the usual config loader:
//   [compare]
//   schemes = ["rope_interleaved", "rope_half", ...]   # default: all six
//   seeds = 3                                          # train.seed = 1 … seeds
//   jobs = 2                                           # runs trained at once (default 1)
//   loss_threshold = 2.3                               # nats; 0 or absent = automatic
//   "model.attention" = ["softmax", "linear"]          # sweep ANY key (crossed), and/or
//   [compare.variants] name = ["key=value", ...]       # named extra runs (compare_preset.cpp)
// Command-line --seeds / --schemes / --jobs / --threshold override the table.
// Interruption (docs/training.md, "What every command guarantees"): a run is finished only when
// its checkpoint.json reaches train.steps; a stop signal stops every run at a step boundary with
// a checkpoint, the parent forwarding it to its forked children (own process group, SIGTERM
// should the parent die); nothing is summarised, and the same command continues every run.
// With jobs > 1 each run trains in its own forked process with train.threads threads (set
// train.threads = 1 and jobs = cores: at this model size one thread per run is far more
// efficient than several threads on one run). Results do not depend on jobs.
//
// Within one seed the runs differ only in the position scheme (or the swept keys): same tokenizer,
// training windows, masks, batch order, validation windows and masks, hyperparameters, and the same
// initial weights (the learned table is drawn from its own generator, so every other weight
// is bit-identical across schemes).
#pragma once

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "experiments/compare_stats.hpp"
#include "experiments/curves.hpp"
#include "experiments/report.hpp"

namespace rf {

// rope_interleaved, rope_half, sinusoidal, learned, none, alibi — the default order.
const std::vector<std::string>& comparison_schemes();

// Sets position.scheme (and position.pairing for the two RoPE names). Throws
// std::invalid_argument listing the valid names.
void apply_comparison_scheme(Config& config, const std::string& scheme);

struct CompareSettings {
    std::vector<std::string> schemes = comparison_schemes();  // the runs' names, in order
    // name → "table.key=value" overrides, for runs that are not built-in scheme names: swept
    // keys and [compare.variants] (compare_preset.cpp). A built-in name is not listed here.
    std::map<std::string, std::vector<std::string>> variants;
    size_t seeds = 3;
    size_t jobs = 1;
    double loss_threshold = 0;  // ≤ 0: automatic (see summarize_curves)
};

struct ComparePreset {
    Config base;  // the preset's config (train.seed and position.* overwritten per run)
    CompareSettings settings;
    // Keys compare sets per run itself (train.seed, position.scheme, position.pairing) that the
    // file's tables or --set also set, with where: "--set train.seed=3", "FILE (line 7)".
    std::vector<std::pair<std::string, std::string>> per_run_keys_set;
};

// defaults → the file's tables (except [compare]) → overrides → validate(); the file's
// [compare] table fills `settings`. Errors name the file and the key.
ComparePreset load_compare_preset(const std::optional<std::string>& path,
                                  const std::vector<std::string>& overrides = {});

// The Config of one run: base, the run's overrides (from `variants`, else the built-in scheme
// name's), train.seed = seed; validated.
Config comparison_run_config(const Config& base, const std::string& name, size_t seed,
                             const std::map<std::string, std::vector<std::string>>& variants = {});

// Throws std::invalid_argument for no runs, 0 seeds, an unknown or repeated name.
void check_compare_settings(const CompareSettings& settings);
// check_compare_settings, and refuses a position.scheme / position.pairing from the file's
// tables or --set when a run is a built-in scheme name (which sets both itself). train.seed
// set anywhere, train.seed in a sweep or variant, and position.* swept next to `schemes` are
// refused by load_compare_preset, naming the key and where it is.
void check_compare_preset(const ComparePreset& preset);

// DIR/<scheme>/seed<k>
std::string comparison_run_dir(const std::string& out_dir, const std::string& scheme, size_t seed);

struct CompareOptions {
    std::string out_dir = "runs/compare";
    bool plot = true;         // run scripts/plot_curves.py at the end
    std::string plot_script;  // empty: search (see find_plot_script)
};

struct CompareReport {
    size_t trained = 0;  // started from scratch
    size_t resumed = 0;  // continued from a checkpoint
    size_t skipped = 0;  // already finished
    ComparisonSummary summary;
    bool plotted = false;  // curves.png was written
    // A stop signal (SIGINT, SIGTERM, SIGHUP, SIGPIPE) ended the comparison: every run was
    // stopped at a step boundary with a checkpoint, curves.csv and summary.md were not
    // written, and the same command continues every unfinished run. 0: it ran to the end.
    int interrupted_by = 0;
    size_t finished = 0;                  // runs finished (when interrupted)
    std::vector<std::string> unfinished;  // their directories (when interrupted)
};

// The step a comparison run's committed checkpoint is at (checkpoint.json; 0: none yet). A run
// is finished when this reaches its train.steps.
size_t comparison_run_step(const std::string& dir);

// Trains what is missing, writes curves.csv and summary.md, plots. One line per run to `log`.
// An interrupted comparison returns with interrupted_by set and writes neither file.
CompareReport run_compare(const ComparePreset& preset, const CompareOptions& options,
                          std::ostream& log);

}  // namespace rf
