// Stage 2 — ops: softmax's backward kernel, one row (declared in backward_kernels.hpp, called by
// softmax and causal_softmax in softmax.cpp). Its own file so a student build can swap it
// (students/tasks/softmax_backward.cpp, docs/graded-tasks.md); the default build compiles this one.
//
// y = softmax(x) over a row has Jacobian ∂y_i/∂x_j = y_i(δ_ij − y_j), so
//   dx_j = Σ_i dy_i·y_i(δ_ij − y_j) = y_j·(dy_j − Σ_i dy_i·y_i)     (docs/backward.md)
// The dot product is summed in double.
#include "ops/backward_kernels.hpp"

namespace rf {

void softmax_row_backward(const Real* y, const Real* dy, Real* dx, size_t n) {
    double dot = 0.0;
    for (size_t j = 0; j < n; ++j) dot += double(dy[j]) * y[j];
    for (size_t j = 0; j < n; ++j) dx[j] += y[j] * (dy[j] - Real(dot));
}

}  // namespace rf
