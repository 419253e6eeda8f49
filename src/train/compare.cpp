// Stage 9 — compare: the preset, the runs (skip / resume / train), curves.csv and summary.md.
#include "train/compare.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <toml++/toml.h>

#include "train/checkpoint.hpp"
#include "train/trainer.hpp"

namespace rf {

namespace fs = std::filesystem;

const std::vector<std::string>& comparison_schemes() {
    static const std::vector<std::string> names = {"rope_interleaved", "rope_half", "sinusoidal",
                                                   "learned", "none", "alibi"};
    return names;
}

static std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

void apply_comparison_scheme(Config& config, const std::string& scheme) {
    if (scheme == "rope_interleaved" || scheme == "rope_half") {
        config.position.scheme = "rope";
        config.position.pairing = scheme == "rope_half" ? "half" : "interleaved";
    } else if (scheme == "sinusoidal" || scheme == "learned" || scheme == "none" || scheme == "alibi") {
        config.position.scheme = scheme;
    } else {
        throw std::invalid_argument("unknown scheme '" + scheme + "' for compare; choose from " +
                                    joined(comparison_schemes()));
    }
}

// ---- the preset ---------------------------------------------------------------------------
static std::string line_of(const toml::node& node) { return std::to_string(node.source().begin.line); }

// Reads the [compare] table into `settings`; errors name the file and line.
static void read_compare_table(const toml::table& table, const std::string& path, CompareSettings& settings) {
    for (auto&& [key_name, node] : table) {
        const std::string key(key_name.str());
        const std::string at = " in " + path + " (line " + line_of(node) + ")";
        if (key == "schemes") {
            const toml::array* list = node.as_array();
            if (!list) throw std::invalid_argument("compare.schemes must be an array of names" + at);
            settings.schemes.clear();
            for (const toml::node& item : *list) {
                if (!item.is_string())
                    throw std::invalid_argument("compare.schemes must hold strings" + at);
                settings.schemes.push_back(item.as_string()->get());
            }
        } else if (key == "seeds") {
            const toml::value<int64_t>* v = node.as_integer();
            if (!v || v->get() < 1) throw std::invalid_argument("compare.seeds must be an integer ≥ 1" + at);
            settings.seeds = size_t(v->get());
        } else if (key == "loss_threshold") {
            if (!node.is_number()) throw std::invalid_argument("compare.loss_threshold must be a number" + at);
            settings.loss_threshold = node.value<double>().value_or(0.0);
        } else {
            throw std::invalid_argument("unknown key 'compare." + key + "'" + at +
                                        "; [compare] takes schemes, seeds, loss_threshold");
        }
    }
}

// Every key of the other tables as a "table.key=value" override, with apply_override's
// "in --set …" turned into the file's name and line.
static void apply_preset_tables(Config& config, const toml::table& root, const std::string& path) {
    for (auto&& [table_name, table_node] : root) {
        const std::string table(table_name.str());
        if (table == "compare") continue;
        if (!table_node.is_table())
            throw std::invalid_argument("unknown key '" + table + "' in " + path + " (line " +
                                        line_of(table_node) + "); every key belongs to a table");
        for (auto&& [key_name, node] : *table_node.as_table()) {
            const std::string name = table + "." + std::string(key_name.str());
            std::ostringstream value;
            node.visit([&](auto&& v) { value << v; });   // TOML syntax: strings quoted
            try {
                apply_override(config, name + "=" + value.str());
            } catch (const std::invalid_argument& e) {
                std::string message = e.what();
                const std::string where = " in " + path + " (line " + line_of(node) + ")";
                for (const std::string& from : {" in --set " + name, std::string(" in --set")}) {
                    const size_t at = message.find(from);
                    if (at != std::string::npos) message.replace(at, from.size(), where);
                }
                throw std::invalid_argument(message);
            }
        }
    }
}

ComparePreset load_compare_preset(const std::optional<std::string>& path,
                                  const std::vector<std::string>& overrides) {
    ComparePreset preset;
    preset.base = default_config();
    if (path) {
        if (!fs::is_regular_file(*path))
            throw std::runtime_error("compare preset '" + *path +
                                     "' not found; e.g. --config configs/compare.toml");
        toml::table root;
        try {
            root = toml::parse_file(*path);
        } catch (const toml::parse_error& e) {
            throw std::runtime_error(*path + ":" + std::to_string(e.source().begin.line) + ":" +
                                     std::to_string(e.source().begin.column) +
                                     ": malformed TOML: " + std::string(e.description()));
        }
        if (const toml::node* compare = root.get("compare")) {
            if (!compare->is_table())
                throw std::invalid_argument("'compare' must be a table [compare] in " + *path);
            read_compare_table(*compare->as_table(), *path, preset.settings);
        }
        apply_preset_tables(preset.base, root, *path);
    }
    for (const std::string& assignment : overrides) apply_override(preset.base, assignment);
    validate(preset.base);
    return preset;
}

Config comparison_run_config(const Config& base, const std::string& scheme, size_t seed) {
    Config config = base;
    apply_comparison_scheme(config, scheme);
    config.train.seed = seed;
    validate(config);
    return config;
}

std::string comparison_run_dir(const std::string& out_dir, const std::string& scheme, size_t seed) {
    return (fs::path(out_dir) / scheme / ("seed" + std::to_string(seed))).string();
}

// ---- CSV files ----------------------------------------------------------------------------
static std::vector<std::string> split_csv_line(const std::string& line) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream in(line);
    while (std::getline(in, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    return cells;
}

static size_t column(const std::vector<std::string>& header, const std::string& name, const std::string& path) {
    for (size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return i;
    throw std::runtime_error(path + " has no column '" + name + "'; is it a roformer metrics/curves file?");
}

std::vector<CurvePoint> read_run_curve(const std::string& run_dir) {
    const std::string path = run_file(run_dir, "metrics.csv");
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path + "; is '" + run_dir + "' a run directory?");
    std::string line;
    std::getline(in, line);
    const auto header = split_csv_line(line);
    const size_t c_step = column(header, "step", path), c_train = column(header, "train_loss", path),
                 c_val = column(header, "val_loss", path), c_acc = column(header, "val_accuracy", path);
    std::vector<CurvePoint> curve;
    while (std::getline(in, line)) {
        const auto cells = split_csv_line(line);
        if (cells.size() <= c_acc || cells[c_val].empty()) continue;
        curve.push_back({std::stoull(cells[c_step]), std::stod(cells[c_train]), std::stod(cells[c_val]),
                         std::stod(cells[c_acc])});
    }
    return curve;
}

void write_curves_csv(const std::string& path, const std::vector<CurveRow>& rows) {
    std::ofstream out(path);
    if (!out) throw std::runtime_error("cannot write " + path);
    out << "scheme,seed,step,train_loss,val_loss,val_accuracy\n";
    char buffer[160];
    for (const CurveRow& r : rows) {
        std::snprintf(buffer, sizeof buffer, "%s,%zu,%zu,%.6f,%.6f,%.6f\n", r.scheme.c_str(), r.seed,
                      r.point.step, r.point.train_loss, r.point.val_loss, r.point.val_accuracy);
        out << buffer;
    }
}

std::vector<CurveRow> read_curves_csv(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::string line;
    std::getline(in, line);
    const auto header = split_csv_line(line);
    const size_t c_scheme = column(header, "scheme", path), c_seed = column(header, "seed", path),
                 c_step = column(header, "step", path), c_train = column(header, "train_loss", path),
                 c_val = column(header, "val_loss", path), c_acc = column(header, "val_accuracy", path);
    std::vector<CurveRow> rows;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        const auto c = split_csv_line(line);
        if (c.size() < header.size()) throw std::runtime_error(path + ": short row '" + line + "'");
        rows.push_back({c[c_scheme], std::stoull(c[c_seed]),
                        {std::stoull(c[c_step]), std::stod(c[c_train]), std::stod(c[c_val]), std::stod(c[c_acc])}});
    }
    return rows;
}

// ---- the plot script ------------------------------------------------------------------------
static std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out + "'";
}

