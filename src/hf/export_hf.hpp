// Room — hf: a pre-training run → an HF RoFormerForMaskedLM directory (`roformer export-hf`).
//
//   RUN (config.toml, tokenizer.json, model.safetensors)
// →
//   DIR/config.json         RoFormerForMaskedLM's config (hf_mapping.hpp, hf_config_from)
//   DIR/model.safetensors   F32 under HF's names, token rows in HF's id order, plus HF's frozen
//                           sinusoidal table roformer.encoder.embed_positions.weight
//   the tokenizer:
//     wordpiece  DIR/vocab.txt + DIR/tokenizer_config.json (BertTokenizer), lines in the
//                order the imported vocab.txt had them
//     char, bpe  DIR/tokenizer.json (the tokenizers library's format: tokenizer_json.hpp; its
//                notes say what it cannot express exactly) + tokenizer_config.json
//                (PreTrainedTokenizerFast)
// so that RoFormerForMaskedLM.from_pretrained(DIR) loads it with no code.
//
// Only what HF's RoFormer can express is exported (require_hf_expressible names the key of
// anything else). DIR must not exist or be empty; each file is written like every command's
// output (io/output_file.hpp: temporary, rename, a .written-by mark) into a staging directory
// published by one rename (run/staged_directory.hpp): a failure or a signal part way leaves
// nothing behind.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"
#include "data/tokenizer.hpp"
#include "io/safetensors.hpp"
#include "model/roformer.hpp"

namespace rf::hf {

struct ExportedFiles {
    std::vector<std::string> written;  // file names inside DIR, in the order written
    std::vector<std::string> notes;    // what could not be expressed (printed by the command)
    size_t step = 0;                   // the step of the model exported (LoadedRun::step)
};

// The tensors of model.safetensors as HF stores them (names sorted), from a model and the
// tokenizer whose ids its rows use.
std::vector<NamedTensor> hf_tensors(const RoFormer& model, const Config& config,
                                    const data::Tokenizer& tokenizer);

ExportedFiles export_hf(const std::string& run_dir, const std::string& out_dir);

// The longest path export-hf writes inside --out (an output file's mark's temporary:
// io/output_file.hpp), which check_staged_output_directory checks before anything is made.
inline constexpr const char* kLongestExportedName = "tokenizer_config.json.written-by.tmp-<pid>";

}  // namespace rf::hf
