// Stage 2 — ops: numpy broadcasting and axis helpers (see broadcast.hpp).
#include "ops/broadcast.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rf {

size_t shape_numel(const Shape& shape) {
    size_t n = 1;
    for (size_t d : shape) n *= d;
    return n;
}

Strides row_major_strides(const Shape& shape) {
    Strides strides(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
    return strides;
}

// out[-k] = a[-k] if a[-k] == b[-k] or b[-k] == 1 (or b lacks it), symmetrically for a.
Shape broadcast_shape(const Shape& a, const Shape& b, const char* op) {
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

Strides broadcast_strides(const Shape& in, const Shape& out) {
    const Strides own = row_major_strides(in);
    const size_t offset = out.size() - in.size();  // leading axes `in` lacks
    Strides strides(out.size(), 0);
    for (size_t d = 0; d < in.size(); ++d)
        strides[offset + d] = (in[d] == 1 && out[offset + d] != 1) ? 0 : own[d];
    return strides;
}

void accumulate_reduced(Array& dst, const Array& src) {
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

Array reduce_to_shape(const Array& src, const Shape& in) {
    Array dst = Array::from_shape(in);
    dst.fill(Real(0));
    accumulate_reduced(dst, src);
    return dst;
}

size_t normalize_axis(int axis, const Shape& shape, const char* op) {
    const int nd = static_cast<int>(shape.size());
    const int a = axis < 0 ? axis + nd : axis;
    if (a < 0 || a >= nd)
        throw std::invalid_argument(std::string(op) + ": axis " + std::to_string(axis) +
                                    " is out of range for shape " + shape_str(shape) + " (use -" +
                                    std::to_string(nd) + " .. " + std::to_string(nd - 1) + ")");
    return static_cast<size_t>(a);
}

}  // namespace rf
