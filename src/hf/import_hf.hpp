// Room — hf: an HF RoFormer model directory → a finished run directory (`roformer import-hf`).
//
//   DIR/config.json            RoFormerConfig (hf_mapping.hpp: what is read, what is refused)
//   DIR/model.safetensors      F32, F16 or BF16 under HF's names (scripts/hf_to_safetensors.py
//                              makes it from a pytorch_model.bin)
//   DIR/vocab.txt              BERT's WordPiece vocabulary, one token a line (line = HF id)
//   DIR/tokenizer_config.json  optional: do_lower_case, do_basic_tokenize, tokenizer_class
//   DIR/special_tokens_map.json, DIR/added_tokens.json   optional: only the five specials
//   or, instead of vocab.txt:
//   DIR/tokenizer.json         the char or BPE tokenizer export-hf writes (tokenizer_json.hpp)
// A sharded checkpoint (model.safetensors.index.json) is refused: it is not read.
// →
//   RUN/config.toml (data.path names no file: kImportedDataPath), tokenizer.json (wordpiece,
//   or char / bpe), model.safetensors, checkpoint.json as
//   `roformer train` writes them (run/checkpoint.hpp), the checkpoint at step train.steps, so
//   every command reads RUN as a finished run; RUN/hf_source.json says where it came from
//   (the directory, each file's size and SHA-256, transformers_version).
//
// Written as one transaction (run/staged_directory.hpp): --out locked first, the files staged
// beside it and published by one rename; a refusal, a failure or a signal part way leaves
// nothing behind, and an existing non-empty --out is refused.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "data/tokenizer.hpp"
#include "io/safetensors.hpp"
#include "model/roformer.hpp"

namespace rf::hf {

inline constexpr const char* kSourceRecord = "hf_source.json";
// The longest path import-hf writes inside --out (the checkpoint's temporary), which
// check_staged_output_directory checks before anything is made.
inline constexpr const char* kLongestImportedName = "model.safetensors.tmp-<pid>";

// An HF checkpoint read and checked, ready to be written as a run (or compared in tests).
struct ImportedModel {
    Config config;
    std::unique_ptr<data::Tokenizer> tokenizer;
    std::unique_ptr<RoFormer> model;
    std::string dtype;                 // the file's dtype: "F32", "F16" or "BF16"
    std::string transformers_version;  // from config.json ("" when absent)
    double position_table_error = 0;   // max |HF's table − ours|
    std::vector<std::string> notes;    // what a user should know (printed by the command)
    // The source files read (config.json, model.safetensors, vocab.txt or tokenizer.json, and
    // the tokenizer's JSON files when present): name → {bytes, SHA-256}, for hf_source.json.
    std::map<std::string, std::pair<size_t, std::string>> files;
    // import_hf: the files of the run it published, each read back and checked.
    std::vector<std::string> written;
};

// Reads and checks DIR (every refusal: std::invalid_argument or std::runtime_error, one line
// naming the file, the key or the tensor, and what would be needed). Writes nothing.
ImportedModel read_hf_directory(const std::string& dir);

// read_hf_directory, then the run directory `out` (which must not exist or be empty).
ImportedModel import_hf(const std::string& dir, const std::string& out);

// Our id of each vocab.txt line (HF's id): [V]. A bijection onto 0 … V−1.
std::vector<int> our_ids_of_hf_lines(const data::Tokenizer& tokenizer);

// The dtype a safetensors file stores `name` in ("F32", "F16", "BF16", …; "" when absent).
std::string stored_dtype(const std::string& path, const std::string& name);

}  // namespace rf::hf
