// Room — cli: `roformer eval`, validation loss and accuracy of a trained run.
//
//   roformer eval --run runs/NAME [--seq-len L ...] [--set key=value ...]
// First the fixed validation set at the training length (the numbers training reported),
// then, for each --seq-len L, the validation text cut into windows of L tokens that score the
// same tokens with more or less context: an MLM run keeps the same per-token masks, a causal
// LM run predicts every token after the first (data/prepare.hpp, length_eval_batches).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/bounds.hpp"
#include "cli/run_checks.hpp"
#include "cli/commands.hpp"
#include "config/memory_estimate.hpp"
#include "data/corpus.hpp"
#include "data/corpus_record.hpp"
#include "io/durable_file.hpp"
#include "data/prepare.hpp"
#include "run/checkpoint.hpp"
#include "run/run_directory.hpp"
#include "run/run_config.hpp"
#include "train/evaluate.hpp"
#include "run/threads.hpp"
#include "tensor/format.hpp"

namespace {

struct EvalOptions {
    std::string run_dir;
    std::vector<size_t> lengths;
    std::vector<std::string> overrides;
    size_t max_tokens = 65536;
};

// Windows longer than this would need T² attention scores per head beyond any laptop.
constexpr size_t kMaxEvalLength = 65536;

// Why evaluation never reads the key of a --set, or "" when it does. Such a key is refused
// rather than accepted and ignored: the run's tokenizer.json fixes the tokens, the validation
// set is scored whole, and the optimizer, schedule and dropout only act while training.
std::string ignored_at_eval(const std::string& key) {
    if (key == "data.tokenizer" || key == "data.vocab_size")
        return "the run's own tokenizer.json decides the tokens";
    if (key == "train.eval_batches")
        return "eval scores every validation window (data.val_windows sets how many)";
    if (key == "model.dropout" || key == "model.attention_dropout")
        return "evaluation runs without dropout";
    if (key.rfind("train.", 0) == 0 && key != "train.threads" && key != "train.batch_size")
        return "it acts only while training; eval reads train.threads and train.batch_size";
    return "";
}

void refuse_ignored_overrides(const std::vector<std::string>& overrides) {
    for (const std::string& kv : overrides) {
        std::string key = kv.substr(0, kv.find('='));
        key.erase(0, key.find_first_not_of(" \t"));
        key.erase(key.find_last_not_of(" \t") + 1);
        if (const std::string why = ignored_at_eval(key); !why.empty())
            throw std::invalid_argument("--set " + key + " has no effect on eval: " + why +
                                        "; drop it");
    }
}

// The validation set must be text the run held out. Its own data.validation_fraction is; on the
// same corpus another fraction picks other blocks (block i is validation iff
// ⌊(i+1)f⌋ > ⌊if⌋, data/corpus.cpp), and a larger one always takes blocks the run trained on.
// Refused unless every block it picks was one of the run's held-out blocks (or the corpus is
// another text).
void refuse_trained_text_as_validation(const std::string& run_dir, const rf::Config& config) {
    const rf::Config trained = rf::load_run_config(rf::run_file(run_dir, "config.toml"));
    const double f = config.data.validation_fraction, f0 = trained.data.validation_fraction;
    if (f == f0) return;
    std::error_code ec;
    const bool same_file = config.data.path == trained.data.path ||
                           std::filesystem::equivalent(config.data.path, trained.data.path, ec);
    rf::data::SplitOptions options;
    options.validation_fraction = f;
    const rf::data::CorpusSplit now = rf::data::load_corpus(config.data.path, options);
    if (!same_file) {
        if (!std::filesystem::is_regular_file(trained.data.path, ec)) return;  // other text
        rf::data::SplitOptions same;
        same.validation_fraction = f;
        if (rf::data::load_corpus(trained.data.path, same).validation_text != now.validation_text)
            return;  // another text: none of it was trained on (as far as eval can tell)
    }
    options.validation_fraction = f0;
    const std::vector<size_t> held_out =
        rf::data::load_corpus(config.data.path, options).validation_blocks;
    size_t trained_on = 0;
    for (size_t block : now.validation_blocks)
        trained_on += !std::binary_search(held_out.begin(), held_out.end(), block);
    if (trained_on > 0)
        throw std::invalid_argument(
            "--set data.validation_fraction = " + rf::format_shortest(f) + " would score " +
            std::to_string(trained_on) + " of its " + std::to_string(now.validation_blocks.size()) +
            " validation blocks from text the run trained on (it held out data.validation_fraction = " +
            rf::format_shortest(f0) + "); drop it (or evaluate another data.path)");
}

// The text eval scores against the run's record of its corpus (corpus.json: path, size and
// FNV-1a; data/corpus_record.hpp, the rule --resume uses). The run's own data.path changed
// since it was trained: refused, as its validation blocks are no longer the ones it held out.
// Another data.path given with --set: scored as asked, with one note naming the difference
// (returned, and printed once the text is read and about to be scored). A run without
// corpus.json (import-hf, or from before it) is not checked.
std::string check_validation_text(const std::string& run_dir, const rf::Config& config) {
    const std::string record_path = rf::run_file(run_dir, rf::kCorpusRecord);
    std::error_code ec;
    if (!std::filesystem::exists(record_path, ec)) return "";
    rf::data::SourceFileRecord saved = rf::data::parse_source_record(
        rf::read_file_bytes(record_path, 1 << 20), record_path,
        "put the run's own corpus.json back, or train again into a new --out");
    const std::string trained_path = saved.path;
    const rf::Config trained = rf::load_run_config(rf::run_file(run_dir, "config.toml"));
    saved.path = config.data.path;
    if (config.data.path == trained.data.path) {
        const std::string change = rf::data::source_file_change(saved, rf::data::kMaxCorpusBytes);
        if (change.empty()) return "";
        throw std::runtime_error(
            "eval: the corpus " + change + " (" + record_path +
            "), so its validation blocks are not the text the run held out; restore the original "
            "text, or score another text on purpose with --set data.path=FILE");
    }
    // Another text: one the corpus loader cannot read is refused by it, with its own message.
    if (!std::filesystem::is_regular_file(config.data.path, ec)) return "";
    try {
        if (rf::data::source_file_change(saved, rf::data::kMaxCorpusBytes).empty()) return "";
    } catch (const std::exception&) {
        return "";
    }
    return "note: eval scores '" + config.data.path +
           "', not the corpus the run was trained on ('" + trained_path + "', " +
           std::to_string(saved.size) + " bytes, FNV-1a " + saved.fnv1a64 + " in " + record_path +
           ")";
}

// The position scaling the model was evaluated with, for the header: "none", or each knob that
// rescales RoPE's angles ("yarn ×4 from 64", "interpolation ×2"). validate() refuses every
// one of them on a model where no layer rotates (ropelab/rotating_layers.hpp: a scheme
// without RoPE, every layer `none`, position.rope_p = 0), so there it is always "none".
std::string position_scaling(const rf::PositionConfig& p) {
    std::string text;
    auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
    if (p.interpolation_factor != 1.0)
        add("interpolation ×" + rf::format_printf("%g", p.interpolation_factor));
    if (p.ntk_factor != 1.0) add("ntk ×" + rf::format_printf("%g", p.ntk_factor));
    if (p.scaling != rf::RopeScaling::none)
        add(std::string(rf::enum_name(p.scaling)) + " ×" + rf::format_printf("%g", p.scaling_factor) +
            (p.original_max_positions ? " from " + std::to_string(p.original_max_positions) : ""));
    return text.empty() ? "none" : text;
}

// The shortest window of each objective: an MLM window is [CLS] + a token + [SEP]
// (data/mlm.hpp), a causal one a token to read and one to predict (data/clm.hpp).
// --max-tokens bounds the validation tokens the windows of --seq-len L are cut from: below one
// window's text (L − [CLS], [SEP] for mlm; L for clm) nothing could be scored, and the limit,
// not the text, is what to change.
void check_max_tokens(size_t max_tokens, size_t L, rf::data::Objective objective) {
    const size_t window = objective == rf::data::Objective::mlm ? L - rf::data::kFramingTokens : L;
    if (max_tokens >= window) return;
    throw std::invalid_argument(
        "--max-tokens " + std::to_string(max_tokens) + " is less than one window of --seq-len " +
        std::to_string(L) + " (" + std::to_string(window) +
        " text tokens), so nothing would be scored; give --max-tokens " + std::to_string(window) +
        " or more (the least that scores one window), or leave it out");
}

void check_length(size_t L, rf::data::Objective objective) {
    const bool mlm = objective == rf::data::Objective::mlm;
    const size_t shortest = mlm ? rf::data::kFramingTokens + 1 : 2;
    if (L < shortest || L > kMaxEvalLength)
        throw std::invalid_argument(
            "--seq-len " + std::to_string(L) + " must be from " + std::to_string(shortest) +
            " to " + std::to_string(kMaxEvalLength) +
            (L < shortest ? std::string(mlm ? " for an mlm run (a window is [CLS] + at least one "
                                              "token + [SEP])"
                                            : " for a clm run (one token to read, one to predict)")
                          : std::string()));
}

bool has_label(const std::vector<rf::Batch>& batches) {
    for (const rf::Batch& b : batches)
        if (b.n_selected() > 0) return true;
    return false;
}

void run_eval(const EvalOptions& o) {
    refuse_ignored_overrides(o.overrides);
    for (size_t L : o.lengths)
        if (L < 2 || L > kMaxEvalLength)
            throw std::invalid_argument("--seq-len " + std::to_string(L) + " must be from 2 to " +
                                        std::to_string(kMaxEvalLength));
    const rf::DirectoryState state = rf::require_model_run(o.run_dir, "--run");
    rf::LoadedRun run = rf::load_run(o.run_dir, o.overrides);
    const std::string other_text = check_validation_text(o.run_dir, run.config);
    rf::state_unfinished(state, o.run_dir, run.step);
    refuse_trained_text_as_validation(o.run_dir, run.config);
    const rf::data::Objective objective = run.config.train.objective;
    for (size_t L : o.lengths) check_length(L, objective);
    for (size_t L : o.lengths) check_max_tokens(o.max_tokens, L, objective);
    for (size_t L : o.lengths)  // before any window is built: T² scores per head
        rf::check_evaluation_memory(
            run.config,
            std::min(run.config.train.batch_size, std::max<size_t>(1, o.max_tokens / L)), L,
            "eval --seq-len " + std::to_string(L),
            "lower --seq-len (or --max-tokens, which bounds the windows scored at once)");
    rf::apply_threading(run.config);
    rf::PreparedData data =
        rf::prepare_data(run.config.data, run.config.train.batch_size, run.tokenizer, objective);
    // Every length's windows before anything is scored: a length the validation text cannot
    // fill, or whose windows hold nothing to score, is refused before the first result.
    const size_t longest = run.model->position().max_length();
    std::vector<std::vector<rf::Batch>> length_batches;
    for (size_t L : o.lengths) {
        length_batches.emplace_back();
        if (L > longest) continue;  // a "cannot run" row below
        try {
            length_batches.back() = rf::length_eval_batches(
                run.config.data, objective, data.validation_ids, L, run.config.train.batch_size,
                run.tokenizer->vocab_size(), o.max_tokens);
        } catch (const std::exception& e) {
            throw std::invalid_argument("--seq-len " + std::to_string(L) + ": " + e.what());
        }
        if (!has_label(length_batches.back()))
            throw std::invalid_argument(
                "--seq-len " + std::to_string(L) + ": its windows of the first " +
                std::to_string(o.max_tokens) + " validation tokens hold no " +
                rf::data::labelled_tokens(objective) +
                " to score; raise --max-tokens or give a longer --seq-len");
    }
    if (!other_text.empty()) std::fprintf(stderr, "%s\n", other_text.c_str());
    const rf::EvalResult r = rf::evaluate(*run.model, data.validation);
    std::printf(
        "%s (step %zu, %s, %s, position scaling %s): validation loss %.4f, accuracy %.4f on %zu "
        "%s at seq_len %zu; unigram entropy %.4f\n",
        o.run_dir.c_str(), run.step, rf::enum_name(objective),
        rf::enum_name(run.config.position.scheme),
        position_scaling(run.config.position).c_str(), r.loss, r.accuracy, r.predictions,
        rf::data::labelled_tokens(objective), run.config.data.seq_len, data.unigram_entropy);
    if (o.lengths.empty()) return;
    std::printf("seq_len,loss,accuracy,predictions\n");
    for (size_t i = 0; i < o.lengths.size(); ++i) {
        const size_t L = o.lengths[i];
        if (L > longest) {  // learned positions have no row beyond max_positions
            std::printf("%zu,cannot run,,0  # %s\n", L,
                        rf::sequence_too_long_message(L, longest).c_str());
            continue;
        }
        const rf::EvalResult e = rf::evaluate(*run.model, length_batches[i]);
        std::printf("%zu,%.4f,%.4f,%zu\n", L, e.loss, e.accuracy, e.predictions);
    }
}

void add_eval(CLI::App& app) {
    auto options = std::make_shared<EvalOptions>();
    CLI::App* cmd = app.add_subcommand(
        "eval", "Validation loss and accuracy of a trained run (MLM or causal LM)");
    cmd->add_option("--run", options->run_dir, "Run directory from `roformer train`")
        ->required()
        ->check(rf::cli::non_empty("give the --out directory of `roformer train`"));
    cmd->add_option("--seq-len", options->lengths,
                    "Also evaluate windows of these lengths (repeatable)")
        ->check(rf::cli::unsigned_number())
        ->take_all();
    cmd->add_option("--set", options->overrides,
                    "Evaluation-time override, e.g. position.interpolation_factor=2 (data.*, "
                    "position scaling, train.threads, train.batch_size; keys eval never reads "
                    "are refused)")
        ->take_all();
    cmd->add_option("--max-tokens", options->max_tokens,
                    "Validation tokens used for the --seq-len evaluations (≥ 1)")
        ->check(rf::cli::count_at_least(
            1, "0 tokens would score nothing; leave --max-tokens out for " +
                   std::to_string(options->max_tokens) + " (a larger value scores more text)"))
        ->capture_default_str();
    cmd->callback([options] { run_eval(*options); });
}

}  // namespace

RF_COMMAND("eval", add_eval);
