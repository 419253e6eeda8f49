// Stage 8 tests — what bf16 does to RoPE's relative property (src/experiments/rope_precision.hpp;
// `roformer rope-precision`; Wang et al. 2024, arXiv:2411.13476): the software bf16 rounding is
// round-to-nearest-even on every kind of float; the shift of a window moves no score beyond
// rounding error in double and f32; rounding the rotated q and k to bf16 moves scores by an
// amount bounded at every position; what grows with position is an angle held in low precision.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "experiments/rope_precision.hpp"

using rf::RopePrecisionCase;

namespace {

float from_bits(uint32_t bits) {
    float x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
}

uint32_t bits_of(float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits;
}

uint32_t bf16_bits(uint32_t bits) { return bits_of(rf::round_to_bf16(from_bits(bits))); }

// The nearest of the two bf16 neighbours of a finite x, by distances in double; a tie goes to
// the one whose last kept bit is 0. (Not the bit trick of round_to_bf16: a second route.)
uint32_t nearest_bf16_by_distance(uint32_t bits) {
    const uint32_t below = bits & 0xffff0000u, above = below + 0x10000u;
    const double x = from_bits(bits), lo = from_bits(below);
    // `above` may be ±inf (past the largest bf16): then the rounding boundary is the midpoint
    // of the largest bf16 and the first value past it, 2^128 in magnitude.
    const double hi = (above & 0x7f800000u) == 0x7f800000u ? std::copysign(std::ldexp(1.0, 128), x)
                                                           : double(from_bits(above));
    const double d_lo = std::fabs(x - lo), d_hi = std::fabs(hi - x);
    if (d_lo < d_hi) return below;
    if (d_hi < d_lo) return above;
    return (below & 0x10000u) ? above : below;
}

// mean over the (g, i ≥ j) pairs of |q_i|·|k_j|: the scale of every rounding bound below.
double mean_norm_product(const rf::RopePrecisionVectors& v) {
    const size_t D = v.head_dim, T = v.tokens;
    double sum = 0, count = 0;
    for (size_t g = 0; g < v.groups; ++g)
        for (size_t i = 0; i < T; ++i)
            for (size_t j = 0; j <= i; ++j) {
                double qq = 0, kk = 0;
                for (size_t d = 0; d < D; ++d) {
                    qq += double(v.q[(g * T + i) * D + d]) * v.q[(g * T + i) * D + d];
                    kk += double(v.k[(g * T + j) * D + d]) * v.k[(g * T + j) * D + d];
                }
                sum += std::sqrt(qq * kk);
                count += 1;
            }
    return sum / count;
}

double mean_shift_error(const std::vector<rf::RopePrecisionRow>& rows, RopePrecisionCase c,
                        size_t from, size_t to) {
    double sum = 0, count = 0;
    for (const rf::RopePrecisionRow& r : rows)
        if (r.precision == c && r.position >= from && r.position <= to) {
            sum += r.shift_error;
            count += 1;
        }
    REQUIRE(count > 0);
    return sum / count;
}

}  // namespace

TEST_CASE("round_to_bf16: exact values stay, ties go to the even neighbour") {
    for (float x : {0.0f, 1.0f, -2.5f, 3.0f, 0.15625f, -65536.0f})
        CHECK(bits_of(rf::round_to_bf16(x)) == bits_of(x));
    CHECK(bf16_bits(0x80000000u) == 0x80000000u);  // −0 keeps its sign
    CHECK(bf16_bits(0x3f808000u) == 0x3f800000u);  // 1 + 2^−8: tie, kept part even → down
    CHECK(bf16_bits(0x3f818000u) == 0x3f820000u);  // 1 + 3·2^−8: tie, kept part odd → up
    CHECK(bf16_bits(0x3f808001u) == 0x3f810000u);  // just past the tie → up
    CHECK(bf16_bits(0x3f807fffu) == 0x3f800000u);  // just short of it → down
    CHECK(bf16_bits(0x3fffffffu) == 0x40000000u);  // the carry moves into the exponent: 2
    CHECK(bf16_bits(0xbf818000u) == 0xbf820000u);  // negative ties the same way
}

