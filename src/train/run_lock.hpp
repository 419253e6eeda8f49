// Stage 7 — train: one writer per run directory.
//
// Two `roformer train --out X` at once would interleave metrics rows and leave a config.toml
// that does not describe the model. A writer holds an flock on X/lock for its whole run; the
// file also holds the writer's pid, so the loser can name it. The kernel drops the lock when
// the process dies, however it dies, so a stale lock file never blocks anyone.
#pragma once

#include <optional>
#include <string>

namespace rf {

class RunLock {
public:
    static constexpr const char* kFileName = "lock";

    // Creates `dir` if needed and locks it; throws std::runtime_error "run directory X is in
    // use by pid N; …" when another process holds it.
    static RunLock acquire(const std::string& dir);
    // The lock, or nullopt when another process holds it (or `dir` cannot be locked).
    static std::optional<RunLock> try_acquire(const std::string& dir);
    // The pid written by the current holder of `dir`'s lock ("?" if unknown).
    static std::string holder(const std::string& dir);

    RunLock(RunLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    RunLock& operator=(RunLock&&) = delete;
    RunLock(const RunLock&) = delete;
    ~RunLock();

private:
    explicit RunLock(int fd) : fd_(fd) {}
    int fd_;
};

}  // namespace rf
