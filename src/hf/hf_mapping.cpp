// Room — hf: the mapping between HF RoFormerForMaskedLM and a run (see hf_mapping.hpp).
#include "hf/hf_mapping.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "ropelab/layer_schemes.hpp"
#include "position/position.hpp"
#include "position/rope.hpp"
#include "tensor/format.hpp"

namespace rf::hf {

using Json = nlohmann::json;

bool is_token_indexed(const std::string& name) {
    return name == kWordEmbeddings || name == kDecoderBias;
}

size_t head_size(const Config& config) {
    return attention_head_size(config.model.hidden, config.model.num_heads);
}

namespace {

// One reader per JSON type; a key that is absent takes HF RoFormerConfig's default.
struct HfKeys {
    const Json& hf;
    const std::string& path;

    [[noreturn]] void refuse(const std::string& key, const std::string& why) const {
        throw std::invalid_argument(path + ": \"" + key + "\" " + why);
    }
    bool present(const char* key) const { return hf.contains(key) && !hf.at(key).is_null(); }
    size_t size(const char* key, size_t fallback) const {
        if (!present(key)) return fallback;
        const Json& v = hf.at(key);
        if (!v.is_number_unsigned() || v.get<uint64_t>() == 0)
            refuse(key, "is " + v.dump() +
                            ", not a positive integer; the file is not a valid "
                            "RoFormer config");
        return v.get<size_t>();
    }
    double number(const char* key, double fallback) const {
        if (!present(key)) return fallback;
        const Json& v = hf.at(key);
        if (!v.is_number() || !std::isfinite(v.get<double>()))
            refuse(key, "is " + v.dump() + ", not a finite number");
        return v.get<double>();
    }
    bool flag(const char* key, bool fallback) const {
        if (!present(key)) return fallback;
        if (!hf.at(key).is_boolean()) refuse(key, "is " + hf.at(key).dump() + ", not true/false");
        return hf.at(key).get<bool>();
    }
    std::string text(const char* key, const std::string& fallback) const {
        if (!present(key)) return fallback;
        if (!hf.at(key).is_string()) refuse(key, "is " + hf.at(key).dump() + ", not a string");
        return hf.at(key).get<std::string>();
    }
};

}  // namespace

Config config_from_hf(const Json& hf, const std::string& path) {
    if (!hf.is_object()) throw std::invalid_argument(path + " is not a JSON object");
    const HfKeys keys{hf, path};
    if (!keys.present("model_type"))
        keys.refuse("model_type", "is missing; an HF RoFormer config.json says \"roformer\"");
    const std::string type = keys.text("model_type", "");
    if (type != "roformer")
        keys.refuse("model_type", "is \"" + type +
                                      "\": only RoFormer checkpoints can be imported (a \"" + type +
                                      "\" model needs its own architecture)");
    if (keys.flag("is_decoder", false))
        keys.refuse("is_decoder",
                    "is true: a RoFormer decoder (causal, with a cache) is not "
                    "supported; import an encoder (RoFormerForMaskedLM) checkpoint");
    if (keys.flag("add_cross_attention", false))
        keys.refuse("add_cross_attention",
                    "is true: cross-attention to an encoder's output needs an encoder-decoder, "
                    "which roformer-cpp does not have");
    const std::string act = keys.text("hidden_act", "gelu");
    if (act != "gelu")
        keys.refuse("hidden_act", "is \"" + act +
                                      "\": roformer-cpp's feed-forward uses the exact "
                                      "GELU (\"gelu\") only; another activation needs its own op");
    const bool pruned = keys.present("pruned_heads") &&
                        (!hf.at("pruned_heads").is_structured() || !hf.at("pruned_heads").empty());
    if (pruned)
        keys.refuse("pruned_heads",
                    "is " + hf.at("pruned_heads").dump() +
                        ": a checkpoint with pruned attention heads has layers of different "
                        "widths, which roformer-cpp's model does not have; import the unpruned "
                        "checkpoint (or one saved with \"pruned_heads\": {})");
    if (!keys.flag("tie_word_embeddings", true))
        keys.refuse("tie_word_embeddings",
                    "is false: roformer-cpp's decoder is the word-embedding matrix (tied); an "
                    "untied decoder would need its own [V, E] parameter");

    Config c = default_config();
    ModelConfig& m = c.model;
    m.vocab_size = keys.size("vocab_size", 50000);
    m.hidden = keys.size("hidden_size", 768);
    const size_t embedding = keys.size("embedding_size", m.hidden);
    m.embedding_size = embedding == m.hidden ? 0 : embedding;
    m.num_layers = keys.size("num_hidden_layers", 12);
    m.num_heads = keys.size("num_attention_heads", 12);
    m.ffn = keys.size("intermediate_size", 3072);
    m.type_vocab_size = keys.size("type_vocab_size", 2);
    m.dropout = keys.number("hidden_dropout_prob", 0.1);
    m.attention_dropout = keys.number("attention_probs_dropout_prob", 0.1);
    m.layer_norm_eps = keys.number("layer_norm_eps", 1e-12);
    m.init_std = keys.number("initializer_range", 0.02);
    m.attention = AttentionKind::softmax;
    if (m.num_heads == 0 || m.hidden % m.num_heads != 0 || (m.hidden / m.num_heads) % 2 != 0)
        keys.refuse("num_attention_heads",
                    "= " + std::to_string(m.num_heads) +
                        " does not split hidden_size = " + std::to_string(m.hidden) +
                        " into heads of an even size (RoPE turns pairs)");

    PositionConfig& p = c.position;
    p.scheme = PositionKind::rope;
    p.pairing = RopePairing::interleaved;
    p.base = 10000.0;
    p.rotary_fraction = 1.0;
    p.rotate_values = keys.flag("rotary_value", false);
    p.max_positions = keys.size("max_position_embeddings", 1536);
    if (p.max_positions > kMaxHfPositions)
        keys.refuse("max_position_embeddings",
                    "is " + std::to_string(p.max_positions) + ", over the " +
                        std::to_string(kMaxHfPositions) +
                        " positions roformer-cpp accepts (its table of angles would not fit); "
                        "a real RoFormer checkpoint says 512 or 1536");

    c.train.objective = data::Objective::mlm;
    // An imported model was trained on no file of this machine: data.path names none, so no
    // command reads some data/kjv.txt relative to wherever the user stands (eval asks for
    // --set data.path=FILE; fine-tuning reads its task's own files).
    c.data.path = kImportedDataPath;
    // data.tokenizer / data.vocab_size say what `train` would learn (bpe | char); an imported
    // run's tokenizer is its tokenizer.json, which every command that reads the run loads. They
    // keep their defaults for a vocab.txt (kind wordpiece); read_hf_directory sets them for
    // export-hf's char or BPE tokenizer.json.
    // Evaluation windows: the longest input the model takes, capped so that eval's memory stays
    // small (data.seq_len may be changed at evaluation, --set data.seq_len=…).
    c.data.seq_len = std::min<size_t>(p.max_positions, 512);
    c.train.batch_size = 8;
    // An imported run is finished: its one checkpoint is at step train.steps (checkpoint.hpp).
    c.train.steps = 1;
    c.train.warmup_steps = 0;
    return c;
}

namespace {

// Our Config keys that config_from_hf fills from a config.json key.
constexpr std::pair<const char*, const char*> kHfKeyOf[] = {
    {"model.vocab_size", "vocab_size"},
    {"model.embedding_size", "embedding_size"},
    {"model.hidden", "hidden_size"},
    {"model.num_layers", "num_hidden_layers"},
    {"model.num_heads", "num_attention_heads"},
    {"model.ffn", "intermediate_size"},
    {"model.type_vocab_size", "type_vocab_size"},
    {"model.attention_dropout", "attention_probs_dropout_prob"},
    {"model.dropout", "hidden_dropout_prob"},
    {"model.layer_norm_eps", "layer_norm_eps"},
    {"model.init_std", "initializer_range"},
    {"position.rotate_values", "rotary_value"},
    {"position.max_positions", "max_position_embeddings"},
    {"data.seq_len", "max_position_embeddings"},
};

}  // namespace

std::string in_hf_terms(const std::string& message, const std::string& path) {
    std::string text = message;
    bool named = false;
    for (const auto& [ours, theirs] : kHfKeyOf)
        for (size_t at = text.find(ours); at != std::string::npos; at = text.find(ours, at)) {
            const std::string quoted = std::string("\"") + theirs + "\"";
            text.replace(at, std::string(ours).size(), quoted);
            at += quoted.size();
            named = true;
        }
    return path + ": " + text + (named ? "" : " (from this config.json)");
}

void require_hf_expressible(const Config& c) {
    auto refuse = [](const std::string& key, const std::string& value, const std::string& why) {
        throw std::invalid_argument(key + " = " + value + ": " + why +
                                    "; HF's RoFormer cannot express it, so the run cannot be "
                                    "exported");
    };
    const PositionConfig& p = c.position;
    if (p.scheme != PositionKind::rope)
        refuse("position.scheme", enum_name(p.scheme), "HF's RoFormer has RoPE only");
    const std::vector<bool> with_rope = layers_with_position(p, c.model.num_layers);
    for (size_t layer = 0; layer < with_rope.size(); ++layer)
        if (!with_rope[layer])  // "rope,rope" is RoPE in every layer: that one is exported
            refuse("position.layer_schemes", "\"" + p.layer_schemes + "\"",
                   "layer " + std::to_string(layer) +
                       " has no positions, but HF's RoFormer has RoPE in every layer");
    if (p.pairing != RopePairing::interleaved)
        refuse("position.pairing", enum_name(p.pairing),
               "HF's RoFormer pairs dims (2i, 2i+1) (interleaved)");
    if (p.rotary_fraction != 1.0)
        refuse("position.rotary_fraction", format_shortest(p.rotary_fraction),
               "HF's RoFormer rotates the whole head");
    if (p.rope_p != 1.0)
        refuse("position.rope_p", format_shortest(p.rope_p),
               "HF's RoFormer rotates every frequency pair (p-RoPE leaves some unrotated)");
    if (p.base != 10000.0)
        refuse("position.base", format_shortest(p.base), "HF's RoFormer's base is 10000");
    if (p.scaling != RopeScaling::none)
        refuse("position.scaling", enum_name(p.scaling), "HF's RoFormer has no RoPE scaling");
    if (p.interpolation_factor != 1.0)
        refuse("position.interpolation_factor", format_shortest(p.interpolation_factor),
               "HF's RoFormer has no position interpolation");
    if (p.ntk_factor != 1.0)
        refuse("position.ntk_factor", format_shortest(p.ntk_factor),
               "HF's RoFormer has no NTK scaling");
    if (p.xpos) refuse("position.xpos", "true", "HF's RoFormer has no xPos decay");
    if (p.learned_frequencies)
        refuse("position.learned_frequencies", "true", "HF's RoFormer's θ_i are fixed");
    if (c.model.attention != AttentionKind::softmax)
        refuse("model.attention", enum_name(c.model.attention),
               "HF's RoFormer has softmax attention only");
    if (c.train.objective != data::Objective::mlm)
        refuse("train.objective", enum_name(c.train.objective),
               "RoFormerForMaskedLM is a masked LM (a causal LM needs is_decoder, which "
               "roformer-cpp does not write)");
}

Json hf_config_from(const Config& c, size_t vocab_size, int pad_token_id) {
    const ModelConfig& m = c.model;
    Json hf = Json::object();
    hf["add_cross_attention"] = false;
    hf["architectures"] = Json::array({"RoFormerForMaskedLM"});
    hf["attention_probs_dropout_prob"] = m.attention_dropout;
    hf["bos_token_id"] = nullptr;
    hf["dtype"] = "float32";
    hf["embedding_size"] = embedding_width(m);
    hf["eos_token_id"] = nullptr;
    hf["hidden_act"] = "gelu";
    hf["hidden_dropout_prob"] = m.dropout;
    hf["hidden_size"] = m.hidden;
    hf["initializer_range"] = m.init_std;
    hf["intermediate_size"] = m.ffn;
    hf["is_decoder"] = false;
    hf["layer_norm_eps"] = m.layer_norm_eps;
    // The longest input HF accepts: the imported value, and never less than the windows the
    // run was trained on.
    hf["max_position_embeddings"] = std::max(c.position.max_positions, c.data.seq_len);
    hf["model_type"] = "roformer";
    hf["num_attention_heads"] = m.num_heads;
    hf["num_hidden_layers"] = m.num_layers;
    hf["pad_token_id"] = pad_token_id;
    hf["rotary_value"] = c.position.rotate_values;
    hf["tie_word_embeddings"] = true;
    hf["type_vocab_size"] = m.type_vocab_size;
    hf["use_cache"] = true;
    hf["vocab_size"] = vocab_size;
    return hf;
}

std::vector<float> hf_position_table(const Config& config, size_t rows) {
    const size_t D = head_size(config);
    const RopeOptions options = rope_options_from_config(config.position, D);
    const std::vector<double> theta = rope_frequencies(options).theta;  // θ_i, i < D/2
    const size_t half = theta.size();
    std::vector<float> table(rows * 2 * half);
    for (size_t m = 0; m < rows; ++m)
        for (size_t i = 0; i < half; ++i) {
            const double angle = double(m) * theta[i];
            table[m * 2 * half + i] = float(std::sin(angle));
            table[m * 2 * half + half + i] = float(std::cos(angle));
        }
    return table;
}

}  // namespace rf::hf
