// Room — cli: `roformer attention`, the softmax attention weights of a trained run.
//
//   roformer attention --run runs/NAME "In the beginning God created" [--layer L] [--head H]
//                      [--out FILE.csv | FILE.npy | FILE.json]
// Rows are query positions m, columns key positions n, entries p_mn (each row sums to 1);
// the computation is rf::attention_maps (src/model/attention_maps.hpp). Without --layer or
// --head, every layer or head. The text is framed as the model reads it: [CLS] … [SEP] for an
// MLM run, the plain tokens for a causal LM run (whose rows are 0 above the diagonal).
//   CSV (stdout, or --out FILE.csv): a header "layer,head,query,token,k0,k1,…", then one row
//       per (layer, head, query); `token` is the query's token (quoted), so the key n's token
//       is the token of row query = n.
//   .npy: float32 [layers, heads, T, T] (the selected ones); the tokens are printed on stdout.
//   .json: {"run", "text", "tokens" [T], "layers", "heads" (the selected indices),
//       "positions" (what each selected layer applies: "rope" only where RoPE turns a pair,
//       "none" where the layer sees no positions), "T", "weights" [layer][head][query][key]}
//       — what docs/explorer/rope.html loads.
//   Every --out replaces only a file this program wrote and nobody edited since (its
//   .written-by mark: io/output_file.hpp).
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "cli/run_checks.hpp"
#include "config/memory_estimate.hpp"
#include "io/csv_quote.hpp"
#include "io/output_file.hpp"
#include "model/attention_maps.hpp"
#include "model/finite_values.hpp"
#include "ropelab/layer_schemes.hpp"
#include "ropelab/rotating_layers.hpp"
#include "run/checkpoint.hpp"
#include "run/threads.hpp"

