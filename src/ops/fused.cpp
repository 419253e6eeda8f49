// Stage 2 — ops: the fast path's element-wise ops (model.fused = true). Each computes what a
// composed op computes, vectorised with xsimd (SIMD lanes, polynomial exp/erfc accurate to a
// few float ulps instead of libm's one-at-a-time calls), and saves less for the backward.
// tests/test_fused_ops.cpp checks each against its composed op; tests/gradcheck checks its
// backward per element in double.
//
// Legend: n elements; lanes = xsimd::batch<Real>::size (4 floats on the SSE2 baseline).
#include <omp.h>
#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

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

// Σ of a row in lanes (the order: lane by lane, then across lanes, then the tail).
Real row_sum(const Real* x, size_t n) {
    Lanes acc(Real(0));
    size_t j = 0;
    for (; j + Lanes::size <= n; j += Lanes::size) acc += Lanes::load_unaligned(x + j);
    Real total = xsimd::hadd(acc);
    for (; j < n; ++j) total += x[j];
    return total;
}

// Φ(x) = ½·erfc(−x/√2) and the density φ(x) = e^{−x²/2}/√(2π), lane by lane.
Lanes normal_cdf(const Lanes& x) { return Real(0.5) * xsimd::erfc(Real(-0.70710678118654752440) * x); }
Lanes normal_pdf(const Lanes& x) {
    return Real(0.39894228040143267794) * xsimd::exp(Real(-0.5) * x * x);
}

}  // namespace

// ---- gelu_vectorized ----------------------------------------------------------------------
// y = x·Φ(x)   x:[...] → y:[...]   (gelu's exact form, erfc in lanes). Φ(x) is kept for the
// backward when x requires grad (erfc is the costly part; exp for φ is cheap to redo).
Tensor gelu_vectorized(const Tensor& x) {
    const size_t n = x.numel();
    Array y = Array::from_shape(x.shape());
    auto cdf = std::make_shared<std::vector<Real>>(grad_enabled() && x.requires_grad() ? n : 0);
    const Real* in = x.data();
    Real* out = y.data();
    Real* phi = cdf->empty() ? nullptr : cdf->data();
    for_chunks(n, [&](size_t begin, size_t end) {
        size_t i = begin;
        for (; i + Lanes::size <= end; i += Lanes::size) {
            const Lanes v = Lanes::load_unaligned(in + i);
            const Lanes c = normal_cdf(v);
            (v * c).store_unaligned(out + i);
            if (phi) c.store_unaligned(phi + i);
        }
        for (; i < end; ++i) {
            const Real c = Real(0.5) * std::erfc(Real(-0.70710678118654752440) * in[i]);
            out[i] = in[i] * c;
            if (phi) phi[i] = c;
        }
    });
    return make_result(std::move(y), {x}, "gelu_vectorized", [x = x, cdf](TensorImpl& o) mutable {
        // gelu_vectorized backward: dx += dy ⊙ (Φ(x) + x·φ(x)), Φ saved, φ recomputed in lanes
        Array* g = grad_of(x);
        if (!g) return;
        const Real* v = x.data();
        const Real* c = cdf->data();
        const Real* dy = o.grad.data();
        Real* dx = g->data();
        for_chunks(x.numel(), [&](size_t begin, size_t end) {
            size_t i = begin;
            for (; i + Lanes::size <= end; i += Lanes::size) {
                const Lanes xv = Lanes::load_unaligned(v + i);
                const Lanes local = Lanes::load_unaligned(c + i) + xv * normal_pdf(xv);
                (Lanes::load_unaligned(dx + i) + Lanes::load_unaligned(dy + i) * local)
                    .store_unaligned(dx + i);
            }
            for (; i < end; ++i) {
                const Real pdf = Real(0.39894228040143267794) * std::exp(Real(-0.5) * v[i] * v[i]);
                dx[i] += dy[i] * (c[i] + v[i] * pdf);
            }
        });
    });
}

