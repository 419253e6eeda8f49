// A WRONG solution of graded task layernorm_backward: the upstream gradient taken as g = dY,
// forgetting that y = γ ⊙ xhat + β scales it by γ first.
// scripts/grade.sh --check grades it and requires the hint below in the console
// (students/hints.txt). Not an answer; left out of a handout.
// expected hint: layernorm_backward.analytic
#include "ops/backward_kernels.hpp"

namespace rf {

void layer_norm_backward_x(const Real* X, const Real* G, const Real* dY, const Real* M,
                           const Real* S, Real* dX, size_t R, size_t C) {
    for (size_t r = 0; r < R; ++r) {
        const size_t off = r * C;
        double g_mean = 0.0, gx_mean = 0.0;
        for (size_t j = 0; j < C; ++j) {
            const double g = double(dY[off + j]);
            g_mean += g / double(C);
            gx_mean += g * double((X[off + j] - M[r]) * S[r]) / double(C);
        }
        for (size_t j = 0; j < C; ++j) {
            const double xhat = double((X[off + j] - M[r]) * S[r]);
            const double g = double(dY[off + j]);
            dX[off + j] += Real(double(S[r]) * (g - g_mean - xhat * gx_mean));
        }
    }
}

}  // namespace rf
