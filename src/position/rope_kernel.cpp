// Stage 4 — position: the RoPE kernel, forward (y = R_m x) and, with sin_sign = −1, the
// rotation by −m. Declared in rope.hpp; the op is in rope.cpp.
// Its own file so a student build can swap it (students/tasks/rope_forward.cpp,
// docs/graded-tasks.md); the default build compiles this one.
//
// Legend: N = B·H rows of heads, T sequence length, D head size, r rotary dims, h = r/2 pairs.
#include "position/rope.hpp"

namespace rf {

// Pair i is (lo, hi) = (2i, 2i+1) interleaved, (i, i + h) half. With c = cos mθ_i,
// s = sin_sign · sin mθ_i:
//   y_lo = c·x_lo − s·x_hi
//   y_hi = s·x_lo + c·x_hi
// and y_d = x_d for the pass-through dims d ≥ r. Rows (n, t) are independent, each written
// once. (One thread: the fast path's rotation, src/fast/fused_attention.cpp, is the one that
// runs in SIMD lanes over threads.)
void rope_kernel(const Real* in, Real* out, size_t N, size_t T, size_t D, size_t r,
                 RopePairing pairing, const Real* cos, const Real* sin, Real sin_sign,
                 bool accumulate) {
    const size_t h = r / 2;
    const bool interleaved = pairing == RopePairing::interleaved;
    const size_t step = interleaved ? 2 : 1;  // lo = i·step
    const size_t gap = interleaved ? 1 : h;   // hi = lo + gap
    const long long rows = static_cast<long long>(N * T);
    for (long long row = 0; row < rows; ++row) {
        const size_t t = static_cast<size_t>(row) % T;
        const Real* x = in + static_cast<size_t>(row) * D;
        Real* y = out + static_cast<size_t>(row) * D;
        const Real* c = cos + t * h;
        const Real* s = sin + t * h;
        for (size_t i = 0; i < h; ++i) {
            const size_t lo = i * step, hi = lo + gap;
            const Real x_lo = x[lo], x_hi = x[hi];  // both read before either is written
            const Real si = sin_sign * s[i];
            const Real y_lo = c[i] * x_lo - si * x_hi;
            const Real y_hi = si * x_lo + c[i] * x_hi;
            y[lo] = accumulate ? y[lo] + y_lo : y_lo;
            y[hi] = accumulate ? y[hi] + y_hi : y_hi;
        }
        for (size_t d = r; d < D; ++d) y[d] = accumulate ? y[d] + x[d] : x[d];
    }
}

}  // namespace rf
