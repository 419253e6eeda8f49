// Room — cli: `roformer train`, one training run (MLM or causal LM) into a run directory.
//
//   roformer train --config configs/classroom.toml [--set key=value ...] [--out runs/NAME]
//                  [--resume] [--stop-after N] [--quiet] [--profile]
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "config/validate_effects.hpp"
#include "data/objective.hpp"
#include "io/shell_quote.hpp"
#include "inspect/profile.hpp"
#include "dist/mpi_communicator.hpp"
#include "run/interrupt.hpp"
#include "tensor/format.hpp"
#include "train/data_parallel.hpp"
#include "train/trainer.hpp"

#ifdef RF_COVERAGE
#include "cli/call_edges.hpp"
extern "C" {
#include <gcov.h>  // __gcov_reset, __gcov_dump (a C header without extern "C")
}
#endif

namespace {

struct TrainCommandOptions {
    std::string config_path;
    std::vector<std::string> overrides;
    std::string out_dir;
    bool resume = false;
    size_t stop_after = 0;
    bool quiet = false;
    bool profile = false;
};

// The engine watched by the profiler for the length of one training step (not evaluations).
struct WatchedStep {
    explicit WatchedStep(rf::EngineObserver* observer) { rf::set_engine_observer(observer); }
    ~WatchedStep() { rf::set_engine_observer(nullptr); }
    WatchedStep(const WatchedStep&) = delete;
    WatchedStep& operator=(const WatchedStep&) = delete;
};

// The command that continues this run, for the messages after an interruption or a
// --stop-after: the same --config and --set values, each word shell-quoted.
std::string resume_command(const TrainCommandOptions& o, const std::string& out_dir, size_t ranks) {
    std::vector<std::string> words = {"roformer", "train"};
    if (ranks > 1)  // the same launch again (docs/distributed.md)
        words.insert(words.begin(), {"mpirun", "-np", std::to_string(ranks)});
    if (!o.config_path.empty()) words.insert(words.end(), {"--config", o.config_path});
    for (const std::string& kv : o.overrides) words.insert(words.end(), {"--set", kv});
    words.insert(words.end(), {"--resume", "--out", out_dir});
    return rf::shell_command(words);
}

void run_train(const TrainCommandOptions& o) {
    const rf::Config config = rf::load_config(
        o.config_path.empty() ? std::nullopt : std::optional<std::string>(o.config_path),
        o.overrides);
    // Settings that change nothing because of another number (config/validate_effects.hpp).
    for (const std::string& note : rf::idle_relation_notes(config))
        std::cerr << "note: " << note << "\n";
    if (o.stop_after > config.train.steps)
        std::cerr << "note: --stop-after " << o.stop_after << " is beyond train.steps = "
                  << config.train.steps << ", so the run ends at step " << config.train.steps
                  << " first and --stop-after changes nothing; give --stop-after below "
                  << config.train.steps << " to pause, or leave it out\n";
    rf::TrainOptions options;
    options.out_dir = o.out_dir;
    if (options.out_dir.empty()) {
        const std::string stem = o.config_path.empty()
                                     ? std::string("default")
                                     : std::filesystem::path(o.config_path).stem().string();
        options.out_dir = "runs/" + stem;
    }
    options.resume = o.resume;
    options.stop_after = o.stop_after;
    options.quiet = o.quiet;
    // What plugs into the loop (train/trainer.hpp): the signal handlers (Ctrl-C: finish the
    // step, checkpoint, return), the ranks of an mpirun job, the profiler.
    const rf::InterruptGuard interrupts;
    options.stop = rf::InterruptGuard::after_work;
    // mpirun / srun: one model on every rank of the job; otherwise this process alone.
    const std::unique_ptr<rf::Communicator> ranks = rf::dist::world_communicator();
    options.communicator = ranks.get();
    double allreduce_seconds = 0;
    if (ranks->size() > 1) {  // data parallelism around the step (train/data_parallel.hpp)
        options.step = rf::data_parallel_step(*ranks, &allreduce_seconds);
        options.evaluate = rf::data_parallel_evaluate(*ranks);
        options.stop = rf::data_parallel_stop(*ranks, options.stop);
    }
    if (o.profile) {
        options.step = [step = options.step](rf::RoFormer& model, rf::AdamW& optimizer, const rf::Batch& batch,
                              uint64_t seed, double grad_clip, double lr, size_t n) {
            const WatchedStep watched(rf::profile::observer());
            return step(model, optimizer, batch, seed, grad_clip, lr, n);
        };
    }
#ifdef RF_COVERAGE
    // A coverage build (CMakeLists.txt, RF_COVERAGE): the counters written hold one whole turn
    // of the loop alone — from the stop question after step 1 to the one after step 2, both
    // left out (what answers them, the signal guard above, is plugged in here, not the loop's):
    // the schedule, the sampler, the step, the bookkeeping — what docs/reading-path.md lists
    // (scripts/reading_path.sh measures it).
    options.stop = [stop = options.stop](double work_seconds) {
        static int asked = 0;
        if (++asked == 2) {
            __gcov_dump();  // (and not again at exit)
            rf::write_call_edges();
            std::cerr << "coverage: the counters of step 2 written\n";
        }
        const int signal = stop(work_seconds);
        if (asked == 1) {
            __gcov_reset();
            rf::start_call_edges();
        }
        return signal;
    };
#endif
    const rf::TrainSummary s = rf::train(config, options, std::cerr);
    if (ranks->size() > 1 && ranks->is_root() && !o.quiet && s.step_seconds > 0)
        std::cerr << ranks->size() << " ranks: " << rf::format_fixed(allreduce_seconds, 3)
                  << " s of the " << rf::format_fixed(s.step_seconds, 3)
                  << " s of training steps in the gradient all-reduce ("
                  << rf::format_fixed(100 * allreduce_seconds / s.step_seconds, 1) << "%)\n";
    if (!ranks->is_root()) {  // mpirun: rank 0 reports for every rank (docs/distributed.md)
        if (s.interrupted_by) std::exit(128 + s.interrupted_by);
        return;
    }
    if (o.profile) std::cerr << rf::profile::report(s.steps - s.start_step, s.step_seconds);
    if (s.interrupted_by) {
        // The checkpoint is written; exit as the shell would report death by that signal.
        std::cerr << "interrupted at step " << s.steps
                  << "; continue with: " << resume_command(o, options.out_dir, ranks->size())
                  << "\n";
        std::cout.flush();
        std::exit(128 + s.interrupted_by);
    }
    if (s.steps < config.train.steps) {
        std::cout << "stopped after step " << s.steps << " of " << config.train.steps
                  << "; continue with: " << resume_command(o, options.out_dir, ranks->size())
                  << "\n";
        return;
    }
    const char* labelled = rf::data::labelled_tokens(config.train.objective);
    std::printf(
        "final validation: loss %.4f nats, accuracy %.4f on %zu %s "
        "(unigram entropy of the %s: %.4f nats)\n",
        s.final_eval.loss, s.final_eval.accuracy, s.final_eval.predictions, labelled, labelled,
        s.unigram_entropy);
    std::printf("throughput: %.0f tokens/s, %.2f MFLOP/token forward (≈ %.2f GFLOP/s training)\n",
                s.tokens_per_s, s.forward_flops_per_token / 1e6,
                3.0 * s.forward_flops_per_token * s.tokens_per_s / 1e9);
    std::printf("run directory: %s (%.1f s)\n", options.out_dir.c_str(), s.elapsed_s);
}

void add_train(CLI::App& app) {
    auto options = std::make_shared<TrainCommandOptions>();
    CLI::App* cmd = app.add_subcommand(
        "train", "Train a RoFormer (MLM or causal LM) and write a run directory");
    cmd->add_option("--config", options->config_path, "TOML file of overrides (configs/*.toml)")
        ->check(rf::cli::non_empty("leave --config out to train with the defaults"));
    cmd->add_option("--set", options->overrides,
                    "Override one key, e.g. --set train.lr=3e-4 (repeatable)")
        ->take_all();
    cmd->add_option("--out", options->out_dir,
                    "Run directory to create (default runs/<config name>)")
        ->check(rf::cli::non_empty("leave --out out for runs/<config name>"));
    cmd->add_flag("--resume", options->resume,
                  "Continue the run in --out from its last checkpoint");
    cmd->add_option("--stop-after", options->stop_after,
                    "Stop after this step (≥ 1) with a checkpoint (continue later with --resume)")
        ->check(rf::cli::count_at_least(
            1, "step 0 is before the first step; leave --stop-after out to train to train.steps"));
    cmd->add_flag("--quiet", options->quiet, "No progress output");
    cmd->add_flag("--profile", options->profile,
                  "Time every op of the training steps (forward, backward) and print the table "
                  "at the end (docs/performance.md)");
    cmd->callback([options] { run_train(*options); });
}

}  // namespace

RF_COMMAND("train", add_train);
