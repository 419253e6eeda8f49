// Room — cli: `roformer fill-mask`, the model's top-k guesses for each [MASK].
//
//   roformer fill-mask --run runs/NAME "In the beginning God created the [MASK] and the earth."
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "cli/run_checks.hpp"
#include "model/finite_values.hpp"
#include "run/checkpoint.hpp"
#include "run/threads.hpp"

namespace {

struct FillMaskOptions {
    std::string run_dir;
    std::string text;
    size_t top_k = 5;
    size_t max_text_bytes = rf::cli::kDefaultMaxTextBytes;
};

void run_fill_mask(const FillMaskOptions& o) {
    if (o.top_k == 0) throw std::invalid_argument("--top-k must be at least 1");
    rf::cli::check_text_size(o.text, o.max_text_bytes, "the sentence");
    const rf::DirectoryState state = rf::require_model_run(o.run_dir, "--run");
    rf::LoadedRun run = rf::load_run(o.run_dir);
    rf::state_unfinished(state, o.run_dir, run.step);
    rf::cli::require_objective(run.config, o.run_dir, rf::data::Objective::mlm);  // clm: generate
    rf::apply_threading(run.config);
    const std::vector<int> ids = run.tokenizer->encode_for_model(o.text);
    std::vector<size_t> masks;
    for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] == rf::data::kMaskId) masks.push_back(i);
    if (masks.empty())
        throw std::invalid_argument(
            "the text has no [MASK]; write [MASK] where the model should guess a token");
    rf::NoGradGuard no_grad;
    const rf::Tensor logits = run.model->logits_all(ids, 1, ids.size());  // [T, V]
    const size_t V = logits.size(1);
    for (size_t m : masks) {
        const rf::Real* row = logits.data() + m * V;
        rf::require_finite_outputs(o.run_dir + ": the logits at [MASK] token " + std::to_string(m),
                                   row, V);
        // softmax in double over the row
        const double top = *std::max_element(row, row + V);
        std::vector<double> p(V);
        double total = 0;
        for (size_t v = 0; v < V; ++v) total += p[v] = std::exp(double(row[v]) - top);
        for (double& x : p) x /= total;
        std::vector<size_t> order(V);
        std::iota(order.begin(), order.end(), 0);
        const size_t k = std::min(o.top_k, V);
        std::partial_sort(order.begin(), order.begin() + long(k), order.end(),
                          [&](size_t a, size_t b) { return p[a] > p[b]; });
        std::printf("[MASK] at token %zu:\n", m);
        for (size_t r = 0; r < k; ++r)
            std::printf("  %zu. %-16s %.4f\n", r + 1,
                        run.tokenizer->display_token(int(order[r])).c_str(), p[order[r]]);
    }
}

void add_fill_mask(CLI::App& app) {
    auto options = std::make_shared<FillMaskOptions>();
    CLI::App* cmd =
        app.add_subcommand("fill-mask", "Print the top-k tokens for each [MASK] in a sentence");
    cmd->add_option("--run", options->run_dir, "Run directory from `roformer train`")->required();
    cmd->add_option("text", options->text, "A sentence containing [MASK]")->required();
    cmd->add_option("--top-k", options->top_k, "How many guesses to print")
        ->check(rf::cli::unsigned_number())
        ->capture_default_str();
    rf::cli::add_text_limit(cmd, options->max_text_bytes);
    cmd->callback([options] { run_fill_mask(*options); });
}

}  // namespace

RF_COMMAND("fill-mask", add_fill_mask);
