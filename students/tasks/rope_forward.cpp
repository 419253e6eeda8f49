// Graded task rope_forward — the RoPE kernel (its place: src/position/rope.cpp, marked there).
// Grade it:  scripts/grade.sh rope_forward      (tests: tests/lesson/test_rope.cpp, "rope: *")
//
// Write rope_kernel, declared in src/position/rope.hpp. For every row (n, t) of a contiguous
// [N, T, D] buffer, rotate pair i of the first r dims by the angle of position t:
//
//     y_lo = c·x_lo − s·x_hi            c = cos[t·(r/2) + i]
//     y_hi = s·x_lo + c·x_hi            s = sin[t·(r/2) + i]
//
// where the pair (lo, hi) is (2i, 2i+1) for RopePairing::interleaved and (i, i + r/2) for
// RopePairing::half, i = 0 … r/2 − 1. Dims d ≥ r pass through unchanged (y_d = x_d).
// accumulate = false: out = y (in == out is allowed, so read x_lo and x_hi before writing);
// accumulate = true: out += y. The tests call every combination of pairing and accumulate, in
// place and not.
// The derivation: docs/rope.md; a loop-only version fits in 25 lines. Parallelising over n
// (OpenMP) is optional — the tests check values, not speed.
#include <stdexcept>

#include "position/rope.hpp"

namespace rf {

void rope_kernel(const Real* in, Real* out, size_t N, size_t T, size_t D, size_t r,
                 RopePairing pairing, const Real* cos, const Real* sin, bool accumulate) {
    // TODO(student): replace this line with the loops described above.
    throw std::logic_error(
        "rope_kernel: not implemented yet: "
        "write students/tasks/rope_forward.cpp, "
        "grade it with scripts/grade.sh rope_forward");
}

}  // namespace rf
