// Room — run: a checkpoint is one step, as a unit.
//
// model.safetensors and optimizer.safetensors must always be from the same step: a model at
// step N with the optimizer of N−1 resumes without complaint and drifts from the run it
// continues. So a checkpoint is committed like a small database transaction:
//
//   1. each file's bytes → "<name>.tmp-<pid>", fsync'd
//   2. checkpoint.json (step; per file: size, FNV-1a hash, temporary's name) written
//      atomically — this is the commit point
//   3. each temporary renamed over its file, directory fsync'd
//
// A writer killed before 2 leaves the previous checkpoint and its manifest untouched (the
// temporaries are garbage). Killed after 2, the manifest names temporaries that hold the
// new bytes, and recover_checkpoint finishes the renames. Either way the files at their
// names end up matching checkpoint.json, which the loader checks.
//
// The run's own files — those written once when it starts, which later commands read beside
// the model (kRecordedRunFiles: the tokenizer first, the config, the corpus's record, the task)
// — are part of the same record: checkpoint.json's "run_files" holds each one's size and FNV-1a
// hash, so a tokenizer.json edited after training (two vocabulary entries swapped: still valid
// JSON, and a wrong model) is refused by every reader, naming the file. Each commit checks them
// against the previous record before it records them again. A recorded name that is a symbolic
// link is recorded as the file it points to (its bytes are what a reader reads); one that is not
// a regular file then (a directory, a FIFO, a dangling link) is refused, never left out.
//
// The record cannot be dropped: the model file a checkpoint of this version commits carries
// kRecordMark in its __metadata__ (mark_recorded), so a run whose model has it and whose
// checkpoint.json, or its "run_files", is gone is damaged, never "older". A run from before
// the mark is read as it is: a reader never writes, so its record starts with its next
// checkpoint.
//
// RF_FAULT_KILL_AT=<point>[@<step>] makes the writer _exit(99) at a named point of the commit
// (the first checkpoint, or the one of <step>), so tests can kill it at each point in turn:
//   model-temp, optimizer-temp (= before the manifest), manifest, model-rename, optimizer-rename
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rf {

inline constexpr const char* kCheckpointManifest = "checkpoint.json";

// The files a run writes once at its start and never again, recorded by each checkpoint: the
// tokenizer and the config (train, finetune, import-hf), split.txt (train, finetune), the
// record of the corpus (corpus.json, train) and of the task's text (task_data.json, finetune),
// a fine-tune's finetune.toml and task.json, import-hf's hf_source.json. Not among them:
// metrics.csv, which grows after a checkpoint, and floor.json, which no command reads.
inline constexpr const char* kRecordedRunFiles[] = {
    "tokenizer.json", "config.toml",    "split.txt",     "corpus.json",
    "task_data.json", "finetune.toml", "task.json",     "hf_source.json"};

// The key in a committed model file's __metadata__ that says "checkpoint.json records me and
// the run's files" (its value: kCheckpointManifest). Every writer of a model that
// commit_checkpoint commits adds it with mark_recorded.
inline constexpr const char* kRecordMark = "recorded_by";
void mark_recorded(std::map<std::string, std::string>& metadata);

// (file name in run_dir, bytes), committed in this order.
using CheckpointFiles = std::vector<std::pair<std::string, std::string>>;

void commit_checkpoint(const std::string& run_dir, size_t step, const CheckpointFiles& files);

struct CheckpointState {
    bool present = false;   // false: no checkpoint yet (nothing committed)
    bool manifest = false;  // false: a checkpoint from before manifests (not verified)
    size_t step = 0;
};

// Brings run_dir to its last committed checkpoint: finishes an interrupted commit and
// verifies every file against checkpoint.json. Throws std::runtime_error (one line, naming
// the file) for a checkpoint that cannot be made whole. Only a lock holder may call it.
CheckpointState recover_checkpoint(const std::string& run_dir);

// Read-only: the step checkpoint.json commits (nullopt: no manifest yet). Throws like
// recover_checkpoint for a damaged manifest.
std::optional<size_t> committed_step(const std::string& run_dir);

// Read-only: verifies `name` (e.g. model.safetensors) against checkpoint.json, if any.
void verify_checkpoint_file(const std::string& run_dir, const std::string& name);

// Read-only: every run file checkpoint.json records (kRecordedRunFiles) still has its recorded
// size and hash. Throws std::runtime_error (one line) naming the first that does not, and for a
// run whose model carries kRecordMark without checkpoint.json or its "run_files"; nothing is
// checked for a run with no checkpoint yet or from before the record.
void verify_run_files(const std::string& run_dir);

// One read of a run's checkpoint, for a reader beside a live writer: checkpoint.json and the
// bytes of `name` (model.safetensors), read once each and checked against each other, the run's
// files checked against that same manifest. `step` is the manifest's (nullopt: a run from
// before manifests). A writer inside a commit (its manifest renamed, its model not yet) is
// waited for up to a second — or, when none holds the lock, its commit is finished — and the
// pair read again; so what a reader says about the step and what it uses are the same read.
struct CommittedFile {
    std::optional<size_t> step;
    std::string bytes;
};
CommittedFile read_committed_file(const std::string& run_dir, const std::string& name);

// Removes "*.tmp-*" files a killed writer left in run_dir (call after recover_checkpoint).
void remove_stale_temporaries(const std::string& run_dir);

}  // namespace rf
