// Stage 2 — ops: sum and mean, over everything or over chosen axes.
//
// Legend: x:[d0, …, dn−1]; "kept" = x's shape with every reduced axis set to 1 (keepdims).
// Reducing over axes is the backward of broadcasting kept → x, and its backward is that
// broadcast, so both directions reuse the stride walk in broadcast.hpp. Sums accumulate in
// double for the all-elements case.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "ops/broadcast.hpp"
#include "ops/ops.hpp"

namespace rf {

namespace {

// y = scale · Σ_all x → shape {}
Tensor reduce_all(const Tensor& x, Real scale, const char* op) {
    const Real* in = x.data();
    double total = 0.0;
    for (size_t i = 0, n = x.numel(); i < n; ++i) total += in[i];
    Array y = Array::from_shape({});
    y() = static_cast<Real>(total) * scale;
    return make_result(std::move(y), {x}, op, [x = x, scale](TensorImpl& out) mutable {
        // dx[i] = scale · dout   dout:{} → dx: x's shape
        Array* g = grad_of(x);
        if (!g) return;
        const Real d = out.grad() * scale;
        Real* dx = g->data();
        for (size_t i = 0, n = g->size(); i < n; ++i) dx[i] += d;
    });
}

// y = scale · Σ_{axes} x   x:[…] → kept shape, or kept without the reduced axes
Tensor reduce_axes(const Tensor& x, const std::vector<int>& axes, bool keepdims, bool average,
                   const char* op) {
    const Shape in = x.shape();
    if (axes.empty())
        throw std::invalid_argument(std::string(op) + ": empty axes list for shape " +
                                    shape_str(in) + "; call " + op +
                                    "(x) to reduce over all elements");
    std::vector<bool> reduced(in.size(), false);
    for (int axis : axes) {
        const size_t a = normalize_axis(axis, in, op);
        if (reduced[a])
            throw std::invalid_argument(std::string(op) + ": axis " + std::to_string(axis) +
                                        " listed twice for shape " + shape_str(in));
        reduced[a] = true;
    }
    Shape kept = in, squeezed;
    size_t count = 1;
    for (size_t d = 0; d < in.size(); ++d) {
        if (reduced[d]) {
            kept[d] = 1;
            count *= in[d];
        } else {
            squeezed.push_back(in[d]);
        }
    }
    const Real scale = average ? Real(1) / static_cast<Real>(count) : Real(1);

    Array y_kept = reduce_to_shape(x.value(), kept);  // Σ over the reduced axes
    if (average) y_kept *= scale;
    Array y = Array::from_shape(keepdims ? kept : squeezed);
    std::copy(y_kept.data(), y_kept.data() + y_kept.size(), y.data());  // same layout

    const Strides from_kept = broadcast_strides(kept, in);
    return make_result(
        std::move(y), {x}, op, [x = x, in, from_kept, scale](TensorImpl& out) mutable {
            // dx[i] = scale · dout[kept index of i]   dout: kept or squeezed → dx: in
            Array* g = grad_of(x);
            if (!g) return;
            Real* dx = g->data();
            const Real* dout = out.grad.data();
            for_each_strided(in, from_kept, [&](size_t i, size_t j) { dx[i] += scale * dout[j]; });
        });
}

}  // namespace

// y = Σ x   x:[…] → {}
Tensor sum(const Tensor& x) { return reduce_all(x, Real(1), "sum"); }

// y = Σ_{axes} x   x:[…] → x's shape without (or with size-1) reduced axes
Tensor sum(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
    return reduce_axes(x, axes, keepdims, false, "sum");
}

// y = (1/N) Σ x   x:[…] → {}, N = numel
Tensor mean(const Tensor& x) {
    if (x.numel() == 0)
        throw std::invalid_argument("mean: empty tensor of shape " + shape_str(x.shape()));
    return reduce_all(x, Real(1) / static_cast<Real>(x.numel()), "mean");
}

// y = (1/N) Σ_{axes} x, N = product of the reduced dims
Tensor mean(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
    return reduce_axes(x, axes, keepdims, true, "mean");
}

}  // namespace rf
