// Room — cli: `roformer extrapolate`, the comparison's runs at 1×, 2×, 4× their training length.
//
//   roformer extrapolate --runs runs/compare [--factors 1 2 4] [--max-tokens N] [--no-plot]
// See src/experiments/extrapolate.hpp for what is measured and written.
#include <algorithm>
#include <iostream>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "experiments/report.hpp"
#include "experiments/extrapolate.hpp"

namespace {

// Each factor is a full evaluation of every run with every scaling method (its cost grows with
// the window, as T² in attention): a few lengths, each once. A repeated factor would only
// repeat the work.
constexpr size_t kMaxFactors = 8;

void check_factors(const std::vector<size_t>& factors) {
    if (std::set<size_t>(factors.begin(), factors.end()).size() != factors.size())
        throw std::invalid_argument("--factors lists a factor twice; give each once, e.g. 1 2 4 8");
    if (factors.size() > kMaxFactors)
        throw std::invalid_argument("--factors lists " + std::to_string(factors.size()) +
                                    " factors, over the limit of " + std::to_string(kMaxFactors) +
                                    " (each is a full evaluation of every run); e.g. 1 2 4 8 16 "
                                    "32 64");
}

void add_extrapolate(CLI::App& app) {
    auto options = std::make_shared<rf::ExtrapolateOptions>();
    auto no_plot = std::make_shared<bool>(false);
    CLI::App* cmd = app.add_subcommand(
        "extrapolate", "Evaluate compared runs on windows longer than they were trained on");
    cmd->add_option("--runs", options->runs_dir, "The --out directory of `roformer compare`")
        ->required()
        ->check(rf::cli::non_empty("give the --out directory of `roformer compare`"));
    cmd->add_option("--factors", options->factors,
                    "Window lengths as multiples of the training length")
        ->check(rf::cli::unsigned_number() & CLI::Range(size_t(1), size_t(64)))
        ->take_all()
        ->capture_default_str();
    cmd->add_option("--max-tokens", options->max_tokens,
                    "Validation tokens scored at every length (≥ 1)")
        ->check(rf::cli::count_at_least(
            1, "0 tokens would score nothing; leave --max-tokens out for " +
                   std::to_string(options->max_tokens) + " (a larger value scores more text)"))
        ->capture_default_str();
    cmd->add_option("--plot-script", options->plot_script,
                    "Path to scripts/plot_curves.py (default: search)")
        ->check(rf::cli::non_empty("leave --plot-script out to search for it, or use --no-plot"));
    cmd->add_flag("--no-plot", *no_plot, "Do not run the plot script");
    cmd->callback([options, no_plot] {
        check_factors(options->factors);
        options->plot = !*no_plot;
        rf::check_plot_script(options->plot_script, options->plot);
        rf::run_extrapolation(*options, std::cout);
        std::cout << "wrote " << options->runs_dir
                  << "/extrapolation.csv and the table in summary.md\n";
    });
}

}  // namespace

RF_COMMAND("extrapolate", add_extrapolate);
