// A WRONG solution of graded task rope_forward: the rows of x and out found with stride r (the
// rotary dims) instead of D (the row width): right only when every dim turns (r = D).
// scripts/grade.sh --check grades it and requires the hint below in the console
// (students/hints.txt). Not an answer; left out of a handout.
// expected hint: rope_forward.row_stride
#include "position/rope.hpp"

namespace rf {

void rope_kernel(const Real* in, Real* out, size_t N, size_t T, size_t D, size_t r,
                 RopePairing pairing, const Real* cos, const Real* sin, bool accumulate) {
    const size_t h = r / 2;
    for (size_t n = 0; n < N; ++n)
        for (size_t t = 0; t < T; ++t) {
            const Real* x = in + (n * T + t) * r;
            Real* y = out + (n * T + t) * r;
            for (size_t i = 0; i < h; ++i) {
                const size_t lo = pairing == RopePairing::interleaved ? 2 * i : i;
                const size_t hi = pairing == RopePairing::interleaved ? 2 * i + 1 : i + h;
                const Real c = cos[t * h + i], s = sin[t * h + i];
                const Real x_lo = x[lo], x_hi = x[hi];
                const Real y_lo = c * x_lo - s * x_hi, y_hi = s * x_lo + c * x_hi;
                if (accumulate) {
                    y[lo] += y_lo;
                    y[hi] += y_hi;
                } else {
                    y[lo] = y_lo;
                    y[hi] = y_hi;
                }
            }
            for (size_t d = r; d < D; ++d) y[d] = accumulate ? y[d] + x[d] : x[d];
        }
}

}  // namespace rf
