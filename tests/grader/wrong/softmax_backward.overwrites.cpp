// A WRONG solution of graded task softmax_backward: dx = … instead of dx +=.
// scripts/grade.sh --check grades it and requires the hint below in the console
// (students/hints.txt). Not an answer; left out of a handout.
// expected hint: softmax_backward.overwrites
#include "ops/backward_kernels.hpp"

namespace rf {

void softmax_row_backward(const Real* y, const Real* dy, Real* dx, size_t n) {
    double dot = 0.0;
    for (size_t j = 0; j < n; ++j) dot += double(dy[j]) * y[j];
    for (size_t j = 0; j < n; ++j) dx[j] = y[j] * (dy[j] - Real(dot));
}

}  // namespace rf