std::string find_plot_script(const std::string& explicit_path) {
    if (!explicit_path.empty()) return fs::exists(explicit_path) ? explicit_path : "";
    std::vector<fs::path> candidates = {fs::path("scripts") / "plot_curves.py"};
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        candidates.push_back(exe.parent_path().parent_path() / "scripts" / "plot_curves.py");
        candidates.push_back(exe.parent_path().parent_path().parent_path() / "scripts" / "plot_curves.py");
    }
    for (const fs::path& p : candidates)
        if (fs::exists(p, ec)) return p.string();
    return "";
}

bool run_plot_script(const std::string& script, const std::string& dir, const std::string& what,
                     std::ostream& log) {
    if (script.empty()) {
        log << "warning: scripts/plot_curves.py not found; no " << what << ".png (run it by hand: "
            << "python3 scripts/plot_curves.py " << dir << " " << what << ")\n";
        return false;
    }
    const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    const std::string command = python + " " + shell_quote(script) + " " + shell_quote(dir) + " " + what;
    log.flush();
    const int status = std::system(command.c_str());
    if (status != 0) {
        log << "warning: `" << command << "` failed (exit " << status << "); no " << what
            << ".png — it needs python3 with matplotlib (Debian: apt install python3-matplotlib)\n";
        return false;
    }
    return true;
}

