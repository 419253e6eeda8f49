// Room — cli: `roformer frequencies`, which RoPE frequency pairs a trained run uses and which
// heads attend by offset (the statistics: src/model/frequency_usage.hpp; the question of
// Barbero et al., ICLR 2025, arXiv:2410.06205).
//
//   roformer frequencies --run runs/NAME [--out FILE.csv] [--batches N]
// Over the run's fixed validation windows (the first N batches; all without --batches), per
// rotating layer, head and pair i: θ_i, mean |q_i|·|k_i| and its share of the head's sum; per
// head the most-attended relative offset δ = n − m, its mass, and whether δ ∈ {−1, 0, +1}.
// A layer marked `none` in position.layer_schemes turns nothing and is left out; a run where
// no layer rotates is refused (ropelab/rotating_layers.hpp).
//   CSV (stdout, or --out FILE.csv): "layer,head,pair,theta,mean_norm_product,share,
//       top_offset,top_offset_mass,top_offset_local", one row per (rotating layer, head,
//       pair); the head's columns repeat on each of its rows. --out replaces only a file this
//       program wrote (io/output_file.hpp). scripts/plot_frequencies.py draws it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "cli/run_checks.hpp"
#include "config/memory_estimate.hpp"
#include "data/prepare.hpp"
#include "io/output_file.hpp"
#include "model/frequency_usage.hpp"
#include "position/rope.hpp"
#include "ropelab/rotating_layers.hpp"
#include "run/checkpoint.hpp"
#include "run/threads.hpp"

