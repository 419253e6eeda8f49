// Stage 2 — ops: the fast path's element-wise ops (model.fused = true). Each computes what a
// composed op computes, vectorised with xsimd (SIMD lanes, polynomial exp/erfc accurate to a
// few float ulps instead of libm's one-at-a-time calls), and saves less for the backward.
// tests/test_fused_ops.cpp checks each against its composed op; tests/gradcheck checks its
// backward per element in double.
//
// Legend: n elements; lanes = xsimd::batch<Real>::size (4 floats on the SSE2 baseline).
#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cmath>

#include "ops/ops.hpp"

namespace rf {
namespace {

using Lanes = xsimd::batch<Real>;

// Runs body(begin, end) over [0, n) in chunks of whole lanes (the last chunk takes the rest),
// on several threads when n is large. Chunks are disjoint: the result does not depend on the
// thread count.
template <class Body>
void for_chunks(size_t n, Body body) {
    constexpr size_t chunk = 8192;  // a multiple of every lane count
    const long chunks = long((n + chunk - 1) / chunk);
#pragma omp parallel for schedule(static) if (n > 32768)
    for (long c = 0; c < chunks; ++c)
        body(size_t(c) * chunk, std::min(n, size_t(c + 1) * chunk));
}

// Φ(x) = ½·erfc(−x/√2) and the density φ(x) = e^{−x²/2}/√(2π), lane by lane.
Lanes normal_cdf(const Lanes& x) { return Real(0.5) * xsimd::erfc(Real(-0.70710678118654752440) * x); }
Lanes normal_pdf(const Lanes& x) {
    return Real(0.39894228040143267794) * xsimd::exp(Real(-0.5) * x * x);
}

}  // namespace

// ---- gelu_vectorized ----------------------------------------------------------------------
// y = x·Φ(x)   x:[...] → y:[...]   (gelu's exact form, erfc in lanes; nothing saved but x)
Tensor gelu_vectorized(const Tensor& x) {
    const size_t n = x.numel();
    Array y = Array::from_shape(x.shape());
    const Real* in = x.data();
    Real* out = y.data();
    for_chunks(n, [&](size_t begin, size_t end) {
        size_t i = begin;
        for (; i + Lanes::size <= end; i += Lanes::size) {
            const Lanes v = Lanes::load_unaligned(in + i);
            (v * normal_cdf(v)).store_unaligned(out + i);
        }
        for (; i < end; ++i) out[i] = in[i] * Real(0.5) * std::erfc(Real(-0.70710678118654752440) * in[i]);
    });
    return make_result(std::move(y), {x}, "gelu_vectorized", [x = x](TensorImpl& o) mutable {
        // gelu_vectorized backward: dx += dy ⊙ (Φ(x) + x·φ(x)), Φ and φ recomputed in lanes
        Array* g = grad_of(x);
        if (!g) return;
        const Real* v = x.data();
        const Real* dy = o.grad.data();
        Real* dx = g->data();
        for_chunks(x.numel(), [&](size_t begin, size_t end) {
            size_t i = begin;
            for (; i + Lanes::size <= end; i += Lanes::size) {
                const Lanes xv = Lanes::load_unaligned(v + i);
                const Lanes local = normal_cdf(xv) + xv * normal_pdf(xv);
                (Lanes::load_unaligned(dx + i) + Lanes::load_unaligned(dy + i) * local)
                    .store_unaligned(dx + i);
            }
            for (; i < end; ++i) {
                const Real cdf = Real(0.5) * std::erfc(Real(-0.70710678118654752440) * v[i]);
                const Real pdf = Real(0.39894228040143267794) * std::exp(Real(-0.5) * v[i] * v[i]);
                dx[i] += dy[i] * (cdf + v[i] * pdf);
            }
        });
    });
}

}  // namespace rf
