// Stage 2 — ops: embedding lookup (a gather of rows) and its scatter-add backward.
//
// Legend:  V  rows of the table (vocabulary)   C  embedding width
//          ids      flat list of row indices, laid out as ids_shape (row-major)
//
// The same id may appear many times (every [PAD], every "the"): the backward ADDS each
// occurrence's upstream row into the table's gradient, in id order, never assigns.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/ops.hpp"

namespace rf {

// ---- embedding ----------------------------------------------------------------------------
// out[n, :] = weight[ids[n], :]   weight:[V, C] ids: ids_shape (n flat) → out:[ids_shape..., C]
Tensor embedding(const Tensor& weight, const std::vector<int>& ids, const Shape& ids_shape) {
    if (weight.dim() != 2)
        throw std::invalid_argument("embedding: weight must be [V, C], got " +
                                    shape_str(weight.shape()));
    size_t count = 1;
    for (size_t d : ids_shape) count *= d;
    if (count != ids.size())
        throw std::invalid_argument("embedding: ids_shape " + shape_str(ids_shape) + " holds " +
                                    std::to_string(count) + " ids but " +
                                    std::to_string(ids.size()) + " were given");
    const size_t V = weight.size(0), C = weight.size(1);
    for (size_t n = 0; n < ids.size(); ++n)
        if (ids[n] < 0 || size_t(ids[n]) >= V)
            throw std::invalid_argument("embedding: id " + std::to_string(ids[n]) +
                                        " at position " + std::to_string(n) +
                                        " is outside the table's [0, " + std::to_string(V) +
                                        ") rows; check the vocabulary size");

    Shape out_shape = ids_shape;
    out_shape.push_back(C);
    Array out = Array::from_shape(out_shape);
    const Real* W = weight.data();
    Real* Y = out.data();
    for (size_t n = 0; n < ids.size(); ++n)
        std::copy(W + size_t(ids[n]) * C, W + size_t(ids[n] + 1) * C, Y + n * C);

    return make_result(std::move(out), {weight}, "embedding",
                       [weight = weight, ids, C](TensorImpl& o) mutable {
                           // embedding backward: dweight[ids[n], :] += dout[n, :]  (repeats
                           // accumulate)  [V, C]
                           Array* gw = grad_of(weight);
                           if (!gw) return;
                           const Real* dY = o.grad.data();
                           Real* dW = gw->data();
                           for (size_t n = 0; n < ids.size(); ++n) {
                               Real* row = dW + size_t(ids[n]) * C;
                               for (size_t j = 0; j < C; ++j) row[j] += dY[n * C + j];
                           }
                       });
}

}  // namespace rf
