// Room — experiments: RoPE's relative property in f32, bf16 and double (see
// rope_precision.hpp). A measurement tool: its own small rotation, in each precision, beside a
// double reference — not the model's kernel (src/position/rope.cpp), which turns in one
// precision only.
//
// Legend: G groups, T tokens, D head size, a a pair, i a query token, j a key token (i ≥ j),
//         p the shift, θ_a = base^(−2a/D).
#include "experiments/rope_precision.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "position/rope_angles.hpp"
#include "tensor/format.hpp"

namespace rf {

float round_to_bf16(float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    if ((bits & 0x7f800000u) == 0x7f800000u) {  // inf or NaN: keep; a NaN stays a (quiet) NaN
        if (bits & 0x007fffffu) bits |= 0x00400000u;
        bits &= 0xffff0000u;
    } else {
        // Add half of the dropped part's unit, minus one unless the kept part is odd: a tie
        // (dropped bits exactly 0x8000) rounds to the even kept value. A carry out of the
        // fraction moves to the next exponent (up to inf), as rounding should.
        const uint32_t kept_is_odd = (bits >> 16) & 1u;
        bits += 0x7fffu + kept_is_odd;
        bits &= 0xffff0000u;
    }
    float y;
    std::memcpy(&y, &bits, sizeof y);
    return y;
}

const char* rope_precision_case_name(RopePrecisionCase c) {
    switch (c) {
        case RopePrecisionCase::f32: return "f32";
        case RopePrecisionCase::bf16_before_rotation: return "bf16_before_rotation";
        case RopePrecisionCase::bf16_after_rotation: return "bf16_after_rotation";
        case RopePrecisionCase::angle_f32: return "angle_f32";
        case RopePrecisionCase::angle_bf16: return "angle_bf16";
        case RopePrecisionCase::bf16_rotation: return "bf16_rotation";
    }
    throw std::logic_error("internal: an unnamed RopePrecisionCase");
}

std::vector<RopePrecisionCase> all_rope_precision_cases() {
    return {RopePrecisionCase::f32,           RopePrecisionCase::bf16_before_rotation,
            RopePrecisionCase::bf16_after_rotation, RopePrecisionCase::angle_f32,
            RopePrecisionCase::angle_bf16,    RopePrecisionCase::bf16_rotation};
}

namespace {

void check_geometry(const RopeGeometry& g) {
    if (g.head_dim < 2 || g.head_dim % 2 != 0)
        throw std::invalid_argument("rope precision: head size " + std::to_string(g.head_dim) +
                                    " must be even and ≥ 2 (RoPE turns pairs of dims)");
    if (!(g.base > 0.0) || !std::isfinite(g.base))
        throw std::invalid_argument("rope precision: the base must be a finite number > 0");
}

// Pair a's two dims: interleaved (2a, 2a+1), half (a, a + D/2).
std::pair<size_t, size_t> pair_of(size_t a, size_t D, RopePairing pairing) {
    if (pairing == RopePairing::interleaved) return {2 * a, 2 * a + 1};
    return {a, a + D / 2};
}

double theta(size_t a, const RopeGeometry& g) {  // θ_a = base^(−2a/D), in double
    return std::pow(g.base, -2.0 * static_cast<double>(a) / static_cast<double>(g.head_dim));
}

// y = R_m x in double.   x, y: [D]
void rotate_in_double(const float* x, size_t m, const RopeGeometry& g, double* y) {
    for (size_t a = 0; a < g.head_dim / 2; ++a) {
        const auto [lo, hi] = pair_of(a, g.head_dim, g.pairing);
        const double angle = static_cast<double>(m) * theta(a, g);
        const double c = std::cos(angle), s = std::sin(angle);
        y[lo] = c * x[lo] - s * x[hi];
        y[hi] = s * x[lo] + c * x[hi];
    }
}

// cos and sin of pair a's angle at position m, as the case holds them.
std::pair<float, float> cos_sin(size_t m, size_t a, const RopeGeometry& g, RopePrecisionCase c) {
    if (c == RopePrecisionCase::angle_f32) {
        const float angle = static_cast<float>(m) * static_cast<float>(theta(a, g));
        return {std::cos(angle), std::sin(angle)};
    }
    if (c == RopePrecisionCase::angle_bf16) {
        const float angle = round_to_bf16(round_to_bf16(static_cast<float>(m)) *
                                          round_to_bf16(static_cast<float>(theta(a, g))));
        return {std::cos(angle), std::sin(angle)};
    }
    const double angle = static_cast<double>(m) * theta(a, g);  // the project's table
    const float cs = static_cast<float>(std::cos(angle)), sn = static_cast<float>(std::sin(angle));
    if (c == RopePrecisionCase::bf16_rotation) return {round_to_bf16(cs), round_to_bf16(sn)};
    return {cs, sn};
}

// y = R_m x as the case computes it.   x, y: [D] floats (bf16 values held in floats)
void rotate_as(const float* x, size_t m, const RopeGeometry& g, RopePrecisionCase c, float* y) {
    const bool round_in = c == RopePrecisionCase::bf16_before_rotation ||
                          c == RopePrecisionCase::bf16_rotation;
    const auto in = [&](size_t d) { return round_in ? round_to_bf16(x[d]) : x[d]; };
    for (size_t a = 0; a < g.head_dim / 2; ++a) {
        const auto [lo, hi] = pair_of(a, g.head_dim, g.pairing);
        const auto [cs, sn] = cos_sin(m, a, g, c);
        const float x0 = in(lo), x1 = in(hi);
        if (c == RopePrecisionCase::bf16_rotation) {  // every product and sum rounded to bf16
            y[lo] = round_to_bf16(round_to_bf16(cs * x0) - round_to_bf16(sn * x1));
            y[hi] = round_to_bf16(round_to_bf16(sn * x0) + round_to_bf16(cs * x1));
        } else {
            y[lo] = cs * x0 - sn * x1;
            y[hi] = sn * x0 + cs * x1;
        }
    }
    if (c == RopePrecisionCase::bf16_after_rotation)
        for (size_t d = 0; d < g.head_dim; ++d) y[d] = round_to_bf16(y[d]);
}

// ⟨a, b⟩ summed in f32, as a product with f32 accumulation does (bf16 × bf16 is exact in f32).
double dot_f32(const float* a, const float* b, size_t D) {
    float sum = 0.0f;
    for (size_t d = 0; d < D; ++d) sum += a[d] * b[d];
    return sum;
}

double dot_double(const double* a, const double* b, size_t D) {
    double sum = 0.0;
    for (size_t d = 0; d < D; ++d) sum += a[d] * b[d];
    return sum;
}

}  // namespace

double rope_precision_score(const float* q, const float* k, size_t m, size_t n,
                            const RopeGeometry& geometry, RopePrecisionCase c) {
    check_geometry(geometry);
    std::vector<float> rq(geometry.head_dim), rk(geometry.head_dim);
    rotate_as(q, m, geometry, c, rq.data());
    rotate_as(k, n, geometry, c, rk.data());
    return dot_f32(rq.data(), rk.data(), geometry.head_dim);
}

double rope_reference_score(const float* q, const float* k, size_t m, size_t n,
                            const RopeGeometry& geometry) {
    check_geometry(geometry);
    std::vector<double> rq(geometry.head_dim), rk(geometry.head_dim);
    rotate_in_double(q, m, geometry, rq.data());
    rotate_in_double(k, n, geometry, rk.data());
    return dot_double(rq.data(), rk.data(), geometry.head_dim);
}

RopePrecisionVectors random_rope_vectors(size_t groups, size_t tokens, size_t head_dim,
                                         uint64_t seed) {
    RopePrecisionVectors v{groups, tokens, head_dim, {}, {}};
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    v.q.resize(groups * tokens * head_dim);
    v.k.resize(v.q.size());
    for (float& x : v.q) x = static_cast<float>(normal(rng));
    for (float& x : v.k) x = static_cast<float>(normal(rng));
    return v;
}

BaseRange rope_precision_base_range(size_t head_dim, size_t largest) {
    // the one rule on RoPE's angles (position/rope_angles.hpp), no scaling, float32's range
    const RopeBaseRange r =
        rope_angle_base_range(head_dim, static_cast<double>(largest), 1.0, 1.0, kFloat32Angles);
    return {r.lo, r.hi};
}

namespace {

// The one-line refusal of a base outside rope_precision_base_range, before any work.
void check_base(const RopeGeometry& g, size_t largest) {
    const BaseRange range = rope_precision_base_range(g.head_dim, largest);
    if (g.base >= range.lo && g.base <= range.hi) return;
    const size_t last = g.head_dim / 2 - 1;
    const double theta_last = theta(last, g);
    const std::string what =
        "--base " + format_shortest(g.base) + " makes the last pair's θ_" + std::to_string(last) +
        " = base^(-" + std::to_string(2 * last) + "/" + std::to_string(g.head_dim) +
        ") = " + format_printf("%.3g", theta_last) +
        (g.base < range.lo ? ", and position " + std::to_string(largest) + " turns it by " +
                                 format_printf("%.3g", theta_last * double(largest)) +
                                 " rad, past float32's and bf16's largest number (the f32 and "
                                 "bf16 angles would be inf, every error nan)"
                           : ", below float32's smallest normal number 1.18e-38 (the f32 and "
                             "bf16 cases would turn that pair by 0)");
    throw std::invalid_argument(what + "; with head size " + std::to_string(g.head_dim) +
                                " and positions up to " + std::to_string(largest) +
                                " (the last shift plus the window) give --base from " +
                                format_printf("%.3g", range.lo) + " to " +
                                format_printf("%.3g", range.hi) + " (the paper uses 10000)");
}

}  // namespace

std::vector<RopePrecisionRow> measure_rope_precision(const RopePrecisionVectors& v,
                                                     const RopeGeometry& geometry,
                                                     const std::vector<size_t>& positions,
                                                     const std::vector<RopePrecisionCase>& cases) {
    check_geometry(geometry);
    const size_t G = v.groups, T = v.tokens, D = geometry.head_dim;
    if (v.head_dim != D || v.q.size() != G * T * D || v.k.size() != G * T * D || T == 0 || G == 0)
        throw std::invalid_argument("rope precision: q and k must be [groups, tokens, " +
                                    std::to_string(D) + "] with groups, tokens ≥ 1");
    size_t largest = T - 1;
    for (size_t p : positions) largest = std::max(largest, p + T - 1);
    check_base(geometry, largest);
    // The reference g(i − j) = ⟨R_i q_i, R_j k_j⟩ in double, per (g, i, j), i ≥ j.
    std::vector<double> reference(G * T * T, 0.0);
    double scale = 0, first_scale = 0;
    {
        std::vector<double> rq(T * D), rk(T * D);
        for (size_t g = 0; g < G; ++g) {
            for (size_t t = 0; t < T; ++t) {
                rotate_in_double(&v.q[(g * T + t) * D], t, geometry, &rq[t * D]);
                rotate_in_double(&v.k[(g * T + t) * D], t, geometry, &rk[t * D]);
            }
            for (size_t i = 0; i < T; ++i)
                for (size_t j = 0; j <= i; ++j) {
                    const double s = dot_double(&rq[i * D], &rk[j * D], D);
                    reference[(g * T + i) * T + j] = s;
                    scale += std::fabs(s);
                    if (j == 0) first_scale += std::fabs(s);
                }
        }
    }
    const double pairs = static_cast<double>(G) * static_cast<double>(T * (T + 1) / 2);
    const double first_pairs = static_cast<double>(G * T);
    const double other_pairs = pairs - first_pairs;

    std::vector<RopePrecisionRow> rows;
    std::vector<float> rq(T * D), rk(T * D), bq(T * D), bk(T * D);
    std::vector<double> baseline(G * T * T);
    for (RopePrecisionCase c : cases) {
        // s(i, j) at shift 0, this case's own precision: what every shift is held against.
        for (size_t g = 0; g < G; ++g) {
            for (size_t t = 0; t < T; ++t) {
                rotate_as(&v.q[(g * T + t) * D], t, geometry, c, &bq[t * D]);
                rotate_as(&v.k[(g * T + t) * D], t, geometry, c, &bk[t * D]);
            }
            for (size_t i = 0; i < T; ++i)
                for (size_t j = 0; j <= i; ++j)
                    baseline[(g * T + i) * T + j] = dot_f32(&bq[i * D], &bk[j * D], D);
        }
        for (size_t p : positions) {
            double shift = 0, ref = 0, first = 0;
            for (size_t g = 0; g < G; ++g) {
                for (size_t t = 0; t < T; ++t) {
                    rotate_as(&v.q[(g * T + t) * D], p + t, geometry, c, &rq[t * D]);
                    rotate_as(&v.k[(g * T + t) * D], p + t, geometry, c, &rk[t * D]);
                }
                for (size_t i = 0; i < T; ++i)
                    for (size_t j = 0; j <= i; ++j) {
                        const size_t at = (g * T + i) * T + j;
                        const double s = dot_f32(&rq[i * D], &rk[j * D], D);
                        const double moved = std::fabs(s - baseline[at]);
                        shift += moved;
                        ref += std::fabs(s - reference[at]);
                        if (j == 0) first += moved;
                    }
            }
            RopePrecisionRow row;
            row.pairing = geometry.pairing;
            row.precision = c;
            row.position = p;
            row.shift_error = shift / pairs;
            row.reference_error = ref / pairs;
            row.first_token_error = first / first_pairs;
            row.other_tokens_error = other_pairs > 0 ? (shift - first) / other_pairs : 0.0;
            row.score_scale = scale / pairs;
            row.first_token_scale = first_scale / first_pairs;
            // A result, never a nan printed as one (check_base keeps the angles finite; this is
            // what is left: scores too large for float32, or q and k all zero).
            for (const double x : {row.shift_error, row.reference_error, row.first_token_error,
                                   row.other_tokens_error, row.score_scale})
                if (!std::isfinite(x) || row.score_scale == 0)
                    throw std::runtime_error(
                        std::string("rope precision: case ") + rope_precision_case_name(c) +
                        " at position " + std::to_string(p) +
                        (row.score_scale == 0 ? " has no score to measure (q or k all 0)"
                                              : " gives a non-finite error (scores past float32)") +
                        "; use other vectors, or the defaults of --head-dim and --base");
            rows.push_back(row);
        }
    }
    return rows;
}

std::vector<size_t> log_spaced_positions(size_t max_position) {
    std::vector<size_t> out{0};
    for (int k = 0;; ++k) {
        const double p = std::round(std::pow(2.0, 0.5 * k));
        if (p > static_cast<double>(max_position)) break;
        const size_t position = static_cast<size_t>(p);
        if (position != out.back()) out.push_back(position);
    }
    if (out.back() != max_position) out.push_back(max_position);
    return out;
}

}  // namespace rf
