// What one run of a task's tests gave (record.cpp): the test program's own record
// (reporter.cpp), its exit status and its output, read into a score, the failing test cases
// and the text the hints' patterns are matched against.
#pragma once

#include <string>
#include <vector>

#include "run_limited.hpp"

namespace grader {

struct Failure {
    std::string test;  // "test case" or "test case / subcase"
    std::string text;  // the first failed check: "FILE:LINE: ERROR: …", values and logged lines
};

struct TaskResult {
    // pass, fail, compile, crash, timeout, output, early_exit, killed, tampered
    std::string status;
    int passed = -1, failed = -1;  // -1: no count
    std::vector<Failure> failures;
    std::string why;               // one line for the console when there is no count
    bool passes() const { return status == "pass"; }
    std::string matched_text() const;  // every failure, name and text, one after another
};

// Reads the record file and the output file of a run. graded_paths: the files whose lines a
// crash should be named at first (the student's file, the hosts of the graded regions).
TaskResult read_run(const std::string& record_file, const std::string& output_file,
                    const Outcome& outcome, double time_limit, long long max_output,
                    const std::vector<std::string>& graded_paths, const std::string& root);

}  // namespace grader
