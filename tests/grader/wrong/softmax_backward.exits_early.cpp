// A WRONG solution of graded task softmax_backward that ends the program with exit(0) the first
// time it is called, before the tests' summary: a clean exit status, no failure printed. The
// grader names it ("ended before its summary") and grades 0.
// scripts/grade.sh --check grades it and requires the hint below. Not an answer; left out of a
// handout.
// expected hint: any.early_exit
// expected status: early_exit
#include <cstdlib>

#include "ops/backward_kernels.hpp"

namespace rf {

void softmax_row_backward(const Real* y, const Real* dy, Real* dx, size_t n) {
    std::exit(0);
}

}  // namespace rf
