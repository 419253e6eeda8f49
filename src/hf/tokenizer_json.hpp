// Room — hf: our char and BPE tokenizers in the `tokenizers` library's tokenizer.json format, which
// HF's PreTrainedTokenizerFast loads (export_hf.hpp writes it beside the model), and back
// (import-hf and `roformer tokenize --tokenizer` read what export-hf wrote).
//
//   added_tokens    [PAD] [UNK] [CLS] [SEP] [MASK], matched whole in the text first, as our
//                   encode does with special literals
//   pre_tokenizer   char: none (the whole text is one piece). bpe: a Split on one regex that
//                   is data/tokenizer.hpp's pretokenize written as character classes:
//                     " ?W+| ?P|[\s\S]"   W a word character, P a punctuation character,
//                   (classify() in data/tokenizer.cpp), a space joined to the piece after it
//   model           BPE with our vocabulary and merges in rank order (none for char: one token
//                   per code point), [UNK] for each character it does not know
//   post_processor  [CLS] A [SEP] (and B [SEP] with type 1 for a pair)
//   decoder         Fuse: the tokens' strings concatenated, as our decode
// What it cannot say exactly, returned as notes: BPE's special literal absorbs one space before
// it in ours, all whitespace before it in the library (lstrip); our decode writes a space
// before a special token that follows a word, the library's Fuse does not.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/tokenizer.hpp"
#include "data/wordpiece.hpp"

namespace rf::hf {

// The tokenizer.json text of a "char" or "bpe" tokenizer; `notes` gets what differs.
std::string tokenizer_json(const data::Tokenizer& tokenizer, std::vector<std::string>& notes);

// The other way: a tokenizer.json that tokenizer_json() wrote → the char or BPE tokenizer
// (the same ids). Every key must hold what tokenizer_json() writes for that vocabulary and
// those merges; anything else (another normalizer, pre-tokenizer, model option, added token,
// truncation, …) is refused (std::runtime_error), naming `path` and the key.
std::unique_ptr<data::Tokenizer> tokenizer_from_json(const std::string& text,
                                                     const std::string& path);

// True when `text` is a JSON object in the `tokenizers` library's layout (a "model" key, no
// "type"): a tokenizer.json for tokenizer_from_json, not a run's own tokenizer file.
bool is_hf_tokenizer_json(const std::string& text);

// An exported directory's other tokenizer files beside tokenizer.json: the five special tokens
// only (data::check_special_token_files), tokenizer_class absent or PreTrainedTokenizerFast.
void check_fast_tokenizer_files(const data::WordPieceFileTexts& files, const std::string& dir);

// The regex of the BPE pre-tokenizer (the pattern above), as the JSON string holds it.
std::string pretokenizer_regex();

}  // namespace rf::hf
