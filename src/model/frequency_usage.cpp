// Stage 5 — model: RoPE frequency usage and offset attention (see frequency_usage.hpp).
//
// Legend: L layers, H heads, B windows, T tokens, D head size, P = D/2 pairs, r rotary dims.
#include "model/frequency_usage.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace rf {

double FrequencyUsage::mean_product(size_t layer, size_t head, size_t pair) const {
    const double count = allowed_pairs * static_cast<double>(windows);
    return count > 0 ? product_sum[(layer * heads + head) * pairs + pair] / count : 0.0;
}

double FrequencyUsage::share(size_t layer, size_t head, size_t pair) const {
    double total = 0.0;
    for (size_t i = 0; i < pairs; ++i) total += product_sum[(layer * heads + head) * pairs + i];
    return total > 0 ? product_sum[(layer * heads + head) * pairs + pair] / total : 0.0;
}

std::pair<long, double> FrequencyUsage::top_offset(size_t layer, size_t head) const {
    const size_t offsets = 2 * length - 1;
    const double* mass = offset_sum.data() + (layer * heads + head) * offsets;
    size_t best = 0;
    for (size_t d = 1; d < offsets; ++d)
        if (mass[d] > mass[best]) best = d;
    const double rows = static_cast<double>(windows * length);
    return {static_cast<long>(best) - static_cast<long>(length) + 1,
            rows > 0 ? mass[best] / rows : 0.0};
}

std::pair<size_t, size_t> pair_dims(size_t pair, size_t head_dim, size_t rotary_dims,
                                    RopePairing pairing) {
    const size_t h = rotary_dims / 2;
    if (pair >= head_dim / 2) throw std::logic_error("internal: pair_dims past the head");
    if (pair >= h) return {rotary_dims + 2 * (pair - h), rotary_dims + 2 * (pair - h) + 1};
    if (pairing == RopePairing::interleaved) return {2 * pair, 2 * pair + 1};
    return {pair, pair + h};
}

// out[i] += Σ_m |q_i(m)| · Σ_{n allowed for m} |k_i(n)|   q, k:[T, D]
void add_pair_products(const Real* q, const Real* k, size_t T, size_t D, size_t rotary_dims,
                       RopePairing pairing, bool causal, double* out) {
    const auto length = [](const Real* row, std::pair<size_t, size_t> dims) {
        return std::hypot(static_cast<double>(row[dims.first]),
                          static_cast<double>(row[dims.second]));
    };
    for (size_t i = 0; i < D / 2; ++i) {
        const std::pair<size_t, size_t> dims = pair_dims(i, D, rotary_dims, pairing);
        double all_keys = 0.0;
        for (size_t n = 0; n < T; ++n) all_keys += length(k + n * D, dims);
        double keys_so_far = 0.0, sum = 0.0;
        for (size_t m = 0; m < T; ++m) {
            keys_so_far += length(k + m * D, dims);  // n ≤ m
            sum += length(q + m * D, dims) * (causal ? keys_so_far : all_keys);
        }
        out[i] += sum;
    }
}

FrequencyUsage empty_frequency_usage(const RoFormer& model, size_t length) {
    FrequencyUsage u;
    u.layers = model.layers().size();
    u.heads = model.config().num_heads;
    u.pairs = attention_head_size(model.config().hidden, u.heads) / 2;
    u.length = length;
    u.product_sum.assign(u.layers * u.heads * u.pairs, 0.0);
    u.offset_sum.assign(u.layers * u.heads * (2 * length - 1), 0.0);
    const double T = static_cast<double>(length);
    u.allowed_pairs = model.config().causal ? T * (T + 1) / 2 : T * T;
    return u;
}

void add_frequency_usage(RoFormer& model, const std::vector<int>& ids, size_t batch, size_t length,
                         FrequencyUsage& usage) {
    if (model.config().attention == AttentionKind::linear)
        throw std::invalid_argument(
            "model.attention = linear forms no attention weights p_mn; the frequency usage "
            "needs a softmax-attention run");
    const PositionConfig& position = model.position_config();
    if (position.scheme != PositionKind::rope)
        throw std::invalid_argument(
            std::string("position.scheme = ") + enum_name(position.scheme) +
            " has no RoPE frequencies; use a run with position.scheme = rope");
    if (length != usage.length || length == 0 || ids.size() != batch * length)
        throw std::invalid_argument("frequency usage: " + std::to_string(ids.size()) +
                                    " ids for windows of " + std::to_string(length) +
                                    " tokens (the statistics were started at " +
                                    std::to_string(usage.length) + ")");
    const size_t H = usage.heads, T = length, D = 2 * usage.pairs;
    const size_t r = rope_rotary_dims(position.rotary_fraction, D);
    const bool causal = model.config().causal;
    NoGradGuard no_grad;
    Tensor h = model.embed(ids, batch, T, false);  // [B,T,C]
    Rng unused(0);                                 // dropout is off: training = false
    for (size_t l = 0; l < usage.layers; ++l) {
        const EncoderLayer& layer = model.layers()[l];
        PositionScheme& layer_position = model.layer_position(l);  // `none` in a NoPE layer
        SelfAttention::Heads heads = layer.attention.project(h);   // q, k:[B,H,T,D], unrotated
        for (size_t b = 0; b < batch; ++b)
            for (size_t head = 0; head < H; ++head) {
                const size_t at = (b * H + head) * T * D;
                add_pair_products(heads.q.data() + at, heads.k.data() + at, T, D, r,
                                  position.pairing, causal,
                                  usage.product_sum.data() + (l * H + head) * usage.pairs);
            }
        layer_position.rotate(heads.q, heads.k, heads.v);
        const Tensor p = layer.attention.softmax_probabilities(heads, layer_position);
        for (size_t b = 0; b < batch; ++b)  // p:[B,H,T,T] → mass by δ = n − m
            for (size_t head = 0; head < H; ++head) {
                const Real* rows = p.data() + (b * H + head) * T * T;
                double* mass = usage.offset_sum.data() + (l * H + head) * (2 * T - 1);
                for (size_t m = 0; m < T; ++m)
                    for (size_t n = 0; n < T; ++n) mass[n + T - 1 - m] += rows[m * T + n];
            }
        h = layer.forward(h, layer_position, false, Real(0), unused);
    }
    usage.windows += batch;
}

}  // namespace rf
