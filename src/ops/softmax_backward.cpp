// Stage 2 — ops: softmax's backward kernel (declared in backward_kernels.hpp, called by
// softmax.cpp). Its own file so a student build can swap it (students/tasks/softmax_backward.cpp,
// docs/graded-tasks.md); the default build compiles this one.
//
// y = softmax(x) per row has Jacobian ∂y_i/∂x_j = y_i(δ_ij − y_j), so
//   dx_j = Σ_i dy_i·y_i(δ_ij − y_j) = y_j·(dy_j − Σ_i dy_i·y_i)     (docs/backward.md)
// The dot product is summed in double; rows run in parallel (each row written by one thread).
#include "ops/backward_kernels.hpp"

namespace rf {

void softmax_backward(const Real* Y, const Real* dY, Real* dX, size_t R, size_t C) {
#pragma omp parallel for schedule(static) if (R * C > 16384)
    for (long r = 0; r < long(R); ++r) {
        const size_t off = size_t(r) * C;
        double dot = 0.0;
        for (size_t j = 0; j < C; ++j) dot += double(dY[off + j]) * Y[off + j];
        for (size_t j = 0; j < C; ++j) dX[off + j] += Y[off + j] * (dY[off + j] - Real(dot));
    }
}

}  // namespace rf
