// Stage 2 — ops: LayerNorm over the last axis, one op (one node: its own forward and backward).
//
// Legend:  R  rows = product of all dims but the last     C  channels (the last axis)
//          mean, rstd   per-row statistics, [R], saved by the forward for the backward
//          xhat         (x − mean)·rstd, the normalised row (recomputed in backward)
//
// Forward, per row:  mean = Σx/C,  var = Σ(x − mean)²/C (two passes, in double),
//                    rstd = 1/√(var + eps),  y = xhat·γ + β.
// Backward, per row: dx by layer_norm_backward_x (below, from mean and rstd);
//   dγ = Σ_rows dy ⊙ xhat,   dβ = Σ_rows dy
// One thread, row after row (the fast path's twin threads); dγ/dβ are summed over rows in a
// fixed order.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/backward_kernels.hpp"
#include "ops/ops.hpp"

namespace rf {

// ---- layer_norm ---------------------------------------------------------------------------
// y = (x − mean)·rstd·γ + β   x:[..., C] γ:[C] β:[C] → y:[..., C]
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, Real eps) {
    if (x.dim() == 0 || x.size(-1) == 0)
        throw std::invalid_argument("layer_norm: x needs a non-empty last axis, got " +
                                    shape_str(x.shape()));
    const size_t C = x.size(-1), R = x.numel() / C;
    for (const Tensor* p : {&gamma, &beta})
        if (p->dim() != 1 || p->size(0) != C)
            throw std::invalid_argument("layer_norm: gamma/beta must be [" + std::to_string(C) +
                                        "] for x " + shape_str(x.shape()) + ", got " +
                                        shape_str(p->shape()));
    if (!(eps >= Real(0)))
        throw std::invalid_argument("layer_norm: eps must be >= 0, got " + std::to_string(eps));

    Array y = Array::from_shape(x.value().shape());
    std::vector<Real> mean(R), rstd(R);
    const Real* X = x.data();
    const Real* G = gamma.data();
    const Real* B = beta.data();
    Real* Y = y.data();
    for (long r = 0; r < long(R); ++r) {
        const Real* xr = X + size_t(r) * C;
        Real* yr = Y + size_t(r) * C;
        double total = 0.0;
        for (size_t j = 0; j < C; ++j) total += xr[j];
        const double m = total / double(C);
        double squares = 0.0;
        for (size_t j = 0; j < C; ++j) squares += (xr[j] - m) * (xr[j] - m);
        const double s = 1.0 / std::sqrt(squares / double(C) + double(eps));
        mean[size_t(r)] = Real(m);
        rstd[size_t(r)] = Real(s);
        for (size_t j = 0; j < C; ++j) yr[j] = Real((xr[j] - m) * s) * G[j] + B[j];
    }

    return make_result(
        std::move(y), {x, gamma, beta}, "layer_norm",
        [x = x, gamma = gamma, beta = beta, mean = std::move(mean), rstd = std::move(rstd), R,
         C](TensorImpl& o) mutable {
            // layer_norm backward: dx by layer_norm_backward_x  [..., C]
            //                      dγ += Σ_rows dy⊙xhat [C],   dβ += Σ_rows dy [C]
            const Real* X = x.data();
            const Real* G = gamma.data();
            const Real* dY = o.grad.data();
            const std::vector<Real>& M = mean;
            const std::vector<Real>& S = rstd;
            if (Array* gx = grad_of(x))  // below
                layer_norm_backward_x(X, G, dY, M.data(), S.data(), gx->data(), R, C);
            Array* ggamma = grad_of(gamma);
            Array* gbeta = grad_of(beta);
            if (!ggamma && !gbeta) return;
            std::vector<double> dgamma(C, 0.0), dbeta(C, 0.0);
            for (size_t r = 0; r < R; ++r) {
                const size_t off = r * C;
                for (size_t j = 0; j < C; ++j) {
                    dgamma[j] += double(dY[off + j]) * double((X[off + j] - M[r]) * S[r]);
                    dbeta[j] += dY[off + j];
                }
            }
            for (size_t j = 0; j < C; ++j) {
                if (ggamma) ggamma->data()[j] += Real(dgamma[j]);
                if (gbeta) gbeta->data()[j] += Real(dbeta[j]);
            }
        });
}

// LayerNorm's backward for x (declared in backward_kernels.hpp), row by row, with
// xhat = (x − mean)·rstd and g = dy ⊙ γ (the gradient reaching xhat):
// <!-- answer:begin layernorm_backward -->
//   dx = rstd·(g − mean(g) − xhat·mean(g ⊙ xhat))       (derivation: docs/backward.md)
// <!-- answer:end -->
// xhat is recomputed from the saved mean and rstd; the two row means are summed in double.
// graded:begin layernorm_backward (students/tasks/layernorm_backward.cpp)
void layer_norm_backward_x(const Real* X, const Real* G, const Real* dY, const Real* M,
                           const Real* S, Real* dX, size_t R, size_t C) {
    for (long r = 0; r < long(R); ++r) {
        const size_t off = size_t(r) * C;
        const Real m = M[size_t(r)], s = S[size_t(r)];
        double g_mean = 0.0, gx_mean = 0.0;
        for (size_t j = 0; j < C; ++j) {
            const double g = double(dY[off + j]) * G[j];
            g_mean += g;
            gx_mean += g * double((X[off + j] - m) * s);
        }
        g_mean /= double(C);
        gx_mean /= double(C);
        for (size_t j = 0; j < C; ++j) {
            const double xhat = double((X[off + j] - m) * s);
            const double g = double(dY[off + j]) * G[j];
            dX[off + j] += Real(double(s) * (g - g_mean - xhat * gx_mean));
        }
    }
}
// graded:end layernorm_backward

}  // namespace rf
