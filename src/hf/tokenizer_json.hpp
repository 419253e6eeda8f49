// hf — our char and BPE tokenizers in the `tokenizers` library's tokenizer.json format, which
// HF's PreTrainedTokenizerFast loads (export_hf.hpp writes it beside the model).
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

#include <string>
#include <vector>

#include "data/tokenizer.hpp"

namespace rf::hf {

// The tokenizer.json text of a "char" or "bpe" tokenizer; `notes` gets what differs.
std::string tokenizer_json(const data::Tokenizer& tokenizer, std::vector<std::string>& notes);

// The regex of the BPE pre-tokenizer (the pattern above), as the JSON string holds it.
std::string pretokenizer_regex();

}  // namespace rf::hf
