// Stage 4 — position: ALiBi (Press et al. 2022), a per-head linear distance penalty on the
// attention scores; here the symmetric bidirectional form for an encoder.
//
// Legend: B batch, H heads, T sequence length; i the query position, j the key position.
//   scores[b, h, i, j] −= slope_h · |i − j|
#include <cmath>
#include <stdexcept>
#include <string>

#include "ops/ops.hpp"
#include "position/schemes.hpp"

namespace rf {

// Geometric slopes 2^(−8h/n), h = 1 … n, for n a power of two.
static std::vector<double> power_of_two_slopes(size_t n) {
    std::vector<double> slopes(n);
    for (size_t h = 1; h <= n; ++h)
        slopes[h - 1] = std::pow(2.0, -8.0 * static_cast<double>(h) / static_cast<double>(n));
    return slopes;
}

std::vector<double> alibi_slopes(size_t num_heads) {
    if (num_heads == 0) throw std::invalid_argument("alibi_slopes: model.num_heads must be > 0");
    size_t n = 1;
    while (n * 2 <= num_heads) n *= 2;  // largest power of two ≤ H
    std::vector<double> slopes = power_of_two_slopes(n);
    if (n == num_heads) return slopes;
    // The remaining H − n heads take every other slope of the 2n-head list,
    // 2^(−4·(2k−1)/n) for k = 1 … H − n.
    const std::vector<double> finer = power_of_two_slopes(2 * n);
    for (size_t k = 0; slopes.size() < num_heads; k += 2) slopes.push_back(finer[k]);
    return slopes;
}

// bias[h, i, j] = −slope_h·|i − j|   → [H,T,T]. Rounded to Real once: s + bias = s − slope·|i−j|.
Tensor alibi_bias(const std::vector<double>& slopes, size_t length) {
    const size_t H = slopes.size(), T = length;
    Array bias = Array::from_shape({H, T, T});
    Real* out = bias.data();
    for (size_t h = 0; h < H; ++h)
        for (size_t i = 0; i < T; ++i)
            for (size_t j = 0; j < T; ++j) {
                const double distance = i > j ? double(i - j) : double(j - i);
                out[(h * T + i) * T + j] = -static_cast<Real>(slopes[h] * distance);
            }
    return Tensor(std::move(bias));
}

// out = scores + bias   scores:[B,H,T,T] → [B,H,T,T]; backward (add's): dscores += dout
static void check_scores(const Tensor& scores, size_t heads) {
    if (scores.dim() != 4 || scores.size(1) != heads || scores.size(2) != scores.size(3))
        throw std::invalid_argument("alibi: scores have shape " + shape_str(scores.shape()) +
                                    ", expected [B, " + std::to_string(heads) +
                                    ", T, T] (one slope per head)");
}

Tensor add_alibi_bias(const Tensor& scores, const std::vector<double>& slopes) {
    check_scores(scores, slopes.size());
    return add(scores, alibi_bias(slopes, scores.size(2)));
}

// The bias is a constant of T: built once per length, not in every layer of every step.
Tensor AlibiPosition::bias_scores(const Tensor& scores) {
    check_scores(scores, slopes_.size());
    const size_t T = scores.size(2);
    if (!bias_.defined() || bias_.size(1) != T) bias_ = alibi_bias(slopes_, T);
    return add(scores, bias_);
}

}  // namespace rf
