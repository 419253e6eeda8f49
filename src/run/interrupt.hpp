// Room — run: Ctrl-C, SIGTERM, SIGHUP and SIGPIPE stop a run cleanly.
//
// The first SIGINT/SIGTERM/SIGHUP/SIGPIPE only raises a flag: the loop finishes its step,
// writes a checkpoint and returns, and `roformer train` says how to resume (exit 128 + the
// signal: 130, 143, 129, 141 — the shell's codes for death by those signals). SIGHUP is a
// closed terminal, SIGPIPE a closed pipe (`roformer train … | head -1`): both would otherwise
// end the run without a checkpoint. A second signal exits at once — the user meant it — with
// the directory still at its last committed checkpoint (run/checkpoint_commit.hpp).
//
// Guards nest: `roformer compare` holds one around all its runs and each run's train() holds
// its own; the handlers are installed by the outermost and a signal is never forgotten by an
// inner one.
#pragma once

#include <stdexcept>
#include <string>

namespace rf {

// How long the first stop signal waits for the command to stop by itself before the watchdog
// ends the process (docs/training.md, "What every command guarantees"), at the least: see
// note_work_seconds.
inline constexpr int kStopGraceSeconds = 10;

// The work between two points where a command can stop (one training step, with its
// evaluation) took `seconds`: from then on the watchdog waits at least three times the longest
// such work, so a stop never cuts a healthy step of a large model; a stuck one still ends
// within that bound.
void note_work_seconds(double seconds);

// "Ctrl-C (SIGINT)", "SIGTERM", "SIGHUP", "SIGPIPE": how a stop line names the signal.
std::string stop_signal_name(int sig);

// A command without training steps stopped by a signal (import-hf and export-hf:
// run/staged_directory.hpp; base-bound and generate: cli/long_work.hpp). It has cleaned up as
// it unwound; main prints what() — "roformer CMD: stopped by Ctrl-C (SIGINT)<detail>", one
// line — and exits with 128 + the signal, as train does.
struct Interrupted : std::runtime_error {
    Interrupted(int sig, const std::string& command, const std::string& detail)
        : std::runtime_error("roformer " + command + ": stopped by " + stop_signal_name(sig) +
                             detail),
          signal(sig) {}
    int signal;
};

// Installs the handlers for its lifetime; the previous ones come back afterwards.
class InterruptGuard {
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

    // The first signal received (SIGINT, SIGTERM, SIGHUP or SIGPIPE), or 0.
    static int pending();
    // How many stop signals arrived (a parent forwards each one to its children).
    static int count();
    // No "stopping after this step" note on stderr (a compare's forked runs: the parent says it).
    static void quiet_notes();
    // The training loop's stop question (train/trainer.hpp, StopFunction) while a guard lives:
    // notes the step's seconds for the watchdog (note_work_seconds), then pending().
    static int after_work(double work_seconds);
};

// While one lives, the watchdog does not end the process: it waits until the last hold is
// gone, then exits. For the few writes that must not be cut (a checkpoint commit), not for
// work that may take long. Holds nest, and may be taken on any thread.
class StopExitHold {
public:
    StopExitHold();
    ~StopExitHold();
    StopExitHold(const StopExitHold&) = delete;
    StopExitHold& operator=(const StopExitHold&) = delete;
};

}  // namespace rf
