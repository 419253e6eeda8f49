// Room — experiments: the preset, the runs (skip / resume / train), curves.csv and summary.md.
#include "experiments/compare.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "experiments/compare_directory.hpp"
#include "experiments/compare_mpi.hpp"
#include "experiments/report.hpp"
#include "io/output_file.hpp"
#include "io/platform.hpp"
#include "run/checkpoint.hpp"
#include "run/checkpoint_commit.hpp"
#include "run/interrupt.hpp"
#include "run/run_directory.hpp"
#include "run/run_lock.hpp"
#include "dist/mpi_communicator.hpp"
#include "train/data_parallel.hpp"
#include "train/trainer.hpp"

namespace rf {

namespace fs = std::filesystem;

std::string comparison_run_dir(const std::string& out_dir, const std::string& scheme, size_t seed) {
    return (fs::path(out_dir) / scheme / ("seed" + std::to_string(seed))).string();
}

// ---- the runs -------------------------------------------------------------------------------
enum class RunState { fresh, resume, finished };

// A run directory's checkpoint step (0 when it has none yet): what checkpoint.json commits —
// the one record a run is finished by — else (runs from before manifests) the model's metadata.
static size_t metadata_step(const std::string& dir) {
    const std::string model = run_file(dir, "model.safetensors");
    if (!fs::exists(model)) return 0;
    const auto meta = read_checkpoint_metadata(model);
    const auto it = meta.find("step");
    if (it == meta.end()) return 0;
    size_t step = 0;
    const char* end = it->second.data() + it->second.size();
    const auto [ptr, ec] = std::from_chars(it->second.data(), end, step);
    if (ec != std::errc() || ptr != end)
        throw std::runtime_error(model + " records step '" + it->second +
                                 "', not a number; move that run directory away and run again");
    return step;
}

size_t comparison_run_step(const std::string& dir) {
    if (const std::optional<size_t> step = committed_step(dir)) return *step;
    return metadata_step(dir);
}

// What to do with a run directory; refuses one that holds a run of another config, and never
// deletes anything: a run killed before it was fully created is moved aside, with a message.
static RunState inspect_run_dir(const std::string& dir, const Config& config, std::ostream& log) {
    if (!fs::exists(dir) || fs::is_empty(dir)) return RunState::fresh;
    const std::string config_path = run_file(dir, "config.toml");
    const bool started = fs::exists(run_file(dir, "tokenizer.json"));
    if (!started && fs::exists(run_file(dir, RunLock::kFileName))) {
        // Our own run, killed while it was being created (train writes tokenizer.json last).
        std::string aside = dir + ".incomplete";
        for (int n = 2; fs::exists(aside); ++n) aside = dir + ".incomplete" + std::to_string(n);
        fs::rename(dir, aside);
        log << "  " << dir << " was killed while it was being created; moved it aside to " << aside
            << " (delete it when you no longer need it) and starting the run again\n";
        return RunState::fresh;
    }
    if (!fs::exists(config_path))
        throw std::runtime_error("'" + dir +
                                 "' exists but is not a run directory (no config.toml); "
                                 "move it away or pick another --out");
    const Config saved = load_config(config_path);
    if (saved != config)
        throw std::runtime_error("'" + dir + "' holds a run of a different config: " +
                                 config_difference(saved, config) +
                                 " (the preset or --set changed since); pick another --out or "
                                 "move that directory away");
    // A commit killed between checkpoint.json and its renames is finished here, under the
    // run's own lock, so that one re-run continues whatever moment the kill hit.
    if (committed_step(dir)) {
        const RunLock run_lock = RunLock::acquire(dir, false);
        recover_checkpoint(dir);
    }
    const size_t step = comparison_run_step(dir);
    if (step >= config.train.steps) return RunState::finished;
    // Interrupted: --resume continues from its checkpoint, or from step 0 if it has none.
    return RunState::resume;
}

static std::string summary_header(const ComparePreset& preset, const CompareOptions& options) {
    const Config& c = preset.base;
    std::ostringstream md;
    md << "# Position-scheme comparison\n\n"
       << "Written by `roformer compare` into `" << options.out_dir
       << "`: " << preset.settings.schemes.size() << " schemes × " << preset.settings.seeds
       << " seeds (train.seed = 1…" << preset.settings.seeds << "). Model: hidden "
       << c.model.hidden << ", layers " << c.model.num_layers << ", " << c.model.num_heads
       << " heads, ffn " << c.model.ffn << "; data: " << c.data.path << ", "
       << (c.data.tokenizer == "char"
               ? std::string("characters")
               : c.data.tokenizer + " vocab " + std::to_string(c.data.vocab_size))
       << ", seq_len " << c.data.seq_len << "; training: " << c.train.steps << " steps of "
       << c.train.batch_size << " windows, lr " << c.train.lr << " (" << enum_name(c.train.schedule)
       << ", warmup " << c.train.warmup_steps << "), validation every " << c.train.eval_every
       << " steps on " << c.data.val_windows << " fixed windows.\n\n"
       << "Runs of one seed share the tokenizer, training windows, masks, batch order, validation "
          "set and initial weights (learned's extra table comes from its own generator); only the "
       << (preset.settings.variants.empty() ? "position scheme differs" : "run's own keys differ")
       << ".\n\n";
    return md.str();
}

// One run of the comparison and what to do with it.
struct PlannedRun {
    std::string scheme;
    size_t seed = 0;
    Config config;
    std::string dir;
    RunState state = RunState::fresh;
};

static TrainSummary train_planned(const PlannedRun& run, std::ostream& log) {
    TrainOptions train_options;
    train_options.out_dir = run.dir;
    train_options.resume = run.state == RunState::resume;
    train_options.quiet = true;
    const InterruptGuard interrupts;  // a stop signal: checkpoint after this step, return
    train_options.stop = InterruptGuard::after_work;
    return train(run.config, train_options, log);
}

// A run is finished only when its committed checkpoint says so — not when its trainer
// returned or its process exited 0.
static bool run_finished(const PlannedRun& run) {
    return comparison_run_step(run.dir) >= run.config.train.steps;
}

// The one line a failed run ends the comparison with: its directory, its error, what to do.
static std::string run_failed(const std::string& dir, const std::string& error, size_t count) {
    return "compare: " + (count > 1 ? std::to_string(count) + " runs failed, first " : "") + dir +
           ": " + error + "; fix it and run the same command again to continue";
}

// Trains `todo`, `jobs` at a time: each in a forked child process (own memory, own OpenMP
// and OpenBLAS state), so parallel runs share nothing. `done(run, seconds)` is called in the
// parent as each one finishes. The parent itself never trains (no OpenMP threads to inherit).
// Each child is in its own process group (a Ctrl-C on the terminal reaches the parent alone)
// and dies with the parent (PR_SET_PDEATHSIG: SIGTERM, i.e. it checkpoints and stops); the
// parent forwards every stop signal it gets to every child, stops starting runs, and waits
// for all of them. Returns the signal that interrupted the comparison, or 0.
template <class Done>
static int train_in_processes(const std::vector<const PlannedRun*>& todo, size_t jobs,
                              RunLock& comparison_lock, std::ostream& log, Done done) {
    struct Child {
        const PlannedRun* run;
        std::chrono::steady_clock::time_point started;
        int error_pipe;  // read end: the child's error message, if it fails
    };
    std::map<pid_t, Child> active;
    std::vector<std::pair<std::string, std::string>> failed;  // directory, error
    size_t next = 0;
    int forwarded = 0;
    const pid_t parent = getpid();
    auto may_start = [&] {
        return failed.empty() && !InterruptGuard::pending() && next < todo.size();
    };
    while (may_start() || !active.empty()) {
        while (may_start() && active.size() < jobs) {
            const PlannedRun* run = todo[next++];
            log.flush();
            std::fflush(nullptr);
            int error_pipe[2];
            if (::pipe(error_pipe) != 0)  // (pipe2 is Linux's: macOS has pipe and fcntl)
                throw std::runtime_error("compare: cannot make a pipe; retry with --jobs 1");
            for (int end : error_pipe) ::fcntl(end, F_SETFD, FD_CLOEXEC);
            const pid_t pid = fork();
            if (pid < 0) throw std::runtime_error("compare: fork failed; retry with --jobs 1");
            if (pid == 0) {  // the child: train, send an error to the parent, never return
                comparison_lock.forget_in_child();
                InterruptGuard::quiet_notes();
                setpgid(0, 0);
                platform::signal_when_parent_exits(SIGTERM);  // (not on macOS: io/platform.hpp)
                if (getppid() != parent) raise(SIGTERM);  // the parent died before that
                int status = 0;
                try {
                    // quiet: no progress; a warning (a refused metrics row) still reaches stderr
                    const TrainSummary s = train_planned(*run, std::cerr);
                    if (s.interrupted_by) status = 128 + s.interrupted_by;
                } catch (const std::exception& e) {  // the parent's one error line says it
                    // The parent reads it once this process has exited: it must fit the pipe.
                    const std::string what = std::string(e.what()).substr(0, 4000);
                    (void)!::write(error_pipe[1], what.data(), what.size());
                    status = 1;
                }
                std::fflush(nullptr);
                _exit(status);
            }
            setpgid(pid, pid);  // (also in the child: whichever runs first)
            ::close(error_pipe[1]);
            active[pid] = {run, std::chrono::steady_clock::now(), error_pipe[0]};
            // A signal between the check above and fork: the new child gets it too.
            for (int i = 0; i < InterruptGuard::count(); ++i) kill(pid, InterruptGuard::pending());
        }
        // Forward each new stop signal to every child (the second makes them quit at once).
        for (; forwarded < InterruptGuard::count(); ++forwarded)
            for (const auto& entry : active) kill(entry.first, InterruptGuard::pending());
        int status = 0;
        const pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid == 0) {
            usleep(20000);
            continue;
        }
        if (pid < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error(std::string("compare: waitpid failed (") +
                                     std::strerror(errno) + ")");
        }
        const auto it = active.find(pid);
        if (it == active.end()) continue;
        const auto [run, started, error_pipe] = it->second;
        active.erase(it);
        std::string error;  // the child has exited: its message, whole, is in the pipe
        char text[4096];
        for (ssize_t n; (n = ::read(error_pipe, text, sizeof text)) > 0;)
            error.append(text, size_t(n));
        ::close(error_pipe);
        if (error.empty())
            error = WIFSIGNALED(status) ? "its process was killed by signal " +
                                              std::to_string(WTERMSIG(status))
                                        : "its process exited with status " +
                                              std::to_string(WEXITSTATUS(status));
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && run_finished(*run))
            done(*run,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        else if (!InterruptGuard::pending() && !(WIFEXITED(status) && WEXITSTATUS(status) > 128))
            failed.emplace_back(run->dir, error);
        else if (!InterruptGuard::pending() && WIFEXITED(status))  // a child stopped alone
            kill(getpid(), WEXITSTATUS(status) - 128);             // = the whole comparison stops
    }
    if (InterruptGuard::pending()) return InterruptGuard::pending();
    if (!failed.empty())
        throw std::runtime_error(run_failed(failed[0].first, failed[0].second, failed.size()));
    return 0;
}

