// Stage 4 — position: RoPE's backward, dx += R_mᵀ dy (declared in rope.hpp, used by rope.cpp).
// Its own file so a student build can swap it (students/tasks/rope_backward.cpp,
// docs/graded-tasks.md); the default build compiles this one.
//
// Legend: N = B·H rows of heads, T sequence length, D head size, r rotary dims.
// y = R_m x is linear in x, so dL/dx = R_mᵀ dL/dy; a rotation's transpose is the rotation by
// the opposite angle, R_mᵀ = R_{−m}: the forward kernel with sin negated, adding into dx
// (a tensor used twice receives the sum of both gradients). Derivation: docs/backward.md.
#include "position/rope.hpp"

namespace rf {

void rope_backward(const Real* dy, Real* dx, size_t N, size_t T, size_t D, size_t r,
                   RopePairing pairing, const Real* cos, const Real* sin) {
    rope_kernel(dy, dx, N, T, D, r, pairing, cos, sin, Real(-1), true);
}

}  // namespace rf
