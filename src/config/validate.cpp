// Room — config: validate(), the checks that run on every resolved Config. Each message
// names the key, the value and what would work; the rules of a stage below (head size, the
// position scheme, masking) are called, not restated.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "config/validate_effects.hpp"
#include "config/validate_text.hpp"
#include "fast/fast_config.hpp"
#include "tensor/format.hpp"
#include "tensor/real.hpp"

namespace rf {

// ---- validation -------------------------------------------------------------------------------
namespace {
[[noreturn]] void invalid(const std::string& key, const std::string& message) {
    throw std::invalid_argument(key + " " + message);
}
void require_positive(const std::string& key, size_t v) {
    if (v == 0) invalid(key, "must be positive, got 0");
}
void require_positive(const std::string& key, double v) {
    if (!(v > 0) || !std::isfinite(v))
        invalid(key, "must be a positive number, got " + format_shortest(v));
}
// A positive number the library computes with in Real (float32, tensor/real.hpp) must stay a
// positive number there: below the smallest normal Real it rounds to 0 or keeps only a few bits
// (train.eps = 1e-50 is 0, and AdamW's m/(√v + ε) becomes 0/0 for a row with no gradient);
// above the largest it is inf.
std::string shortest_real(Real v) {  // the digits that read back to v as a Real: 1.1754944e-38
    char text[64];
    return std::string(text, std::to_chars(text, text + sizeof text, v).ptr);
}
void require_positive_real(const std::string& key, double v) {
    require_positive(key, v);
    const Real smallest = std::numeric_limits<Real>::min();
    const Real largest = std::numeric_limits<Real>::max();
    const std::string real = sizeof(Real) == 4 ? "float32" : "float64";
    if (v < smallest)
        invalid(key, "= " + format_shortest(v) +
                         (Real(v) == 0 ? " is 0 in " : " keeps only a few bits in ") + real +
                         ", the precision the model computes in; the smallest usable value is " +
                         shortest_real(smallest));
    if (v > largest)
        invalid(key, "= " + format_shortest(v) + " is inf in " + real +
                         ", the precision the model computes in; the largest usable value is " +
                         shortest_real(largest));
}
// lo <= v < hi (or lo < v < hi when open_low)
void require_range(const std::string& key, double v, double lo, double hi, bool open_low,
                   bool closed_high = false) {
    const bool low_ok = open_low ? v > lo : v >= lo;
    const bool high_ok = closed_high ? v <= hi : v < hi;
    if (!(low_ok && high_ok))
        invalid(key, "must be in " + std::string(open_low ? "(" : "[") + format_shortest(lo) +
                         ", " + format_shortest(hi) + (closed_high ? "]" : ")") + ", got " +
                         format_shortest(v));
}
void require_one_of(const std::string& key, const std::string& v,
                    const std::vector<std::string>& options) {
    if (std::find(options.begin(), options.end(), v) != options.end()) return;
    std::string listed;
    for (const std::string& o : options) listed += (listed.empty() ? "" : ", ") + o;
    invalid(key, "must be one of " + listed + ", got '" + v + "'");
}
}  // namespace

void validate(const Config& c) {
    validate_finite(c);
    validate_text(c);  // config/validate_text.hpp
    const ModelConfig& m = c.model;
    if (m.vocab_size != 0 && m.vocab_size <= 5)
        invalid("model.vocab_size",
                "must be 0 (take it from the tokenizer) or larger than the 5 "
                "special tokens, got " +
                    std::to_string(m.vocab_size));
    require_positive("model.hidden", m.hidden);
    require_positive("model.num_heads", m.num_heads);
    attention_head_size(m.hidden, m.num_heads);  // throws unless num_heads divides hidden
    require_positive("model.type_vocab_size", m.type_vocab_size);
    if (m.embedding_size != 0 && m.embedding_size != m.hidden &&
        (c.position.scheme == PositionKind::learned ||
         c.position.scheme == PositionKind::sinusoidal))
        invalid("model.embedding_size",
                "= " + std::to_string(m.embedding_size) + " differs from model.hidden = " +
                    std::to_string(m.hidden) + ", which position.scheme = " +
                    std::string(enum_name(c.position.scheme)) +
                    " does not support (its table is added at the hidden width); use 0 or "
                    "position.scheme = rope, none or alibi");
    require_positive("model.num_layers", m.num_layers);
    require_positive("model.ffn", m.ffn);
    require_range("model.dropout", m.dropout, 0.0, 1.0, false);
    require_range("model.attention_dropout", m.attention_dropout, 0.0, 1.0, false);
    require_positive_real("model.layer_norm_eps", m.layer_norm_eps);
    require_positive_real("model.init_std", m.init_std);
    validate_fast_config(c.fast);  // model.fused, isa, products, precision: src/fast/

    // The position scheme's rules, position.layer_schemes and the one rule for RoPE's keys
    // (no layer rotates: a RoPE key away from its default is refused), position/. First, so
    // that a key which would change nothing is refused as such, not for a rule it never meets.
    validate_position_config(c.position, m.hidden, m.num_heads, m.num_layers);
    // Every other key that would change nothing (config/validate_effects.hpp), before the rules
    // it would never meet.
    refuse_idle_keys(c);
    ModelConfig resolved = m;  // causal is not a key: it follows train.objective
    resolved.causal = c.train.objective == data::Objective::clm;
    validate_model_options(resolved, c.position);  // the model's rules, written in model/
    if (!c.position.layer_schemes.empty() && m.attention == AttentionKind::linear)
        invalid("position.layer_schemes",
                "is implemented for model.attention = softmax only (linear attention places "
                "RoPE in its own kernels); use softmax or leave position.layer_schemes empty");

    const DataConfig& d = c.data;
    if (d.path.empty()) invalid("data.path", "must name a UTF-8 text file, got an empty string");
    require_one_of("data.tokenizer", d.tokenizer, {"bpe", "char"});
    if (d.vocab_size <= 5)
        invalid("data.vocab_size",
                "must be larger than the 5 special tokens, got " + std::to_string(d.vocab_size));
    if (d.seq_len < 2)
        invalid("data.seq_len", "must be at least 2, got " + std::to_string(d.seq_len));
    if (c.position.scheme == PositionKind::learned && d.seq_len > c.position.max_positions)
        invalid("data.seq_len", "= " + std::to_string(d.seq_len) +
                                    " exceeds position.max_positions = " +
                                    std::to_string(c.position.max_positions) +
                                    " (rows of the learned position table); raise "
                                    "position.max_positions or shorten data.seq_len");
    require_range("data.validation_fraction", d.validation_fraction, 0.0, 1.0, true);
    require_positive("data.val_windows", d.val_windows);
    require_range("data.mask_prob", d.mask_prob, 0.0, 1.0, true);

    const TrainConfig& t = c.train;
    require_positive("train.batch_size", t.batch_size);
    require_positive("train.steps", t.steps);
    require_positive_real("train.lr", t.lr);
    require_range("train.min_lr_ratio", t.min_lr_ratio, 0.0, 1.0, false, true);
    require_range("train.beta1", t.beta1, 0.0, 1.0, false);
    require_range("train.beta2", t.beta2, 0.0, 1.0, false);
    require_positive_real("train.eps", t.eps);
    if (!(t.weight_decay >= 0) || !std::isfinite(t.weight_decay))
        invalid("train.weight_decay", "must be >= 0, got " + format_shortest(t.weight_decay));
    // Decoupled decay multiplies every 2-D weight by (1 − lr·weight_decay) each step
    // (nn/adamw.hpp); at the peak lr that factor must stay in (0, 1), or the weights are zeroed,
    // flip sign or grow instead of shrinking.
    if (t.lr * t.weight_decay >= 1)
        invalid("train.weight_decay",
                "= " + format_shortest(t.weight_decay) + " with train.lr = " +
                    format_shortest(t.lr) + " gives lr·weight_decay = " +
                    format_shortest(t.lr * t.weight_decay) +
                    " >= 1: the decay factor 1 − lr·weight_decay per step no longer shrinks the "
                    "weights; use train.weight_decay below 1/train.lr = " +
                    format_shortest(1 / t.lr) + " (usual: 0.01 … 0.1)");
    if (!(t.grad_clip >= 0) || !std::isfinite(t.grad_clip))
        invalid("train.grad_clip",
                "must be >= 0 (0 = no clipping), got " + format_shortest(t.grad_clip));
    require_positive("train.log_every", t.log_every);
    validate_limits(c);
}

}  // namespace rf
