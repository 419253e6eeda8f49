// Room — data: the Unicode facts BERT's WordPiece tokenizer asks about a character, from
// libutf8proc (its Unicode Character Database tables, not tables of ours).
//
// Each predicate is one rule of BERT's text normalisation (Devlin et al. 2019, the released
// tokenization.py; Hugging Face's BertNormalizer and BertPreTokenizer in `tokenizers`, which
// is what transformers' BertTokenizer runs). wordpiece.cpp names where each one is used.
#pragma once

#include <string>

namespace rf::data::unicode {

// Dropped by BERT's clean-text step: U+0000, U+FFFD, and every "other" character — general
// category Cc, Cf, Cs, Co or Cn — except \t \n \r, which count as whitespace.
bool is_dropped_by_bert(char32_t cp);

// Whitespace for BERT: \t \n \r and the space separators (Zs), line (Zl) and paragraph (Zp)
// separators — the White_Space characters that the clean-text step has not dropped.
bool is_bert_whitespace(char32_t cp);

// Punctuation for BERT: every P* category (Pc Pd Ps Pe Pi Pf Po), and all printable ASCII
// that is not a letter or digit (33–47, 58–64, 91–96, 123–126: so $ + < = > ^ ` | ~, which
// Unicode files as symbols, count too).
bool is_bert_punctuation(char32_t cp);

// A CJK ideograph in the blocks BERT puts spaces around: the Unified Ideographs and their
// extensions A–E, and the two Compatibility Ideographs blocks (not kana, not Hangul).
bool is_cjk_ideograph(char32_t cp);

// Canonical decomposition (NFD, with canonical reordering) of `text`, then every non-spacing
// mark (category Mn) removed: "café" → "cafe", "Straße" unchanged. `text` holds code points.
std::u32string strip_accents(const std::u32string& text);

// The simple lower-case mapping of UnicodeData.txt ("Ä" → "ä", "Σ" → "σ", never context
// dependent). Full lower-casing differs only for U+0130 'İ' → "i̇", whose dot strip_accents
// has already removed (BERT strips accents before it lower-cases).
char32_t to_lower(char32_t cp);

}  // namespace rf::data::unicode
