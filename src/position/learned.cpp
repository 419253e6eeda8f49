// Stage 4 — position: learned absolute positions (BERT) and the row-add op they share with
// the sinusoidal table.
//
// Legend: B batch, T sequence length, C hidden size, P table rows (max_positions).
#include <stdexcept>
#include <string>

#include "ops/ops.hpp"
#include "position/schemes.hpp"

namespace rf {

// out[b, t, :] = x[b, t, :] + table[offset + t, :]   x:[B,T,C] table:[P,C] → [B,T,C]
// Built from the ops stage: a slice of the table's rows, added with broadcasting over B.
// Backward (theirs): dx += dout; dtable[offset + t] += Σ_b dout[b, t].
Tensor add_position_rows(const Tensor& x, const Tensor& table, size_t offset) {
    if (x.dim() != 3 || table.dim() != 2 || x.size(2) != table.size(1))
        throw std::invalid_argument("add_position_rows: x " + shape_str(x.shape()) +
                                    " must be [B, T, C] and table " + shape_str(table.shape()) +
                                    " must be [P, C]");
    const size_t T = x.size(1);
    if (offset + T > table.size(0))
        throw std::invalid_argument("add_position_rows: rows " + std::to_string(offset) + " … " +
                                    std::to_string(offset + T - 1) + " are past the table " +
                                    shape_str(table.shape()));
    return add(x, slice(table, 0, offset, offset + T));
}

std::string sequence_too_long_message(size_t length, size_t max_length) {
    return "sequence length " + std::to_string(length) +
           " exceeds position.max_positions=" + std::to_string(max_length) +
           "; shorten the sequences or raise position.max_positions " +
           "(a learned table cannot extrapolate)";
}

LearnedPosition::LearnedPosition(size_t max_positions, size_t hidden, Rng& init_rng) {
    Array w = Array::from_shape({max_positions, hidden});
    for (auto& v : w) v = static_cast<Real>(0.02 * init_rng.normal());
    table_ = Tensor(std::move(w), true);
    table_.set_name("roformer.embeddings.position_embeddings.weight");
}

Tensor LearnedPosition::embed(const Tensor& x, size_t offset) {
    const size_t T = x.dim() >= 2 ? x.size(1) : 0;
    if (offset + T > max_length())
        throw std::invalid_argument(sequence_too_long_message(offset + T, max_length()));
    return add_position_rows(x, table_, offset);
}

}  // namespace rf