namespace {

struct AttentionOptions {
    std::string run_dir;
    std::string text;
    std::optional<size_t> layer;  // not given: every layer
    std::optional<size_t> head;   // not given: every head
    std::string out;
    size_t max_text_bytes = rf::cli::kDefaultMaxTextBytes;
};

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// What --out may replace: only a file this program wrote and nobody changed since (its
// .written-by mark, io/output_file.hpp) — every .npy starts with the same magic bytes.
rf::OutputRule output_rule(const std::string& out) {
    if (ends_with(out, ".csv")) return {"the attention CSV", {}};
    if (ends_with(out, ".json")) return {"the attention JSON", {}};
    return {"the attention .npy", {}};
}

// The index `which`, or all of 0 … count−1 when it was not given; refuses one out of range.
std::vector<size_t> selected(const std::optional<size_t>& which, size_t count, const char* option,
                             const char* noun) {
    if (which && *which >= count)
        throw std::invalid_argument(std::string(option) + " " + std::to_string(*which) +
                                    " is out of range: the model has " + std::to_string(count) +
                                    " " + noun + " (0 … " + std::to_string(count - 1) + ")");
    if (which) return {*which};
    std::vector<size_t> all(count);
    for (size_t i = 0; i < count; ++i) all[i] = i;
    return all;
}

void write_csv(std::ostream& out, const rf::AttentionMaps& maps,
               const std::vector<std::string>& tokens, const std::vector<size_t>& layers,
               const std::vector<size_t>& heads) {
    const size_t T = maps.length;
    out << "layer,head,query,token";
    for (size_t n = 0; n < T; ++n) out << ",k" << n;
    out << "\n";
    char cell[32];
    for (size_t l : layers)
        for (size_t h : heads) {
            const rf::Real* p = maps.at(l, h);
            for (size_t m = 0; m < T; ++m) {
                out << l << "," << h << "," << m << "," << rf::csv_quoted(tokens[m]);
                for (size_t n = 0; n < T; ++n) {
                    std::snprintf(cell, sizeof cell, ",%.6g", double(p[m * T + n]));
                    out << cell;
                }
                out << "\n";
            }
        }
}

// NumPy's .npy format, version 1.0: magic, header length, a Python dict padded with spaces to
// a multiple of 64 bytes ending in '\n', then the raw little-endian float32 data.
void write_npy(const std::string& path, const rf::AttentionMaps& maps,
               const std::vector<size_t>& layers, const std::vector<size_t>& heads) {
    const size_t T = maps.length;
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                         std::to_string(layers.size()) + ", " + std::to_string(heads.size()) +
                         ", " + std::to_string(T) + ", " + std::to_string(T) + "), }";
    const size_t prefix = 10;  // magic (6) + version (2) + header length (2)
    header.append(64 - (prefix + header.size() + 1) % 64, ' ');
    header += '\n';
    std::ostringstream out(std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const uint16_t length = static_cast<uint16_t>(header.size());
    const char length_bytes[2] = {char(length & 0xff), char(length >> 8)};
    out.write(length_bytes, 2);
    out << header;
    for (size_t l : layers)
        for (size_t h : heads)
            for (size_t i = 0; i < T * T; ++i) {
                const float value = static_cast<float>(maps.at(l, h)[i]);
                out.write(reinterpret_cast<const char*>(&value), sizeof value);
            }
    rf::write_output_file(path, out.str(), output_rule(path));
}

// The run's name: the last component of its directory ("runs/tiny/" → "tiny").
std::string run_name(std::string dir) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const size_t slash = dir.find_last_of('/');
    return slash == std::string::npos ? dir : dir.substr(slash + 1);
}

// What each layer of the run applies to its attention: "rope" where RoPE turns at least one
// pair, "alibi" where ALiBi biases the scores, "none" where a layer sees no positions (marked
// `none` in position.layer_schemes, or position.rope_p = 0), and the scheme's name for one that
// adds its table at the embedding (learned, sinusoidal). ropelab/rotating_layers.hpp decides.
std::vector<std::string> layer_positions(const rf::Config& c) {
    const rf::PositionConfig& p = c.position;
    const size_t D = rf::attention_head_size(c.model.hidden, c.model.num_heads);
    const std::vector<size_t> turning = rf::rope_turning_pairs(p, c.model.num_layers, D);
    const std::vector<bool> with_position = rf::layers_with_position(p, c.model.num_layers);
    std::vector<std::string> names;
    for (size_t l = 0; l < c.model.num_layers; ++l)
        if (p.scheme == rf::PositionKind::rope)
            names.push_back(turning[l] > 0 ? "rope" : "none");
        else
            names.push_back(with_position[l] ? rf::enum_name(p.scheme) : "none");
    return names;
}

// One JSON object; weights[a][b] is the [T][T] block of layers[a], heads[b] (rows sum to 1).
void write_json(const std::string& path, const std::string& run_dir, const std::string& text,
                const rf::AttentionMaps& maps, const std::vector<std::string>& tokens,
                const std::vector<size_t>& layers, const std::vector<size_t>& heads,
                const std::vector<std::string>& positions) {
    const size_t T = maps.length;
    std::vector<std::string> selected_positions;  // what each selected layer applies
    for (size_t l : layers) selected_positions.push_back(positions[l]);
    nlohmann::json weights = nlohmann::json::array();
    for (size_t l : layers) {
        nlohmann::json per_head = nlohmann::json::array();
        for (size_t h : heads) {
            const rf::Real* p = maps.at(l, h);
            nlohmann::json rows = nlohmann::json::array();
            for (size_t m = 0; m < T; ++m)
                rows.push_back(std::vector<double>(p + m * T, p + (m + 1) * T));
            per_head.push_back(std::move(rows));
        }
        weights.push_back(std::move(per_head));
    }
    const nlohmann::json doc = {{"run", run_name(run_dir)},
                                {"text", text},
                                {"tokens", tokens},
                                {"layers", layers},
                                {"positions", selected_positions},
                                {"heads", heads},
                                {"T", T},
                                {"weights", std::move(weights)}};
    // (replace: a byte-level token that is not valid UTF-8 on its own is written as U+FFFD)
    rf::write_output_file(path,
                          doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                          output_rule(path));
}

void run_attention(const AttentionOptions& o) {
    if (!o.out.empty() && !ends_with(o.out, ".csv") && !ends_with(o.out, ".npy") &&
        !ends_with(o.out, ".json"))
        throw std::invalid_argument("--out " + o.out + ": name a .csv, .npy or .json file");
    rf::cli::check_text_size(o.text, o.max_text_bytes, "the sentence");
    if (!o.out.empty())  // before the work: a directory, a missing one, a file not ours
        rf::check_output_file(o.out, output_rule(o.out));
    const rf::DirectoryState state = rf::require_model_run(o.run_dir, "--run");
    rf::LoadedRun run = rf::load_run(o.run_dir);
    rf::state_unfinished(state, o.run_dir, run.step);
    if (run.config.model.attention == rf::AttentionKind::linear)
        throw std::invalid_argument(
            o.run_dir +
            " was trained with model.attention = linear, which never forms the T×T "
            "attention probabilities (docs/linear_attention.md); attention maps need a "
            "softmax-attention run");
    const rf::ModelConfig& model = run.model->config();
    const std::vector<size_t> layers = selected(o.layer, model.num_layers, "--layer", "layers");
    const std::vector<size_t> heads = selected(o.head, model.num_heads, "--head", "heads");
    rf::apply_threading(run.config);
    const bool causal = run.config.train.objective == rf::data::Objective::clm;
    const std::vector<int> ids =
        causal ? run.tokenizer->encode(o.text) : run.tokenizer->encode_for_model(o.text);
    // Every layer's T×T maps are held, and the output's copy of the selected ones: refused
    // before any is computed when that is over the memory budget (config/memory_estimate.hpp).
    rf::check_attention_memory(run.config, ids.size(), layers.size() * heads.size(),
                               rf::attention_output_of(o.out));
    const rf::AttentionMaps maps = rf::attention_maps(*run.model, ids);
    for (size_t l : layers)  // nothing non-finite is written or printed
        rf::require_finite_outputs(o.run_dir + ": the attention weights of layer " +
                                       std::to_string(l),
                                   maps.probabilities[l].data(), maps.probabilities[l].numel());
    const std::vector<std::string> positions = layer_positions(run.config);
    std::vector<std::string> tokens;
    for (int id : ids) tokens.push_back(run.tokenizer->display_token(id));

    if (o.out.empty()) return write_csv(std::cout, maps, tokens, layers, heads);
    if (ends_with(o.out, ".csv")) {
        std::ostringstream file;
        write_csv(file, maps, tokens, layers, heads);
        rf::write_output_file(o.out, file.str(), output_rule(o.out));
    } else if (ends_with(o.out, ".json")) {
        write_json(o.out, o.run_dir, o.text, maps, tokens, layers, heads, positions);
    } else {
        write_npy(o.out, maps, layers, heads);
    }
    std::printf("wrote %s: %zu layer(s) × %zu head(s) × %zu × %zu (rows: queries, columns: keys)\n",
                o.out.c_str(), layers.size(), heads.size(), maps.length, maps.length);
    std::printf("tokens:");
    for (const std::string& t : tokens) std::printf(" %s", t.c_str());
    std::printf("\n");
}

void add_attention(CLI::App& app) {
    auto options = std::make_shared<AttentionOptions>();
    CLI::App* cmd = app.add_subcommand(
        "attention", "Dump the softmax attention weights of a trained run for one sentence");
    cmd->add_option("--run", options->run_dir, "Run directory from `roformer train`")
        ->required()
        ->check(rf::cli::non_empty("give the --out directory of `roformer train`"));
    cmd->add_option("text", options->text, "The sentence to look at")->required();
    // An index, not a sentinel: "-1" is refused (leaving the option out selects them all).
    cmd->add_option("--layer", options->layer, "Only this layer (0-based; default: every layer)")
        ->check(rf::cli::unsigned_number("leave --layer out for every layer"));
    cmd->add_option("--head", options->head, "Only this head (0-based; default: every head)")
        ->check(rf::cli::unsigned_number("leave --head out for every head"));
    cmd->add_option("--out", options->out,
                    "Write to FILE.csv, FILE.npy (float32 [layers, heads, T, T]) or FILE.json "
                    "(tokens and weights for docs/explorer/rope.html) instead of CSV on stdout; "
                    "replaces only a file it wrote itself")
        ->check(rf::cli::non_empty("leave --out out to write the CSV to standard output"));
    rf::cli::add_text_limit(cmd, options->max_text_bytes);
    cmd->callback([options] { run_attention(*options); });
}

}  // namespace

RF_COMMAND("attention", add_attention);
