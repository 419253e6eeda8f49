// Room — run: the one reader of "what is this directory".
//
// Every command that takes a directory asks this reader what it holds, and every refusal of a
// directory of the wrong kind is the one message for that kind, naming the command that reads
// it. The kinds, and how they are told apart (by the files each writer leaves, nothing else):
//
//   missing, file, empty       no directory; a file where a directory goes; nothing inside
//   partial                    a new directory a stopped import-hf or export-hf left: empty,
//                              with its writer's staging directory ".NAME.partial-PID" beside it
//                              (run/staged_directory.hpp) — the same command, rerun, replaces it
//   training run               config.toml, no task.json (train, import-hf). Its state:
//                                finished          checkpoint at train.steps
//                                stopped           checkpoint at step s < n (--stop-after, Ctrl-C)
//                                started           no checkpoint yet (killed before the first)
//                                live              a writer holds its lock (pid p), any of the above
//   fine-tune                  task.json (finetune) → classify
//   HF model                   config.json, no config.toml (transformers' save_pretrained, or our
//                              export-hf: then config.json.written-by marks it) → import-hf
//   comparison                 curves.csv / summary.md / <scheme>/seed<k>/ (compare, extrapolate)
//   damaged run                files of a run without the ones that make it readable
//   foreign                    anything else: the user's own files
#pragma once

#include <cstddef>
#include <string>

#include "config/config.hpp"

namespace rf {

enum class DirectoryKind {
    missing,
    file,
    empty,
    partial,
    training_run,
    finetune_run,
    hf_model,
    hf_export,
    comparison,
    damaged_run,
    foreign
};

struct DirectoryState {
    DirectoryKind kind = DirectoryKind::missing;
    // training_run and finetune_run:
    bool checkpoint = false;  // a committed checkpoint exists
    size_t step = 0;          // its step
    size_t steps = 0;         // the run's train.steps (0 when its config cannot be read)
    std::string writer;       // pid of a live writer ("" when none holds the lock)
    // partial: the command that left it and the staging directory's path.
    // damaged_run: what is missing or unreadable.
    std::string detail;

    bool live() const { return !writer.empty(); }
    bool finished() const { return checkpoint && steps > 0 && step >= steps; }
};

// Looks, never writes (the lock is tried shared and released at once).
DirectoryState inspect_directory(const std::string& dir);

// What the directory is, as a phrase: "a fine-tune run (task.json, from `roformer finetune`)".
std::string describe(const DirectoryState& state);

// A command that reads a model (eval, fill-mask, generate, attention, frequencies, export-hf,
// finetune --from, extrapolate's runs): refuses (std::invalid_argument, one line) every kind
// but a training run that has a checkpoint — "<option> X is <what it is>: <the command that
// reads it>". Returns the state for state_unfinished.
DirectoryState require_model_run(const std::string& dir, const std::string& option);

// tokenize --run reads only the tokenizer: a training run in any state or a fine-tune run;
// every other kind is refused like require_model_run.
DirectoryState require_tokenizer_run(const std::string& dir, const std::string& option);

// classify, finetune --resume: everything but a fine-tune run is refused the same way.
DirectoryState require_finetune_run(const std::string& dir, const std::string& option);

// A command about to write a directory of kind `wanted` ("a comparison", "a new export"):
// refuses (std::runtime_error) a directory that holds something else — a run, a fine-tune, an
// HF model — naming what it holds and "pick a new <option>". `own` is the kind the writer
// itself makes (accepted: it continues or checks it); the user's own files are left to the
// writer's rule (compare: "holds no comparison"; a fresh run: "not empty").
void refuse_other_directory(const std::string& dir, const std::string& option,
                            const std::string& wanted, DirectoryKind own);

// export-hf and finetune --from make something that lasts from the model: a run still being
// written is refused ("… is being written by pid p …; wait for it to finish, <alternative>"),
// as what they made would be a moment of it, not its result.
void require_idle_run(const DirectoryState& state, const std::string& dir,
                      const std::string& option, const std::string& alternative = "");

// The one line every command that serves or exports a model prints on stderr for a run that is
// not finished or is being written: "warning: X holds the model at step s of n …" /
// "… is being written by pid p: this uses its last checkpoint, step s of n …". Silent for a
// finished, idle run. `step` is the step of the model the command loaded (LoadedRun::step, one
// read of the checkpoint: read_committed_file), never the state's earlier look: beside a live
// writer the two may differ, and the line says what is used.
void state_unfinished(const DirectoryState& state, const std::string& dir, size_t step);

}  // namespace rf
