// Stage 4 — position: the RoPE kernel, forward (y = R_m x) and, with sin_sign = −1, the
// rotation by −m that the backward uses. Declared in rope.hpp; the op is in rope.cpp.
// Its own file so a student build can swap it (students/tasks/rope_forward.cpp,
// docs/graded-tasks.md); the default build compiles this one.
//
// Legend: N = B·H rows of heads, T sequence length, D head size, r rotary dims, h = r/2 pairs.
#include "position/rope.hpp"

namespace rf {

// ---- the kernel -------------------------------------------------------------------------
// Pair i is (lo, hi) = (2i, 2i+1) interleaved, (i, i + h) half. With c = cos mθ_i,
// s = sin_sign · sin mθ_i:
//   y_lo = c·x_lo − s·x_hi
//   y_hi = s·x_lo + c·x_hi
// and y_d = x_d for the pass-through dims d ≥ r.
// The pairing and accumulate flags are template parameters so each of the four loops is
// compiled with constant strides (the interleaved loop vectorises only then).
template <bool Interleaved, bool Accumulate>
static void rope_rows(const Real* in, Real* out, size_t N, size_t T, size_t D, size_t r,
                      const Real* cos, const Real* sin, Real sin_sign) {
    const size_t h = r / 2;
    const size_t step = Interleaved ? 2 : 1;  // lo = i·step
    const size_t gap = Interleaved ? 1 : h;   // hi = lo + gap
    const long long rows = static_cast<long long>(N);
#pragma omp parallel for schedule(static) if (N * T * D >= (1u << 15))
    for (long long n = 0; n < rows; ++n) {
        for (size_t t = 0; t < T; ++t) {
            const size_t row = (static_cast<size_t>(n) * T + t) * D;
            const Real* x = in + row;
            Real* y = out + row;
            const Real* c = cos + t * h;
            const Real* s = sin + t * h;
            for (size_t i = 0; i < h; ++i) {
                const size_t lo = i * step, hi = lo + gap;
                const Real x_lo = x[lo], x_hi = x[hi];
                const Real si = sin_sign * s[i];
                const Real y_lo = c[i] * x_lo - si * x_hi;
                const Real y_hi = si * x_lo + c[i] * x_hi;
                if (Accumulate) {
                    y[lo] += y_lo;
                    y[hi] += y_hi;
                } else {
                    y[lo] = y_lo;
                    y[hi] = y_hi;
                }
            }
            for (size_t d = r; d < D; ++d) y[d] = Accumulate ? y[d] + x[d] : x[d];
        }
    }
}

void rope_kernel(const Real* in, Real* out, size_t N, size_t T, size_t D, size_t r,
                 RopePairing pairing, const Real* cos, const Real* sin, Real sin_sign,
                 bool accumulate) {
    const bool interleaved = pairing == RopePairing::interleaved;
    if (interleaved && accumulate)
        rope_rows<true, true>(in, out, N, T, D, r, cos, sin, sin_sign);
    else if (interleaved)
        rope_rows<true, false>(in, out, N, T, D, r, cos, sin, sin_sign);
    else if (accumulate)
        rope_rows<false, true>(in, out, N, T, D, r, cos, sin, sin_sign);
    else
        rope_rows<false, false>(in, out, N, T, D, r, cos, sin, sin_sign);
}

}  // namespace rf
