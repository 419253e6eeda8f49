// Stage 2 — ops: LayerNorm's backward kernel for x (declared in backward_kernels.hpp, called by
// layernorm.cpp, which also sums dγ and dβ). Its own file so a student build can swap it
// (students/tasks/layernorm_backward.cpp, docs/graded-tasks.md); the default build compiles
// this one.
//
// Per row, with xhat = (x − mean)·rstd and g = dy ⊙ γ (the gradient reaching xhat):
//   dx = rstd·(g − mean(g) − xhat·mean(g ⊙ xhat))       (derivation: docs/backward.md)
// xhat is recomputed from the saved mean and rstd; the two row means are summed in double.
#include "ops/backward_kernels.hpp"

namespace rf {

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

}  // namespace rf
