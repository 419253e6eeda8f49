// Room — cli: what a command that computes for more than a few seconds owes its user
// (docs/training.md, "What every command guarantees"): a progress line on stderr, and a stop
// on Ctrl-C or SIGTERM within a second or so, with one line saying what was stopped and exit
// 128 + the signal (130, 143), as `roformer train` does. Used where no cap keeps the work under
// a minute (base-bound; generate prints its tokens as they come and only needs the stop).
//
// On a terminal the progress line is redrawn in place; elsewhere (a file, a pipe) a plain line
// every 10 s. Nothing is shown during the first 2 s: a short run prints exactly what it did.
#pragma once

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "run/interrupt.hpp"

namespace rf::cli {

class LongWork {
public:
    // `command`: the name in the stop line ("base-bound").
    explicit LongWork(std::string command)
        : command_(std::move(command)),
          terminal_(isatty(fileno(stderr)) != 0),
          start_(Clock::now()),
          next_(start_ + std::chrono::seconds(2)) {
        InterruptGuard::quiet_notes();  // our one line says it; not "stopping after this step"
    }
    ~LongWork() { clear(); }
    LongWork(const LongWork&) = delete;
    LongWork& operator=(const LongWork&) = delete;

    // The stop signal received (SIGINT, SIGTERM, SIGHUP, SIGPIPE), or 0.
    static int stop_signal() { return InterruptGuard::pending(); }

    // True when a progress line is due (cheap: the caller builds its text only then).
    bool due() const { return Clock::now() >= next_; }

    // Shows `line` ("L = 131072 (1 of 2): 1200 of 5234 bases") with the time so far.
    void show(const std::string& line) {
        const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
        const std::string text =
            command_ + ": " + line + ", " + std::to_string(long(seconds)) + " s (Ctrl-C stops)";
        if (terminal_)
            std::fprintf(stderr, "\r%s\033[K", text.c_str());
        else
            std::fprintf(stderr, "%s\n", text.c_str());
        std::fflush(stderr);
        drawn_ = terminal_;
        next_ = Clock::now() +
                (terminal_ ? std::chrono::milliseconds(500) : std::chrono::milliseconds(10000));
    }

    // After a stop signal: throws Interrupted (main prints "roformer <command>: stopped by
    // Ctrl-C (SIGINT) <where>; <what is left>" and exits 128 + the signal), so nothing after
    // the call — a table, a --csv — is written.
    [[noreturn]] void exit_stopped(const std::string& where, const std::string& left) {
        clear();
        throw Interrupted(stop_signal(), command_, " " + where + "; " + left);
    }

private:
    using Clock = std::chrono::steady_clock;

    void clear() {
        if (drawn_) std::fprintf(stderr, "\r\033[K");
        drawn_ = false;
    }

    const InterruptGuard guard_;
    std::string command_;
    bool terminal_, drawn_ = false;
    Clock::time_point start_, next_;
};

}  // namespace rf::cli
