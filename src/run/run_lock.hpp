// Room — run: one writer per run (or comparison) directory.
//
// Two `roformer train --out X` at once would interleave metrics rows and leave a config.toml
// that does not describe the model. A writer holds an flock on the directory X itself — on a
// file descriptor of the directory, so deleting or replacing any path inside X cannot take
// the lock away — for as long as it writes. The kernel drops the lock when the process dies,
// however it dies, so a stale lock never blocks anyone.
//
// Every write of the run goes through that descriptor, not the name (io/locked_directory.hpp):
// `mv X X_old` while it runs leaves it writing X_old, and a new writer of X gets X alone.
//
// X/lock only records the holder's pid, for the message the next writer gets. It is written
// once the directory is the writer's (RunDirectory::fresh checks first that X is empty), never
// through a symlink (O_NOFOLLOW), and a file named `lock` that is not such a record — the
// user's own — is refused, not overwritten.
#pragma once

#include <optional>
#include <string>

namespace rf {

class RunLock {
public:
    static constexpr const char* kFileName = "lock";

    // Creates `dir` (and its missing parents) if needed, locks it and records our pid in
    // dir/lock; throws
    // std::runtime_error "run directory X is in use by pid N; …" when another process holds
    // it. record_pid = false: lock only (call record_holder() once the directory is ours).
    static RunLock acquire(const std::string& dir, bool record_pid = true);
    // The lock, or nullopt when another process holds it (or `dir` cannot be locked).
    static std::optional<RunLock> try_acquire(const std::string& dir);
    // The pid written by the current holder of `dir`'s lock ("?" if unknown).
    static std::string holder(const std::string& dir);
    // dir/lock is a pid record a RunLock wrote (a regular file of digits), or absent.
    static bool is_lock_record(const std::string& dir);

    // Writes our pid into dir/lock (refusing a `lock` that is not a pid record); true when this
    // call created dir/lock (none was there), so that a refusal can take it away again.
    bool record_holder() const;
    // Removes dir/lock while it is the record of this process's pid (holds_record()).
    void remove_record() const;
    // In a child forked while we held the lock: drop the child's copy of the descriptor (the
    // parent keeps the lock; the child must not keep it alive should the parent die).
    void forget_in_child();
    // The locked directory's descriptor (every write of the run resolves through it:
    // io/locked_directory.hpp); -1 after a move.
    int descriptor() const { return fd_; }
    // dir/lock, in the locked directory, is the record of this process's pid.
    bool holds_record() const;
    // The name still names the directory we locked (not renamed, deleted or replaced).
    bool in_place() const;
    // For a command that fails: removes the directory acquire() created, and the parents it
    // created for it, each only if it is empty, and only while the name is still ours.
    void remove_created() const;

    RunLock(RunLock&& other) noexcept
        : fd_(other.fd_), dir_(std::move(other.dir_)), created_top_(std::move(other.created_top_)) {
        other.fd_ = -1;
    }
    RunLock& operator=(RunLock&&) = delete;
    RunLock(const RunLock&) = delete;
    ~RunLock();

private:
    RunLock(int fd, std::string dir) : fd_(fd), dir_(std::move(dir)) {}
    int fd_;  // the locked directory
    std::string dir_;
    std::string created_top_;  // the outermost directory acquire() created; "" if none
};

}  // namespace rf
