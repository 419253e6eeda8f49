// Room — experiments: what bfloat16 does to RoPE's relative property (roformer
// rope-precision; Wang et al. 2024, "When Precision Meets Position: BFloat16 Breaks Down RoPE
// in Long-Context Training", arXiv:2411.13476).
//
// Legend: G groups (heads, or draws of random vectors), T tokens of a window, D head size,
//         i a query token, j a key token (i ≥ j), p the shift (where the window starts),
//         θ_a = base^(−2a/D) for pair a = 0 … D/2−1 (the paper's θ; docs/rope.md §2).
// RoPE promises s(m, n) = ⟨R_m q, R_n k⟩ = g(q, k, m − n): moving a whole window from
// positions 0 … T−1 to p … p+T−1 changes no score. Computed in finite precision it does, a
// little; this file measures how much, for one precision "case" at a time:
//   f32                   the angle m·θ in double, cos/sin rounded to f32, rotation and
//                         product in f32 — what src/position/rope.cpp does
//   bf16_before_rotation  q and k rounded to bf16, then as f32
//   bf16_after_rotation   as f32, then the rotated q and k rounded to bf16 and multiplied
//                         exactly, summed in f32: a bf16 product of f32-rotated q and k
//   angle_f32             the angle computed in f32, f32(m)·f32(θ), then as f32
//   angle_bf16            the angle a bf16 product makes: bf16(bf16(m)·bf16(θ)), then as f32
//   bf16_rotation         q, k, cos and sin in bf16 and every step of the rotation rounded to
//                         bf16 (a model run in bf16 end to end), the product summed in f32
// against a reference in double. Per shift p and case:
//   shift error      mean over (g, i ≥ j) of |s(p+i, p+j) − s(i, j)|  (same case both times)
//   reference error  mean over (g, i ≥ j) of |s(p+i, p+j) − g(i − j)|  (g: double, p = 0)
//   first-token and other-token errors: the shift error over the pairs with key j = 0 only,
//   and over those with j ≥ 1 (the paper finds the first token deviates most).
// bf16 here is software: the f32 bits rounded to their top 16 (round to nearest, ties to
// even), so it runs on any CPU and gives what bf16 hardware gives for the same inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "position/position.hpp"  // RopePairing

namespace rf {

// x rounded to the nearest bfloat16 (ties to even), returned as the float it equals: the sign,
// the 8 exponent bits and the top 7 fraction bits of x. NaN stays NaN (quiet), ±inf stays,
// a value past the largest bf16 becomes ±inf, subnormals round like any other value.
float round_to_bf16(float x);

enum class RopePrecisionCase {
    f32,
    bf16_before_rotation,
    bf16_after_rotation,
    angle_f32,
    angle_bf16,
    bf16_rotation,
};
const char* rope_precision_case_name(RopePrecisionCase c);
std::vector<RopePrecisionCase> all_rope_precision_cases();  // in the order above

// The heads' geometry: D (even) and the base of θ_a = base^(−2a/D), every pair rotated.
struct RopeGeometry {
    size_t head_dim = 32;
    double base = 10000.0;
    RopePairing pairing = RopePairing::interleaved;
};

// s = ⟨R_m q, R_n k⟩ computed as `c` says (q, k: [D]).
double rope_precision_score(const float* q, const float* k, size_t m, size_t n,
                            const RopeGeometry& geometry, RopePrecisionCase c);
// The same in double throughout: the reference.
double rope_reference_score(const float* q, const float* k, size_t m, size_t n,
                            const RopeGeometry& geometry);

// The vectors measured: q, k [G, T, D], the token i of group g at (g·T + i)·D.
struct RopePrecisionVectors {
    size_t groups = 0, tokens = 0, head_dim = 0;
    std::vector<float> q, k;
};
// G·T unit-variance normal vectors for q and for k, from `seed`.
RopePrecisionVectors random_rope_vectors(size_t groups, size_t tokens, size_t head_dim,
                                         uint64_t seed);

struct RopePrecisionRow {
    RopePairing pairing = RopePairing::interleaved;
    RopePrecisionCase precision = RopePrecisionCase::f32;
    size_t position = 0;            // p, the shift
    double shift_error = 0;         // mean |s(p+i, p+j) − s(i, j)|, i ≥ j
    double reference_error = 0;     // mean |s(p+i, p+j) − g(i − j)|
    double first_token_error = 0;   // the shift error over j = 0
    double other_tokens_error = 0;  // the shift error over j ≥ 1 (0 when T = 1)
    double score_scale = 0;         // mean |g(i − j)| over every pair measured
    double first_token_scale = 0;   // mean |g(i − 0)| over the pairs with j = 0
};

// The bases whose angles every case can hold, for head size D and positions up to `largest`
// (the last shift + the window's last token): with E = (D − 2)/D, the last pair's θ = base^(−E)
//   base < 1: θ > 1, and largest · θ must stay ≤ 2^127, half float32's and bf16's largest
//             number (bf16's rounding of m, θ and their product never reaches inf there);
//   base > 1: θ < 1, and θ must stay ≥ 2^−126, float32's smallest normal number (below it the
//             f32 and bf16 cases turn that pair by a subnormal or by 0).
// {lo, hi} with lo ≤ base ≤ hi; every base when D = 2 (θ_0 = 1).
struct BaseRange {
    double lo = 0, hi = 0;
};
BaseRange rope_precision_base_range(size_t head_dim, size_t largest);

// Every (case, position) for one geometry. positions: the shifts p (0 gives shift error 0).
// Throws std::invalid_argument (one line, naming --base and the range above) for a base whose
// angles would overflow or underflow: never a row of nan.
std::vector<RopePrecisionRow> measure_rope_precision(const RopePrecisionVectors& vectors,
                                                     const RopeGeometry& geometry,
                                                     const std::vector<size_t>& positions,
                                                     const std::vector<RopePrecisionCase>& cases);

// 0, then round(2^(k/2)) for k = 0, 1, 2, … while ≤ max_position (duplicates dropped), then
// max_position itself: the shifts, log-spaced.
std::vector<size_t> log_spaced_positions(size_t max_position);

}  // namespace rf
