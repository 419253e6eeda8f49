// Room — data: BERT's WordPiece tokenizer — the ids map to vocab.txt, the basic tokenizer's
// steps, greedy longest-match-first WordPiece, and BERT's decode. Reading an HF tokenizer
// directory is in wordpiece_files.cpp.
#include "data/wordpiece.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "data/unicode_text.hpp"
#include "data/utf8.hpp"

namespace rf::data {

namespace {

// Our id order: the five specials, then vocab.txt's other entries in file order.
std::vector<std::string> our_order(const std::vector<std::string>& file_tokens,
                                   std::vector<int>& file_ids) {
    if (file_tokens.size() > kMaxWordPieceVocab)
        throw std::invalid_argument("vocab.txt has " + std::to_string(file_tokens.size()) +
                                    " entries, over the limit of " +
                                    std::to_string(kMaxWordPieceVocab));
    std::unordered_map<std::string, int> line_of;
    for (size_t line = 0; line < file_tokens.size(); ++line) {
        if (file_tokens[line].empty())
            throw std::invalid_argument("vocab.txt line " + std::to_string(line + 1) +
                                        " is empty; every line must hold one token");
        if (count_invalid_utf8_bytes(file_tokens[line]) != 0)
            throw std::invalid_argument("vocab.txt line " + std::to_string(line + 1) +
                                        " is not valid UTF-8; save the file as UTF-8");
        const auto [it, fresh] = line_of.emplace(file_tokens[line], int(line));
        if (!fresh)
            throw std::invalid_argument(
                "vocab.txt has '" + file_tokens[line] + "' on lines " +
                std::to_string(it->second + 1) + " and " + std::to_string(line + 1) +
                " (BertTokenizer would never produce the first); remove one of them");
    }
    std::vector<std::string> vocab = special_vocab();
    std::vector<bool> is_special_line(file_tokens.size(), false);
    file_ids.clear();
    for (const std::string& special : vocab) {
        const auto found = line_of.find(special);
        if (found == line_of.end())
            throw std::invalid_argument("vocab.txt has no " + special +
                                        " line; a BERT vocabulary needs [PAD] [UNK] [CLS] "
                                        "[SEP] [MASK]");
        file_ids.push_back(found->second);
        is_special_line[size_t(found->second)] = true;
    }
    for (size_t line = 0; line < file_tokens.size(); ++line)
        if (!is_special_line[line]) {
            vocab.push_back(file_tokens[line]);
            file_ids.push_back(int(line));
        }
    return vocab;
}

}  // namespace

// ---- the ids and vocab.txt's line numbers -----------------------------------------------

std::unique_ptr<WordPieceTokenizer> WordPieceTokenizer::from_file_order(
    const std::vector<std::string>& file_tokens, bool do_lower_case, bool do_basic_tokenize) {
    std::vector<int> file_ids;
    auto vocab = our_order(file_tokens, file_ids);
    return std::make_unique<WordPieceTokenizer>(std::move(vocab), std::move(file_ids),
                                                do_lower_case, do_basic_tokenize);
}

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab, std::vector<int> file_ids,
                                       bool do_lower_case, bool do_basic_tokenize)
    : Tokenizer(std::move(vocab)),
      do_lower_case_(do_lower_case),
      do_basic_tokenize_(do_basic_tokenize),
      file_ids_(std::move(file_ids)) {
    if (vocab_.size() > kMaxWordPieceVocab)
        throw std::invalid_argument("a WordPiece vocabulary of " + std::to_string(vocab_.size()) +
                                    " entries is over the limit of " +
                                    std::to_string(kMaxWordPieceVocab));
    if (file_ids_.size() != vocab_.size())
        throw std::invalid_argument("file_ids has " + std::to_string(file_ids_.size()) +
                                    " entries for a vocabulary of " +
                                    std::to_string(vocab_.size()));
    id_of_file_.assign(vocab_.size(), -1);
    for (size_t id = 0; id < file_ids_.size(); ++id) {
        const int line = file_ids_[id];
        if (line < 0 || size_t(line) >= vocab_.size() || id_of_file_[size_t(line)] != -1)
            throw std::invalid_argument("file_ids is not a permutation of 0.." +
                                        std::to_string(vocab_.size() - 1) + " (entry " +
                                        std::to_string(id) + " is " + std::to_string(line) + ")");
        id_of_file_[size_t(line)] = int(id);
        identity_ = identity_ && line == int(id);
    }
    for (const std::string& token : vocab_)
        longest_entry_chars_ = std::max(longest_entry_chars_, decode_utf8(token).size());
}

int WordPieceTokenizer::file_id(int id) const {
    token(id);  // throws for an id outside the vocabulary
    return file_ids_[size_t(id)];
}

int WordPieceTokenizer::id_of_file_id(int file_id) const {
    if (file_id < 0 || size_t(file_id) >= id_of_file_.size())
        throw std::out_of_range("vocab.txt line number " + std::to_string(file_id) +
                                " is outside [0, " + std::to_string(id_of_file_.size()) + ")");
    return id_of_file_[size_t(file_id)];
}

std::vector<int> WordPieceTokenizer::to_file_ids(const std::vector<int>& ids) const {
    std::vector<int> lines;
    lines.reserve(ids.size());
    for (const int id : ids) lines.push_back(file_id(id));
    return lines;
}

std::vector<std::string> WordPieceTokenizer::file_order_vocab() const {
    std::vector<std::string> lines;
    lines.reserve(vocab_.size());
    for (const int id : id_of_file_) lines.push_back(vocab_[size_t(id)]);
    return lines;
}

