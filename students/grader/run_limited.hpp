// Runs a program under the grader's limits, the same way on Linux, macOS and Windows: its
// output (stdout and stderr) to a file, never a pipe (so a child that keeps a pipe open cannot
// hold the grader), a time limit and an output limit over the whole group of processes it
// starts. See run_limited.cpp.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace grader {

struct Limits {
    double seconds = 0;             // 0: none
    long long max_output = 0;       // bytes of the output file; 0: none
};

struct Outcome {
    bool started = false;           // false: the program could not be started (error says why)
    bool timed_out = false;         // stopped by us: the time limit
    bool too_much_output = false;   // stopped by us: the output limit
    bool exited = false;            // ended by itself with exit_code
    int exit_code = 0;
    int signal = 0;                 // POSIX: the signal that ended it (not one of ours)
    bool crash_code = false;        // Windows: an exception code (0xC0000005 …) as exit status
    int left_running = 0;           // processes it started that outlived it, ended by us
    std::string error;
};

// argv[0] is the program's path. env: NAME=VALUE pairs added to the program's environment.
Outcome run_limited(const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& env,
                    const std::string& output_file, const Limits& limits);

// The words of a signal or an exit status, for the console ("SIGSEGV", "0xC0000005").
std::string signal_name(int signal);

}  // namespace grader
