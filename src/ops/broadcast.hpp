// Stage 2 — ops: numpy broadcasting and axis helpers shared by the element-wise, reduction
// and shape ops.
//
// Broadcasting: shapes are right-aligned; an input axis of size 1 (or an axis the input lacks
// on the left) is stretched to the output's size. We never materialise the stretched input:
// each input gets a stride per OUTPUT axis, 0 on stretched axes, and the walkers below visit
// every output element together with the matching offset into each input.
//
// Legend: out = the broadcast (output) shape, in = an input's shape, nd = out.size().
#pragma once

#include <cstddef>
#include <vector>

#include "tensor/tensor.hpp"

namespace rf {

using Strides = std::vector<size_t>;  // one element stride per axis

size_t shape_numel(const Shape& shape);         // product of dims; 1 for a scalar {}
Strides row_major_strides(const Shape& shape);  // [2,3,4] → [12,4,1]

// Output shape of broadcasting a with b; throws std::invalid_argument naming `op` and both shapes.
Shape broadcast_shape(const Shape& a, const Shape& b, const char* op);

// Strides (length out.size()) for reading an input of shape `in` at the output's indices:
// 0 on axes that `in` lacks or has as size 1 and out does not, the row-major stride elsewhere.
// `in` must broadcast to `out`.
Strides broadcast_strides(const Shape& in, const Shape& out);

// dst:in += src:out summed over the axes on which `in` was stretched to `out` (the backward
// of a broadcast). Same-shape inputs take a plain loop.
void accumulate_reduced(Array& dst, const Array& src);
// The same into a fresh zero array of shape `in`.
Array reduce_to_shape(const Array& src, const Shape& in);

// Axis in [-nd, nd) → [0, nd); throws std::invalid_argument naming `op` and the shape.
size_t normalize_axis(int axis, const Shape& shape, const char* op);

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

}  // namespace rf
