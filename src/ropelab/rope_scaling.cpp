// Room — ropelab: dynamic NTK, YaRN and Llama 3 scaling (formulas in rope_scaling.hpp).
//
// Legend: r rotary dims, h = r/2 pairs, θ_i trained frequencies, λ_i = 2π/θ_i, L₀ trained
//         length, L current length, s scaling factor.
#include "ropelab/rope_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "tensor/format.hpp"

namespace rf {

static const double kPi = std::acos(-1.0);

static std::string number(double x) { return format_printf("%g", x); }
static void fail(const std::string& message) { throw std::invalid_argument(message); }

void validate_rope_scaling(const RopeOptions& o) {
    const std::string name = enum_name(o.scaling);
    if (!(o.scaling_factor >= 1.0))
        fail("position.scaling_factor = " + number(o.scaling_factor) +
             " must be >= 1 (1 = no scaling, 4 = four times the trained length)");
    if (o.scaling == RopeScaling::none) {
        if (o.scaling_factor != 1.0)
            fail("position.scaling_factor = " + number(o.scaling_factor) +
                 " has no effect with position.scaling = none; choose a position.scaling "
                 "(linear, ntk, dynamic_ntk, yarn, llama3)");
        return;
    }
    if (o.interpolation_factor != 1.0 || o.ntk_factor != 1.0)
        fail("position.scaling = " + name + " cannot be combined with " +
             (o.interpolation_factor != 1.0
                  ? "position.interpolation_factor = " + number(o.interpolation_factor)
                  : "position.ntk_factor = " + number(o.ntk_factor)) +
             "; set that key back to 1 and give the factor as position.scaling_factor");
    const bool needs_length = o.scaling == RopeScaling::dynamic_ntk ||
                              o.scaling == RopeScaling::yarn || o.scaling == RopeScaling::llama3;
    if (needs_length && o.original_max_positions == 0)
        fail("position.scaling = " + name +
             " needs position.original_max_positions, the length the model was trained at "
             "(its data.seq_len, e.g. 64)");
    if ((o.scaling == RopeScaling::ntk || o.scaling == RopeScaling::dynamic_ntk) &&
        o.rotary_dims == 2)
        fail("position.scaling = " + name +
             " needs at least 4 rotary dims (base·s^(r/(r-2)) is undefined for r = 2); raise "
             "position.rotary_fraction or choose position.scaling = linear");
    if (o.scaling == RopeScaling::yarn) {
        if (!(o.yarn_beta_slow > 0.0 && o.yarn_beta_fast > o.yarn_beta_slow))
            fail("position.yarn_beta_fast = " + number(o.yarn_beta_fast) +
                 " and position.yarn_beta_slow = " + number(o.yarn_beta_slow) +
                 " must satisfy beta_fast > beta_slow > 0 (YaRN's defaults: 32 and 1)");
        if (!(o.yarn_attention_factor >= 0.0))
            fail("position.yarn_attention_factor = " + number(o.yarn_attention_factor) +
                 " must be >= 0 (0 = YaRN's 0.1·ln(s) + 1)");
        // q and k are both multiplied by a, so every score by a²: in float32 (tensor/real.hpp)
        // that product must stay finite, or the softmax computes inf − inf = nan.
        const double a = rope_attention_factor(o);
        if (!(a * a <= double(std::numeric_limits<float>::max())))
            fail("position.yarn_attention_factor = " + number(o.yarn_attention_factor) +
                 " multiplies every attention score by its square (" + number(a * a) +
                 "), which is inf in float32; give a factor below " +
                 number(std::sqrt(double(std::numeric_limits<float>::max()))) +
                 " (0 = YaRN's 0.1·ln(s) + 1, about 1.1 for s = 4)");
    }
    if (o.scaling == RopeScaling::llama3 &&
        !(o.low_freq_factor > 0.0 && o.high_freq_factor > o.low_freq_factor))
        fail("position.low_freq_factor = " + number(o.low_freq_factor) +
             " and position.high_freq_factor = " + number(o.high_freq_factor) +
             " must satisfy 0 < low < high (Llama 3.1's: 1 and 4)");
}

double yarn_mscale(double s) { return s <= 1.0 ? 1.0 : 0.1 * std::log(s) + 1.0; }

double rope_attention_factor(const RopeOptions& o) {
    if (o.scaling != RopeScaling::yarn) return 1.0;
    return o.yarn_attention_factor > 0.0 ? o.yarn_attention_factor : yarn_mscale(o.scaling_factor);
}

// Pair i turns L₀·θ_i / 2π times over L₀; setting that to β and solving for i gives d(β).
double yarn_correction_dim(double rotations, size_t rotary_dims, double base, size_t L0) {
    const double r = static_cast<double>(rotary_dims);
    return r * std::log(static_cast<double>(L0) / (2.0 * kPi * rotations)) / (2.0 * std::log(base));
}

std::vector<double> yarn_keep_fraction(const RopeOptions& o) {
    const size_t h = o.rotary_dims / 2;
    // The fast boundary comes from beta_fast (more turns = a smaller index), clamped to the pairs.
    double lo = std::floor(
        yarn_correction_dim(o.yarn_beta_fast, o.rotary_dims, o.base, o.original_max_positions));
    double hi = std::ceil(
        yarn_correction_dim(o.yarn_beta_slow, o.rotary_dims, o.base, o.original_max_positions));
    lo = std::max(lo, 0.0);
    hi = std::min(hi, static_cast<double>(o.rotary_dims) - 1.0);
    if (hi == lo) hi += 0.001;  // a step instead of a ramp, never a division by zero
    std::vector<double> keep(h);
    for (size_t i = 0; i < h; ++i) {
        const double ramp = std::clamp((static_cast<double>(i) - lo) / (hi - lo), 0.0, 1.0);
        keep[i] = 1.0 - ramp;
    }
    return keep;
}

// ---- each scaling's part of rope_frequencies ---------------------------------------------
double dynamic_ntk_base(const RopeOptions& o, size_t length) {
    const double L0 = static_cast<double>(o.original_max_positions);
    const double L = std::max(static_cast<double>(length), L0);
    if (L <= L0) return o.base;
    const double r = static_cast<double>(o.rotary_dims), s = o.scaling_factor;
    return o.base * std::pow(s * L / L0 - (s - 1.0), r / (r - 2.0));
}

double scaled_rope_base(const RopeOptions& o, size_t length) {
    if (o.scaling == RopeScaling::dynamic_ntk) return dynamic_ntk_base(o, length);
    const double ntk = o.ntk_factor * (o.scaling == RopeScaling::ntk ? o.scaling_factor : 1.0);
    if (ntk == 1.0) return o.base;
    const double r = static_cast<double>(o.rotary_dims);
    return o.base * std::pow(ntk, r / (r - 2.0));
}

// yarn: θ'_i = θ_i·(1 − γ_i)/s + θ_i·γ_i
static void yarn_rescale(const RopeOptions& o, std::vector<double>& theta) {
    const std::vector<double> keep = yarn_keep_fraction(o);
    for (size_t i = 0; i < theta.size(); ++i)
        theta[i] = theta[i] / o.scaling_factor * (1.0 - keep[i]) + theta[i] * keep[i];
}

// llama3: three bands by wavelength λ_i = 2π/θ_i
static void llama3_rescale(const RopeOptions& o, std::vector<double>& theta) {
    const double s = o.scaling_factor, L0 = static_cast<double>(o.original_max_positions);
    const double low = o.low_freq_factor, high = o.high_freq_factor;
    for (double& t : theta) {
        const double wavelength = 2.0 * kPi / t;
        if (wavelength < L0 / high) continue;  // fast: kept
        if (wavelength > L0 / low) {           // slow: interpolated
            t /= s;
            continue;
        }
        const double smooth = (L0 / wavelength - low) / (high - low);
        t = (1.0 - smooth) * t / s + smooth * t;
    }
}

void rescale_rope_frequencies(const RopeOptions& o, RopeFrequencies& f) {
    f.position_divisor =
        o.interpolation_factor * (o.scaling == RopeScaling::linear ? o.scaling_factor : 1.0);
    if (o.scaling == RopeScaling::yarn) yarn_rescale(o, f.theta);
    if (o.scaling == RopeScaling::llama3) llama3_rescale(o, f.theta);
    f.amplitude = rope_attention_factor(o);
}

void adjust_rope_frequencies(const RopeOptions& o, size_t length, RopeFrequencies& f) {
    const double base = scaled_rope_base(o, length);  // o.base unless an NTK scaling grows it
    if (base != f.base) {
        f.base = base;
        const double r = static_cast<double>(o.rotary_dims);
        for (size_t i = 0; i < f.theta.size(); ++i)
            f.theta[i] = std::pow(base, -2.0 * static_cast<double>(i) / r);
    }
    rescale_rope_frequencies(o, f);  // divisor, per-pair θ_i, a
    // p-RoPE: the slowest pairs stop turning (θ_i = 0: cos 1, sin 0, the identity), after any
    // scaling, so a scaled p-RoPE model rescales only the pairs it rotates. p = 1 changes nothing.
    for (size_t i = rope_p_rotated_pairs(o.rope_p, f.theta.size()); i < f.theta.size(); ++i)
        f.theta[i] = 0.0;
}

// dynamic_ntk (RopeTable::for_length): a table of its own for a length past L₀.
bool dynamic_ntk_grows(const RopeOptions& o, size_t length) {
    return o.scaling == RopeScaling::dynamic_ntk && length > o.original_max_positions;
}

}  // namespace rf
