// Graded task rope_backward — RoPE's backward (its place: src/position/rope.cpp, marked there).
// Grade it:  scripts/grade.sh rope_backward     (tests: tests/gradcheck/test_rope_grad.cpp,
//                                                "rope gradient*", central differences)
//
// The forward computed y = R_m x for every row (n, t) of an [N, T, D] buffer, with R_m
// block-diagonal: 2×2 rotations by the angles m·θ_i whose cos/sin are in the tables
// cos, sin: [T, r/2] (row t = the angles of the position used at t).
// Write rope_backward, declared in src/position/rope.hpp:
//
//     dx += (∂y/∂x)ᵀ dy        for every row, with the same tables
//
// Questions to answer on paper first: what is ∂y/∂x for a linear map y = R x? What is the
// transpose of a 2×2 rotation by angle α? Then compute it: with rope_kernel (rope.hpp) on
// tables of your own, or with loops of your own. Mind "+=": a tensor used twice (q and k share x in
// self-attention) must receive the sum of both gradients, so never overwrite dx.
// The derivation: docs/backward.md ("RoPE").
#include <stdexcept>

#include "position/rope.hpp"

namespace rf {

void rope_backward(const Real* dy, Real* dx, size_t N, size_t T, size_t D, size_t r,
                   RopePairing pairing, const Real* cos, const Real* sin) {
    // TODO(student)
    throw std::logic_error(
        "rope_backward: not implemented yet: "
        "write students/tasks/rope_backward.cpp, "
        "grade it with scripts/grade.sh rope_backward");
}

}  // namespace rf
