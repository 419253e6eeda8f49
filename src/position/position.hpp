// Stage 4 — position: one interface for every way of telling the encoder where a token is.
//
// Legend: B batch, T sequence length, C hidden size, H heads, D = C / H head size.
// The model asks its scheme at three places:
//   embed(x)            after the token lookup       x:[B,T,C]  (learned / sinusoidal add here)
//   rotate(q, k, v)     after the head split         q,k,v:[B,H,T,D]  (RoPE rotates here)
//   bias_scores(s)      before the softmax           s:[B,H,T,T]  (ALiBi adds its bias here)
// Schemes that do nothing at a place return their input unchanged. (Linear attention places
// RoPE itself, src/linear/linear_rope.hpp.)
#pragma once

#include <array>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tensor/named_enum.hpp"
#include "tensor/random.hpp"
#include "tensor/tensor.hpp"

namespace rf {

class RopeTable;

// position.scheme: where the encoder learns where a token is (docs/rope.md, position.hpp's
// three places below)
enum class PositionKind { none, learned, sinusoidal, rope, alibi };
constexpr std::array<NamedValue<PositionKind>, 5> named_values(PositionKind) {
    return {{{PositionKind::none, "none"},
             {PositionKind::learned, "learned"},
             {PositionKind::sinusoidal, "sinusoidal"},
             {PositionKind::rope, "rope"},
             {PositionKind::alibi, "alibi"}}};
}

// position.pairing, which dims RoPE rotates together (rope.hpp): interleaved (2i, 2i+1), the
// paper's; half (i, i + r/2), GPT-NeoX's rotate_half
enum class RopePairing { interleaved, half };
constexpr std::array<NamedValue<RopePairing>, 2> named_values(RopePairing) {
    return {{{RopePairing::interleaved, "interleaved"}, {RopePairing::half, "half"}}};
}

// position.scaling: how a trained RoPE model's angles are stretched to run past the length it
// was trained at, chosen at evaluation time (docs/rope.md §"Scaling a trained model"):
//   none         the trained angles (interpolation_factor / ntk_factor still apply)
//   linear       position interpolation, m → m / s            (Chen et al. 2023)
//   ntk          NTK-aware base, base → base · s^(r/(r−2))   (bloc97 2023)
//   dynamic_ntk  NTK with the base grown from the current length L (emozilla 2023)
//   yarn         per-frequency ramp between PI and none, plus an attention temperature
//                (Peng et al. 2023)
//   llama3       three bands by wavelength: kept, smoothed, divided by s (Meta, Llama 3.1)
// s = position.scaling_factor; rope_scaling.hpp has the formulas.
enum class RopeScaling { none, linear, ntk, dynamic_ntk, yarn, llama3 };
constexpr std::array<NamedValue<RopeScaling>, 6> named_values(RopeScaling) {
    return {{{RopeScaling::none, "none"},
             {RopeScaling::linear, "linear"},
             {RopeScaling::ntk, "ntk"},
             {RopeScaling::dynamic_ntk, "dynamic_ntk"},
             {RopeScaling::yarn, "yarn"},
             {RopeScaling::llama3, "llama3"}}};
}

// position.rope_placement, where RoPE enters linear attention (src/linear/linear_rope.hpp,
// docs/linear_attention.md §4; softmax attention has one place only and ignores it):
//   eq19_features      the paper's eq. 19 — rotate the features φ(q), φ(k) in the numerator
//                      only; exactly relative for any φ, but a row's weights need not be
//                      positive or sum to 1
//   before_feature_map the code behind the paper's Performer figure (lucidrains/
//                      performer-pytorch) — rotate q, k, then φ(R q), φ(R k) in numerator and
//                      denominator; weights stay positive, and with favor it is an unbiased
//                      estimate of softmax attention with RoPE, but with elu1 not relative
enum class RopePlacement { eq19_features, before_feature_map };
constexpr std::array<NamedValue<RopePlacement>, 2> named_values(RopePlacement) {
    return {{{RopePlacement::eq19_features, "eq19_features"},
             {RopePlacement::before_feature_map, "before_feature_map"}}};
}

// RoPE's knobs: the part of the [position] table a RoPE table reads (rope.hpp; the scaling
// knobs in rope_scaling.hpp). PositionConfig and RopeOptions are both one, so the knobs are
// declared once and never copied field by field.
struct RopeConfig {
    RopePairing pairing = RopePairing::interleaved;  // interleaved | half
    double base = 10000.0;              // θ_i = base^(−2i/d) (rope; sinusoidal's base too)
    double interpolation_factor = 1.0;  // position interpolation, m → m / factor
    double ntk_factor = 1.0;            // NTK-aware base scaling, base·factor^(r/(r−2))
    // p-RoPE (Barbero et al. 2025): keep the head's ladder θ_i = base^(−2i/D) but turn only
    // the round(p·D/2) fastest pairs (i small); the slower ones get θ_i = 0 (not rotated).
    // 1 = plain RoPE, 0 = no rotation at all (NoPE scores). Not rotary_fraction (rope.cpp).
    double rope_p = 1.0;
    // Scaling a trained RoPE model (evaluation-time keys; rope_scaling.hpp):
    RopeScaling scaling = RopeScaling::none;  // none | linear | ntk | dynamic_ntk | yarn | llama3
    double scaling_factor = 1.0;              // s: the context is stretched s times
    size_t original_max_positions = 0;   // L₀, the trained length (dynamic_ntk, yarn, llama3)
    double yarn_beta_fast = 32.0;        // yarn: pairs turning > beta_fast times in L₀ keep θ_i
    double yarn_beta_slow = 1.0;         // yarn: pairs turning < beta_slow times get θ_i / s
    double yarn_attention_factor = 0.0;  // yarn: √(1/t) on q and k; 0 = 0.1·ln(s) + 1
    double low_freq_factor = 1.0;        // llama3: wavelengths > L₀/low are divided by s
    double high_freq_factor = 4.0;       // llama3: wavelengths < L₀/high are kept
};

// Every knob of every scheme; the config file's [position] table maps onto it 1:1
// (config/config_fields.cpp), RoPE's knobs through its RopeConfig part above.
struct PositionConfig : RopeConfig {
    PositionKind scheme = PositionKind::rope;  // none | learned | sinusoidal | rope | alibi
    // rope in linear attention: eq19_features | before_feature_map (RopePlacement above)
    RopePlacement rope_placement = RopePlacement::eq19_features;
    double rotary_fraction = 1.0;  // rope: rotate the first r = fraction·D dims (r even)
    bool rotate_values = false;    // rope: also rotate v (RoFormer's rotary_value)
    // RoPE variants trained in (they define the model):
    bool xpos = false;        // xPos (Sun et al. 2022): q·ζ^(m/B), k·ζ^(−n/B); causal only
    double xpos_gamma = 0.4;  // xpos: ζ_i = (2i/r + γ) / (1 + γ)
    double xpos_scale_base = 512.0;    // xpos: B, the distance over which ζ^(1) decays
    bool learned_frequencies = false;  // θ_i trainable parameters, initialised at base^(−2i/r)
    size_t max_positions = 512;        // learned: rows in the table (longest allowed T)
    std::string layer_schemes;         // per layer: position.scheme or none, comma-separated
                                       // ("rope,rope,rope,none"); empty = every layer the
                                       // scheme (layer_schemes.hpp)
    double sinusoidal_scale = 0.0;     // sinusoidal: amplitude of the added table;
                                       // 0 = 1/sqrt(C), which under the embedding LayerNorm
                                       // is Vaswani's "tokens × sqrt(C)" (docs/rope.md §11)
};

// D = hidden / num_heads, the head size that the attention splits into and every position
// scheme works on. Throws std::invalid_argument naming model.hidden and model.num_heads
// unless num_heads > 0 divides hidden: the one place this rule is written.
size_t attention_head_size(size_t hidden, size_t num_heads);

// Throws std::invalid_argument naming the offending key (e.g. "position.rotary_fraction")
// when the values cannot work for this head size, or when a RoPE key would change nothing
// because no layer of the `num_layers` rotates (rotating_layers.hpp; the count matters only
// for position.layer_schemes). Runs once, at config load (config/validate.cpp); constructors
// only assert.
void validate_position_config(const PositionConfig& config, size_t hidden, size_t num_heads,
                              size_t num_layers = 1);

// ---- RoPE's options (rope.hpp's RopeOptions; defined in rope_options.cpp) -----------------
struct RopeOptions;
// "interleaved" | "half" → enum; anything else throws naming position.pairing.
RopePairing parse_rope_pairing(const std::string& name);
const char* rope_pairing_name(RopePairing pairing);
// r = rotary_fraction · D, rounded; validate_position_config guarantees it is exact and even.
size_t rope_rotary_dims(double rotary_fraction, size_t head_dim);
// p-RoPE's rotated pairs: round(p·pairs) to the nearest whole number, halves up (std::llround).
// For softmax attention validate_position_config insists that p·D/2 is already whole, so only
// linear attention's feature table (its own r_F/2 pairs) ever rounds.
size_t rope_p_rotated_pairs(double rope_p, size_t pairs);
// The config's RoPE knobs (its RopeConfig part) with this head's geometry.
RopeOptions rope_options_from_config(const PositionConfig& config, size_t head_dim);
// The rules for RoPE's knobs, each written once; messages name the position.* key.
// base > 0 and finite, interpolation_factor > 0, ntk_factor > 0 (also used by sinusoidal's base).
void validate_rope_knobs(double base, double interpolation_factor, double ntk_factor);
// Everything a RopeTable needs: the knobs above, D even, r even in [2, D], NTK needs r ≥ 4,
// and position.scaling's rules (validate_rope_scaling, rope_scaling.hpp).
void validate_rope_options(const RopeOptions& options);

class PositionScheme {
public:
    virtual ~PositionScheme() = default;
    virtual std::string name() const = 0;  // "rope_interleaved", "rope_half", "sinusoidal", ...