// ---- add_layer_norm -----------------------------------------------------------------------
// y = LayerNorm(x + r)·γ + β over the last axis, the post-LN residual step in one op.
// x, r:[..., C] γ, β:[C] → y:[..., C]; saves s = x + r, mean and rstd per row.
// Row sums run in float lanes (the composed layer_norm sums in double, one by one).
Tensor add_layer_norm(const Tensor& x, const Tensor& r, const Tensor& gamma, const Tensor& beta,
                      Real eps) {
    if (x.dim() == 0 || x.size(-1) == 0 || r.shape() != x.shape())
        throw std::invalid_argument("add_layer_norm: x and r must be one shape with a non-empty "
                                    "last axis, got " + shape_str(x.shape()) + " and " +
                                    shape_str(r.shape()));
    const size_t C = x.size(-1), R = x.numel() / C;
    for (const Tensor* p : {&gamma, &beta})
        if (p->dim() != 1 || p->size(0) != C)
            throw std::invalid_argument("add_layer_norm: gamma/beta must be [" + std::to_string(C) +
                                        "], got " + shape_str(p->shape()));
    auto sum = std::make_shared<Array>(Array::from_shape(x.shape()));  // s = x + r, saved
    auto stats = std::make_shared<std::vector<Real>>(2 * R);           // mean, rstd per row
    Array y = Array::from_shape(x.shape());
    const Real *X = x.data(), *Rr = r.data(), *G = gamma.data(), *B = beta.data();
    Real *S = sum->data(), *Y = y.data(), *M = stats->data();
#pragma omp parallel for schedule(static) if (R * C > 16384)
    for (long row = 0; row < long(R); ++row) {
        const size_t off = size_t(row) * C;
        Real* s = S + off;
        for (size_t j = 0; j < C; ++j) s[j] = X[off + j] + Rr[off + j];
        const Real mean = row_sum(s, C) / Real(C);
        Real* y_row = Y + off;  // (s − mean)² first, as scratch
        for (size_t j = 0; j < C; ++j) y_row[j] = (s[j] - mean) * (s[j] - mean);
        const Real rstd = Real(1) / std::sqrt(row_sum(y_row, C) / Real(C) + eps);
        for (size_t j = 0; j < C; ++j) y_row[j] = (s[j] - mean) * rstd * G[j] + B[j];
        M[2 * size_t(row)] = mean;
        M[2 * size_t(row) + 1] = rstd;
    }
    return make_result(
        std::move(y), {x, r, gamma, beta}, "add_layer_norm",
        [x = x, r = r, gamma = gamma, beta = beta, sum, stats, R, C](TensorImpl& o) mutable {
            // add_layer_norm backward, g = dy⊙γ, x̂ = (s − mean)·rstd:
            //   ds = rstd·(g − mean(g) − x̂·mean(g⊙x̂)),  dx += ds, dr += ds   [..., C]
            //   dγ += Σ_rows dy⊙x̂,  dβ += Σ_rows dy   [C] (per-thread row blocks, then in order)
            const Real *S = sum->data(), *M = stats->data(), *G = gamma.data();
            const Real* dY = o.grad.data();
            Array* gx = grad_of(x);
            Array* gr = grad_of(r);
            Array* gg = grad_of(gamma);
            Array* gb = grad_of(beta);
            const int threads = R * C > 16384 ? omp_get_max_threads() : 1;
            std::vector<double> partial(size_t(threads) * 2 * C, 0.0);  // [thread][dγ | dβ]
#pragma omp parallel num_threads(threads)
            {
                const int t = omp_get_thread_num();
                double* dgamma = partial.data() + size_t(t) * 2 * C;
                double* dbeta = dgamma + C;
                std::vector<Real> xhat(C), g(C), g_xhat(C);
#pragma omp for schedule(static)
                for (long row = 0; row < long(R); ++row) {
                    const size_t off = size_t(row) * C;
                    const Real mean = M[2 * size_t(row)], rstd = M[2 * size_t(row) + 1];
                    for (size_t j = 0; j < C; ++j) {
                        xhat[j] = (S[off + j] - mean) * rstd;
                        g[j] = dY[off + j] * G[j];
                        g_xhat[j] = g[j] * xhat[j];
                        dgamma[j] += double(dY[off + j]) * xhat[j];
                        dbeta[j] += dY[off + j];
                    }
                    const Real g_mean = row_sum(g.data(), C) / Real(C);
                    const Real g_xhat_mean = row_sum(g_xhat.data(), C) / Real(C);
                    for (size_t j = 0; j < C; ++j) {
                        const Real d = rstd * (g[j] - g_mean - xhat[j] * g_xhat_mean);
                        if (gx) gx->data()[off + j] += d;
                        if (gr) gr->data()[off + j] += d;
                    }
                }
            }
            for (int t = 0; t < threads; ++t)
                for (size_t j = 0; j < C; ++j) {
                    const double* p = partial.data() + size_t(t) * 2 * C;
                    if (gg) gg->data()[j] += Real(p[j]);
                    if (gb) gb->data()[j] += Real(p[C + j]);
                }
        });
}

}  // namespace rf
