// Graded task layernorm_backward — LayerNorm's backward for x (its place: src/ops/layernorm.cpp,
// under the op, marked there).
// Grade it:  scripts/grade.sh layernorm_backward  (tests: tests/gradcheck/test_layernorm_grad.cpp,
//                                                  "layer_norm gradient*", central differences)
//
// The forward computed, per row of an [R, C] buffer:
//     mean = Σ_j x_j / C,   rstd = 1/√(Σ_j (x_j − mean)²/C + eps),
//     xhat_j = (x_j − mean)·rstd,   y_j = γ_j·xhat_j + β_j
// and saved mean and rstd ([R] each). layernorm.cpp sums dγ and dβ itself.
// Write layer_norm_backward_x, declared in src/ops/backward_kernels.hpp: ADD ∂L/∂x to dX
// (dX += …), given X, γ (gamma, [C]), dY = ∂L/∂y, mean and rstd.
//
// Hints: call g_j = dY_j·γ_j the gradient reaching xhat_j. mean and rstd both depend on every
// x_k of the row, so ∂xhat_j/∂x_k has three terms. You should end with one line per element
// that uses two row means: mean(g) and mean(g ⊙ xhat). Recompute xhat from mean and rstd.
// The derivation: docs/backward.md ("LayerNorm").
#include <stdexcept>

#include "ops/backward_kernels.hpp"

namespace rf {

void layer_norm_backward_x(const Real* X, const Real* gamma, const Real* dY, const Real* mean,
                           const Real* rstd, Real* dX, size_t R, size_t C) {
    // TODO(student)
    throw std::logic_error(
        "layer_norm_backward_x: not implemented yet: "
        "write students/tasks/layernorm_backward.cpp, "
        "grade it with scripts/grade.sh layernorm_backward");
}

}  // namespace rf
