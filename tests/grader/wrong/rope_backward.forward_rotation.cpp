// A WRONG solution of graded task rope_backward: R dy instead of R^T dy.
// scripts/grade.sh --check grades it and requires the hint below in the console
// (students/hints.txt). Not an answer; left out of a handout.
// expected hint: rope_backward.analytic
#include "position/rope.hpp"

namespace rf {

void rope_backward(const Real* dy, Real* dx, size_t N, size_t T, size_t D, size_t r,
                   RopePairing pairing, const Real* cos, const Real* sin) {
    rope_kernel(dy, dx, N, T, D, r, pairing, cos, sin, true);
}

}  // namespace rf
