// The AdamW case of tests/lesson/test_adamw.cpp "adamw: several steps …", shared with the
// program that computes its expected values (tests/reference/adamw_snapshot.cpp, written into
// adamw_expected.hpp): the starting weights, the options, the learning rates and the gradients.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace adamw_case {

const std::vector<double> kW = {0.5, -1.0, 0.25, 2.0, -0.75, 1.5};  // [2,3], decays
const std::vector<double> kB = {0.1, -0.2, 0.3};                    // [3], no decay
constexpr double kBeta1 = 0.9, kBeta2 = 0.98, kEps = 1e-6;
constexpr double kWeightDecay = 0.1;  // large, so a wrong decay shows
const std::vector<double> kLearningRates = {1e-2, 5e-2, 3e-2, 1e-3, 2e-2};  // step 1, 2, …

// A deterministic, sign-changing gradient for element j of parameter p at update t.
inline double grad_value(size_t p, size_t j, size_t t) {
    return std::sin(1.3 * double(j + 1) + 0.7 * double(t) + double(p)) * (p == 0 ? 0.5 : 2.0);
}

}  // namespace adamw_case
