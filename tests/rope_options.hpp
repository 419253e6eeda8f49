// Test helper shared by tests/lesson/test_rope.cpp (float32) and tests/gradcheck/test_rope_grad.cpp
// (double): RopeOptions in one line.
#pragma once

#include <cstddef>

#include "position/rope.hpp"

namespace rf::testing {

inline RopeOptions rope_options(RopePairing pairing, size_t D, size_t r, double base = 10000.0,
                                double interpolation = 1.0, double ntk = 1.0) {
    RopeOptions o;
    o.pairing = pairing;
    o.head_dim = D;
    o.rotary_dims = r;
    o.base = base;
    o.interpolation_factor = interpolation;
    o.ntk_factor = ntk;
    return o;
}

}  // namespace rf::testing
