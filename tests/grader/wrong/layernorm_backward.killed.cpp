// A WRONG solution of graded task layernorm_backward whose process is killed by SIGKILL, as the
// system's out-of-memory killer would end it: no handler runs, doctest writes nothing. The
// grader names it ("killed … from outside") and grades 0.
// scripts/grade.sh --check grades it and requires the hint below. Not an answer; left out of a
// handout. POSIX only (kill).
// expected hint: any.killed
// expected status: killed
#include <csignal>

#include <unistd.h>

#include "ops/backward_kernels.hpp"

namespace rf {

void layer_norm_backward_x(const Real* X, const Real* G, const Real* dY, const Real* M,
                           const Real* S, Real* dX, size_t R, size_t C) {
    kill(getpid(), SIGKILL);
}

}  // namespace rf
