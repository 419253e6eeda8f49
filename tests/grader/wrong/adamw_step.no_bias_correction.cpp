// A WRONG solution of graded task adamw_step: no bias correction.
// scripts/grade.sh --check grades it and requires the hint below in the console
// (students/hints.txt). Not an answer; left out of a handout.
// expected hint: adamw_step.first_update
#include <cmath>

#include "nn/adamw.hpp"

namespace rf {

void AdamW::step(double lr) {
    ++step_;
    const double b1 = options_.beta1, b2 = options_.beta2, eps = options_.eps;
    const double correction1 = 1.0;
    const double correction2 = 1.0;
    for (size_t i = 0; i < params_.size(); ++i) {
        Tensor& p = params_[i].tensor;
        if (!p.has_grad()) continue;
        const double wd = params_[i].decay ? options_.weight_decay : 0.0;
        Real* w = p.data();
        const Real* g = p.grad().data();
        for (size_t j = 0; j < p.numel(); ++j) {
            const double gj = double(g[j]) ;
            const double mj = b1 * m_[i][j] + (1.0 - b1) * gj;
            const double vj = b2 * v_[i][j] + (1.0 - b2) * gj * gj;
            m_[i][j] = Real(mj);
            v_[i][j] = Real(vj);
            const double update = (mj / correction1) / (std::sqrt(vj / correction2) + eps);
            w[j] = Real(double(w[j]) * (1.0 - lr * wd) - lr * update);
        }
    }
    
}

}  // namespace rf
