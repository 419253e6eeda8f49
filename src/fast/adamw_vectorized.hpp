// Room — fast: AdamW's update on the fast path, an optimizer step of its own beside the
// readable AdamW::step (src/nn/adamw.hpp, adamw.cpp): the same formulas with the element
// loop in SIMD lanes; the fast kernels (fast_kernels.cpp) run it as their optimizer_step.
#pragma once

#include "nn/adamw.hpp"

namespace rf {

// One AdamW update of `optimizer`'s parameters at learning rate lr: AdamW::step's result to
// float rounding (tests/machinery/test_adamw_vectorized.cpp), its state counted and kept in
// the optimizer as step keeps it (so export_state, resume and the readable step still apply).
void adamw_step_vectorized(AdamW& optimizer, double lr);

}  // namespace rf
