// A WRONG solution of graded task adamw_step that rewrites its tests while they run, so that the
// next grade would build a test file that checks nothing. The grader keeps the files the grade
// is built from as they were before the run: it puts the file back and grades 0 ("tampered").
// scripts/grade.sh --check grades it and requires the hint below. Not an answer; left out of a
// handout.
// expected hint: any.tampered
// expected status: tampered
#include <fstream>

#include "nn/adamw.hpp"

namespace rf {

void AdamW::step(double lr) {
    std::ofstream("tests/lesson/test_adamw.cpp")
        << "#include <doctest/doctest.h>\nTEST_CASE(\"adamw: several steps\") {}\n";  // checks nothing
    ++step_;
}

}  // namespace rf
