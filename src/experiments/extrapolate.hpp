// Room — experiments: length extrapolation of the comparison's trained runs.
//
//   roformer extrapolate --runs runs/compare [--max-tokens N]
// Every run DIR/<scheme>/seed<k>/ is scored on the validation text cut into windows of
// k·L tokens (L = the training seq_len, k = 1, 2, 4) with length_eval_batches (data/prepare.hpp;
// MLM or next-token, by the run's train.objective): the same first max_tokens tokens of the
// validation split and the same per-token masks (MLM) or predicted tokens (clm) at every
// length, so longer windows only add context (up to one window's worth of tokens at the end of
// the span is dropped when it does not fill a window). RoPE runs are also scored with
//   interpolation  position.interpolation_factor = k   (positions m → m/k, Chen et al. 2023)
//   ntk            position.ntk_factor = k             (base → base·k^(r/(r−2)))
//   dynamic_ntk    position.scaling = dynamic_ntk, scaling_factor = 2 at every length (the
//                  base grows with the window length; rope_scaling.hpp)
//   yarn, llama3   position.scaling = yarn / llama3, scaling_factor = k
// (the last three with position.original_max_positions = L).
// Learned positions have no table rows past max_positions: that cell says so instead of a number.
// Writes DIR/extrapolation.csv
//   scheme,seed,length,factor,method,loss,accuracy,predictions,note
// replaces the "## Length extrapolation" section of DIR/summary.md, and draws
// DIR/extrapolation.png with scripts/plot_curves.py.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace rf {

// extrapolation.csv's header line (without the newline).
extern const char* const kExtrapolationCsvHeader;

struct ExtrapolationRow {
    std::string scheme;
    size_t seed = 0;
    size_t length = 0;   // window length in tokens (incl. [CLS] and [SEP])
    size_t factor = 1;   // length / training seq_len
    std::string method;  // plain | interpolation | ntk | dynamic_ntk | yarn | llama3
    bool ran = false;    // false: the model cannot run at this length (see note)
    double loss = 0, accuracy = 0;
    size_t predictions = 0;
    std::string note;
};

struct ExtrapolateOptions {
    std::string runs_dir;
    std::vector<size_t> factors = {1, 2, 4};
    size_t max_tokens = 16384;  // validation tokens scored at every length
    bool plot = true;
    std::string plot_script;  // empty: search (find_plot_script)
};

// The run directories under runs_dir (<scheme>/seed<k> holding a model.safetensors), as
// (scheme, seed, dir) in the comparison's scheme order, then by seed.
struct FoundRun {
    std::string scheme;
    size_t seed = 0;
    std::string dir;
};
std::vector<FoundRun> find_comparison_runs(const std::string& runs_dir);

// plain, then the scalings tried on RoPE runs, in the table's order.
const std::vector<std::string>& extrapolation_methods();
// The evaluation-time --set overrides of `method` at k× the trained length L.
std::vector<std::string> extrapolation_overrides(const std::string& method, size_t k,
                                                 size_t trained_length);

// Evaluates every run, writes extrapolation.csv, the summary.md section and the plot. Holds
// the comparison directory's lock (a running compare refuses it) and refuses unfinished runs
// and outputs of the same names that it did not write, before evaluating anything.
std::vector<ExtrapolationRow> run_extrapolation(const ExtrapolateOptions& options,
                                                std::ostream& log);

// The markdown table (mean ± std over seeds per scheme × method × length), with its heading.
std::string extrapolation_markdown(const std::vector<ExtrapolationRow>& rows, size_t max_tokens);

}  // namespace rf
