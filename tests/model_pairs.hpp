// Two models with the same parameter list (e.g. model.fused = true and false, same seed): the
// model-level tests compare them tensor by tensor.
#pragma once

#include <doctest/doctest.h>

#include "model/roformer.hpp"

namespace rf::testing {

// check(a's tensor, b's tensor) for every parameter both have a gradient for; the two lists
// must match in length and in which tensors have a gradient. The tensor's name is CAPTUREd.
template <class Check>
void for_each_gradient_pair(RoFormer& a, RoFormer& b, Check check) {
    const auto& pa = a.parameters();
    const auto& pb = b.parameters();
    REQUIRE(pa.size() == pb.size());
    for (size_t i = 0; i < pa.size(); ++i) {
        CAPTURE(pa[i].tensor.name());
        Tensor ta = pa[i].tensor, tb = pb[i].tensor;
        REQUIRE(ta.has_grad() == tb.has_grad());
        if (ta.has_grad()) check(ta, tb);
    }
}

}  // namespace rf::testing