namespace {

struct FrequenciesOptions {
    std::string run_dir;
    std::string out;
    size_t batches = 0;  // 0: not given — every validation batch
};

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// θ_i of every pair of a head: the run's fixed table (p-RoPE's stopped pairs 0), or its
// learned frequencies; the pass-through dims of rotary_fraction < 1 turn by 0.
std::vector<double> pair_frequencies(rf::RoFormer& model) {
    const rf::PositionConfig& p = model.position_config();
    const size_t D = rf::attention_head_size(model.config().hidden, model.config().num_heads);
    std::vector<double> theta(D / 2, 0.0);
    if (p.learned_frequencies) {
        const rf::Tensor learned = model.position().parameters().at(0);
        for (size_t i = 0; i < learned.numel(); ++i) theta[i] = learned.data()[i];
        return theta;
    }
    const std::vector<double> table =
        rf::RopeTable(rf::rope_options_from_config(p, D)).frequencies();
    std::copy(table.begin(), table.end(), theta.begin());
    return theta;
}

std::string csv(const rf::FrequencyUsage& u, const std::vector<double>& theta,
                const std::vector<size_t>& layers) {
    std::ostringstream out;
    out << "layer,head,pair,theta,mean_norm_product,share,top_offset,top_offset_mass,"
           "top_offset_local\n";
    char line[256];
    for (size_t l : layers)
        for (size_t h = 0; h < u.heads; ++h) {
            const auto [offset, mass] = u.top_offset(l, h);
            const bool local = offset >= -1 && offset <= 1;
            for (size_t i = 0; i < u.pairs; ++i) {
                std::snprintf(line, sizeof line, "%zu,%zu,%zu,%.9g,%.9g,%.9g,%ld,%.6f,%d\n", l, h,
                              i, theta[i], u.mean_product(l, h, i), u.share(l, h, i), offset, mass,
                              local ? 1 : 0);
                out << line;
            }
        }
    return out.str();
}

// One line per head: its offset peak and how its usage splits between fast and slow pairs.
void print_summary(const rf::FrequencyUsage& u, const std::vector<size_t>& layers) {
    const size_t quarter = std::max<size_t>(1, u.pairs / 4);
    std::printf("%5s %4s  %10s %8s  %18s %18s\n", "layer", "head", "top offset", "mass",
                "fastest 1/4 share", "slowest 1/4 share");
    for (size_t l : layers)
        for (size_t h = 0; h < u.heads; ++h) {
            double fast = 0, slow = 0;
            for (size_t i = 0; i < quarter; ++i) {
                fast += u.share(l, h, i);
                slow += u.share(l, h, u.pairs - 1 - i);
            }
            const auto [offset, mass] = u.top_offset(l, h);
            std::printf("%5zu %4zu  %+10ld %8.3f  %18.3f %18.3f\n", l, h, offset, mass, fast, slow);
        }
}

void run_frequencies(const FrequenciesOptions& o) {
    if (!o.out.empty() && !ends_with(o.out, ".csv"))
        throw std::invalid_argument("--out " + o.out + ": name a .csv file");
    const rf::OutputRule rule{"the frequencies CSV", {}};
    if (!o.out.empty()) rf::check_output_file(o.out, rule);  // before the work
    const rf::DirectoryState state = rf::require_model_run(o.run_dir, "--run");
    rf::LoadedRun run = rf::load_run(o.run_dir);
    rf::state_unfinished(state, o.run_dir, run.step);
    const rf::Config& c = run.config;
    // Only the layers that rotate have frequencies to describe (ropelab/rotating_layers.hpp).
    const size_t D = rf::attention_head_size(c.model.hidden, c.model.num_heads);
    if (const std::string why = rf::why_no_layer_rotates(c.position, c.model.num_layers, D);
        !why.empty())
        throw std::invalid_argument(o.run_dir + " has no RoPE frequencies to describe: " + why +
                                    ", so no layer rotates; give a run with a RoPE layer");
    const std::vector<size_t> turning = rf::rope_turning_pairs(c.position, c.model.num_layers, D);
    std::vector<size_t> rotating;  // the layers described: those where some pair turns
    for (size_t l = 0; l < turning.size(); ++l)
        if (turning[l] > 0) rotating.push_back(l);
    if (c.model.attention == rf::AttentionKind::linear)
        throw std::invalid_argument(o.run_dir +
                                    " was trained with model.attention = linear, which never "
                                    "forms the attention weights the offset mass needs; give a "
                                    "softmax-attention run");
    rf::check_evaluation_memory(c, c.train.batch_size, c.data.seq_len, "frequencies",
                                "lower train.batch_size in the run's config");
    rf::apply_threading(run.config);
    rf::PreparedData data =
        rf::prepare_data(c.data, c.train.batch_size, run.tokenizer, c.train.objective);
    const size_t count =
        o.batches == 0 ? data.validation.size() : std::min(o.batches, data.validation.size());
    rf::FrequencyUsage usage = rf::empty_frequency_usage(*run.model, c.data.seq_len);
    for (size_t b = 0; b < count; ++b) {
        const rf::Batch& batch = data.validation[b];
        rf::add_frequency_usage(*run.model, batch.input_ids, batch.batch, batch.seq_len, usage);
    }
    for (const std::vector<double>* sums : {&usage.product_sum, &usage.offset_sum})
        for (double x : *sums)  // nothing non-finite is written
            if (!std::isfinite(x))
                throw std::runtime_error(o.run_dir +
                                         ": the model's q, k or attention weights are not finite "
                                         "(NaN or inf); the checkpoint is damaged — train again");
    const std::string table = csv(usage, pair_frequencies(*run.model), rotating);
    if (o.out.empty()) {
        std::cout << table;
        return;
    }
    rf::write_output_file(o.out, table, rule);
    std::printf(
        "%s (step %zu): %zu validation windows of %zu tokens, %zu rotating layer(s) of %zu × "
        "%zu head(s) × %zu pairs → wrote %s\n",
        o.run_dir.c_str(), run.step, usage.windows, usage.length, rotating.size(), usage.layers,
        usage.heads, usage.pairs, o.out.c_str());
    print_summary(usage, rotating);
}

void add_frequencies(CLI::App& app) {
    auto options = std::make_shared<FrequenciesOptions>();
    CLI::App* cmd = app.add_subcommand(
        "frequencies",
        "Which RoPE frequency pairs a trained run uses, per layer and head, and which heads "
        "attend by offset");
    cmd->add_option("--run", options->run_dir, "Run directory from `roformer train`")
        ->required()
        ->check(rf::cli::non_empty("give the --out directory of `roformer train`"));
    cmd->add_option("--out", options->out,
                    "Write the CSV to FILE.csv instead of standard output; replaces only a file "
                    "it wrote itself")
        ->check(rf::cli::non_empty("leave --out out to write the CSV to standard output"));
    cmd->add_option("--batches", options->batches,
                    "Use only the first N validation batches (default: all of them)")
        ->check(rf::cli::count_at_least(1, "leave --batches out to use every validation batch"));
    cmd->callback([options] { run_frequencies(*options); });
}

}  // namespace

RF_COMMAND("frequencies", add_frequencies);
