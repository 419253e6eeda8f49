// Room — fast: the fast path's element-wise ops (model.fused = true). Each computes what a
// composed op computes, vectorised with xsimd (SIMD lanes, polynomial exp/erfc accurate to a
// few float ulps instead of libm's one-at-a-time calls), and saves less for the backward.
// The lane loops are the kernels of simd_kernels.hpp, compiled per instruction set; the ISA in
// force (simd.hpp, model.isa) is taken when the op runs and kept for its backward.
// tests/machinery/test_fused_ops.cpp checks each against its composed op on every ISA the CPU has;
// tests/gradcheck checks its backward per element in double.
//
// Legend: n elements; C a row's length.

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/openmp.hpp"
#include "fast/fused_ops.hpp"
#include "ops/ops.hpp"
#include "fast/simd.hpp"

namespace rf {
namespace {

// Runs body(begin, end) over [0, n) in chunks of whole lanes (the last chunk takes the rest),
// on several threads when n is large. Chunks are disjoint: the result does not depend on the
// thread count.
template <class Body>
void for_chunks(size_t n, Body body) {
    constexpr size_t chunk = 8192;  // a multiple of every lane count
    const long chunks = long((n + chunk - 1) / chunk);
#pragma omp parallel for schedule(static) if (n > 32768)
    for (long c = 0; c < chunks; ++c) body(size_t(c) * chunk, std::min(n, size_t(c + 1) * chunk));
}

}  // namespace

// ---- gelu_vectorized ----------------------------------------------------------------------
// y = x·Φ(x)   x:[...] → y:[...]   (gelu's exact form, erfc in lanes). Φ(x) is kept for the
// backward when x requires grad (erfc is the costly part; exp for φ is cheap to redo).
Tensor gelu_vectorized(const Tensor& x) {
    const SimdKernels* k = &simd_kernels();
    const size_t n = x.numel();
    Array y = Array::from_shape(x.shape());
    // Φ(x) for the backward, every element written below (no zero-fill pass first)
    auto cdf = std::make_shared<Array>(
        Array::from_shape({grad_enabled() && x.requires_grad() ? n : size_t(0)}));
    const Real* in = x.data();
    Real* out = y.data();
    Real* phi = cdf->size() == 0 ? nullptr : cdf->data();
    for_chunks(n, [&](size_t begin, size_t end) {
        k->gelu_forward(in + begin, out + begin, phi ? phi + begin : nullptr, end - begin);
    });
    return make_result(
        std::move(y), {x}, "gelu_vectorized", [x = x, cdf, k](TensorImpl& o) mutable {
            // gelu_vectorized backward: dx += dy ⊙ (Φ(x) + x·φ(x)), Φ saved, φ recomputed in lanes
            Array* g = grad_of(x);
            if (!g) return;
            const Real* v = x.data();
            const Real* c = cdf->data();
            const Real* dy = o.grad.data();
            Real* dx = g->data();
            for_chunks(x.numel(), [&](size_t begin, size_t end) {
                k->gelu_backward(v + begin, c + begin, dy + begin, dx + begin, end - begin);
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
        throw std::invalid_argument(
            "add_layer_norm: x and r must be one shape with a non-empty "
            "last axis, got " +
            shape_str(x.shape()) + " and " + shape_str(r.shape()));
    const size_t C = x.size(-1), R = x.numel() / C;
    for (const Tensor* p : {&gamma, &beta})
        if (p->dim() != 1 || p->size(0) != C)
            throw std::invalid_argument("add_layer_norm: gamma/beta must be [" + std::to_string(C) +
                                        "], got " + shape_str(p->shape()));
    const SimdKernels* k = &simd_kernels();
    auto sum = std::make_shared<Array>(Array::from_shape(x.shape()));  // s = x + r, saved
    auto stats = std::make_shared<Array>(Array::from_shape({2 * R}));  // mean, rstd per row
    Array y = Array::from_shape(x.shape());
    const Real *X = x.data(), *Rr = r.data(), *G = gamma.data(), *B = beta.data();
    Real *S = sum->data(), *Y = y.data(), *M = stats->data();
#pragma omp parallel for schedule(static) if (R * C > 16384)
    for (long row = 0; row < long(R); ++row) {
        const size_t off = size_t(row) * C;
        k->add_layer_norm_row(X + off, Rr + off, G, B, eps, C, S + off, Y + off,
                              M + 2 * size_t(row));
    }
    return make_result(
        std::move(y), {x, r, gamma, beta}, "add_layer_norm",
        [x = x, r = r, gamma = gamma, beta = beta, sum, stats, R, C, k](TensorImpl& o) mutable {
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
#pragma omp for schedule(static)
                for (long row = 0; row < long(R); ++row) {
                    const size_t off = size_t(row) * C;
                    k->add_layer_norm_row_backward(S + off, dY + off, G, M[2 * size_t(row)],
                                                   M[2 * size_t(row) + 1], C,
                                                   gx ? gx->data() + off : nullptr,
                                                   gr ? gr->data() + off : nullptr, dgamma, dbeta);
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
