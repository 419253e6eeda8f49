// Stage 5 — model: which RoPE frequencies a trained model uses, and which heads attend by
// offset (roformer frequencies; the question of Barbero et al., "Round and Round We Go! What
// makes Rotary Positional Encodings useful?", ICLR 2025, arXiv:2410.06205, §5).
//
// Legend: L layers, H heads, B windows, T tokens, D head size, P = D/2 pairs, i a pair,
//         m a query position, n a key position, δ = n − m a relative offset.
// For each layer and head, from the q and k the layer projects (before any rotation: a
// rotation keeps each pair's length, so these are also the lengths the score sees):
//   q_i(m) = the pair i of q at m (2 dims: which ones is the pairing, pair_dims below)
//   usage_i = mean over windows and allowed (m, n) of |q_i(m)|·|k_i(n)|
//           (allowed: every n for a masked LM, n ≤ m for a causal one) — the most pair i can
//           add to a score, since q_i·R k_i ≤ |q_i|·|k_i|
//   share_i = usage_i / Σ_j usage_j                       (shares of one head sum to 1)
// and from the softmax weights p_mn of the same layer:
//   mass(δ) = mean over windows and queries m of p_{m, m+δ}   (Σ_δ mass(δ) = 1)
// whose largest value says how positional a head is: a head with mass(−1) ≈ 1 reads the
// previous token whatever it is. The layer's own forward then gives the next layer's input,
// as in attention_maps.hpp.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "model/roformer.hpp"

namespace rf {

struct FrequencyUsage {
    size_t layers = 0, heads = 0, pairs = 0, length = 0;
    size_t windows = 0;               // B summed over every batch added
    std::vector<double> product_sum;  // [L, H, P]: Σ |q_i(m)|·|k_i(n)| over allowed (m, n)
    std::vector<double> offset_sum;   // [L, H, 2T−1]: Σ p_{m, m+δ}, index δ + T − 1
    double allowed_pairs = 0;         // the (m, n) counted per window and head

    double mean_product(size_t layer, size_t head, size_t pair) const;  // usage_i
    double share(size_t layer, size_t head, size_t pair) const;         // share_i
    // The most-attended offset δ of a head and its mass(δ).
    std::pair<long, double> top_offset(size_t layer, size_t head) const;
};

// Pair i's two dims in a head of D dims whose first r are rotated: i < r/2 by the pairing
// (interleaved (2i, 2i+1), half (i, i + r/2)); the pass-through dims r … D−1 follow as the
// pairs (r + 2j, r + 2j + 1), j = i − r/2, which turn by nothing.
std::pair<size_t, size_t> pair_dims(size_t pair, size_t head_dim, size_t rotary_dims,
                                    RopePairing pairing);

// Adds Σ_{allowed (m, n)} |q_i(m)|·|k_i(n)| to out[i] for one head.
//   q, k: [T, D] contiguous; out: [D/2]; causal: n ≤ m only, else every n.
// (Σ over m of |q_i(m)| times the prefix sum of |k_i| up to m: O(T·D), not O(T²·D).)
void add_pair_products(const Real* q, const Real* k, size_t T, size_t D, size_t rotary_dims,
                       RopePairing pairing, bool causal, double* out);

// An empty FrequencyUsage for this model at windows of `length` tokens.
FrequencyUsage empty_frequency_usage(const RoFormer& model, size_t length);

// Runs the encoder on one batch ids:[B, T] (no gradients, no dropout) and adds its windows to
// `usage`. Throws std::invalid_argument for linear attention (it forms no p_mn), a scheme
// other than rope, or a length other than usage.length.
void add_frequency_usage(RoFormer& model, const std::vector<int>& ids, size_t batch, size_t length,
                         FrequencyUsage& usage);

}  // namespace rf
