// Stage 3 — nn: one AdamW update (the formulas are in adamw.hpp; the rest of the optimizer is
// in adamw.cpp). Its own file so a student build can swap it (students/tasks/adamw_step.cpp,
// docs/graded-tasks.md); the default build compiles this one. Derivation: docs/backward.md.
#include <cmath>

#include "nn/adamw.hpp"

namespace rf {

// w ← w(1 − lr·wd);  m ← β1 m + (1−β1) g;  v ← β2 v + (1−β2) g²;  w ← w − lr·m̂/(√v̂ + ε)
// (w: a weight, `theta` below)
void AdamW::step(double lr) {
    ++step_;
    const double b1 = options_.beta1, b2 = options_.beta2, eps = options_.eps;
    const double correction1 = 1.0 - std::pow(b1, static_cast<double>(step_));
    const double correction2 = 1.0 - std::pow(b2, static_cast<double>(step_));
    for (size_t i = 0; i < params_.size(); ++i) {
        Tensor& p = params_[i].tensor;
        if (!p.has_grad()) continue;
        const double shrink = params_[i].decay ? 1.0 - lr * options_.weight_decay : 1.0;
        Real* theta = p.data();
        const Real* g = p.grad().data();
        Real* m = m_[i].data();
        Real* v = v_[i].data();
        const long n = static_cast<long>(p.numel());
        for (long j = 0; j < n; ++j) {
            const double gj = g[j];
            const double mj = b1 * m[j] + (1.0 - b1) * gj;
            const double vj = b2 * v[j] + (1.0 - b2) * gj * gj;
            m[j] = static_cast<Real>(mj);
            v[j] = static_cast<Real>(vj);
            const double m_hat = mj / correction1;
            const double v_hat = vj / correction2;
            theta[j] = static_cast<Real>(theta[j] * shrink - lr * m_hat / (std::sqrt(v_hat) + eps));
        }
    }
}

}  // namespace rf