TEST_CASE("round_to_bf16: infinities, NaN, overflow and subnormals") {
    const float inf = std::numeric_limits<float>::infinity();
    CHECK(rf::round_to_bf16(inf) == inf);
    CHECK(rf::round_to_bf16(-inf) == -inf);
    CHECK(std::isnan(rf::round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
    // A NaN whose payload sits only in the dropped bits: truncating or adding the rounding
    // increment would make it inf; it must stay a NaN.
    CHECK(std::isnan(rf::round_to_bf16(from_bits(0x7f800001u))));
    CHECK(std::isnan(rf::round_to_bf16(from_bits(0xff80ffffu))));
    CHECK(rf::round_to_bf16(std::numeric_limits<float>::max()) == inf);    // past the largest bf16
    CHECK(rf::round_to_bf16(-std::numeric_limits<float>::max()) == -inf);
    CHECK(bf16_bits(0x7f7f7fffu) == 0x7f7f0000u);  // below that midpoint: the largest bf16
    CHECK(bf16_bits(0x00000001u) == 0x00000000u);  // the smallest subnormal → +0
    CHECK(bf16_bits(0x00008000u) == 0x00000000u);  // subnormal tie, even → 0
    CHECK(bf16_bits(0x00018000u) == 0x00020000u);  // subnormal tie, odd → up
    CHECK(bf16_bits(0x00010000u) == 0x00010000u);  // a bf16 subnormal stays
    CHECK(bf16_bits(0x007fffffu) == 0x00800000u);  // the largest subnormal → the smallest normal
    CHECK(bf16_bits(0x80008001u) == 0x80010000u);  // a negative subnormal past its tie
}

TEST_CASE("round_to_bf16 agrees with the nearest neighbour by distance on random finite floats") {
    std::mt19937 rng(7);
    size_t checked = 0;
    for (int n = 0; n < 200000; ++n) {
        uint32_t bits = rng();
        if ((bits & 0x7f800000u) == 0x7f800000u) continue;  // inf / NaN: the case above
        if (n % 4 == 0) bits = (bits & 0xffff0000u) | 0x8000u;  // a quarter of them exact ties
        REQUIRE(bf16_bits(bits) == nearest_bf16_by_distance(bits));
        ++checked;
    }
    CHECK(checked > 150000);
}

TEST_CASE("the relative property: in double a shifted pair keeps its score to rounding error") {
    const rf::RopePrecisionVectors v = rf::random_rope_vectors(1, 2, 32, 3);
    for (rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
        const rf::RopeGeometry g{32, 10000.0, pairing};
        const float* q = &v.q[0];
        const float* k = &v.k[32];
        const double at_origin = rf::rope_reference_score(q, k, 5, 0, g);
        for (size_t s : {size_t(1), size_t(100), size_t(16384), size_t(1) << 20}) {
            const double moved = rf::rope_reference_score(q, k, 5 + s, s, g);
            // |q|·|k| ≤ 32·max|x|² here; double's rounding at angles ≤ 2^20 rad: ≤ 1e-9 of it
            CHECK(std::fabs(moved - at_origin) < 1e-9 * 32 * 16);
        }
    }
}

TEST_CASE("rope precision: f32 keeps the relative property; bf16 after rotation is bounded, "
          "not growing; an angle held in f32 or bf16 grows with position") {
    const size_t D = 32;
    const rf::RopePrecisionVectors v = rf::random_rope_vectors(4, 16, D, 11);
    const double qk = mean_norm_product(v);
    const std::vector<size_t> positions = rf::log_spaced_positions(16384);
    for (rf::RopePairing pairing : {rf::RopePairing::interleaved, rf::RopePairing::half}) {
        CAPTURE(std::string(rf::rope_pairing_name(pairing)));
        const rf::RopeGeometry g{D, 10000.0, pairing};
        const std::vector<rf::RopePrecisionRow> rows =
            rf::measure_rope_precision(v, g, positions, rf::all_rope_precision_cases());
        REQUIRE(rows.size() == positions.size() * rf::all_rope_precision_cases().size());
        const double f32_unit = std::ldexp(1.0, -24), bf16_unit = std::ldexp(1.0, -8);
        // f32 (and bf16 inputs turned in f32): two rotated dot products, each off by at most
        // about (D + 4) units of f32 rounding times |q||k|.
        const double f32_bound = 2.0 * (D + 4) * f32_unit * qk;
        for (const rf::RopePrecisionRow& r : rows) {
            CAPTURE(std::string(rf::rope_precision_case_name(r.precision)));
            CAPTURE(r.position);
            if (r.position == 0) CHECK(r.shift_error == 0.0);
            if (r.precision == RopePrecisionCase::f32 ||
                r.precision == RopePrecisionCase::bf16_before_rotation)
                CHECK(r.shift_error < f32_bound);
            // bf16 after rotation: each rotated element is off by at most one bf16 unit of
            // itself, so each score by ≤ 2·2^−8·|q||k| (Cauchy–Schwarz), at any position.
            if (r.precision == RopePrecisionCase::bf16_after_rotation)
                CHECK(r.shift_error < 2 * (2 * bf16_unit * qk) + f32_bound);
            CHECK(r.score_scale > 0.0);
        }
        const double f32_error = mean_shift_error(rows, RopePrecisionCase::f32, 1, 16384);
        const double after = mean_shift_error(rows, RopePrecisionCase::bf16_after_rotation, 1, 16384);
        CHECK(after > 100 * f32_error);  // bf16's unit is 2^16 times f32's
        // Not growing: the late shifts' mean is within a factor 2 of the early ones'.
        const double after_early = mean_shift_error(rows, RopePrecisionCase::bf16_after_rotation, 1, 16);
        const double after_late = mean_shift_error(rows, RopePrecisionCase::bf16_after_rotation, 1024, 16384);
        CHECK(after_late < 2 * after_early);
        const double all_early = mean_shift_error(rows, RopePrecisionCase::bf16_rotation, 1, 16);
        const double all_late = mean_shift_error(rows, RopePrecisionCase::bf16_rotation, 1024, 16384);
        CHECK(all_late < 2 * all_early);
        // The angle m·θ in f32 is off by about m·θ·2^−24: the error grows with m.
        CHECK(mean_shift_error(rows, RopePrecisionCase::angle_f32, 16384, 16384) >
              10 * mean_shift_error(rows, RopePrecisionCase::angle_f32, 1, 16));
        // In bf16 the angle is off by radians once m·θ ≥ 2^9: late scores lose their meaning.
        for (const rf::RopePrecisionRow& r : rows)
            if (r.precision == RopePrecisionCase::angle_bf16 && r.position == 16384)
                CHECK(r.shift_error > 0.1 * r.score_scale);
    }
}

TEST_CASE("rope precision: the first-token split covers every pair once") {
    const rf::RopePrecisionVectors one = rf::random_rope_vectors(2, 1, 8, 5);
    const rf::RopeGeometry g{8, 10000.0, rf::RopePairing::interleaved};
    for (const rf::RopePrecisionRow& r : rf::measure_rope_precision(
             one, g, {0, 7, 300}, {RopePrecisionCase::bf16_after_rotation})) {
        CHECK(r.first_token_error == r.shift_error);  // one token: every pair has j = 0
        CHECK(r.other_tokens_error == 0.0);
    }
    const rf::RopePrecisionVectors v = rf::random_rope_vectors(2, 5, 8, 5);
    for (const rf::RopePrecisionRow& r :
         rf::measure_rope_precision(v, g, {300}, {RopePrecisionCase::bf16_rotation})) {
        // 15 pairs a group: 5 with j = 0, 10 with j ≥ 1; the mean is their weighted mean
        CHECK(r.shift_error ==
              doctest::Approx((5 * r.first_token_error + 10 * r.other_tokens_error) / 15));
    }
}

TEST_CASE("log_spaced_positions: 0, then √2 steps, ending at the maximum") {
    const std::vector<size_t> p = rf::log_spaced_positions(16384);
    REQUIRE(p.size() > 10);
    CHECK(p[0] == 0);
    CHECK(p[1] == 1);
    CHECK(p[2] == 2);
    CHECK(p.back() == 16384);
    for (size_t i = 1; i < p.size(); ++i) CHECK(p[i] > p[i - 1]);
    CHECK(rf::log_spaced_positions(10).back() == 10);
    CHECK(rf::log_spaced_positions(1) == std::vector<size_t>{0, 1});
}

TEST_CASE("rope precision: a bad geometry or vector shape is refused") {
    const rf::RopePrecisionVectors v = rf::random_rope_vectors(1, 4, 8, 1);
    CHECK_THROWS_AS(rf::measure_rope_precision(v, {7, 10000.0, rf::RopePairing::half}, {0}, {}),
                    std::invalid_argument);
    CHECK_THROWS_AS(rf::measure_rope_precision(v, {16, 10000.0, rf::RopePairing::half}, {0}, {}),
                    std::invalid_argument);
    CHECK_THROWS_AS(rf::measure_rope_precision(v, {8, -1.0, rf::RopePairing::half}, {0}, {}),
                    std::invalid_argument);
}

TEST_CASE(
    "rope precision: a base whose angles overflow or underflow is refused, naming the range") {
    // Issue 57: --base 1e-300 printed 52 rows of nan with exit 0.
    const rf::RopePrecisionVectors v = rf::random_rope_vectors(2, 4, 8, 1);
    const std::vector<size_t> positions = rf::log_spaced_positions(64);
    const size_t largest = 64 + 4 - 1;
    const rf::BaseRange range = rf::rope_precision_base_range(8, largest);
    CHECK(range.lo < 1e-20);
    CHECK(range.hi > 1e20);
    auto measure = [&](double base) {
        return rf::measure_rope_precision(v, {8, base, rf::RopePairing::half}, positions,
                                          rf::all_rope_precision_cases());
    };
    // Just inside either end: every number of every row finite.
    for (const double base : {range.lo * 1.001, range.hi / 1.001, 10000.0}) {
        CAPTURE(base);
        for (const rf::RopePrecisionRow& r : measure(base))
            for (const double x : {r.shift_error, r.reference_error, r.first_token_error,
                                   r.other_tokens_error, r.score_scale, r.first_token_scale})
                CHECK(std::isfinite(x));
    }
    // Past them, or far past (the 1e-300): one line naming --base and the range.
    for (const double base : {range.lo / 1.01, 1e-300, range.hi * 1.01, 1e300}) {
        CAPTURE(base);
        std::string message;
        try {
            measure(base);
        } catch (const std::invalid_argument& e) { message = e.what(); }
        CHECK(message.find("--base") == 0);
        CHECK(message.find("give --base from") != std::string::npos);
        CHECK(message.find('\n') == std::string::npos);
    }
    // The bound is a property of the geometry: D = 2 turns its one pair by θ_0 = 1, any base.
    CHECK(rf::rope_precision_base_range(2, largest).lo == 0);
    CHECK(std::isinf(rf::rope_precision_base_range(2, largest).hi));
}
