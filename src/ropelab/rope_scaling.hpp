// Room — ropelab: stretching a trained RoPE model's angles past its training length.
//
// Legend: r rotary dims, h = r/2 pairs, θ_i = base^(−2i/r) the trained frequencies
//         (i = 0 … h−1), λ_i = 2π/θ_i a pair's wavelength in positions, L₀ the trained length
//         (position.original_max_positions), L the current length, s the scaling factor.
// The constants follow HF transformers' rope init functions (modeling_rope_utils.py:
// _compute_dynamic_ntk_parameters, _compute_yarn_parameters, _compute_llama3_parameters),
// the public reference; the formulas are re-derived here from the papers, not copied.
//
//   dynamic_ntk  base' = base · (s·L/L₀ − (s − 1))^(r/(r−2))  for L > L₀, else base
//   yarn         θ'_i = θ_i·(1 − γ_i)/s + θ_i·γ_i, γ_i = 1 − clamp((i − lo)/(hi − lo), 0, 1)
//                  lo = ⌊d(β_fast)⌋, hi = ⌈d(β_slow)⌉,  d(β) = r·ln(L₀/(2πβ)) / (2·ln base)
//                  (d(β) is the pair index that turns β times over L₀); q and k times
//                  a = 0.1·ln(s) + 1, so scores times a² (the temperature 1/t = a²)
//   llama3       λ_i < L₀/high: θ_i           (fast pairs: already seen whole turns)
//                λ_i > L₀/low:  θ_i / s        (slow pairs: interpolated)
//                between:       (1 − σ)·θ_i/s + σ·θ_i,  σ = (L₀/λ_i − low)/(high − low)
#pragma once

#include <cstddef>
#include <vector>

#include "position/rope.hpp"

namespace rf {

// position.scaling's rules, each message naming its key: factor ≥ 1 and only with a scaling;
// L₀ > 0 for dynamic_ntk / yarn / llama3; β_fast > β_slow > 0; a ≥ 0; 0 < low < high;
// not combined with the older interpolation_factor / ntk_factor keys.
void validate_rope_scaling(const RopeOptions& options);

// YaRN's a(s) = 0.1·ln(s) + 1 for s > 1, else 1 (the √(1/t) of Peng et al. 2023, eq. 22).
double yarn_mscale(double scaling_factor);
// The factor folded into the cos/sin table: yarn_attention_factor, or yarn_mscale(s) when it
// is 0, for scaling = yarn; 1 for every other scaling.
double rope_attention_factor(const RopeOptions& options);

// d(β) = r·ln(L₀/(2πβ)) / (2·ln base): the (fractional) pair index i whose wavelength fits β
// times into L₀.
double yarn_correction_dim(double rotations, size_t rotary_dims, double base,
                           size_t original_max_positions);
// γ_i for i = 0 … h−1: 1 = keep θ_i (extrapolate), 0 = θ_i / s (interpolate).
std::vector<double> yarn_keep_fraction(const RopeOptions& options);

// ---- each scaling's part of rope_frequencies (rope.hpp), the one place θ_i are made ------
// The base θ_i are computed from: base · ntk^(r/(r−2)) with ntk = ntk_factor, times s for
// scaling = ntk (exactly `base` when ntk = 1); dynamic_ntk_base for scaling = dynamic_ntk.
double scaled_rope_base(const RopeOptions& options, size_t length);
// dynamic_ntk's base for a sequence of `length` positions (base itself when it is ≤ L₀).
double dynamic_ntk_base(const RopeOptions& options, size_t length);
// Given θ_i from scaled_rope_base: the position divisor (interpolation_factor, times s for
// scaling = linear), θ_i reshaped per pair (yarn, llama3) and the amplitude a (yarn).
void rescale_rope_frequencies(const RopeOptions& options, RopeFrequencies& frequencies);
// All of it, on the paper's θ_i = base^(−2i/r) (rope_frequencies): the scaled base (θ_i made
// again from it when it differs), rescale_rope_frequencies, and p-RoPE's pairs that stop
// turning (θ_i = 0 for i ≥ round(p·r/2)). Changes nothing for the paper's RoPE.
void adjust_rope_frequencies(const RopeOptions& options, size_t length, RopeFrequencies& f);
// Whether a sequence of `length` positions needs a table of its own: dynamic_ntk past L₀.
bool dynamic_ntk_grows(const RopeOptions& options, size_t length);

}  // namespace rf