// ---- the runs -------------------------------------------------------------------------------
enum class RunState { fresh, resume, finished };

// What to do with a run directory; refuses one that holds a run of another config.
static RunState inspect_run_dir(const std::string& dir, const Config& config, std::ostream& log) {
    if (!fs::exists(dir) || fs::is_empty(dir)) return RunState::fresh;
    const std::string config_path = run_file(dir, "config.toml");
    if (!fs::exists(config_path))
        throw std::runtime_error("'" + dir + "' exists but is not a run directory (no config.toml); "
                                 "move it away or pick another --out");
    if (load_config(config_path) != config)
        throw std::runtime_error("'" + dir + "' holds a run of a different config (the preset or --set "
                                 "changed since); pick another --out or delete that directory");
    const std::string model = run_file(dir, "model.safetensors");
    if (fs::exists(model)) {
        const auto meta = read_checkpoint_metadata(model);
        const auto it = meta.find("step");
        const size_t step = it == meta.end() ? 0 : size_t(std::stoull(it->second));
        if (step >= config.train.steps) return RunState::finished;
        if (fs::exists(run_file(dir, "optimizer.safetensors"))) return RunState::resume;
    }
    // Interrupted before its first checkpoint: nothing to keep.
    log << "  " << dir << ": interrupted before any checkpoint, starting it again\n";
    fs::remove_all(dir);
    return RunState::fresh;
}

static void check_settings(const CompareSettings& settings) {
    if (settings.schemes.empty()) throw std::invalid_argument("compare: no schemes given (--schemes a,b,...)");
    if (settings.seeds == 0) throw std::invalid_argument("compare: --seeds must be ≥ 1");
    std::set<std::string> seen;
    for (const std::string& s : settings.schemes) {
        Config scratch;
        apply_comparison_scheme(scratch, s);   // throws on unknown names
        if (!seen.insert(s).second) throw std::invalid_argument("compare: scheme '" + s + "' listed twice");
    }
}

