// Room — cli: `roformer graph`, the autograd graph of one attention layer as Graphviz DOT.
//
//   roformer graph --config configs/tiny.toml [--set key=value …] [--layer 0] [--seq-len 8]
//                  [--out graph.dot]
//   dot -Tpng graph.dot -o graph.png                    (Debian's graphviz, scripts/setup.sh)
// Builds the configured model (freshly initialised: the graph does not depend on the
// weights), feeds one random sequence x:[1,T,C] to layer L's attention block and draws what
// the engine recorded for h = LayerNorm(x + SelfAttention(x)) — rf::graph_to_dot
// (src/inspect/graph_dot.hpp): ops with shapes, parameters with their checkpoint names, and
// the fan-out edges (x feeds the query, key and value projections and the residual) in red.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "assembly/swappable_ops_for.hpp"
#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "config/config.hpp"
#include "inspect/graph_dot.hpp"
#include "io/output_file.hpp"
#include "model/roformer.hpp"
#include "ropelab/rotating_layers.hpp"
#include "run/checkpoint.hpp"
#include "tensor/format.hpp"

namespace {

// What --out may replace: a file that starts as our DOT graph does.
rf::OutputRule dot_output_rule() { return {"the DOT graph", {}}; }

struct GraphOptions {
    std::string config_path;
    std::vector<std::string> overrides;
    size_t layer = 0;
    size_t seq_len = 8;
    std::string out;
};

void run_graph(const GraphOptions& o) {
    const rf::Config config = rf::load_config(
        o.config_path.empty() ? std::nullopt : std::optional<std::string>(o.config_path),
        o.overrides);
    if (!o.out.empty())  // before the work: a directory, a missing one, a file not ours
        rf::check_output_file(o.out, dot_output_rule());
    if (o.seq_len == 0 || o.seq_len > 512)
        throw std::invalid_argument("--seq-len " + std::to_string(o.seq_len) +
                                    " is out of range: give 1 … 512 (the graph does not depend "
                                    "on it beyond the shapes)");
    // The vocabulary size does not enter an attention layer; any positive size builds it.
    const rf::ModelConfig model_config =
        rf::resolved_model_config(config, std::max<size_t>(8, config.model.vocab_size));
    rf::RoFormer model(model_config, config.position, config.train.seed,
                       rf::swappable_ops_for(model_config, config.position, config.train.seed,
                                             config.fast));
    if (o.layer >= model.layers().size())
        throw std::invalid_argument("--layer " + std::to_string(o.layer) + " is out of range: " +
                                    "model.num_layers = " + std::to_string(model.layers().size()));
    const rf::EncoderLayer& layer = model.layers()[o.layer];
    const size_t C = config.model.hidden;
    rf::Rng rng(1);
    rf::Tensor x = rf::Tensor::zeros({1, o.seq_len, C});
    for (size_t i = 0; i < x.numel(); ++i) x.data()[i] = static_cast<rf::Real>(rng.normal());
    x.set_name("x (layer input)");
    rf::PositionScheme& position = model.layer_position(o.layer);
    rf::Tensor h = layer.attention_block(x, position, false, 0, rng);
    // The title names RoPE only where it turns a pair (ropelab/rotating_layers.hpp): under
    // position.rope_p = 0 the layer's rope ops turn by angle 0, and the title says so.
    const size_t D = rf::attention_head_size(C, config.model.num_heads);
    const bool stopped =
        config.position.scheme == rf::PositionKind::rope &&
        rf::rope_turning_pairs(config.position, config.model.num_layers, D)[o.layer] == 0 &&
        position.name() != "none";
    const std::string what = stopped ? position.name() + " turning no pair (position.rope_p = " +
                                           rf::format_shortest(config.position.rope_p) +
                                           ": no rotation)"
                                     : position.name();
    const std::string title =
        "layer " + std::to_string(o.layer) + ": LayerNorm(x + attention(x)), " + what + ", " +
        rf::enum_name(config.model.attention) + " attention, T = " + std::to_string(o.seq_len);
    const rf::DotGraph graph = rf::graph_to_dot(h, title);
    if (o.out.empty()) {
        std::cout << graph.dot;
    } else {
        rf::write_output_file(o.out, graph.dot, dot_output_rule());
        std::printf(
            "wrote %s: %zu tensors (%zu op results, %zu leaves), %zu edges, %zu of them "
            "fan-out\n",
            o.out.c_str(), graph.nodes, graph.op_nodes, graph.leaves, graph.edges,
            graph.fan_out_edges);
    }
}

void add_graph(CLI::App& app) {
    auto options = std::make_shared<GraphOptions>();
    CLI::App* cmd = app.add_subcommand(
        "graph", "Write the autograd graph of one attention layer's forward as Graphviz DOT");
    cmd->add_option("--config", options->config_path, "TOML file of overrides (configs/*.toml)")
        ->check(rf::cli::non_empty("leave --config out for the default model"));
    cmd->add_option("--set", options->overrides, "Override one key (repeatable)")->take_all();
    cmd->add_option("--layer", options->layer, "Which encoder layer (0-based)")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    cmd->add_option("--seq-len", options->seq_len, "Tokens in the random input sequence (1 … 512)")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    cmd->add_option("--out", options->out, "Write the DOT file here (default: stdout)")
        ->check(rf::cli::non_empty("leave --out out to write the graph to standard output"));
    cmd->callback([options] { run_graph(*options); });
}

}  // namespace

RF_COMMAND("graph", add_graph);
