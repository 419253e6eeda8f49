// Stage 2 — ops: inverted dropout.
//
// Legend:  x, y  any shape (same for both)     p  probability of dropping an element
//          mask  per element: 1/(1−p) where kept, 0 where dropped
//
// Training: each element is kept with probability 1−p (one rng.uniform() draw per element,
// in row-major order, so the same seed gives the same mask) and scaled by 1/(1−p), so that
// E[y] = x and evaluation needs no rescaling. Evaluation (training = false) and p = 0 return
// x itself: no copy, no graph node. Only `training` decides, as in PyTorch: grad mode says
// whether to record a graph, not which mode the model is in.
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/ops.hpp"

namespace rf {

// ---- dropout ------------------------------------------------------------------------------
// y = x ⊙ mask,  mask_i = [u_i ≥ p]/(1−p),  u_i ~ U[0,1)   x:[...] → y:[...]
Tensor dropout(const Tensor& x, Real p, bool training, Rng& rng) {
    if (!(p >= Real(0) && p < Real(1)))
        throw std::invalid_argument("dropout: p must be in [0, 1), got " + std::to_string(p));
    if (!training || p == Real(0)) return x;

    const size_t n = x.numel();
    const Real keep_scale = Real(1) / (Real(1) - p);
    std::vector<Real> mask(n);
    for (size_t i = 0; i < n; ++i) mask[i] = rng.uniform() >= double(p) ? keep_scale : Real(0);

    Array y = Array::from_shape(x.value().shape());
    const Real* X = x.data();
    Real* Y = y.data();
    for (size_t i = 0; i < n; ++i) Y[i] = X[i] * mask[i];

    return make_result(std::move(y), {x}, "dropout",
                       [x = x, mask = std::move(mask)](TensorImpl& o) mutable {
                           // dropout backward: dx += dy ⊙ mask   [...]
                           Array* gx = grad_of(x);
                           if (!gx) return;
                           const Real* dY = o.grad.data();
                           Real* dX = gx->data();
                           for (size_t i = 0; i < mask.size(); ++i) dX[i] += dY[i] * mask[i];
                       });
}

}  // namespace rf
