// A WRONG solution of graded task rope_backward: dx = R^T dy instead of dx +=.
// scripts/grade.sh --check grades it and requires the hint below in the console
// (students/hints.txt). Not an answer; left out of a handout.
// expected hint: rope_backward.overwrites
#include <vector>

#include "position/rope.hpp"

namespace rf {

void rope_backward(const Real* dy, Real* dx, size_t N, size_t T, size_t D, size_t r,
                   RopePairing pairing, const Real* cos, const Real* sin) {
    std::vector<Real> minus_sin(sin, sin + T * (r / 2));
    for (Real& s : minus_sin) s = -s;
    rope_kernel(dy, dx, N, T, D, r, pairing, cos, minus_sin.data(), false);
}

}  // namespace rf
