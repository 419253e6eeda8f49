// Room — run: what a directory holds (see directory_kind.hpp).
#include "run/directory_kind.hpp"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "io/locked_directory.hpp"
#include "io/shell_quote.hpp"
#include "run/checkpoint.hpp"
#include "run/checkpoint_commit.hpp"
#include "run/run_config.hpp"
#include "run/run_lock.hpp"
#include "run/staged_directory.hpp"

namespace rf {

namespace fs = std::filesystem;

namespace {

bool has(const std::string& dir, const char* name) {
    std::error_code ec;
    return fs::exists(fs::symlink_status(fs::path(dir) / name, ec));
}

// The pid of the process that holds the directory's lock, or "" when none does. A shared lock
// tried and dropped at once: a writer holds it exclusively.
std::string live_writer(const std::string& dir) {
    // A directory this process holds (a writer asking what it locked) has no other writer.
    const LocatedPath inside = locate((fs::path(dir) / "x").string());
    if (inside.dir_fd != AT_FDCWD && inside.relative == "x") return "";
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return "";
    const bool free = ::flock(fd, LOCK_SH | LOCK_NB) == 0;
    ::close(fd);
    return free ? "" : RunLock::holder(dir);
}

bool is_comparison(const std::string& dir) {
    std::error_code ec;
    if (has(dir, "curves.csv") || has(dir, "summary.md") || has(dir, "extrapolation.csv"))
        return true;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
        if (e.is_directory(ec) && fs::exists(e.path() / "seed1" / "config.toml", ec)) return true;
    return false;
}

void read_training_state(const std::string& dir, DirectoryState& state) {
    for (const char* name : {"tokenizer.json"})
        if (!has(dir, name)) {
            state.kind = DirectoryKind::damaged_run;
            state.detail = std::string(name) + " is missing";
        }
    try {
        std::vector<std::string> notes;  // said by the command that reads the run, if any
        state.steps = load_run_config(run_file(dir, "config.toml"), {}, &notes).train.steps;
    } catch (const std::exception& e) {
        state.kind = DirectoryKind::damaged_run;
        state.detail = "config.toml cannot be read (" + std::string(e.what()) + ")";
        return;
    }
    try {
        if (const std::optional<size_t> step = committed_step(dir)) {
            state.checkpoint = true;
            state.step = *step;
        } else if (has(dir, "model.safetensors")) {  // a run from before manifests
            const auto meta = read_checkpoint_metadata(run_file(dir, "model.safetensors"));
            const auto it = meta.find("step");
            state.checkpoint = true;
            state.step = it == meta.end() ? state.steps : std::stoull(it->second);
        }
    } catch (const std::exception& e) {
        state.kind = DirectoryKind::damaged_run;
        state.detail = "its checkpoint cannot be read (" + std::string(e.what()) + ")";
    }
}

}  // namespace

DirectoryState inspect_directory(const std::string& dir) {
    DirectoryState state;
    std::error_code ec;
    const fs::file_status status = fs::status(dir, ec);
    if (!fs::exists(status)) {
        state.kind = DirectoryKind::missing;
        if (const std::optional<PartialWrite> partial = find_partial_write(dir)) {
            state.kind = DirectoryKind::partial;
            state.detail = partial->command;
            state.writer = partial->live ? partial->pid : "";
        }
    } else if (!fs::is_directory(status)) {
        state.kind = DirectoryKind::file;
    } else if (has(dir, "task.json")) {
        state.kind = DirectoryKind::finetune_run;
        state.writer = live_writer(dir);
    } else if (has(dir, "config.toml")) {
        state.kind = DirectoryKind::training_run;
        state.writer = live_writer(dir);
        read_training_state(dir, state);
    } else if (has(dir, "config.json")) {
        state.kind = has(dir, "config.json.written-by") ? DirectoryKind::hf_export
                                                        : DirectoryKind::hf_model;
    } else if (has(dir, "model.safetensors") || has(dir, "checkpoint.json") ||
               has(dir, "tokenizer.json") || has(dir, "metrics.csv")) {
        state.kind = DirectoryKind::damaged_run;
        state.detail = "config.toml is missing";
        state.writer = live_writer(dir);
    } else if (is_comparison(dir)) {
        state.kind = DirectoryKind::comparison;
    } else {
        bool empty = true;
        for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
            empty = empty && e.path().filename() == RunLock::kFileName && RunLock::is_lock_record(dir);
        state.kind = empty ? DirectoryKind::empty : DirectoryKind::foreign;
        if (empty) state.writer = live_writer(dir);
        if (empty)
            if (const std::optional<PartialWrite> partial = find_partial_write(dir)) {
                state.kind = DirectoryKind::partial;
                state.detail = partial->command;
                state.writer = partial->live ? partial->pid : "";
            }
    }
    return state;
}

std::string describe(const DirectoryState& s) {
    switch (s.kind) {
        case DirectoryKind::missing: return "does not exist";
        case DirectoryKind::file: return "is a file, not a directory";
        case DirectoryKind::empty: return "is empty";
        case DirectoryKind::partial:
            return s.live() ? "is being written by `roformer " + s.detail + "` (pid " + s.writer + ")"
                            : "holds only the start of a `roformer " + s.detail +
                                  "` that was stopped before it finished";
        case DirectoryKind::training_run:
            if (s.live()) return "is a training run being written by pid " + s.writer;
            if (!s.checkpoint) return "is a training run stopped before its first checkpoint";
            return "is a training run (config.toml, from `roformer train` or import-hf)";
        case DirectoryKind::finetune_run: return "is a fine-tune run (task.json, from `roformer finetune`)";
        case DirectoryKind::hf_model: return "is a Hugging Face model directory (config.json)";
        case DirectoryKind::hf_export:
            return "is a Hugging Face directory written by `roformer export-hf` (config.json)";
        case DirectoryKind::comparison:
            return "is a comparison (curves.csv, <scheme>/seed<k>/, from `roformer compare`)";
        case DirectoryKind::damaged_run: return "is a damaged run: " + s.detail;
        case DirectoryKind::foreign: return "holds files that are not a run";
    }
    return "";
}

namespace {

// What to do with a directory of this kind instead, for a command that wanted a model run.
std::string reader_of(const DirectoryState& s, const std::string& dir) {
    switch (s.kind) {
        case DirectoryKind::missing:
        case DirectoryKind::file:
        case DirectoryKind::empty:
        case DirectoryKind::foreign:
            return "give the --out of a `roformer train` or `roformer import-hf`";
        case DirectoryKind::partial:
            return s.live() ? "wait for it to finish"
                            : "run the same `roformer " + s.detail + "` again to write it";
        case DirectoryKind::training_run:
            return "resume it with `" + shell_command({"roformer", "train", "--resume", "--out", dir}) +
                   "` (and the config it was started with)";
        case DirectoryKind::finetune_run:
            return "use `" + shell_command({"roformer", "classify", "--run", dir}) + "`";
        case DirectoryKind::hf_model:
        case DirectoryKind::hf_export:
            return "import it first: `" +
                   shell_command({"roformer", "import-hf", dir, "--out", "RUN"}) +
                   "`, then pass RUN";
        case DirectoryKind::comparison:
            return "pass one of its runs, e.g. " + (fs::path(dir) / "rope" / "seed1").string();
        case DirectoryKind::damaged_run:
            return "it cannot be read; train it again into a new --out";
    }
    return "";
}

}  // namespace

DirectoryState require_model_run(const std::string& dir, const std::string& option) {
    const DirectoryState state = inspect_directory(dir);
    if (state.kind == DirectoryKind::training_run && state.checkpoint) return state;
    throw std::invalid_argument(option + " '" + dir + "' " + describe(state) + "; " +
                                reader_of(state, dir));
}

DirectoryState require_tokenizer_run(const std::string& dir, const std::string& option) {
    const DirectoryState state = inspect_directory(dir);
    if (state.kind == DirectoryKind::training_run || state.kind == DirectoryKind::finetune_run) {
        verify_run_files(dir);  // the tokenizer the run recorded, not an edited one
        return state;
    }
    std::string fix = reader_of(state, dir);
    if (state.kind == DirectoryKind::hf_model || state.kind == DirectoryKind::hf_export)
        fix = "give it to --tokenizer instead of --run";
    throw std::invalid_argument(option + " '" + dir + "' " + describe(state) + "; " + fix);
}

DirectoryState require_finetune_run(const std::string& dir, const std::string& option) {
    const DirectoryState state = inspect_directory(dir);
    if (state.kind == DirectoryKind::finetune_run) return state;
    std::string fix = "give the --out of a `roformer finetune`";
    if (state.kind == DirectoryKind::training_run)
        fix = "fine-tune it first: `" +
              shell_command({"roformer", "finetune", "--from", dir, "--out", "FT"}) + "`";
    else if (state.kind != DirectoryKind::missing && state.kind != DirectoryKind::empty &&
             state.kind != DirectoryKind::file && state.kind != DirectoryKind::foreign)
        fix = reader_of(state, dir);
    throw std::invalid_argument(option + " '" + dir + "' " + describe(state) + ", not a fine-tune; " +
                                fix);
}

void refuse_other_directory(const std::string& dir, const std::string& option,
                            const std::string& wanted, DirectoryKind own) {
    const DirectoryState state = inspect_directory(dir);
    // The user's own files are the writer's to judge (compare's own layout, a run's `lock`).
    if (state.kind == own || state.kind == DirectoryKind::missing ||
        state.kind == DirectoryKind::empty || state.kind == DirectoryKind::partial ||
        state.kind == DirectoryKind::foreign)
        return;
    if (state.kind == DirectoryKind::file)
        throw std::runtime_error(option + " '" + dir + "' is a file, not a directory; pick a new " +
                                 option.substr(option.rfind(' ') + 1));
    throw std::runtime_error(option + " '" + dir + "' " + describe(state) + ", not " + wanted +
                             "; pick a new " + option.substr(option.rfind(' ') + 1));
}

void require_idle_run(const DirectoryState& s, const std::string& dir, const std::string& option,
                      const std::string& alternative) {
    if (!s.live()) return;
    throw std::runtime_error(option + " '" + dir + "' is being written by pid " + s.writer +
                             " (its checkpoint is at step " + std::to_string(s.step) + " of " +
                             std::to_string(s.steps) + "); wait for it to finish" +
                             (alternative.empty() ? "" : ", " + alternative));
}

void state_unfinished(const DirectoryState& looked, const std::string& dir, size_t step) {
    DirectoryState s = looked;
    s.step = step;  // the step of the model used, not the one seen before it was read
    if (s.kind != DirectoryKind::training_run || !s.checkpoint) return;
    const std::string resume = shell_command({"roformer", "train", "--resume", "--out", dir});
    if (s.live())
        std::fprintf(stderr,
                     "warning: %s is being written by pid %s: this uses its last checkpoint, "
                     "step %zu of %zu, not the finished model; wait for the run to finish\n",
                     dir.c_str(), s.writer.c_str(), s.step, s.steps);
    else if (!s.finished())
        std::fprintf(stderr,
                     "warning: %s holds the model at step %zu of %zu, not a finished run (it was "
                     "stopped early); finish it with: %s (and the config it was started with)\n",
                     dir.c_str(), s.step, s.steps, resume.c_str());
}

}  // namespace rf
