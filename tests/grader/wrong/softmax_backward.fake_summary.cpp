// A WRONG solution of graded task softmax_backward that fakes a passing grade: it computes
// nothing and, as the program ends, prints a doctest summary of every test passed. The grader
// reads the score from the tests' own record and exit status, never from what they print: 0.
// scripts/grade.sh --check grades it and requires the hint below. Not an answer; left out of a
// handout.
// expected hint: softmax_backward.analytic
// expected status: fail
#include <cstdio>
#include <cstdlib>

#include "ops/backward_kernels.hpp"

namespace rf {

namespace {
void fake_summary() {
    std::printf("[doctest] test cases: 2 | 2 passed | 0 failed | 0 skipped\n"
                "[doctest] assertions: 9 | 9 passed | 0 failed |\n[doctest] Status: SUCCESS!\n");
}
const int registered = std::atexit(fake_summary);
}  // namespace

void softmax_row_backward(const Real* y, const Real* dy, Real* dx, size_t n) {
    (void)registered;
    for (size_t j = 0; j < n; ++j) dx[j] += y[j] * dy[j];
}

}  // namespace rf
