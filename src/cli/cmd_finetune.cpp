// Room — cli: `roformer finetune`, a pre-trained encoder fine-tuned on a classification task.
//
//   roformer finetune --from runs/classroom --task kjv-testament --out runs/ft
//                     [--config configs/finetune.toml] [--set key=value ...] [--from-scratch]
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "finetune/tasks.hpp"
#include "io/shell_quote.hpp"
#include "finetune/finetune.hpp"

namespace {

struct FinetuneCommandOptions {
    std::string from, task, out, config_path;
    std::vector<std::string> overrides;
    bool from_scratch = false, quiet = false, resume = false;
    size_t stop_after = 0;
};

// The command that continues this fine-tune, for the message after an interruption: every
// word shell-quoted (io/shell_quote.hpp), so it pastes back as it was typed.
std::string resume_command(const FinetuneCommandOptions& o) {
    std::vector<std::string> words = {"roformer", "finetune", "--from", o.from};
    if (!o.task.empty()) words.insert(words.end(), {"--task", o.task});
    if (!o.config_path.empty()) words.insert(words.end(), {"--config", o.config_path});
    for (const std::string& kv : o.overrides) words.insert(words.end(), {"--set", kv});
    if (o.from_scratch) words.push_back("--from-scratch");
    words.insert(words.end(), {"--resume", "--out", o.out});
    return rf::shell_command(words);
}

void run_finetune(const FinetuneCommandOptions& o) {
    std::vector<std::string> overrides = o.overrides;
    if (!o.task.empty()) overrides.push_back("task=\"" + o.task + "\"");
    const rf::FinetuneConfig config = rf::load_finetune_config(
        o.config_path.empty() ? std::nullopt : std::optional<std::string>(o.config_path),
        overrides);
    rf::FinetuneOptions options;
    options.from_run = o.from;
    options.from_scratch = o.from_scratch;
    options.out_dir = o.out;
    options.quiet = o.quiet;
    options.resume = o.resume;
    options.stop_after = o.stop_after;
    options.resume_command = resume_command(o);
    const rf::FinetuneSummary s = rf::finetune(config, options, std::cerr);
    for (const std::string& w : s.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    if (s.interrupted_by) {
        std::cerr << "interrupted at step " << s.steps << " of " << s.total_steps
                  << "; the model of that step is saved in " << o.out
                  << "; continue with: " << resume_command(o) << "\n";
        std::exit(128 + s.interrupted_by);
    }
    if (s.stopped_early) {
        std::printf(
            "stopped early after step %zu of %zu: validation macro-F1 (%zu held-out "
            "training examples) did not rise for %zu evaluations\n",
            s.steps, s.total_steps, s.validation_examples, config.patience);
        std::printf(
            "best: step %zu, validation macro-F1 %.4f; its test accuracy %.4f, macro-F1 "
            "%.4f (kept in best.safetensors, which classify uses)\n",
            s.best_step, s.best_validation.macro_f1, s.best_test.accuracy, s.best_test.macro_f1);
    } else if (s.steps < s.total_steps) {
        std::printf("stopped after step %zu of %zu; continue with: %s\n", s.steps, s.total_steps,
                    resume_command(o).c_str());
        return;
    }
    if (s.early_stopping && !s.stopped_early)
        std::printf(
            "best: step %zu, validation macro-F1 %.4f; its test accuracy %.4f, macro-F1 "
            "%.4f (kept in best.safetensors, which classify uses)\n",
            s.best_step, s.best_validation.macro_f1, s.best_test.accuracy, s.best_test.macro_f1);
    std::printf("test: accuracy %.4f, macro-F1 %.4f on %zu examples (loss %.4f)%s\n",
                s.test.accuracy, s.test.macro_f1, s.test.n, s.test.loss,
                s.early_stopping ? " — the last model" : "");
    std::printf("floor: bag of words accuracy %.4f, macro-F1 %.4f%s; majority class accuracy %.4f\n",
                s.floor.accuracy, s.floor.macro_f1, rf::floor_note(s).c_str(),
                s.majority_accuracy);
    std::printf("run directory: %s (%zu steps, %.1f s)\n", o.out.c_str(), s.steps, s.elapsed_s);
}

void add_finetune(CLI::App& app) {
    auto o = std::make_shared<FinetuneCommandOptions>();
    std::string tasks;
    for (const std::string& t : rf::data::task_names()) tasks += (tasks.empty() ? "" : ", ") + t;
    CLI::App* cmd = app.add_subcommand(
        "finetune", "Fine-tune a pre-trained MLM run's encoder on a classification task");
    cmd->add_option("--from", o->from, "The pre-trained MLM run directory (its tokenizer is kept)")
        ->required()
        ->check(rf::cli::non_empty("give the --out directory of an MLM `roformer train`"));
    cmd->add_option("--task", o->task, "The task: " + tasks + " (default: finetune.task)")
        ->check(rf::cli::non_empty("leave --task out for finetune.task, or name one: " + tasks));
    cmd->add_option("--out", o->out, "Fine-tune run directory to create")
        ->required()
        ->check(rf::cli::non_empty("name the fine-tune run directory to create"));
    cmd->add_option("--config", o->config_path, "TOML file with a [finetune] table")
        ->check(rf::cli::non_empty("leave --config out for the defaults of finetune_config.hpp"));
    cmd->add_option("--set", o->overrides, "Override one key, e.g. --set lr=5e-5 (repeatable)")
        ->take_all();
    cmd->add_flag("--from-scratch", o->from_scratch,
                  "Baseline: the --from run's architecture and tokenizer, fresh weights");
    cmd->add_flag("--resume", o->resume, "Continue the fine-tune in --out from its checkpoint");
    cmd->add_option("--stop-after", o->stop_after,
                    "Stop after this step (≥ 1) with a checkpoint (continue later with --resume)")
        ->check(rf::cli::count_at_least(
            1, "step 0 is before the first step; leave --stop-after out to fine-tune to the end"));
    cmd->add_flag("--quiet", o->quiet, "No progress output");
    cmd->callback([o] { run_finetune(*o); });
}

}  // namespace

RF_COMMAND("finetune", add_finetune);
