// A WRONG solution of graded task rope_backward: the rotated dims' gradient right, but the dims
// d ≥ r, which the forward copies through, get none (dx_d += dy_d is missing).
// scripts/grade.sh --check grades it and requires the hint below in the console
// (students/hints.txt). Not an answer; left out of a handout.
// expected hint: rope_backward.pass_through
#include "position/rope.hpp"

namespace rf {

void rope_backward(const Real* dy, Real* dx, size_t N, size_t T, size_t D, size_t r,
                   RopePairing pairing, const Real* cos, const Real* sin) {
    const size_t h = r / 2;
    for (size_t n = 0; n < N; ++n)
        for (size_t t = 0; t < T; ++t) {
            const Real* g = dy + (n * T + t) * D;
            Real* d = dx + (n * T + t) * D;
            for (size_t i = 0; i < h; ++i) {
                const size_t lo = pairing == RopePairing::interleaved ? 2 * i : i;
                const size_t hi = pairing == RopePairing::interleaved ? 2 * i + 1 : i + h;
                const Real c = cos[t * h + i], s = sin[t * h + i];
                d[lo] += c * g[lo] + s * g[hi];
                d[hi] += c * g[hi] - s * g[lo];
            }
        }
}

}  // namespace rf
