// Stage 7 — train: Ctrl-C and SIGTERM stop a run cleanly.
//
// The first SIGINT/SIGTERM only raises a flag: the loop finishes its step, writes a
// checkpoint and returns, and `roformer train` says how to resume (exit 130 / 143, the shell's
// codes for death by those signals). A second one exits at once — the user meant it — with
// the directory still at its last committed checkpoint (train/checkpoint_commit.hpp).
#pragma once

namespace rf {

// Installs the handlers for its lifetime; the previous ones come back afterwards.
class InterruptGuard {
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

    // The first signal received (SIGINT or SIGTERM), or 0.
    static int pending();
};

}  // namespace rf
