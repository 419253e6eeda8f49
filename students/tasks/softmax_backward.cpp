// Graded task softmax_backward — softmax's backward (its place: src/ops/softmax.cpp, marked there).
// Grade it:  scripts/grade.sh softmax_backward  (tests: tests/gradcheck/test_softmax_grad.cpp,
//                                                "softmax gradient*", central differences)
//
// The forward computed, over one row of n entries, y_j = exp(x_j) / Σ_k exp(x_k) (softmax
// runs every row of an [R, C] buffer through your function; causal_softmax the first i + 1
// entries of row i). Write softmax_row_backward, declared in src/ops/backward_kernels.hpp:
// given the forward's output y and the gradient dy = ∂L/∂y, ADD ∂L/∂x to dx (dx += …, never
// dx = …):
//
//     ∂L/∂x_j = Σ_i dY_i · ∂y_i/∂x_j
//
// Derive ∂y_i/∂x_j first (two cases, i = j and i ≠ j); you should find that the sum
// collapses to a form needing one dot product per row, O(n) instead of O(n²).
// Sum the dot product in double (the tests run in Real = double at 1e-6 tolerances anyway).
// The derivation: docs/backward.md ("Softmax").
#include <stdexcept>

#include "ops/backward_kernels.hpp"

namespace rf {

void softmax_row_backward(const Real* y, const Real* dy, Real* dx, size_t n) {
    // TODO(student)
    throw std::logic_error(
        "softmax_row_backward: not implemented yet: "
        "write students/tasks/softmax_backward.cpp, "
        "grade it with scripts/grade.sh softmax_backward");
}

}  // namespace rf
