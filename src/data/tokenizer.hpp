// Room — data: tokenizers, from text to the integer ids the model embeds, and back.
//
// Ids 0..4 are always the special tokens [PAD] [UNK] [CLS] [SEP] [MASK]; learned tokens
// follow. Two kinds, both trained on the training split:
//   CharTokenizer  one token per Unicode code point seen in training; unseen → [UNK].
//   BpeTokenizer   character-level byte-pair encoding with [UNK] (not byte-level): the base
//                  alphabet is the code points seen in training, merges are learned on
//                  word counts (see bpe.cpp). A space belongs to the word after it, so
//                  " heaven" is one token and decode is plain concatenation.
// A third kind is imported, not trained: BERT's WordPiece on a Hugging Face vocab.txt
// (WordPieceTokenizer, wordpiece.hpp: its own text rules, and decode joins with spaces).
// Whitespace: token strings hold real spaces and newlines (display_token shows ' ' as '▁'
// and '\n' as '↵'), so decode(encode(text)) == text for any valid UTF-8 text whose
// characters were all seen in training. Invalid UTF-8 bytes decode to U+FFFD (→ [UNK]
// unless U+FFFD was seen); nothing throws on bad input.
// Special-token literals in the text ("[MASK]", also [PAD] [UNK] [CLS] [SEP]) encode to
// their ids. With BPE a single space right before a literal other than [UNK] is absorbed
// by it (the literal stands for a whole word, and BPE words carry their leading space), and
// decode writes a space before such a token when it follows a non-space character. So
// "the [MASK] and" ↔ [the, [MASK], ▁and] exactly; "the[MASK]" decodes as "the [MASK]".
// [UNK] stands for one unknown character and is written back with no space.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rf::data {

constexpr int kPadId = 0, kUnkId = 1, kClsId = 2, kSepId = 3, kMaskId = 4;
constexpr int kNumSpecialTokens = 5;
inline const char* const kSpecialTokens[kNumSpecialTokens] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]",
                                                              "[MASK]"};

class Tokenizer {
public:
    virtual ~Tokenizer() = default;
    virtual std::string kind() const = 0;  // "char", "bpe" or "wordpiece" (wordpiece.hpp)

    // Ids of `text`, no framing added; special-token literals become their ids.
    std::vector<int> encode(const std::string& text) const;
    // What the model receives for one sentence: [CLS] encode(text) [SEP].
    std::vector<int> encode_for_model(const std::string& text) const;
    // Concatenated token strings; special tokens are written as their literals, or dropped
    // for [PAD] [CLS] [SEP] when skip_framing. Ids outside the vocabulary throw.
    // (WordPiece joins its tokens with spaces instead: wordpiece.hpp.)
    virtual std::string decode(const std::vector<int>& ids, bool skip_framing = false) const;

    size_t vocab_size() const { return vocab_.size(); }
    const std::vector<std::string>& vocab() const { return vocab_; }
    const std::string& token(int id) const;     // throws std::out_of_range for a bad id
    int id_of(const std::string& token) const;  // -1 when not in the vocabulary
    std::string display_token(int id) const;  // printable: ' ' → '▁', '\n' → '↵', '\t' → '→'
    static bool is_special(int id) { return id >= 0 && id < kNumSpecialTokens; }

    // One JSON file: {"type", "special_tokens", "vocab": [token by id], "merges": [[a, b], ...]}.
    std::string to_json() const;
    // to_json() into `path`, whole or not at all (temporary file, then a rename).
    void save(const std::string& path) const;

protected:
    explicit Tokenizer(std::vector<std::string> vocab);  // checks specials at 0..4, no duplicates
    virtual void encode_plain(const std::string& text, std::vector<int>& out) const = 0;
    virtual bool special_absorbs_space() const = 0;
    virtual std::vector<std::pair<std::string, std::string>> merge_list() const { return {}; }
    // Lines that to_json() writes before "vocab", each `  "key": value,\n` (WordPiece's).
    virtual std::string json_extra_fields() const { return ""; }

