// Room — run: the one transaction of a command that writes a new directory in one go (import-hf,
// export-hf; docs/training.md, "What every command guarantees").
//
//   1. lock    OUT is created if missing and flock'ed before anything is checked: of N writers
//              started at once, one goes on and the others are told who holds OUT
//   2. check   under the lock, OUT must be empty; the staging directory of an earlier writer
//              of OUT that was killed (".NAME.partial-CMD-PID" beside OUT, no longer locked) is
//              removed, with one note
//   3. stage   every file goes into the staging directory, itself locked (so a later writer can
//              tell a live one from a dead one); Ctrl-C, SIGTERM, SIGHUP are checked between
//              files (check_interrupt)
//   4. verify  each file is read back and must hash as it was written
//   5. publish one rename of the staging directory over the empty OUT
// Anything that ends the command before 5 — a refusal, a full disk, a file-size limit, a
// signal — removes the staging directory and the OUT it created. A second signal, or SIGKILL,
// ends it at once: then OUT is empty or absent and the staging directory is the half state,
// which inspect_directory (directory_kind.hpp) names and the same command, rerun, replaces.
//
// Training runs are not staged: they are resumable, and their half state is a checkpoint
// (run_directory.hpp, checkpoint_commit.hpp). They take the same lock.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "run/interrupt.hpp"
#include "run/run_lock.hpp"

namespace rf {

// A staging directory beside `out` (the newest, if several).
struct PartialWrite {
    std::string command;  // "import-hf", "export-hf"
    std::string pid;
    std::string path;
    bool live = false;    // its writer still holds it
};
std::optional<PartialWrite> find_partial_write(const std::string& out);

class StagedDirectory {
public:
    // Steps 1 and 2; `command` names the writer in messages and in the staging name.
    StagedDirectory(const std::string& out, const std::string& command);
    ~StagedDirectory();  // not published: the staging directory and a created OUT are removed
    StagedDirectory(const StagedDirectory&) = delete;
    StagedDirectory& operator=(const StagedDirectory&) = delete;

    // Where a file goes while staged.
    const std::string& staging() const { return staging_; }
    std::string file(const std::string& name) const;
    // Writes `bytes` to file(name) atomically and records its hash for publish().
    void write(const std::string& name, const std::string& bytes);
    // Records the hash of a file written by another writer (an output file); "" for one its
    // writer has already read back and checked (a checkpoint against its manifest).
    void record(const std::string& name, const std::string& sha256);
    // Throws Interrupted when a stop signal arrived.
    void check_interrupt() const;
    // Steps 4 and 5. Afterwards every recorded name is a regular file in OUT.
    void publish();
    // The recorded names, in the order written.
    const std::vector<std::string>& names() const { return order_; }

private:
    // Steps 1 and 2, once OUT's missing parents are known (parents_top_).
    void lock_and_check(const std::filesystem::path& target);

    std::string out_, command_, target_, staging_;  // target_: OUT, absolute
    std::string parents_top_;  // the outermost parent of OUT this writer makes; "" if none
    int out_fd_ = -1;  // holds OUT's flock
    bool created_ = false, published_ = false;
    std::unique_ptr<InterruptGuard> guard_;
    std::optional<RunLock> staging_lock_;
    std::map<std::string, std::string> sha256_;
    std::vector<std::string> order_;
};

}  // namespace rf
