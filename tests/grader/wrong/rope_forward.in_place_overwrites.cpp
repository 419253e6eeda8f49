// A WRONG solution of graded task rope_forward: in place (in == out) it writes a pair's first
// element, then reads it back as x_lo for the second.
// scripts/grade.sh --check grades it and requires the hint below in the console
// (students/hints.txt). Not an answer; left out of a handout.
// expected hint: rope_forward.in_place
#include "position/rope.hpp"

namespace rf {

void rope_kernel(const Real* in, Real* out, size_t N, size_t T, size_t D, size_t r,
                 RopePairing pairing, const Real* cos, const Real* sin, bool accumulate) {
    const size_t h = r / 2;
    for (size_t n = 0; n < N; ++n)
        for (size_t t = 0; t < T; ++t) {
            const Real* x = in + (n * T + t) * D;
            Real* y = out + (n * T + t) * D;
            for (size_t i = 0; i < h; ++i) {
                const size_t lo = pairing == RopePairing::interleaved ? 2 * i : i;
                const size_t hi = pairing == RopePairing::interleaved ? 2 * i + 1 : i + h;
                const Real c = cos[t * h + i], s = sin[t * h + i];
                if (accumulate) {
                    y[lo] += c * x[lo] - s * x[hi];
                    y[hi] += s * x[lo] + c * x[hi];
                } else {
                    y[lo] = c * x[lo] - s * x[hi];
                    y[hi] = s * x[lo] + c * x[hi];  // the bug: x[lo] is y[lo] already when in == out
                }
            }
            for (size_t d = r; d < D; ++d) y[d] = accumulate ? y[d] + x[d] : x[d];
        }
}

}  // namespace rf
