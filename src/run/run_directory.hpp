// Room — run: the run directory a training run writes (layout in checkpoint.hpp).
//
// A run starts either fresh — into a directory that does not exist or is empty — or resumes
// an earlier run of the same config from its checkpoint. RunDirectory makes that decision,
// with a one-line refusal for everything else, and writes a fresh run's files. It holds the
// directory's lock (run_lock.hpp) for as long as it lives: one writer per directory.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "data/tokenizer.hpp"
#include "run/checkpoint_commit.hpp"
#include "run/run_lock.hpp"

namespace rf {

// The longest name a run directory holds (a training run's or a fine-tune's): the temporary
// optimizer.safetensors is written through. Every writer of a run checks --out with it
// (io/output_file.hpp, check_directory_names) before it creates anything.
inline constexpr const char* kLongestRunName = "optimizer.safetensors.tmp-<pid>";

// The corpus a run was trained on (path, size, FNV-1a of its bytes), checked by --resume.
inline constexpr const char* kCorpusRecord = "corpus.json";

class RunDirectory {
public:
    // A new run: refuses a directory that already holds files (pick a new --out or --resume).
    static RunDirectory fresh(const std::string& dir);
    // An earlier run: needs config.toml equal to `config` and tokenizer.json (its saved
    // tokenizer is loaded, tokenizer()); finishes or verifies its last checkpoint. A run
    // killed before its first checkpoint has none: it restarts from step 0.
    static RunDirectory resume(const std::string& dir, const Config& config);
    // Data-parallel training (train/data_parallel.hpp): the directory rank 0 holds, as the other
    // ranks see it — no lock, nothing read or written; resuming() and checkpoint().present as
    // rank 0 found them, and rank 0's tokenizer (null for a fresh run).
    static RunDirectory replica(const std::string& dir, bool resuming, bool checkpoint_present,
                                std::unique_ptr<data::Tokenizer> tokenizer);

    const std::string& path() const { return dir_; }
    std::string file(const std::string& name) const;
    bool resuming() const { return resuming_; }
    // Resume: the last complete checkpoint (present = false: start again from step 0).
    const CheckpointState& checkpoint() const { return checkpoint_; }
    // Resume: the run's own tokenizer (moved out). Fresh: null (prepare_data trains one).
    std::unique_ptr<data::Tokenizer> take_tokenizer() { return std::move(tokenizer_); }
    // Fresh: writes config.toml, tokenizer.json and split.txt.
    void write_run_files(const Config& config, const data::Tokenizer& tokenizer,
                         const std::string& split_summary) const;

    // A fresh run that ends before its first checkpoint was committed (bad data, a tokenizer
    // that does not fit the model, a full disk, a non-finite model) leaves nothing behind: the
    // files it wrote, its lock record and — if this run created them — the directory and its
    // parents are removed.
    ~RunDirectory();
    RunDirectory(RunDirectory&&) = default;

private:
    RunDirectory(std::string dir, bool resuming, RunLock lock)
        : dir_(std::move(dir)), resuming_(resuming), lock_(std::move(lock)) {}
    RunDirectory(std::string dir, bool resuming) : dir_(std::move(dir)), resuming_(resuming) {}
    // resume()'s checks, under the lock: throws when the directory cannot be continued.
    // made_record: set once it has written our pid into a lock record it created.
    void check_resumable(const Config& config, bool& made_record);
    std::string dir_;
    bool resuming_;
    std::optional<RunLock> lock_;  // none on a replica
    CheckpointState checkpoint_;
    std::unique_ptr<data::Tokenizer> tokenizer_;
};

}  // namespace rf