CompareReport run_compare(const ComparePreset& preset, const CompareOptions& options,
                          std::ostream& log) {
    const CompareSettings& settings = preset.settings;
    check_compare_preset(preset);
    // mpirun: every rank builds each run's config from its own preset, so every rank must hold
    // rank 0's (data_parallel.hpp) — checked before the first other collective.
    if (dist::world_size() > 1) {
        std::vector<std::string> lines = training_settings(preset.base, 0);
        for (const std::string& name : settings.schemes) {
            std::string overrides = "(its scheme name)";
            if (const auto it = settings.variants.find(name); it != settings.variants.end()) {
                overrides.clear();
                for (const std::string& o : it->second) overrides += (overrides.empty() ? "" : " ") + o;
            }
            lines.push_back("compare run " + name + "=" + overrides);
        }
        check_same_settings(*dist::world_communicator(), lines, "compare");
    }
    // Ranks other than 0 only train the runs rank 0 deals them (compare_mpi.hpp).
    if (dist::world_rank() != 0) {
        serve_compare_ranks(preset);
        return {};
    }
    // Every config first, so a bad combination fails before hours of training.
    for (const std::string& scheme : settings.schemes)
        comparison_run_config(preset.base, scheme, 1, settings.variants);
    if (fs::exists(options.out_dir) && !fs::is_directory(options.out_dir))
        throw std::runtime_error("compare: --out '" + options.out_dir +
                                 "' is a file, not a directory; pick another --out");
    // A stop signal from here on stops every run at a step boundary, with a checkpoint.
    const InterruptGuard interrupts;
    // One comparison per directory, locked before anything is checked (compare_directory.hpp).
    // Every path it writes inside --out (its runs' files, curves.csv's mark) fits, checked first.
    std::vector<std::string> inside = {"curves.csv.written-by.tmp-<pid>"};
    for (const std::string& scheme : settings.schemes)
        inside.push_back(scheme + "/seed" + std::to_string(settings.seeds) + "/" + kLongestRunName);
    check_directory_names(options.out_dir, "--out", inside);
    RunLock lock = lock_comparison_directory(options.out_dir, settings.schemes, options.plot);
    const EmptyComparisonCleanup cleanup(lock, options.out_dir);

    // Seed-major order: an interrupted comparison has whole seeds of every scheme.
    std::vector<PlannedRun> plan;
    for (size_t seed = 1; seed <= settings.seeds; ++seed)
        for (const std::string& scheme : settings.schemes) {
            PlannedRun run{scheme, seed,
                           comparison_run_config(preset.base, scheme, seed, settings.variants),
                           comparison_run_dir(options.out_dir, scheme, seed)};
            run.state = inspect_run_dir(run.dir, run.config, log);
            plan.push_back(run);
        }

    CompareReport report;
    size_t finished = 0;
    char line[256];
    auto print = [&](const PlannedRun& run, const std::string& how) {
        const std::vector<CurvePoint> curve = read_run_curve(run.dir);
        if (curve.empty())
            throw std::runtime_error(run_file(run.dir, "metrics.csv") + " has no validation rows");
        std::snprintf(line, sizeof line,
                      "[%zu/%zu] %-16s seed %zu: val loss %.4f, accuracy %.4f (%s)\n", ++finished,
                      plan.size(), run.scheme.c_str(), run.seed, curve.back().val_loss,
                      curve.back().val_accuracy, how.c_str());
        log << line << std::flush;
    };
    std::vector<const PlannedRun*> todo;
    for (const PlannedRun& run : plan) {
        if (run.state == RunState::finished) {
            ++report.skipped;
            print(run, "finished earlier, skipped");
        } else {
            todo.push_back(&run);
            ++(run.state == RunState::resume ? report.resumed : report.trained);
        }
    }
    auto done = [&](const PlannedRun& run, double seconds) {
        char how[64];
        std::snprintf(how, sizeof how, "%.1f s%s", seconds,
                      run.state == RunState::resume ? ", resumed" : "");
        print(run, how);
    };
    if (dist::world_size() > 1) {  // mpirun: the runs spread over the ranks (compare_mpi.hpp)
        std::vector<RankRun> runs;
        for (const PlannedRun* run : todo)
            runs.push_back({run->scheme, run->seed, run->state == RunState::resume, run->dir});
        const std::vector<RankRunResult> results = train_across_ranks(preset, runs);
        for (size_t i = 0; i < todo.size(); ++i)
            if (!results[i].ok && !results[i].error.empty())  // (not run: after a failure)
                throw std::runtime_error(run_failed(todo[i]->dir, results[i].error, 1));
        for (size_t i = 0; i < todo.size(); ++i)
            if (results[i].ok) done(*todo[i], results[i].seconds);
    } else if (settings.jobs <= 1) {
        for (const PlannedRun* run : todo) {
            if ((report.interrupted_by = InterruptGuard::pending())) break;
            const auto started = std::chrono::steady_clock::now();
            const TrainSummary s = train_planned(*run, log);
            if ((report.interrupted_by = s.interrupted_by)) break;
            if (!run_finished(*run))  // a signal in the run's last step, or a lost one
                report.interrupted_by =
                    InterruptGuard::pending() ? InterruptGuard::pending() : SIGINT;
            if (report.interrupted_by) break;
            done(*run,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        }
    } else {
        report.interrupted_by = train_in_processes(todo, settings.jobs, lock, log, done);
    }
    if (!report.interrupted_by && InterruptGuard::pending())
        report.interrupted_by = InterruptGuard::pending();  // during the last run's final step
    if (report.interrupted_by) {  // summary.md and curves.csv are written from finished runs only
        for (const PlannedRun& run : plan)
            if (!run_finished(run)) report.unfinished.push_back(run.dir);
        report.finished = plan.size() - report.unfinished.size();
        if (!report.unfinished.empty()) return report;
        report.interrupted_by = 0;  // every run finished after all: write the report
    }

    std::vector<CurveRow> rows;
    for (const PlannedRun& run : plan)
        for (const CurvePoint& p : read_run_curve(run.dir))
            rows.push_back({run.scheme, run.seed, p});
    const std::string out = options.out_dir;
    write_curves_csv((fs::path(out) / "curves.csv").string(), rows);  // checked, atomic
    report.summary = summarize_curves(rows, settings.schemes, settings.loss_threshold);
    // An extrapolation part from `roformer extrapolate` stays valid when nothing was retrained.
    const bool retrained = report.trained > 0 || report.resumed > 0;
    write_summary(out,
                  summary_header(preset, options) + "## Final validation loss and convergence\n\n" +
                      summary_markdown(report.summary) +
                      "\n![validation loss curves](curves.png)\n",
                  retrained ? std::optional<std::string>("") : std::nullopt);
    if (options.plot)
        report.plotted = run_plot_script(find_plot_script(options.plot_script), out, "curves", log);
    return report;
}

}  // namespace rf
