// Room — config: the key table of config.hpp (config_fields), the ONE list of
// "table.key → member of Config" that reading, --set, to_toml, operator== and checkpoint
// signatures all walk. A new knob: its member in its struct, and one row here.
#include "config/config.hpp"

namespace rf {
namespace {

// An enum member, read and written as its word (tensor/named_enum.hpp).
template <class E>
EnumField enum_field(E* member) {
    return {[member] { return std::string(enum_name(*member)); },
            [member](const std::string& word, const std::string& key) {
                *member = parse_enum<E>(word, key);
            },
            [] { return enum_choices<E>(); }};
}

}  // namespace

std::vector<ConfigField> config_fields(Config& c) {
    //  table       key           eval_time  member
    ModelConfig& m = c.model;
    FastConfig& f = c.fast;  // [model]'s keys of the fast path (src/fast/fast_config.hpp)
    PositionConfig& p = c.position;
    DataConfig& d = c.data;
    TrainConfig& t = c.train;
    return {
        {"model", "vocab_size", false, &m.vocab_size},
        {"model", "hidden", false, &m.hidden},
        {"model", "embedding_size", false, &m.embedding_size},
        {"model", "type_vocab_size", false, &m.type_vocab_size},
        {"model", "num_heads", false, &m.num_heads},
        {"model", "num_layers", false, &m.num_layers},
        {"model", "ffn", false, &m.ffn},
        {"model", "dropout", true, &m.dropout},
        {"model", "attention_dropout", true, &m.attention_dropout},
        {"model", "layer_norm_eps", false, &m.layer_norm_eps},
        {"model", "init_std", false, &m.init_std},
        {"model", "attention", false, enum_field(&m.attention)},
        {"model", "feature_map", false, enum_field(&m.feature_map)},
        {"model", "random_features", false, &m.random_features},
        {"model", "fused", true, &f.fused},
        {"model", "isa", true, enum_field(&f.isa)},
        {"model", "products", true, enum_field(&f.products)},
        {"model", "precision", true, enum_field(&f.precision)},
        {"position", "scheme", false, enum_field(&p.scheme)},
        {"position", "pairing", false, enum_field(&p.pairing)},
        {"position", "rope_placement", false, enum_field(&p.rope_placement)},
        {"position", "base", false, &p.base},
        {"position", "rotary_fraction", false, &p.rotary_fraction},
        {"position", "rope_p", false, &p.rope_p},
        {"position", "rotate_values", false, &p.rotate_values},
        {"position", "interpolation_factor", true, &p.interpolation_factor},
        {"position", "ntk_factor", true, &p.ntk_factor},
        {"position", "scaling", true, enum_field(&p.scaling)},
        {"position", "scaling_factor", true, &p.scaling_factor},
        {"position", "original_max_positions", true, &p.original_max_positions},
        {"position", "yarn_beta_fast", true, &p.yarn_beta_fast},
        {"position", "yarn_beta_slow", true, &p.yarn_beta_slow},
        {"position", "yarn_attention_factor", true, &p.yarn_attention_factor},
        {"position", "low_freq_factor", true, &p.low_freq_factor},
        {"position", "high_freq_factor", true, &p.high_freq_factor},
        {"position", "xpos", false, &p.xpos},
        {"position", "xpos_gamma", false, &p.xpos_gamma},
        {"position", "xpos_scale_base", false, &p.xpos_scale_base},
        {"position", "learned_frequencies", false, &p.learned_frequencies},
        {"position", "max_positions", false, &p.max_positions},
        {"position", "sinusoidal_scale", false, &p.sinusoidal_scale},
        {"position", "layer_schemes", false, &p.layer_schemes},
        {"data", "path", true, &d.path},
        {"data", "tokenizer", true, &d.tokenizer},
        {"data", "vocab_size", true, &d.vocab_size},
        {"data", "seq_len", true, &d.seq_len},
        {"data", "validation_fraction", true, &d.validation_fraction},
        {"data", "val_windows", true, &d.val_windows},
        {"data", "mask_prob", true, &d.mask_prob},
        {"train", "objective", false, enum_field(&t.objective)},
        {"train", "seed", true, &t.seed},
        {"train", "batch_size", true, &t.batch_size},
        {"train", "steps", true, &t.steps},
        {"train", "lr", true, &t.lr},
        {"train", "min_lr_ratio", true, &t.min_lr_ratio},
        {"train", "warmup_steps", true, &t.warmup_steps},
        {"train", "schedule", true, enum_field(&t.schedule)},
        {"train", "beta1", true, &t.beta1},
        {"train", "beta2", true, &t.beta2},
        {"train", "eps", true, &t.eps},
        {"train", "weight_decay", true, &t.weight_decay},
        {"train", "grad_clip", true, &t.grad_clip},
        {"train", "eval_every", true, &t.eval_every},
        {"train", "eval_batches", true, &t.eval_batches},
        {"train", "log_every", true, &t.log_every},
        {"train", "threads", true, &t.threads},
        {"train", "checkpoint_every", true, &t.checkpoint_every},
    };
}

}  // namespace rf