    std::vector<std::string> vocab_;
    std::unordered_map<std::string, int> index_;
};

class CharTokenizer final : public Tokenizer {
public:
    // vocab: the 5 specials, then one code point per token (as saved).
    explicit CharTokenizer(std::vector<std::string> vocab);
    // The code points of `text`; at most max_vocab_size − 5 of them, the most frequent.
    static std::unique_ptr<CharTokenizer> train(const std::string& text, size_t max_vocab_size);
    std::string kind() const override { return "char"; }

private:
    void encode_plain(const std::string& text, std::vector<int>& out) const override;
    bool special_absorbs_space() const override { return false; }
    std::unordered_map<char32_t, int> char_ids_;
};

class BpeTokenizer final : public Tokenizer {
public:
    // vocab: specials, then any tokens; every multi-character token must be the result of a
    // merge in `merges` (rank order), each merge's parts and result must be in vocab.
    BpeTokenizer(std::vector<std::string> vocab,
                 std::vector<std::pair<std::string, std::string>> merges);
    // Learns merges on `text` until the vocabulary has vocab_size tokens (or no pair occurs
    // twice). Throws std::invalid_argument if vocab_size < 5 + 1.
    static std::unique_ptr<BpeTokenizer> train(const std::string& text, size_t vocab_size);
    std::string kind() const override { return "bpe"; }
    size_t n_merges() const { return merges_.size(); }

private:
    struct Merge {
        int left, right, result;
    };
    void encode_plain(const std::string& text, std::vector<int>& out) const override;
    bool special_absorbs_space() const override { return true; }
    std::vector<std::pair<std::string, std::string>> merge_list() const override;
    std::vector<int> encode_piece(const std::string& piece) const;

    std::unordered_map<char32_t, int> char_ids_;
    std::vector<Merge> merges_;                                        // rank order
    std::unordered_map<uint64_t, int> merge_rank_;                     // (left, right) → rank
    mutable std::unordered_map<std::string, std::vector<int>> cache_;  // piece → ids
    mutable std::mutex cache_mutex_;
};

// Splits text into the pieces BPE works on: runs of word characters (ASCII letters and
// digits and any non-ASCII letter-like code point), single punctuation characters, single
// newlines / tabs; a space joins the piece after it (" the", " ,"), a space followed by
// whitespace or the end is a piece of its own. Concatenating the pieces gives the text.
std::vector<std::string> pretokenize(const std::string& text);
// The same pieces, one at a time, without holding them all (a training split's pieces as
// strings would take several times the text's bytes: docs/performance.md).
void for_each_piece(const std::string& text,
                    const std::function<void(const std::string& piece)>& visit);

// The special tokens' strings, ids 0..4 (the start of every vocabulary).
std::vector<std::string> special_vocab();

// The `limit` most frequent code points of `text` (ties: smaller code point first), sorted by
// code point: the alphabet of both tokenizers.
std::vector<char32_t> frequent_code_points(const std::string& text, size_t limit);

// kind "char" or "bpe" (a WordPiece vocabulary is imported, never trained); vocab_size is
// the target size for BPE and an upper bound for char.
std::unique_ptr<Tokenizer> train_tokenizer(const std::string& kind, const std::string& text,
                                           size_t vocab_size);

// A tokenizer file larger than this is refused before it is read (BPE 2000 is ~40 kB).
inline constexpr uint64_t kMaxTokenizerBytes = uint64_t(256) << 20;

// Reads a file written by Tokenizer::save (any kind, "wordpiece" included); one-line errors
// name the file and the problem (missing, a directory or FIFO, too large, malformed JSON, an
// inconsistent vocabulary).
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path);
// The same from the file's text; `path` only names it in messages (tests/fuzz use it).
std::unique_ptr<Tokenizer> parse_tokenizer(const std::string& text, const std::string& path);

}  // namespace rf::data
