// Room — hf: the one mapping between a Hugging Face RoFormerForMaskedLM and a roformer-cpp run,
// used by both directions (import_hf.hpp reads HF's files, export_hf.hpp writes them).
//
// Tensors: our parameter names already are HF's (model/roformer.hpp), so a tensor maps to the
// tensor of the same name, with three differences HF's files have and ours do not:
//   roformer.encoder.embed_positions.weight  [P, D]  HF's frozen sinusoidal table: row m holds
//       sin(m·θ_0 … m·θ_{D/2−1}) then cos(…), θ_i = 10000^(−2i/D) (HF's
//       RoFormerSinusoidalPositionalEmbedding). Our RoPE makes its angles from θ_i itself
//       (position/rope.hpp), so the table is checked against ours on import, written on export.
//   cls.predictions.decoder.weight / .bias  the decoder, tied to the word embeddings and the
//       decoder bias: HF does not store it; an older pytorch_model.bin may (the same values).
//   token rows  word_embeddings rows and cls.predictions.bias are indexed by token id, and an
//       HF id is a line of vocab.txt while ours puts the five specials first
//       (data/tokenizer.hpp): the rows are permuted with the tokenizer's id map.
//
// config.json ↔ Config: every key HF's RoFormerConfig has that changes the model is read
// (HF's default where it is absent, as from_pretrained does) or refused naming the key.
//
//   HF config.json                 Config
//   vocab_size                     model.vocab_size
//   hidden_size / embedding_size   model.hidden / model.embedding_size (0 when equal)
//   num_hidden_layers, num_attention_heads, intermediate_size
//                                  model.num_layers, model.num_heads, model.ffn
//   hidden_dropout_prob, attention_probs_dropout_prob
//                                  model.dropout, model.attention_dropout
//   layer_norm_eps, initializer_range, type_vocab_size
//                                  model.layer_norm_eps, model.init_std, model.type_vocab_size
//   rotary_value                   position.rotate_values (scheme rope, interleaved, base 10000)
//   max_position_embeddings        position.max_positions (the longest input HF accepts)
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"

namespace rf::hf {

inline constexpr const char* kPositionTable = "roformer.encoder.embed_positions.weight";
inline constexpr const char* kWordEmbeddings = "roformer.embeddings.word_embeddings.weight";
inline constexpr const char* kDecoderBias = "cls.predictions.bias";
inline constexpr const char* kTiedDecoderWeight = "cls.predictions.decoder.weight";
inline constexpr const char* kTiedDecoderBias = "cls.predictions.decoder.bias";

// True for the tensors whose rows are token ids (word embeddings, decoder bias).
bool is_token_indexed(const std::string& name);

// config.json (parsed) → a Config for an imported run; `path` names the file in messages.
// Refuses (std::invalid_argument, one line naming the key and what would be needed):
// model_type ≠ roformer, is_decoder, add_cross_attention, hidden_act ≠ gelu,
// tie_word_embeddings false, non-empty pruned_heads, a size that is not a positive integer,
// max_position_embeddings over kMaxHfPositions.
Config config_from_hf(const nlohmann::json& hf, const std::string& path);

// Refuses (std::invalid_argument, naming the key) a run HF's RoFormer cannot express: a
// position scheme other than RoPE interleaved over the whole head with base 10000 and no
// scaling or variant, linear attention, a causal LM.
void require_hf_expressible(const Config& config);

// The most positions (max_position_embeddings) an import accepts (position.max_positions' limit).
inline constexpr size_t kMaxHfPositions = 1'048'576;
// data.path of an imported run: no training text (eval needs --set data.path=FILE).
inline constexpr const char* kImportedDataPath =
    "(none: imported from Hugging Face; give --set data.path=FILE)";

// A message of validate(Config) about an imported config, in config.json's terms: our keys
// (position.max_positions, model.hidden, …) replaced by the keys of config.json they came from,
// prefixed with `path`.
std::string in_hf_terms(const std::string& message, const std::string& path);

// The config.json of RoFormerForMaskedLM for `config` (vocab_size from the model), with
// pad_token_id the HF id of [PAD].
nlohmann::json hf_config_from(const Config& config, size_t vocab_size, int pad_token_id);

// HF's frozen table [rows, D] in its layout (row m: the D/2 sines, then the D/2 cosines of
// m·θ_i), θ_i from our RoPE (rope_frequencies): computed in double, rounded to float.
std::vector<float> hf_position_table(const Config& config, size_t rows);

// The head size D of `config`.
size_t head_size(const Config& config);

}  // namespace rf::hf