    // x:[B,T,C] token embeddings → x plus absolute positions (offset, …, offset+T−1).
    virtual Tensor embed(const Tensor& x, size_t offset = 0) { return x; }
    // q,k,v:[B,H,T,D] → rotated in place of the handles (new tensors; graph recorded).
    virtual void rotate(Tensor& q, Tensor& k, Tensor& v, size_t offset = 0) {}
    // scores:[B,H,T,T] → scores plus a position bias.
    virtual Tensor bias_scores(const Tensor& scores) { return scores; }

    // The fused attention kernel (model.fused; src/fast/fast_kernels.cpp) rotates q and k
    // itself, tile by tile, and does nothing else a scheme might want. A scheme opts in by
    // overriding this to return true when that is all it does to softmax attention, with
    // *table = the RoPE table to rotate with, or nullptr when it acts in embed() only (none,
    // learned, sinusoidal). The default is false — the composed ops run, which call every
    // method above — so a new scheme is never silently skipped by the kernel.
    virtual bool rotation_only(RopeTable** table) {
        *table = nullptr;
        return false;
    }

    // The longest sequence (offset + T) the scheme can encode: unlimited for every scheme
    // but `learned`, whose table has max_positions rows. Ask before running a longer one.
    virtual size_t max_length() const { return std::numeric_limits<size_t>::max(); }

    // Trainable parameters with their checkpoint names (only `learned` has one:
    // "roformer.embeddings.position_embeddings.weight", [max_positions, C]).
    virtual std::vector<Tensor> parameters() { return {}; }
};

// "sequence length L exceeds position.max_positions=P; …": the one message for a sequence
// longer than a scheme's max_length().
std::string sequence_too_long_message(size_t length, size_t max_length);

// For each of `num_layers` layers: true where it uses position.scheme, false where
// position.layer_schemes marks it `none`; every layer when the key is empty (the default).
// A value is read by the RoPE lab (src/ropelab/layer_schemes.hpp), which throws naming the key.
std::vector<bool> layers_with_position(const PositionConfig& config, size_t num_layers);

// Builds the scheme; draws any initial weights (normal(0, 0.02²)) from `init_rng`.
std::unique_ptr<PositionScheme> make_position_scheme(const PositionConfig& config, size_t hidden,
                                                     size_t num_heads, Rng& init_rng);

}  // namespace rf
