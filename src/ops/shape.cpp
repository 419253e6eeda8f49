// Stage 2 — ops: reshape, permute/transpose, slice and concat. Every result is a contiguous
// copy (no views), written with raw loops over data() pointers.
//
// Legend: x:[d0, …, dn−1]; for slice/concat along `axis`: outer = Π dims before the axis,
// rows = dims[axis], inner = Π dims after it, so x is laid out as [outer, rows, inner].
#include <algorithm>
#include <stdexcept>
#include <string>

#include "ops/broadcast.hpp"
#include "ops/ops.hpp"

namespace rf {

namespace {

// out = x with axes reordered: out index (i0, …) reads x at Σ_k i_k · stride_x[axes[k]].
Array permute_copy(const Array& x, const std::vector<size_t>& axes) {
    const Shape in(x.shape().begin(), x.shape().end());
    const Strides stride_x = row_major_strides(in);
    Shape out_shape(in.size());
    Strides read(in.size());
    for (size_t k = 0; k < axes.size(); ++k) {
        out_shape[k] = in[axes[k]];
        read[k] = stride_x[axes[k]];
    }
    Array y = Array::from_shape(out_shape);
    Real* out = y.data();
    const Real* src = x.data();
    for_each_strided(out_shape, read, [&](size_t i, size_t j) { out[i] = src[j]; });
    return y;
}

// x seen as [outer, rows, inner] around `axis`.
struct AxisSplit {
    size_t outer = 1, rows = 1, inner = 1;
};
AxisSplit split_at(const Shape& shape, size_t axis) {
    AxisSplit s;
    for (size_t d = 0; d < axis; ++d) s.outer *= shape[d];
    s.rows = shape[axis];
    for (size_t d = axis + 1; d < shape.size(); ++d) s.inner *= shape[d];
    return s;
}

}  // namespace

// ---- reshape -----------------------------------------------------------------------------
// y = x with a new shape of the same numel (one dim may be size_t(-1): inferred)
Tensor reshape(const Tensor& x, const Shape& shape) {
    const Shape in = x.shape();
    Shape target = shape;
    size_t known = 1, inferred = target.size();
    for (size_t d = 0; d < target.size(); ++d) {
        if (target[d] == size_t(-1)) {
            if (inferred != target.size())
                throw std::invalid_argument(
                    "reshape: more than one -1 dimension in target "
                    "shape while reshaping " +
                    shape_str(in));
            inferred = d;
        } else {
            known *= target[d];
        }
    }
    const size_t n = x.numel();
    if (inferred != target.size()) {
        if (known == 0 || n % known != 0)
            throw std::invalid_argument("reshape: cannot infer the -1 dimension reshaping " +
                                        shape_str(in) + " (" + std::to_string(n) +
                                        " elements) with known dims multiplying to " +
                                        std::to_string(known));
        target[inferred] = n / known;
        known = n;
    }
    if (known != n) {
        throw std::invalid_argument("reshape: cannot reshape " + shape_str(in) + " (" +
                                    std::to_string(n) + " elements) to " + shape_str(target) +
                                    " (" + std::to_string(known) + " elements)");
    }
    Array y = Array::from_shape(target);
    std::copy(x.data(), x.data() + n, y.data());
    return make_result(std::move(y), {x}, "reshape", [x = x](TensorImpl& out) mutable {
        // dx = dout read in x's shape (same row-major order)
        Array* g = grad_of(x);
        if (!g) return;
        Real* dx = g->data();
        const Real* dout = out.grad.data();
        for (size_t i = 0, m = g->size(); i < m; ++i) dx[i] += dout[i];
    });
}

// ---- permute / transpose -----------------------------------------------------------------
// y[i_0, …, i_{n−1}] with y.shape[k] = x.shape[axes[k]]   (axes a permutation of 0..n−1)
Tensor permute(const Tensor& x, const std::vector<size_t>& axes) {
    const Shape in = x.shape();
    std::vector<bool> seen(in.size(), false);
    bool valid = axes.size() == in.size();
    for (size_t k = 0; valid && k < axes.size(); ++k) {
        valid = axes[k] < in.size() && !seen[axes[k]];
        if (valid) seen[axes[k]] = true;
    }
    if (!valid) {
        std::string list;
        for (size_t k = 0; k < axes.size(); ++k) list += (k ? ", " : "") + std::to_string(axes[k]);
        throw std::invalid_argument("permute: axes (" + list + ") are not a permutation of 0.." +
                                    std::to_string(static_cast<long>(in.size()) - 1) +
                                    " for shape " + shape_str(in));
    }
    Array y = permute_copy(x.value(), axes);
    std::vector<size_t> inverse(axes.size());
    for (size_t k = 0; k < axes.size(); ++k) inverse[axes[k]] = k;
    return make_result(std::move(y), {x}, "permute", [x = x, inverse](TensorImpl& out) mutable {
        // dx = permute(dout, inverse(axes))   dout:y's shape → dx:x's shape
        Array* g = grad_of(x);
        if (!g) return;
        const Array back = permute_copy(out.grad, inverse);
        Real* dx = g->data();
        const Real* src = back.data();
        for (size_t i = 0, m = g->size(); i < m; ++i) dx[i] += src[i];
    });
}

// y = x with axis0 and axis1 swapped (negative axes count from the end); a permute
Tensor transpose(const Tensor& x, int axis0, int axis1) {
    const Shape in = x.shape();
    const size_t a0 = normalize_axis(axis0, in, "transpose");
    const size_t a1 = normalize_axis(axis1, in, "transpose");
    std::vector<size_t> axes(in.size());
    for (size_t k = 0; k < axes.size(); ++k) axes[k] = k;
    std::swap(axes[a0], axes[a1]);
    return permute(x, axes);
}

// ---- slice / concat ----------------------------------------------------------------------
// y = x[…, start:end, …] along `axis`   x:[outer, rows, inner] → y:[outer, end−start, inner]
Tensor slice(const Tensor& x, int axis, size_t start, size_t end) {
    const Shape in = x.shape();
    const size_t a = normalize_axis(axis, in, "slice");
    if (start >= end || end > in[a])
        throw std::invalid_argument("slice: range [" + std::to_string(start) + ", " +
                                    std::to_string(end) + ") along axis " + std::to_string(axis) +
                                    " is empty or outside shape " + shape_str(in) +
                                    " (need start < end <= " + std::to_string(in[a]) + ")");
    const AxisSplit s = split_at(in, a);
    const size_t take = end - start, block = take * s.inner;
    Shape out_shape = in;
    out_shape[a] = take;
    Array y = Array::from_shape(out_shape);
    const Real* src = x.data();
    Real* dst = y.data();
    for (size_t o = 0; o < s.outer; ++o)
        std::copy(src + (o * s.rows + start) * s.inner,
                  src + (o * s.rows + start) * s.inner + block, dst + o * block);
    return make_result(std::move(y), {x}, "slice",
                       [x = x, s, start, block](TensorImpl& out) mutable {
                           // dx[…, start:end, …] += dout; zero elsewhere   dout:[outer, take,
                           // inner]
                           Array* g = grad_of(x);
                           if (!g) return;
                           Real* dx = g->data();
                           const Real* dout = out.grad.data();
                           for (size_t o = 0; o < s.outer; ++o) {
                               Real* to = dx + (o * s.rows + start) * s.inner;
                               const Real* from = dout + o * block;
                               for (size_t k = 0; k < block; ++k) to[k] += from[k];
                           }
                       });
}

// y = [x_0 | x_1 | …] along `axis`   x_k:[outer, rows_k, inner] → y:[outer, Σ rows_k, inner]
Tensor concat(const std::vector<Tensor>& xs, int axis) {
    if (xs.empty()) throw std::invalid_argument("concat: no tensors given");
    const Shape first = xs[0].shape();
    const size_t a = normalize_axis(axis, first, "concat");
    Shape out_shape = first;
    out_shape[a] = 0;
    for (const Tensor& t : xs) {
        Shape s = t.shape();
        bool match = s.size() == first.size();
        for (size_t d = 0; match && d < s.size(); ++d) match = d == a || s[d] == first[d];
        if (!match)
            throw std::invalid_argument("concat: shapes " + shape_str(first) + " and " +
                                        shape_str(s) + " differ outside axis " +
                                        std::to_string(axis));
        out_shape[a] += s[a];
    }
    const AxisSplit total = split_at(out_shape, a);
    Array y = Array::from_shape(out_shape);
    Real* dst = y.data();
    std::vector<size_t> offsets;  // where each input's rows start along the axis
    size_t row = 0;
    for (const Tensor& t : xs) {
        offsets.push_back(row);
        const size_t block = t.shape()[a] * total.inner;
        const Real* src = t.data();
        for (size_t o = 0; o < total.outer; ++o)
            std::copy(src + o * block, src + (o + 1) * block,
                      dst + (o * total.rows + row) * total.inner);
        row += t.shape()[a];
    }
    return make_result(
        std::move(y), xs, "concat", [xs = xs, a, total, offsets](TensorImpl& out) mutable {
            // dx_k = dout[…, offset_k : offset_k + rows_k, …]   (the gradient is split back)
            const Real* dout = out.grad.data();
            for (size_t k = 0; k < xs.size(); ++k) {
                Array* g = grad_of(xs[k]);
                if (!g) continue;
                const size_t block = xs[k].shape()[a] * total.inner;
                Real* dx = g->data();
                for (size_t o = 0; o < total.outer; ++o) {
                    const Real* from = dout + (o * total.rows + offsets[k]) * total.inner;
                    Real* to = dx + o * block;
                    for (size_t j = 0; j < block; ++j) to[j] += from[j];
                }
            }
        });
}

}  // namespace rf
