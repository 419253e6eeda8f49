// Room — config: which key applies when (see validate_effects.hpp).
#include "config/validate_effects.hpp"

#include <stdexcept>
#include <utility>

namespace rf {

namespace {

thread_local const std::set<std::string>* checked_keys = nullptr;  // null: every key

// A key's value as a config writes it, without the quotes of a word: 0.4, true, softmax.
std::string value_of(const Config& config, const std::string& key) {
    Config copy = config;
    std::string text = render_value(find_config_field(copy, key).value);
    if (text.size() >= 2 && text.front() == '"' && text.back() == '"')
        text = text.substr(1, text.size() - 2);
    return text;
}

}  // namespace

const std::vector<KeyUse>& key_uses() {
    static const char* const rescales = "rescales RoPE's angles";
    // key, what it does, RoPE's only, the settings under which it does nothing
    // clang-format off
    static const std::vector<KeyUse> table = {
        {"model.vocab_size", "", false, {}},
        {"model.hidden", "", false, {}},
        {"model.embedding_size", "", false, {}},
        {"model.type_vocab_size", "", false, {}},
        {"model.num_heads", "", false, {}},
        {"model.num_layers", "", false, {}},
        {"model.ffn", "", false, {}},
        {"model.dropout", "", false, {}},
        {"model.attention_dropout", "drops attention probabilities", false,
         {{"model.attention", "linear"}}},  // linear attention forms none
        {"model.layer_norm_eps", "", false, {}},
        {"model.init_std", "", false, {}},
        {"model.attention", "", false, {}},
        {"model.feature_map", "chooses linear attention's feature map", false,
         {{"model.attention", "softmax"}}},
        {"model.random_features", "sets how many random features FAVOR+ draws", false,
         {{"model.attention", "softmax"}, {"model.feature_map", "elu1"}}},
        {"model.fused", "", false, {}},
        // The composed path (model.fused = false) has no vector kernels and always multiplies
        // with OpenBLAS.
        {"model.isa", "chooses the fast path's vector instructions", false,
         {{"model.fused", "false"}}},
        {"model.products", "chooses the fast path's product library", false,
         {{"model.fused", "false"}}},
        {"model.precision", "chooses the fast path's product precision", false,
         {{"model.fused", "false"}}},
        {"position.scheme", "", false, {}},
        {"position.pairing", "chooses which dims RoPE turns together", true, {}},
        {"position.rope_placement", "chooses where RoPE enters linear attention", true,
         {{"model.attention", "softmax"}}},
        {"position.base", "sets RoPE's frequencies", true, {}},  // and sinusoidal's table
        {"position.rotary_fraction", "chooses how many dims RoPE turns", true, {}},
        {"position.rope_p", "chooses which of RoPE's pairs turn", true, {}},
        {"position.rotate_values", "turns v by RoPE's angles too", true, {}},
        {"position.interpolation_factor", rescales, true, {}},
        {"position.ntk_factor", rescales, true, {}},
        {"position.scaling", rescales, true, {}},
        {"position.scaling_factor", rescales, true, {{"position.scaling", "none"}}},
        {"position.original_max_positions", "is the trained length a scaling starts from", true,
         {{"position.scaling", "none"}, {"position.scaling", "linear"},
          {"position.scaling", "ntk"}}},
        {"position.yarn_beta_fast", "shapes YaRN's ramp", true,
         {{"position.scaling", "yarn", true}}},
        {"position.yarn_beta_slow", "shapes YaRN's ramp", true,
         {{"position.scaling", "yarn", true}}},
        {"position.yarn_attention_factor", "scales YaRN's attention", true,
         {{"position.scaling", "yarn", true}}},
        {"position.low_freq_factor", "shapes Llama 3's scaling", true,
         {{"position.scaling", "llama3", true}}},
        {"position.high_freq_factor", "shapes Llama 3's scaling", true,
         {{"position.scaling", "llama3", true}}},
        {"position.xpos", "is a RoPE variant", true, {}},
        {"position.xpos_gamma", "shapes xPos's decay", true, {{"position.xpos", "false"}}},
        {"position.xpos_scale_base", "shapes xPos's decay", true, {{"position.xpos", "false"}}},
        {"position.learned_frequencies", "is a RoPE variant", true, {}},
        // export-hf sizes HF's position table by it, whatever the scheme.
        {"position.max_positions", "", false, {}},
        {"position.sinusoidal_scale", "scales the sinusoidal table", false,
         {{"position.scheme", "sinusoidal", true}}},
        {"position.layer_schemes", "", false, {}},
        {"data.path", "", false, {}},
        {"data.tokenizer", "", false, {}},
        {"data.vocab_size", "", false, {}},
        {"data.seq_len", "", false, {}},
        {"data.validation_fraction", "", false, {}},
        {"data.val_windows", "", false, {}},
        {"data.mask_prob", "chooses the masked LM's share of labelled tokens", false,
         {{"train.objective", "clm"}}},  // a causal LM labels every next token
        {"train.objective", "", false, {}},
        {"train.seed", "", false, {}},
        {"train.batch_size", "", false, {}},
        {"train.steps", "", false, {}},
        {"train.lr", "", false, {}},
        {"train.min_lr_ratio", "sets where the learning rate's decay ends", false,
         {{"train.schedule", "constant"}}},
        {"train.warmup_steps", "", false, {}},  // every schedule warms up
        {"train.schedule", "", false, {}},
        {"train.beta1", "", false, {}},
        {"train.beta2", "", false, {}},
        {"train.eps", "", false, {}},
        {"train.weight_decay", "", false, {}},
        {"train.grad_clip", "", false, {}},
        {"train.eval_every", "", false, {}},
        {"train.eval_batches", "", false, {}},  // the final evaluation reads it too
        {"train.log_every", "", false, {}},
        {"train.threads", "", false, {}},
        {"train.checkpoint_every", "", false, {}},
    };
    // clang-format on
    return table;
}

std::string idle_because(const KeyUse& use, const Config& config) {
    for (const IdleSetting& s : use.idle) {
        const std::string value = value_of(config, s.key);
        if ((value == s.word) != s.other_than) return std::string(s.key) + " = " + value;
    }
    return "";
}

void refuse_idle_keys(const Config& config) {
    static const Config defaults = default_config();
    for (const KeyUse& use : key_uses()) {
        if (use.idle.empty() || (checked_keys && !checked_keys->count(use.key))) continue;
        if (value_of(config, use.key) == value_of(defaults, use.key)) continue;
        const std::string why = idle_because(use, config);
        if (why.empty()) continue;
        // The fix that makes the key act: the setting's wanted word, or another value of its key.
        std::string act;
        for (const IdleSetting& s : use.idle) {
            const bool holds = (value_of(config, s.key) == s.word) != s.other_than;
            if (!holds) continue;
            act = s.other_than                     ? "set " + std::string(s.key) + " = " + s.word
                  : std::string(s.word) == "false" ? "set " + std::string(s.key) + " = true"
                  : std::string(s.word) == "true"  ? "set " + std::string(s.key) + " = false"
                                                   : "choose another " + std::string(s.key);
            break;
        }
        throw std::invalid_argument(std::string(use.key) + " = " + value_of(config, use.key) + " " +
                                    use.does + ", but " + why +
                                    ", so it would change nothing; leave it at its default (" +
                                    use.key + " = " + value_of(defaults, use.key) + "), or " + act);
    }
}

std::vector<std::string> idle_relation_notes(const Config& config) {
    std::vector<std::string> notes;
    const ModelConfig& m = config.model;
    if (m.embedding_size != 0 && m.embedding_size == m.hidden)
        notes.push_back("model.embedding_size = " + std::to_string(m.embedding_size) +
                        " equals model.hidden, the width the embeddings have anyway, so it "
                        "changes nothing (no projection is added); leave it at 0, or give "
                        "another width to factorise the embeddings");
    const PositionConfig& p = config.position;
    if ((p.scaling == RopeScaling::linear || p.scaling == RopeScaling::ntk) &&
        p.scaling_factor == 1.0)
        notes.push_back("position.scaling = " + value_of(config, "position.scaling") +
                        " with position.scaling_factor = 1 scales by 1, so it changes nothing; "
                        "set position.scaling_factor > 1 (e.g. 2 for twice the trained length), "
                        "or leave position.scaling = none");
    const TrainConfig& t = config.train;
    if (t.checkpoint_every > t.steps)
        notes.push_back("train.checkpoint_every = " + std::to_string(t.checkpoint_every) +
                        " is beyond train.steps = " + std::to_string(t.steps) +
                        ", so no checkpoint falls inside the run (the last step is saved "
                        "anyway); give train.checkpoint_every ≤ " +
                        std::to_string(t.steps) + " to save along the way");
    return notes;
}

IdleKeysGiven::IdleKeysGiven(std::set<std::string> given)
    : given_(std::move(given)), outer_(checked_keys) {
    checked_keys = &given_;
}

IdleKeysGiven::~IdleKeysGiven() { checked_keys = outer_; }

std::set<std::string> keys_changed(const Config& a, const Config& b) {
    Config ca = a, cb = b;  // the key table hands out mutable pointers
    const std::vector<ConfigField> fa = config_fields(ca), fb = config_fields(cb);
    std::set<std::string> changed;
    for (size_t i = 0; i < fa.size(); ++i)
        if (render_value(fa[i].value) != render_value(fb[i].value)) changed.insert(fa[i].name());
    return changed;
}

}  // namespace rf