std::string WordPieceTokenizer::json_extra_fields() const {
    return "  \"do_lower_case\": " + std::string(do_lower_case_ ? "true" : "false") +
           (do_basic_tokenize_ ? "" : ",\n  \"do_basic_tokenize\": false") +
           ",\n  \"file_ids\": " + nlohmann::json(file_ids_).dump() + ",\n";
}

// ---- BERT's basic tokenizer ---------------------------------------------------------------

namespace {

// clean_text: drop U+0000, U+FFFD and control / format / unassigned characters (\t \n \r
// excepted); every whitespace character becomes ' '.
std::u32string clean_text(const std::string& text) {
    std::u32string cleaned;
    size_t length = 0;
    for (size_t pos = 0; pos < text.size(); pos += length) {
        const char32_t cp = decode_one_utf8(text, pos, length);  // a bad byte gives U+FFFD
        if (unicode::is_dropped_by_bert(cp)) continue;
        cleaned.push_back(unicode::is_bert_whitespace(cp) ? U' ' : cp);
    }
    return cleaned;
}

// space_cjk: a space before and after every CJK ideograph, so each is a word of its own.
std::u32string space_cjk(const std::u32string& text) {
    std::u32string spaced;
    spaced.reserve(text.size());
    for (const char32_t cp : text) {
        if (unicode::is_cjk_ideograph(cp)) {
            spaced.push_back(U' ');
            spaced.push_back(cp);
            spaced.push_back(U' ');
        } else {
            spaced.push_back(cp);
        }
    }
    return spaced;
}

// lower_and_strip: NFD with the non-spacing marks dropped, then the lower case of each
// character (HF's BertNormalizer strips before it lower-cases).
std::u32string lower_and_strip(const std::u32string& text) {
    std::u32string lowered = unicode::strip_accents(text);
    for (char32_t& cp : lowered) cp = unicode::to_lower(cp);
    return lowered;
}

// split_words: whitespace separates words and is dropped; each punctuation character is a
// word of its own ("don't" → don ' t).
std::vector<std::u32string> split_words(const std::u32string& text) {
    std::vector<std::u32string> words;
    std::u32string word;
    const auto end_word = [&] {
        if (!word.empty()) words.push_back(std::move(word));
        word.clear();
    };
    for (const char32_t cp : text) {
        if (cp == U' ') {  // clean_text made every whitespace character ' '
            end_word();
        } else if (unicode::is_bert_punctuation(cp)) {
            end_word();
            words.emplace_back(1, cp);
        } else {
            word.push_back(cp);
        }
    }
    end_word();
    return words;
}

// Python's str.isspace() (what BertTokenizer's text.split() splits on without the basic
// tokenizer): \t \n \v \f \r, U+001C…U+001F, the space separators, U+0085, U+2028, U+2029.
bool is_python_space(char32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 ||
           cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

// do_basic_tokenize false: the words whitespace separates, nothing else changed.
std::vector<std::u32string> split_on_whitespace(const std::string& text) {
    std::vector<std::u32string> words(1);
    for (const char32_t cp : decode_utf8(text)) {
        if (!is_python_space(cp))
            words.back().push_back(cp);
        else if (!words.back().empty())
            words.emplace_back();
    }
    if (words.back().empty()) words.pop_back();
    return words;
}

}  // namespace

std::vector<std::u32string> WordPieceTokenizer::basic_tokenize(const std::string& text) const {
    std::u32string normalized = space_cjk(clean_text(text));
    if (do_lower_case_) normalized = lower_and_strip(normalized);
    return split_words(normalized);
}

// ---- WordPiece ------------------------------------------------------------------------------

// wordpiece_word: at each position the longest vocabulary entry that matches there ("##"
// before it unless at the word's start); none at some position → the whole word is [UNK].
void WordPieceTokenizer::wordpiece_word(const std::u32string& word, std::vector<int>& out) const {
    if (word.size() > kMaxWordPieceWordChars) {
        out.push_back(kUnkId);
        return;
    }
    std::vector<size_t> byte_at{0};  // byte offset of each code point in the UTF-8 word
    std::string bytes;
    for (const char32_t cp : word) {
        append_utf8(bytes, cp);
        byte_at.push_back(bytes.size());
    }
    const size_t first = out.size();
    for (size_t start = 0; start < word.size();) {
        const std::string prefix = start == 0 ? "" : "##";
        const size_t longest = longest_entry_chars_ - (start == 0 ? 0 : 2);
        int found = -1;
        size_t end = std::min(word.size(), start + longest);
        for (; end > start; --end) {
            found = id_of(prefix + bytes.substr(byte_at[start], byte_at[end] - byte_at[start]));
            if (found >= 0) break;
        }
        if (found < 0) {  // no entry continues the word here: the word is unknown
            out.resize(first);
            out.push_back(kUnkId);
            return;
        }
        out.push_back(found);
        start = end;
    }
}

void WordPieceTokenizer::encode_plain(const std::string& text, std::vector<int>& out) const {
    const auto words = do_basic_tokenize_ ? basic_tokenize(text) : split_on_whitespace(text);
    for (const std::u32string& word : words) wordpiece_word(word, out);
}

// BERT's convert_tokens_to_string: " ".join(tokens), " ##" removed, ends stripped.
std::string WordPieceTokenizer::decode(const std::vector<int>& ids, bool skip_framing) const {
    std::string text;
    for (const int id : ids) {
        const std::string& piece = token(id);
        if (skip_framing && (id == kPadId || id == kClsId || id == kSepId)) continue;
        if (!text.empty() && piece.rfind("##", 0) == 0)
            text += piece.substr(2);
        else
            text += (text.empty() ? "" : " ") + piece;
    }
    return text;
}

}  // namespace rf::data
