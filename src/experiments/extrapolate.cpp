// Room — experiments: length extrapolation (see extrapolate.hpp).
#include "experiments/extrapolate.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "config/memory_estimate.hpp"
#include "data/corpus.hpp"
#include "data/prepare.hpp"
#include "experiments/compare.hpp"
#include "experiments/compare_stats.hpp"
#include "experiments/report.hpp"
#include "io/read_file.hpp"
#include "ropelab/rotating_layers.hpp"
#include "tensor/format.hpp"
#include "run/checkpoint.hpp"
#include "run/run_config.hpp"
#include "train/evaluate.hpp"
#include "run/run_lock.hpp"
#include "run/threads.hpp"
#include "train/trainer.hpp"

namespace rf {

namespace fs = std::filesystem;

const char* const kExtrapolationCsvHeader =
    "scheme,seed,length,factor,method,loss,accuracy,predictions,note";

// "seed<k>": a run directory of a comparison (k digits).
static bool is_seed_name(const std::string& name) {
    return name.rfind("seed", 0) == 0 && name.size() > 4 &&
           name.find_first_not_of("0123456789", 4) == std::string::npos;
}

// Some <scheme>/seed<k> directory exists (trained or not): a comparison's layout.
static bool has_comparison_layout(const std::string& runs_dir) {
    for (const fs::directory_entry& scheme : fs::directory_iterator(runs_dir)) {
        if (!scheme.is_directory()) continue;
        for (const fs::directory_entry& e : fs::directory_iterator(scheme.path()))
            if (e.is_directory() && is_seed_name(e.path().filename().string())) return true;
    }
    return false;
}

std::vector<FoundRun> find_comparison_runs(const std::string& runs_dir) {
    require_directory(runs_dir, "--runs: the comparison directory",
                      "pass the --out of `roformer compare`");
    std::vector<std::string> schemes;
    for (const fs::directory_entry& e : fs::directory_iterator(runs_dir))
        if (e.is_directory()) schemes.push_back(e.path().filename().string());
    const std::vector<std::string>& order = comparison_schemes();
    auto rank = [&](const std::string& s) {
        return size_t(std::find(order.begin(), order.end(), s) - order.begin());
    };
    std::sort(schemes.begin(), schemes.end(), [&](const std::string& a, const std::string& b) {
        return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
    });
    std::vector<FoundRun> runs;
    for (const std::string& scheme : schemes) {
        std::vector<FoundRun> seeds;
        for (const fs::directory_entry& e : fs::directory_iterator(fs::path(runs_dir) / scheme)) {
            const std::string name = e.path().filename().string();
            if (!e.is_directory() || !is_seed_name(name)) continue;
            if (!fs::exists(e.path() / "model.safetensors")) continue;
            seeds.push_back({scheme, size_t(std::stoull(name.substr(4))), e.path().string()});
        }
        std::sort(seeds.begin(), seeds.end(),
                  [](const FoundRun& a, const FoundRun& b) { return a.seed < b.seed; });
        runs.insert(runs.end(), seeds.begin(), seeds.end());
    }
    if (runs.empty())
        throw std::runtime_error(
            "no trained runs under '" + runs_dir +
            "' (expected <scheme>/seed<k>/model.safetensors); run `roformer compare` first");
    return runs;
}

// The validation split's ids; runs with the same tokenizer and data keys share them.
static const std::vector<int>& validation_ids(const LoadedRun& run, const std::string& run_dir,
                                              std::map<std::string, std::vector<int>>& cache) {
    std::ifstream tokenizer_file(run_file(run_dir, "tokenizer.json"));
    std::ostringstream key;
    key << run.config.data.path << "\n"
        << run.config.data.validation_fraction << "\n"
        << tokenizer_file.rdbuf();
    auto it = cache.find(key.str());
    if (it != cache.end()) return it->second;
    data::SplitOptions split_options;
    split_options.validation_fraction = run.config.data.validation_fraction;
    const data::CorpusSplit split = data::load_corpus(run.config.data.path, split_options);
    return cache[key.str()] = run.tokenizer->encode(split.validation_text);
}

const std::vector<std::string>& extrapolation_methods() {
    static const std::vector<std::string> methods = {"plain",       "interpolation", "ntk",
                                                     "dynamic_ntk", "yarn",          "llama3"};
    return methods;
}

std::vector<std::string> extrapolation_overrides(const std::string& method, size_t k,
                                                 size_t trained_length) {
    const std::string factor = "=" + std::to_string(k) + ".0";
    const std::string original =
        "position.original_max_positions=" + std::to_string(trained_length);
    if (method == "interpolation") return {"position.interpolation_factor" + factor};
    if (method == "ntk") return {"position.ntk_factor" + factor};
    // One setting for every length: the base grows with the window (HF's example factor 2).
    if (method == "dynamic_ntk")
        return {"position.scaling=dynamic_ntk", "position.scaling_factor=2.0", original};
    if (method == "yarn" || method == "llama3")
        return {"position.scaling=" + method, "position.scaling_factor" + factor, original};
    if (method == "plain") return {};
    throw std::invalid_argument("extrapolate: unknown method '" + method + "'");
}

std::vector<ExtrapolationRow> run_extrapolation(const ExtrapolateOptions& options,
                                                std::ostream& log) {
    if (options.factors.empty() ||
        std::find(options.factors.begin(), options.factors.end(), 0) != options.factors.end())
        throw std::invalid_argument("extrapolate: factors must be ≥ 1 (e.g. 1 2 4)");
    if (!fs::is_directory(options.runs_dir))
        throw std::runtime_error("'" + options.runs_dir +
                                 "' is not a directory; pass the --out of `roformer compare`");
    // The comparison directory is written by one command at a time (not during a compare):
    // locked before anything is checked. A directory without a comparison's layout
    // (<scheme>/seed<k>/) is refused before the lock's pid record is written: nothing is
    // created where the command has no business.
    // Its holder is a compare still training, or another extrapolate: --runs is not the user's
    // to change, so the message says to wait (RunLock::acquire's would say "pick another --out").
    std::optional<RunLock> held = RunLock::try_acquire(options.runs_dir);
    if (!held && errno != EWOULDBLOCK)
        throw std::runtime_error("cannot lock '" + options.runs_dir + "' (" + std::strerror(errno) +
                                 "); check its permissions");
    if (!held)
        throw std::runtime_error("extrapolate: the comparison '" + options.runs_dir +
                                 "' is in use by pid " + RunLock::holder(options.runs_dir) +
                                 " (a compare still training it, or another extrapolate); wait "
                                 "for it to finish, then run extrapolate again");
    const RunLock& lock = *held;
    if (!has_comparison_layout(options.runs_dir))
        throw std::runtime_error("'" + options.runs_dir +
                                 "' holds no comparison (no <scheme>/seed<k> directories); "
                                 "pass the --out of `roformer compare`");
    lock.record_holder();
    const std::vector<FoundRun> runs = find_comparison_runs(options.runs_dir);
    const fs::path dir(options.runs_dir);
    // Every output is checked before the (long) evaluation, and every run must be finished:
    // a run an interrupted compare left at step 82 of 300 is not a trained model.
    check_output_file((dir / "extrapolation.csv").string(),
                      csv_rule("extrapolation.csv"));
    check_output_file((dir / "summary.md").string(), summary_rule());
    if (options.plot)
        check_output_file((dir / "extrapolation.png").string(),
                          plot_rule("extrapolation.png"));
    for (const FoundRun& found : runs) {
        const Config c = load_run_config(run_file(found.dir, "config.toml"));
        const size_t steps = c.train.steps;
        for (size_t k : options.factors) {  // the same batches as the evaluation below
            const size_t length = k * c.data.seq_len;
            const size_t rows = std::min(std::max<size_t>(1, c.train.batch_size / k),
                                         std::max<size_t>(1, options.max_tokens / length));
            check_evaluation_memory(
                c, rows, length, "extrapolate --factors " + std::to_string(k) + " on " + found.dir,
                "lower --factors (or --max-tokens)");
        }
        const size_t step = comparison_run_step(found.dir);
        if (step < steps)
            throw std::runtime_error("extrapolate: the run '" + found.dir + "' is at step " +
                                     std::to_string(step) + " of " + std::to_string(steps) +
                                     " (an interrupted compare); finish it first by running "
                                     "the same `roformer compare` again");
    }
    std::map<std::string, std::vector<int>> cache;
    std::vector<ExtrapolationRow> rows;
    for (const FoundRun& found : runs) {
        LoadedRun run = load_run(found.dir);
        apply_threading(run.config);
        const std::vector<int>& ids = validation_ids(run, found.dir, cache);
        const Config& c = run.config;
        // The scalings rescale a fixed RoPE table: not xPos's decay, not learned frequencies,
        // and only where some layer rotates (elsewhere validate() refuses them: a p = 0 run).
        const size_t head_dim = attention_head_size(c.model.hidden, c.model.num_heads);
        const bool rope = why_no_layer_rotates(c.position, c.model.num_layers, head_dim).empty() &&
                          !c.position.xpos && !c.position.learned_frequencies;
        const data::Objective objective = c.train.objective;
        std::ostringstream line;
        line << found.scheme << " seed " << found.seed << ":";
        for (size_t k : options.factors) {
            const size_t length = k * c.data.seq_len;
            // Fewer rows per batch at longer lengths: about the same tokens per forward.
            const size_t batch_rows = std::max<size_t>(1, c.train.batch_size / k);
            const auto batches =
                length_eval_batches(c.data, objective, ids, length, batch_rows,
                                    run.tokenizer->vocab_size(), options.max_tokens);
            std::vector<std::string> methods = {"plain"};
            if (rope)
                methods.insert(methods.end(), extrapolation_methods().begin() + 1,
                               extrapolation_methods().end());
            const size_t plain_row = rows.size();
            for (const std::string& method : methods) {
                ExtrapolationRow row;
                row.scheme = found.scheme;
                row.seed = found.seed;
                row.length = length;
                row.factor = k;
                row.method = method;
                if (method != "plain" && k == 1) {
                    row = rows[plain_row];  // factor 1 = no scaling (dynamic: L ≤ L₀)
                    row.method = method;
                    row.note = "factor 1 is the plain model";
                    rows.push_back(row);
                    continue;
                }
                LoadedRun scaled;
                RoFormer* model = run.model.get();
                if (method != "plain") {
                    scaled =
                        load_run(found.dir, extrapolation_overrides(method, k, c.data.seq_len));
                    model = scaled.model.get();
                }
                if (length <= model->position().max_length()) {
                    const EvalResult r = evaluate(*model, batches);
                    row.ran = true;
                    row.loss = r.loss;
                    row.accuracy = r.accuracy;
                    row.predictions = r.predictions;
                } else {  // learned: no table rows past max_positions
                    row.note = "cannot run beyond max_positions (" +
                               std::to_string(model->position().max_length()) + ")";
                }
                line << "  " << length << (method == "plain" ? "" : "/" + method) << " "
                     << (row.ran ? format_fixed(row.loss, 4) : std::string("—"));
                rows.push_back(row);
            }
        }
        log << line.str() << "\n" << std::flush;
    }

    std::ostringstream csv;
    csv << kExtrapolationCsvHeader << "\n";
    for (const ExtrapolationRow& r : rows)
        csv << r.scheme << "," << r.seed << "," << r.length << "," << r.factor << "," << r.method
            << "," << (r.ran ? format_fixed(r.loss, 6) : "") << ","
            << (r.ran ? format_fixed(r.accuracy, 6) : "") << "," << r.predictions << "," << r.note
            << "\n";
    write_output_file((dir / "extrapolation.csv").string(), csv.str(),
                      csv_rule("extrapolation.csv"));
    write_summary(options.runs_dir, std::nullopt, extrapolation_markdown(rows, options.max_tokens));
    if (options.plot)
        run_plot_script(find_plot_script(options.plot_script), options.runs_dir, "extrapolation",
                        log);
    return rows;
}

std::string extrapolation_markdown(const std::vector<ExtrapolationRow>& rows, size_t max_tokens) {
    // (scheme, method) in first-seen order → factor → the seeds' rows
    std::vector<std::pair<std::string, std::string>> keys;
    std::map<std::pair<std::string, std::string>,
             std::map<size_t, std::vector<const ExtrapolationRow*>>>
        cells;
    std::map<size_t, size_t> length_of;
    for (const ExtrapolationRow& r : rows) {
        const auto key = std::make_pair(r.scheme, r.method);
        if (!cells.count(key)) keys.push_back(key);
        cells[key][r.factor].push_back(&r);
        length_of[r.factor] = r.length;
    }
    std::ostringstream md;
    md << kExtrapolationHeading << "\n\n"
       << "Validation loss (nats, mean ± std over seeds) on the first " << max_tokens
       << " validation tokens cut into windows of k·L tokens, the same tokens scored at every "
          "length — MLM runs: the same per-token masks; causal LM runs: every token after the "
          "first (written by `roformer extrapolate`). interpolation: RoPE position interpolation "
          "(positions divided by k); ntk: NTK-aware base scaling by k.\n\n| scheme | method |";
    for (const auto& [k, length] : length_of)
        md << " " << (k == 1 ? "" : std::to_string(k)) << "L = " << length << " |";
    md << "\n|---|---|";
    for (size_t i = 0; i < length_of.size(); ++i) md << "---|";
    md << "\n";
    for (const auto& key : keys) {
        md << "| " << key.first << " | " << key.second << " |";
        for (const auto& [k, length] : length_of) {
            const auto& seeds = cells[key][k];
            std::vector<double> losses;
            std::string note;
            for (const ExtrapolationRow* r : seeds) {
                if (r->ran)
                    losses.push_back(r->loss);
                else
                    note = r->note;
            }
            if (!losses.empty()) {
                const MeanStd m = mean_std(losses);
                md << " " << format_fixed(m.mean, 4) << " ± " << format_fixed(m.std, 4);
                if (losses.size() < seeds.size()) md << " (" << note << " for some seeds)";
            } else {
                md << " " << (note.empty() ? std::string("—") : note);
            }
            md << " |";
        }
        md << "\n";
    }
    md << "\n![loss vs window length](extrapolation.png)\n";
    return md.str();
}

}  // namespace rf
