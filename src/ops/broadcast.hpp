// Stage 2 — ops: numpy broadcasting and axis helpers shared by the element-wise, reduction
// and shape ops (declared first, defined at the end of this file).
//
// Broadcasting: shapes are right-aligned; an input axis of size 1 (or an axis the input lacks
// on the left) is stretched to the output's size. We never materialise the stretched input:
// each input gets a stride per OUTPUT axis, 0 on stretched axes, and the walkers below visit
// every output element together with the matching offset into each input.
//
// Legend: out = the broadcast (output) shape, in = an input's shape, nd = out.size().
#pragma once

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "tensor/tensor.hpp"

namespace rf {

using Strides = std::vector<size_t>;  // one element stride per axis

inline size_t shape_numel(const Shape& shape);         // product of dims; 1 for a scalar {}
inline Strides row_major_strides(const Shape& shape);  // [2,3,4] → [12,4,1]

// Output shape of broadcasting a with b; throws std::invalid_argument naming `op` and both shapes.
inline Shape broadcast_shape(const Shape& a, const Shape& b, const char* op);

// Strides (length out.size()) for reading an input of shape `in` at the output's indices:
// 0 on axes that `in` lacks or has as size 1 and out does not, the row-major stride elsewhere.
// `in` must broadcast to `out`.
inline Strides broadcast_strides(const Shape& in, const Shape& out);

// dst:in += src:out summed over the axes on which `in` was stretched to `out` (the backward
// of a broadcast). Same-shape inputs take a plain loop.
inline void accumulate_reduced(Array& dst, const Array& src);
// The same into a fresh zero array of shape `in`.
inline Array reduce_to_shape(const Array& src, const Shape& in);

// Axis in [-nd, nd) → [0, nd); throws std::invalid_argument naming `op` and the shape.
inline size_t normalize_axis(int axis, const Shape& shape, const char* op);

// Visit every element of `out` in row-major order: f(i, ja) with i the flat output index and
// ja = Σ_d index_d · stride_a[d]. The innermost axis is a plain strided loop.
template <class F>
void for_each_strided(const Shape& out, const Strides& stride_a, F&& f) {
    const size_t nd = out.size();
    const size_t total = shape_numel(out);
    if (total == 0) return;
    if (nd == 0) {
        f(size_t(0), size_t(0));
        return;
    }
    const size_t inner = out[nd - 1], step_a = stride_a[nd - 1];
    std::vector<size_t> index(nd, 0);
    size_t base_a = 0;
    for (size_t i = 0; i < total; i += inner) {
        size_t ja = base_a;
        for (size_t k = 0; k < inner; ++k, ja += step_a) f(i + k, ja);
        for (size_t d = nd - 1; d-- > 0;) {  // odometer over the outer axes
            if (++index[d] < out[d]) {
                base_a += stride_a[d];
                break;
            }
            base_a -= stride_a[d] * (out[d] - 1);
            index[d] = 0;
        }
    }
}

// Two inputs at once: f(i, ja, jb).
template <class F>
void for_each_broadcast(const Shape& out, const Strides& stride_a, const Strides& stride_b, F&& f) {
    const size_t nd = out.size();
    const size_t total = shape_numel(out);
    if (total == 0) return;
    if (nd == 0) {
        f(size_t(0), size_t(0), size_t(0));
        return;
    }
    const size_t inner = out[nd - 1], step_a = stride_a[nd - 1], step_b = stride_b[nd - 1];
    std::vector<size_t> index(nd, 0);
    size_t base_a = 0, base_b = 0;
    for (size_t i = 0; i < total; i += inner) {
        size_t ja = base_a, jb = base_b;
        for (size_t k = 0; k < inner; ++k, ja += step_a, jb += step_b) f(i + k, ja, jb);
        for (size_t d = nd - 1; d-- > 0;) {
            if (++index[d] < out[d]) {
                base_a += stride_a[d];
                base_b += stride_b[d];
                break;
            }
            base_a -= stride_a[d] * (out[d] - 1);
            base_b -= stride_b[d] * (out[d] - 1);
            index[d] = 0;
        }
    }
}

// ---- the definitions ---------------------------------------------------------------------

inline size_t shape_numel(const Shape& shape) {
    size_t n = 1;
    for (size_t d : shape) n *= d;
    return n;
}

inline Strides row_major_strides(const Shape& shape) {
    Strides strides(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
    return strides;
}

// out[-k] = a[-k] if a[-k] == b[-k] or b[-k] == 1 (or b lacks it), symmetrically for a.
inline Shape broadcast_shape(const Shape& a, const Shape& b, const char* op) {
    const size_t nd = std::max(a.size(), b.size());
    Shape out(nd);
    for (size_t k = 0; k < nd; ++k) {  // k-th axis from the right
        const size_t da = k < a.size() ? a[a.size() - 1 - k] : 1;
        const size_t db = k < b.size() ? b[b.size() - 1 - k] : 1;
        if (da != db && da != 1 && db != 1)
            throw std::invalid_argument(
                std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                " cannot be broadcast (right-aligned dims must be equal or 1)");
        out[nd - 1 - k] = da == 1 ? db : da;
    }
    return out;
}

inline Strides broadcast_strides(const Shape& in, const Shape& out) {
    const Strides own = row_major_strides(in);
    const size_t offset = out.size() - in.size();  // leading axes `in` lacks
    Strides strides(out.size(), 0);
    for (size_t d = 0; d < in.size(); ++d)
        strides[offset + d] = (in[d] == 1 && out[offset + d] != 1) ? 0 : own[d];
    return strides;
}

inline void accumulate_reduced(Array& dst, const Array& src) {
    Real* to = dst.data();
    const Real* from = src.data();
    if (dst.shape() == src.shape()) {
        for (size_t i = 0, n = src.size(); i < n; ++i) to[i] += from[i];
        return;
    }
    const Shape in(dst.shape().begin(), dst.shape().end());
    const Shape out(src.shape().begin(), src.shape().end());
    for_each_strided(out, broadcast_strides(in, out),
                     [&](size_t i, size_t j) { to[j] += from[i]; });
}

inline Array reduce_to_shape(const Array& src, const Shape& in) {
    Array dst = Array::from_shape(in);
    dst.fill(Real(0));
    accumulate_reduced(dst, src);
    return dst;
}

inline size_t normalize_axis(int axis, const Shape& shape, const char* op) {
    const int nd = static_cast<int>(shape.size());
    const int a = axis < 0 ? axis + nd : axis;
    if (a < 0 || a >= nd)
        throw std::invalid_argument(std::string(op) + ": axis " + std::to_string(axis) +
                                    " is out of range for shape " + shape_str(shape) + " (use -" +
                                    std::to_string(nd) + " .. " + std::to_string(nd - 1) + ")");
    return static_cast<size_t>(a);
}

}  // namespace rf
