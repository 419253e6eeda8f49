// Graded task softmax_backward — softmax's backward (replaces src/ops/softmax_backward.cpp).
// Grade it:  scripts/grade.sh softmax_backward  (tests: tests/gradcheck/test_softmax.cpp,
//                                                "softmax gradient*", central differences)
//
// The forward computed, per row of an [R, C] buffer, y_j = exp(x_j) / Σ_k exp(x_k).
// Write softmax_backward, declared in src/ops/backward_kernels.hpp: given the forward's
// output Y and the gradient dY = ∂L/∂y, ADD ∂L/∂x to dX (dX += …, never dX = …):
//
//     ∂L/∂x_j = Σ_i dY_i · ∂y_i/∂x_j
//
// Derive ∂y_i/∂x_j first (two cases, i = j and i ≠ j); you should find that the sum
// collapses to a form needing one dot product per row, O(C) instead of O(C²).
// Sum the dot product in double (the tests run in Real = double at 1e-6 tolerances anyway).
// The derivation: docs/backward.md ("Softmax").
#include <stdexcept>

#include "ops/backward_kernels.hpp"

namespace rf {

void softmax_backward(const Real* Y, const Real* dY, Real* dX, size_t R, size_t C) {
    // TODO(student)
    throw std::logic_error(
        "softmax_backward: not implemented yet (students/tasks/softmax_backward.cpp)");
}

}  // namespace rf
