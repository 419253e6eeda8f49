// Room — cli: `roformer compare`, every position scheme × seed on identical inputs.
//
//   roformer compare --config configs/compare.toml [--out runs/compare] [--seeds N]
//                    [--schemes rope_interleaved,learned,...] [--jobs N] [--threshold NATS]
//                    [--set key=value ...] [--no-plot]
// Finished runs are skipped and interrupted ones resumed, so the same command continues
// where it stopped. Ctrl-C / SIGTERM / SIGHUP stop every run with a checkpoint and print that
// command (shell-quoted); the exit code is 128 + the signal. See src/experiments/compare.hpp for the directory layout and the preset's
// [compare] table.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "experiments/report.hpp"
#include "experiments/compare.hpp"
#include "io/shell_quote.hpp"
#include "tensor/format.hpp"
#include "dist/mpi_communicator.hpp"

namespace {

struct CompareCommandOptions {
    std::string config_path;
    std::vector<std::string> overrides;
    rf::CompareOptions compare;
    // Not given (0, or empty): the preset's. Given, they are checked: --seeds 0, --jobs 0,
    // --threshold ≤ 0 are refused (add_compare), so 0 here only ever means "not given".
    size_t seeds = 0;                  // the preset's (default 3)
    size_t jobs = 0;                   // the preset's (default 1)
    std::vector<std::string> schemes;  // the preset's (default all six)
    double threshold = 0;              // the preset's (default automatic)
    bool no_plot = false;
};

void run_compare_command(const CompareCommandOptions& o) {
    rf::ComparePreset preset = rf::load_compare_preset(
        o.config_path.empty() ? std::nullopt : std::optional<std::string>(o.config_path),
        o.overrides);
    if (o.seeds) preset.settings.seeds = o.seeds;
    if (o.jobs) preset.settings.jobs = o.jobs;
    if (!o.schemes.empty()) preset.settings.schemes = o.schemes;
    if (o.threshold > 0) preset.settings.loss_threshold = o.threshold;
    rf::CompareOptions options = o.compare;
    options.plot = !o.no_plot;
    rf::check_plot_script(options.plot_script, options.plot);
    const rf::CompareReport report = rf::run_compare(preset, options, std::cout);
    if (rf::dist::world_rank() != 0) return;  // mpirun: rank 0 reports (compare_mpi.hpp)
    if (report.interrupted_by) {
        // Every run is at a checkpoint; the same command continues each one to its end.
        std::vector<std::string> words = {"roformer", "compare"};
        if (!o.config_path.empty()) words.insert(words.end(), {"--config", o.config_path});
        for (const std::string& kv : o.overrides) words.insert(words.end(), {"--set", kv});
        if (o.seeds) words.insert(words.end(), {"--seeds", std::to_string(o.seeds)});
        if (o.jobs) words.insert(words.end(), {"--jobs", std::to_string(o.jobs)});
        if (!o.schemes.empty()) {
            std::string list;
            for (const std::string& name : o.schemes) list += (list.empty() ? "" : ",") + name;
            words.insert(words.end(), {"--schemes", list});
        }
        if (o.threshold > 0)
            words.insert(words.end(), {"--threshold", rf::format_shortest(o.threshold)});
        if (!o.compare.plot_script.empty())
            words.insert(words.end(), {"--plot-script", o.compare.plot_script});
        if (o.no_plot) words.push_back("--no-plot");
        words.insert(words.end(), {"--out", options.out_dir});
        std::cout.flush();
        std::cerr
            << "interrupted: " << report.finished << " of "
            << report.finished + report.unfinished.size()
            << " runs finished, the others stopped at their last checkpoint or not started (first unfinished: "
            << report.unfinished.front()
            << "); no summary written; continue with: " << rf::shell_command(words) << "\n";
        std::exit(128 + report.interrupted_by);
    }
    std::cout << "\n"
              << rf::summary_markdown(report.summary) << "\n"
              << report.trained << " runs trained, " << report.resumed << " resumed, "
              << report.skipped << " already finished; wrote " << options.out_dir
              << "/curves.csv, summary.md" << (report.plotted ? ", curves.png" : "") << "\n"
              << "next: " << rf::shell_command({"roformer", "extrapolate", "--runs", options.out_dir})
              << "\n";
}

void add_compare(CLI::App& app) {
    auto options = std::make_shared<CompareCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "compare", "Train every position scheme × seed and compare the loss curves");
    cmd->add_option("--config", options->config_path,
                    "Preset: a config file with an optional [compare] table")
        ->check(rf::cli::non_empty("leave --config out for the defaults"))
        ->check(CLI::ExistingFile);
    cmd->add_option("--out", options->compare.out_dir, "Comparison directory")
        ->check(rf::cli::non_empty("leave --out out for " + options->compare.out_dir))
        ->capture_default_str();
    cmd->add_option("--seeds", options->seeds,
                    "Seeds 1..N per scheme, N ≥ 1 (default: the preset's, else 3)")
        ->check(rf::cli::count_at_least(
            1, "0 seeds would train nothing; leave --seeds out for the preset's (else 3)"));
    cmd->add_option("--jobs", options->jobs,
                    "Runs trained at once, each in its own process, ≥ 1 (default: the preset's, "
                    "else 1)")
        ->check(rf::cli::count_at_least(
            1, "0 jobs would train nothing; leave --jobs out for the preset's (else 1)"));
    cmd->add_option(
           "--schemes", options->schemes,
           "Comma-separated subset of rope_interleaved,rope_half,sinusoidal,learned,none,alibi")
        ->delimiter(',');
    cmd->add_option(
           "--threshold", options->threshold,
           "Validation loss (nats, > 0) for the steps-to-threshold column (default: the "
           "preset's, else automatic)")
        ->check(rf::cli::positive_number(
            "a cross-entropy in nats is > 0, so no run could reach it; leave --threshold out "
            "for the preset's (else automatic)"));
    cmd->add_option("--set", options->overrides,
                    "Override one config key for every run (repeatable)")
        ->take_all();
    cmd->add_option("--plot-script", options->compare.plot_script,
                    "Path to scripts/plot_curves.py (default: search)")
        ->check(rf::cli::non_empty("leave --plot-script out to search for it, or use --no-plot"));
    cmd->add_flag("--no-plot", options->no_plot, "Do not run the plot script");
    cmd->callback([options] { run_compare_command(*options); });
}

}  // namespace

RF_COMMAND("compare", add_compare);
