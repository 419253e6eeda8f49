// Room — data: BERT's WordPiece tokenizer, exactly as Hugging Face's BertTokenizer, for the
// pretrained checkpoints (BERT, the RoFormer character models) whose vocab.txt we import.
//
// Text → ids in BERT's steps (Devlin et al. 2019; Wu et al. 2016 for WordPiece; HF `tokenizers`'
// BertNormalizer, BertPreTokenizer and WordPiece model, which transformers' BertTokenizer runs):
// (do_basic_tokenize false skips clean_text … split_words: WordPiece runs on the words that
// whitespace separates, as BertTokenizer's `text.split()`, with no other change to the text.)
//   special literals   [PAD] [UNK] [CLS] [SEP] [MASK] in the text are cut out first and kept
//                      whole, case-sensitively (Tokenizer::encode; HF's "never split" tokens)
//   clean_text         U+0000, U+FFFD and control / format / unassigned characters dropped;
//                      \t \n \r and every space separator become ' '
//   space_cjk          a space on both sides of each CJK ideograph: one token per character
//   lower_and_strip    when do_lower_case: NFD, non-spacing marks dropped, then lower case
//   split_words        on whitespace, then each punctuation character a word of its own
//   wordpiece_word     greedy longest-match-first: the longest vocabulary entry that starts
//                      the word, then the longest "##" entry that continues it, …; a word with
//                      no such split, or over 100 code points, becomes one [UNK]
// The character classes come from libutf8proc (unicode_text.hpp).
//
// Ids. The project's rule holds: ids 0..4 are [PAD] [UNK] [CLS] [SEP] [MASK]; the other
// vocab.txt entries follow in file order. A real vocab.txt puts the specials elsewhere (the
// Chinese BERT / RoFormer files: [PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103), so the
// tokenizer keeps the map both ways between our id and the vocab.txt line number ("file id",
// = HF's input_ids); the importer permutes the embedding rows with the same map.
// decode is BERT's convert_tokens_to_string: tokens joined by spaces, then " ##" removed.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/tokenizer.hpp"

namespace rf::data {

// At most as many entries as a model may have token rows (model.vocab_size's limit).
inline constexpr size_t kMaxWordPieceVocab = 1'000'000;
// BERT's max_input_chars_per_word: a longer word is [UNK] (counted in code points).
inline constexpr size_t kMaxWordPieceWordChars = 100;

class WordPieceTokenizer final : public Tokenizer {
public:
    // vocab.txt's entries in file order (line n is file id n). Throws std::invalid_argument
    // naming a missing special token, a duplicate entry (HF would let the later line win and
    // leave the earlier id unused; we refuse) or an empty one.
    static std::unique_ptr<WordPieceTokenizer> from_file_order(
        const std::vector<std::string>& file_tokens, bool do_lower_case,
        bool do_basic_tokenize = true);
    // As saved: vocab in our id order, file_ids[id] = its vocab.txt line (a permutation).
    WordPieceTokenizer(std::vector<std::string> vocab, std::vector<int> file_ids,
                       bool do_lower_case, bool do_basic_tokenize = true);

    std::string kind() const override { return "wordpiece"; }
    bool do_lower_case() const { return do_lower_case_; }
    // False: no basic tokenizer, WordPiece on the whitespace-separated words of the raw text.
    bool do_basic_tokenize() const { return do_basic_tokenize_; }

    int file_id(int id) const;             // throws std::out_of_range for a bad id
    int id_of_file_id(int file_id) const;  // throws std::out_of_range for a bad line number
    bool file_order_is_identity() const { return identity_; }
    std::vector<int> to_file_ids(const std::vector<int>& ids) const;
    std::vector<std::string> file_order_vocab() const;  // vocab.txt's lines, in order

    // The words BERT's basic tokenizer makes of `text` (no special literals handled here):
    // clean_text, space_cjk, lower_and_strip, split_words.
    std::vector<std::u32string> basic_tokenize(const std::string& text) const;
    // Appends the ids of one word (wordpiece_word).
    void wordpiece_word(const std::u32string& word, std::vector<int>& out) const;

    std::string decode(const std::vector<int>& ids, bool skip_framing = false) const override;

private:
    void encode_plain(const std::string& text, std::vector<int>& out) const override;
    bool special_absorbs_space() const override { return false; }
    std::string json_extra_fields() const override;

    bool do_lower_case_;
    bool do_basic_tokenize_;
    std::vector<int> file_ids_;    // our id → vocab.txt line
    std::vector<int> id_of_file_;  // vocab.txt line → our id
    bool identity_ = true;
    size_t longest_entry_chars_ = 0;  // code points of the longest entry ("##" included)
};

// The text of an HF tokenizer directory's files ("" for a file that is absent).
struct WordPieceFileTexts {
    std::string vocab_txt;           // vocab.txt (a UTF-8 byte-order mark at its start is dropped)
    std::string tokenizer_config;    // tokenizer_config.json
    std::string special_tokens_map;  // special_tokens_map.json
    std::string added_tokens;        // added_tokens.json
};
// The optional JSON files of a tokenizer directory, as the names WordPieceFileTexts holds.
inline const char* const kTokenizerJsonFiles[] = {"tokenizer_config.json",
                                                  "special_tokens_map.json", "added_tokens.json"};

// An HF tokenizer directory: DIR/vocab.txt, and the JSON files above when present. Read from
// tokenizer_config.json: do_lower_case (true when absent, as BertTokenizer), do_basic_tokenize
// (true when absent). Refused with one line naming the file and the key:
// tokenize_chinese_chars = false, strip_accents that differs from do_lower_case, a non-empty
// never_split, split_special_tokens = true, a tokenizer_class other than BertTokenizer (RoFormerTokenizer segments with
// jieba first), special tokens other than the five (in tokenizer_config.json,
// special_tokens_map.json or added_tokens.json alike), too large a file or vocabulary.
std::unique_ptr<WordPieceTokenizer> load_wordpiece_directory(const std::string& dir);
// The same from the files' text; `dir` only labels messages (tests/fuzz use it).
std::unique_ptr<WordPieceTokenizer> parse_wordpiece_files(const WordPieceFileTexts& files,
                                                          const std::string& dir);
// The same with vocab.txt and tokenizer_config.json only (config_json "" when absent).
std::unique_ptr<WordPieceTokenizer> parse_wordpiece_files(const std::string& vocab_txt,
                                                          const std::string& config_json,
                                                          const std::string& dir);

// The special-token settings of tokenizer_config.json, special_tokens_map.json and
// added_tokens.json (whichever `files` holds), with the rules above; the vocabulary is not read.
void check_special_token_files(const WordPieceFileTexts& files, const std::string& dir);

// An HF file's JSON; a parse error becomes one line "NAME is not valid JSON (line L, column C):
// what" (std::runtime_error), without the library's "[json.exception…]" prefix; a number beyond
// a double (1e400) one line naming its key and place. A UTF-8 byte-order mark at the start is
// dropped.
nlohmann::json parse_hf_json(const std::string& text, const std::string& name);

}  // namespace rf::data
