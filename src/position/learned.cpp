// Stage 4 — position: learned absolute positions (BERT) and the row-add op they share with
// the sinusoidal table.
//
// Legend: B batch, T sequence length, C hidden size, P table rows (max_positions).
#include <stdexcept>
#include <string>

#include "position/schemes.hpp"

namespace rf {

// out[b, t, :] = x[b, t, :] + table[offset + t, :]   x:[B,T,C] table:[P,C] → [B,T,C]
Tensor add_position_rows(const Tensor& x, const Tensor& table, size_t offset) {
    if (x.dim() != 3 || table.dim() != 2 || x.size(2) != table.size(1))
        throw std::invalid_argument("add_position_rows: x " + shape_str(x.shape()) +
                                    " must be [B, T, C] and table " +
                                    shape_str(table.shape()) + " must be [P, C]");
    const size_t B = x.size(0), T = x.size(1), C = x.size(2);
    if (offset + T > table.size(0))
        throw std::invalid_argument("add_position_rows: rows " + std::to_string(offset) +
                                    " … " + std::to_string(offset + T - 1) +
                                    " are past the table " + shape_str(table.shape()));
    Array y = Array::from_shape(x.value().shape());
    const Real* xs = x.data();
    const Real* p = table.data() + offset * C;
    Real* ys = y.data();
    for (size_t b = 0; b < B; ++b)
        for (size_t i = 0; i < T * C; ++i) ys[b * T * C + i] = xs[b * T * C + i] + p[i];

    return make_result(std::move(y), {x, table}, "add_position_rows", [=](TensorImpl& out) {
        // dx += dout;  dtable[offset + t] += Σ_b dout[b, t]   dout:[B,T,C] dtable:[P,C]
        const Real* g = out.grad.data();
        if (Array* dx = grad_of(out.node->parents[0])) {
            Real* d = dx->data();
            for (size_t i = 0; i < B * T * C; ++i) d[i] += g[i];
        }
        if (Array* dtable = grad_of(out.node->parents[1])) {
            Real* d = dtable->data() + offset * C;
            for (size_t b = 0; b < B; ++b)
                for (size_t i = 0; i < T * C; ++i) d[i] += g[b * T * C + i];
        }
    });
}

LearnedPosition::LearnedPosition(size_t max_positions, size_t hidden, Rng& init_rng) {
    Array w = Array::from_shape({max_positions, hidden});
    for (auto& v : w) v = static_cast<Real>(0.02 * init_rng.normal());
    table_ = Tensor(std::move(w), true);
    table_.set_name("roformer.embeddings.position_embeddings.weight");
}

Tensor LearnedPosition::embed(const Tensor& x, size_t offset) {
    const size_t T = x.dim() >= 2 ? x.size(1) : 0;
    const size_t P = table_.size(0);
    if (offset + T > P)
        throw std::invalid_argument(
            "sequence length " + std::to_string(offset + T) + " exceeds position.max_positions=" +
            std::to_string(P) + "; shorten the sequences or raise position.max_positions (a " +
            "learned table cannot extrapolate)");
    return add_position_rows(x, table_, offset);
}

}  // namespace rf
