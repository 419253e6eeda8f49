// Graded task adamw_step — one AdamW update (its place: src/nn/adamw.cpp, marked there).
// Grade it:  scripts/grade.sh adamw_step    (tests: tests/lesson/test_adamw.cpp — several steps
//                                            against a loop in double, decoupled decay, resume)
//
// Write AdamW::step(lr), declared in src/nn/adamw.hpp (read the formulas there; w is a weight).
// Members:
//   params_[i].tensor   a parameter (p.data(), p.grad().data(), p.numel(), p.has_grad())
//   params_[i].decay    whether weight decay applies to it
//   m_[i], v_[i]        its first/second moment buffers (std::vector<Real>, start at 0)
//   step_               updates applied so far (increment it first: t = 1 on the first step)
//   options_            beta1, beta2, eps, weight_decay
// For every parameter that has a gradient g, element by element, with t = step_:
//   w ← w·(1 − lr·wd)                      decoupled weight decay (only where decay is set)
//   m ← β1·m + (1 − β1)·g,   v ← β2·v + (1 − β2)·g²
//   m̂ = m / (1 − β1ᵗ),       v̂ = v / (1 − β2ᵗ)
//   w ← w − lr·m̂ / (√v̂ + ε)
// Compute in double, store m, v and w as Real. Skip parameters without a gradient.
// Why "decoupled": Loshchilov & Hutter 2019, Algorithm 2; the derivation: docs/backward.md.
#include <stdexcept>

#include "nn/adamw.hpp"

namespace rf {

void AdamW::step(double lr) {
    // TODO(student)
    throw std::logic_error(
        "AdamW::step: not implemented yet: "
        "write students/tasks/adamw_step.cpp, "
        "grade it with scripts/grade.sh adamw_step");
}

}  // namespace rf