static std::string summary_header(const ComparePreset& preset, const CompareOptions& options) {
    const Config& c = preset.base;
    std::ostringstream md;
    md << "# Position-scheme comparison\n\n"
       << "Written by `roformer compare` into `" << options.out_dir << "`: " << preset.settings.schemes.size()
       << " schemes × " << preset.settings.seeds << " seeds (train.seed = 1…" << preset.settings.seeds
       << "). Model: hidden " << c.model.hidden << ", layers " << c.model.num_layers << ", "
       << c.model.num_heads << " heads, ffn " << c.model.ffn << "; data: " << c.data.path << ", "
       << (c.data.tokenizer == "char" ? std::string("characters")
                                      : c.data.tokenizer + " vocab " + std::to_string(c.data.vocab_size))
       << ", seq_len " << c.data.seq_len
       << "; training: " << c.train.steps << " steps of " << c.train.batch_size << " windows, lr "
       << c.train.lr << " (" << c.train.schedule << ", warmup " << c.train.warmup_steps
       << "), validation every " << c.train.eval_every << " steps on " << c.data.val_windows
       << " fixed windows.\n\n"
       << "Runs of one seed share the tokenizer, training windows, masks, batch order, validation "
          "set and init seed; only the position scheme differs (the learned table is drawn from the "
          "init generator after the embeddings, so learned's encoder weights are another draw of "
          "the same distribution).\n\n";
    return md.str();
}

CompareReport run_compare(const ComparePreset& preset, const CompareOptions& options, std::ostream& log) {
    const CompareSettings& settings = preset.settings;
    check_settings(settings);
    // Every config first, so a bad combination fails before hours of training.
    for (const std::string& scheme : settings.schemes) comparison_run_config(preset.base, scheme, 1);
    fs::create_directories(options.out_dir);

    CompareReport report;
    std::vector<CurveRow> rows;
    const size_t total = settings.schemes.size() * settings.seeds;
    size_t index = 0;
    for (size_t seed = 1; seed <= settings.seeds; ++seed) {
        for (const std::string& scheme : settings.schemes) {
            ++index;
            const Config config = comparison_run_config(preset.base, scheme, seed);
            const std::string dir = comparison_run_dir(options.out_dir, scheme, seed);
            const RunState state = inspect_run_dir(dir, config, log);
            char line[256];
            if (state == RunState::finished) {
                ++report.skipped;
            } else {
                TrainOptions train_options;
                train_options.out_dir = dir;
                train_options.resume = state == RunState::resume;
                train_options.quiet = true;
                const TrainSummary s = train(config, train_options, log);
                ++(state == RunState::resume ? report.resumed : report.trained);
                std::snprintf(line, sizeof line, "[%zu/%zu] %-16s seed %zu: val loss %.4f, accuracy %.4f, %.1f s%s\n",
                              index, total, scheme.c_str(), seed, s.final_eval.loss, s.final_eval.accuracy,
                              s.elapsed_s, state == RunState::resume ? " (resumed)" : "");
                log << line << std::flush;
            }
            const std::vector<CurvePoint> curve = read_run_curve(dir);
            if (curve.empty()) throw std::runtime_error(run_file(dir, "metrics.csv") + " has no validation rows");
            if (state == RunState::finished) {
                std::snprintf(line, sizeof line, "[%zu/%zu] %-16s seed %zu: val loss %.4f, accuracy %.4f (finished earlier, skipped)\n",
                              index, total, scheme.c_str(), seed, curve.back().val_loss, curve.back().val_accuracy);
                log << line << std::flush;
            }
            for (const CurvePoint& p : curve) rows.push_back({scheme, seed, p});
        }
    }

    const std::string out = options.out_dir;
    write_curves_csv((fs::path(out) / "curves.csv").string(), rows);
    report.summary = summarize_curves(rows, settings.schemes, settings.loss_threshold);
    std::ofstream((fs::path(out) / "summary.md").string())
        << summary_header(preset, options) << "## Final validation loss and convergence\n\n"
        << summary_markdown(report.summary) << "\n![validation loss curves](curves.png)\n";
    if (options.plot) report.plotted = run_plot_script(find_plot_script(options.plot_script), out, "curves", log);
    return report;
}

}  // namespace rf
