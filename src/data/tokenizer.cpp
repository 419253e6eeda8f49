// Room — data: the tokenizer base class, the character tokenizer, the pre-tokenizer,
// and saving / loading (JSON). BPE training and encoding are in bpe.cpp.
#include "data/tokenizer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/json_whole.hpp"
#include "io/read_file.hpp"
#include "data/utf8.hpp"
#include "data/wordpiece.hpp"

namespace rf::data {

// ---- base class ------------------------------------------------------------------------

Tokenizer::Tokenizer(std::vector<std::string> vocab) : vocab_(std::move(vocab)) {
    if (vocab_.size() < kNumSpecialTokens)
        throw std::invalid_argument("tokenizer vocabulary has " + std::to_string(vocab_.size()) +
                                    " tokens; it needs at least the 5 special tokens");
    for (int id = 0; id < kNumSpecialTokens; ++id)
        if (vocab_[id] != kSpecialTokens[id])
            throw std::invalid_argument("tokenizer vocabulary id " + std::to_string(id) + " is '" +
                                        vocab_[id] + "', expected " + kSpecialTokens[id]);
    for (size_t id = 0; id < vocab_.size(); ++id) {
        if (vocab_[id].empty())
            throw std::invalid_argument("tokenizer token " + std::to_string(id) + " is empty");
        if (!index_.emplace(vocab_[id], static_cast<int>(id)).second)
            throw std::invalid_argument("tokenizer token '" + vocab_[id] +
                                        "' appears twice in the vocabulary");
    }
}

const std::string& Tokenizer::token(int id) const {
    if (id < 0 || static_cast<size_t>(id) >= vocab_.size())
        throw std::out_of_range("token id " + std::to_string(id) +
                                " is outside the vocabulary [0, " + std::to_string(vocab_.size()) +
                                ")");
    return vocab_[id];
}

int Tokenizer::id_of(const std::string& token) const {
    const auto found = index_.find(token);
    return found == index_.end() ? -1 : found->second;
}

std::string Tokenizer::display_token(int id) const {
    const std::string& text = token(id);
    if (is_special(id)) return text;
    std::string shown;
    for (const char c : text) {
        if (c == ' ')
            shown += "\u2581";  // ▁
        else if (c == '\n')
            shown += "\u21B5";  // ↵
        else if (c == '\t')
            shown += "\u2192";  // →
        else if (c == '\r')
            shown += "\\r";
        else
            shown += c;
    }
    return shown;
}

// Finds the special-token literal starting at text[pos], or -1.
static int special_literal_at(const std::string& text, size_t pos) {
    if (text[pos] != '[') return -1;
    for (int id = 0; id < kNumSpecialTokens; ++id)
        if (text.compare(pos, std::char_traits<char>::length(kSpecialTokens[id]),
                         kSpecialTokens[id]) == 0)
            return id;
    return -1;
}

std::vector<int> Tokenizer::encode(const std::string& text) const {
    std::vector<int> ids;
    size_t segment_start = 0;
    for (size_t pos = text.find('['); pos != std::string::npos; pos = text.find('[', pos + 1)) {
        const int special = special_literal_at(text, pos);
        if (special < 0) continue;
        size_t segment_end = pos;
        if (special_absorbs_space() && special != kUnkId && segment_end > segment_start &&
            text[segment_end - 1] == ' ')
            --segment_end;
        encode_plain(text.substr(segment_start, segment_end - segment_start), ids);
        ids.push_back(special);
        segment_start = pos + std::char_traits<char>::length(kSpecialTokens[special]);
        pos = segment_start - 1;
    }
    if (segment_start == 0)  // no special token: the text itself, not a copy of it
        encode_plain(text, ids);
    else
        encode_plain(text.substr(segment_start), ids);
    return ids;
}

std::vector<int> Tokenizer::encode_for_model(const std::string& text) const {
    std::vector<int> ids{kClsId};
    const auto body = encode(text);
    ids.insert(ids.end(), body.begin(), body.end());
    ids.push_back(kSepId);
    return ids;
}

std::string Tokenizer::decode(const std::vector<int>& ids, bool skip_framing) const {
    std::string text;
    for (const int id : ids) {
        const std::string& piece = token(id);
        if (is_special(id)) {
            if (skip_framing && (id == kPadId || id == kClsId || id == kSepId)) continue;
            if (special_absorbs_space() && id != kUnkId && !text.empty() && text.back() != ' ' &&
                text.back() != '\n' && text.back() != '\t')
                text += ' ';
        }
        text += piece;
    }
    return text;
}

// ---- pre-tokenizer -----------------------------------------------------------------------

enum class CharClass { Word, Space, OtherWhitespace, Punctuation };

static CharClass classify(char32_t cp) {
    if (cp == ' ') return CharClass::Space;
    if (cp == '\n' || cp == '\t' || cp == '\r' || cp == '\f' || cp == '\v')
        return CharClass::OtherWhitespace;
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9'))
        return CharClass::Word;
    if (cp < 0x80) return CharClass::Punctuation;
    // non-ASCII: letters unless in a punctuation / symbol / space block we know of
    const bool punctuation = (cp >= 0x80 && cp <= 0xBF) || cp == 0xD7 ||
                             cp == 0xF7 ||                      // Latin-1 symbols
                             (cp >= 0x2000 && cp <= 0x2BFF) ||  // punctuation, arrows, …
                             (cp >= 0x3000 && cp <= 0x303F) ||  // CJK punctuation
                             (cp >= 0xFF00 && cp <= 0xFF0F) || cp == kReplacementChar;
    return punctuation ? CharClass::Punctuation : CharClass::Word;
}

std::vector<std::string> pretokenize(const std::string& text) {
    std::vector<std::string> pieces;
    for_each_piece(text, [&](const std::string& piece) { pieces.push_back(piece); });
    return pieces;
}

void for_each_piece(const std::string& text,
                    const std::function<void(const std::string& piece)>& visit) {
    size_t pos = 0, length = 0;
    while (pos < text.size()) {
        const size_t start = pos;
        CharClass cls = classify(decode_one_utf8(text, pos, length));
        if (cls == CharClass::Space && pos + 1 < text.size()) {  // a space joins the piece after it
            size_t next_length = 0;
            const CharClass next = classify(decode_one_utf8(text, pos + 1, next_length));
            if (next == CharClass::Word || next == CharClass::Punctuation) {
                pos += 1;
                length = next_length;
                cls = next;
            }
        }
        pos += length;
        if (cls == CharClass::Word) {  // extend the run of word characters
            while (pos < text.size()) {
                const char32_t cp = decode_one_utf8(text, pos, length);
                if (classify(cp) != CharClass::Word) break;
                pos += length;
            }
        }
        visit(text.substr(start, pos - start));
    }
}

// ---- character tokenizer -----------------------------------------------------------------

CharTokenizer::CharTokenizer(std::vector<std::string> vocab) : Tokenizer(std::move(vocab)) {
    for (size_t id = kNumSpecialTokens; id < vocab_.size(); ++id) {
        const auto cps = decode_utf8(vocab_[id]);
        if (cps.size() != 1)
            throw std::invalid_argument("char tokenizer token '" + vocab_[id] +
                                        "' is not one character");
        char_ids_[cps[0]] = static_cast<int>(id);
    }
}

std::vector<char32_t> frequent_code_points(const std::string& text, size_t limit) {
    std::map<char32_t, size_t> counts;
    for (size_t pos = 0, length = 0; pos < text.size(); pos += length)  // as decode_utf8 does,
        ++counts[decode_one_utf8(text, pos, length)];                    // without its copy
    std::vector<std::pair<char32_t, size_t>> by_count(counts.begin(), counts.end());
    std::stable_sort(by_count.begin(), by_count.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    if (by_count.size() > limit) by_count.resize(limit);
    std::vector<char32_t> kept;
    for (const auto& [cp, count] : by_count) kept.push_back(cp);
    std::sort(kept.begin(), kept.end());
    return kept;
}

std::vector<std::string> special_vocab() {
    return std::vector<std::string>(kSpecialTokens, kSpecialTokens + kNumSpecialTokens);
}

std::unique_ptr<CharTokenizer> CharTokenizer::train(const std::string& text,
                                                    size_t max_vocab_size) {
    if (max_vocab_size <= kNumSpecialTokens)
        throw std::invalid_argument(
            "tokenizer.vocab_size must be greater than 5 (the special tokens), got " +
            std::to_string(max_vocab_size));
    auto vocab = special_vocab();
    for (const char32_t cp : frequent_code_points(text, max_vocab_size - kNumSpecialTokens))
        vocab.push_back(encode_utf8(cp));
    return std::make_unique<CharTokenizer>(std::move(vocab));
}

void CharTokenizer::encode_plain(const std::string& text, std::vector<int>& out) const {
    size_t length = 0;
    for (size_t pos = 0; pos < text.size(); pos += length) {
        const auto found = char_ids_.find(decode_one_utf8(text, pos, length));
        out.push_back(found == char_ids_.end() ? kUnkId : found->second);
    }
}

// ---- factory, save, load -------------------------------------------------------------------

std::unique_ptr<Tokenizer> train_tokenizer(const std::string& kind, const std::string& text,
                                           size_t vocab_size) {
    if (kind == "char") return CharTokenizer::train(text, vocab_size);
    if (kind == "bpe") return BpeTokenizer::train(text, vocab_size);
    throw std::invalid_argument("tokenizer.kind must be \"char\" or \"bpe\", got \"" + kind + "\"");
}

std::string Tokenizer::to_json() const {
    using nlohmann::json;
    // valid JSON written by hand with one token / merge per line, so the file reads well
    std::ostringstream out;
    out << "{\n  \"format\": \"roformer-cpp tokenizer\",\n  \"version\": 1,\n  \"type\": "
        << json(kind()).dump() << ",\n  \"special_tokens\": " << json(special_vocab()).dump() << ",\n"
        << json_extra_fields() << "  \"vocab\": [\n";
    for (size_t id = 0; id < vocab_.size(); ++id)
        out << "    " << json(vocab_[id]).dump() << (id + 1 < vocab_.size() ? ",\n" : "\n");
    out << "  ],\n  \"merges\": [\n";
    const auto merges = merge_list();
    for (size_t rank = 0; rank < merges.size(); ++rank)
        out << "    " << json::array({merges[rank].first, merges[rank].second}).dump()
            << (rank + 1 < merges.size() ? ",\n" : "\n");
    out << "  ]\n}\n";
    return out.str();
}

void Tokenizer::save(const std::string& path) const {
    // Whole or not at all: the bytes go to a temporary next to `path`, renamed over it when
    // complete (run directories use io/durable_file.hpp, which also fsyncs).
    const std::string bytes = to_json();
    const std::string temp = path + ".tmp-tokenizer";
    {
        std::ofstream out(temp, std::ios::binary);
        if (!out)
            throw std::runtime_error("cannot write tokenizer file '" + path +
                                     "'; check the directory exists");
        out << bytes;
        out.flush();
        if (!out) {
            out.close();
            std::remove(temp.c_str());
            throw std::runtime_error("failed while writing tokenizer file '" + path +
                                     "'; check free space");
        }
    }
    if (std::rename(temp.c_str(), path.c_str()) != 0) {
        std::remove(temp.c_str());
        throw std::runtime_error("cannot write tokenizer file '" + path + "' (" +
                                 std::strerror(errno) + ")");
    }
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
    return parse_tokenizer(read_regular_file(path, "tokenizer file",
                                             "give the tokenizer.json of a run directory",
                                             kMaxTokenizerBytes),
                           path);
}

std::unique_ptr<Tokenizer> parse_tokenizer(const std::string& text, const std::string& path) {
    nlohmann::json file;
    try {
        file = nlohmann::json::parse(text);
        const auto type = file.at("type").get<std::string>();
        auto vocab = file.at("vocab").get<std::vector<std::string>>();
        if (type == "char") return std::make_unique<CharTokenizer>(std::move(vocab));
        if (type == "bpe") {
            auto merges = file.at("merges").get<std::vector<std::pair<std::string, std::string>>>();
            return std::make_unique<BpeTokenizer>(std::move(vocab), std::move(merges));
        }
        if (type == "wordpiece") {
            // each id checked, never converted out of range (1e30 as an int is undefined)
            std::vector<int> file_ids;
            const nlohmann::json& ids = file.at("file_ids");
            if (!ids.is_array()) throw std::invalid_argument("\"file_ids\" is not a list");
            for (size_t i = 0; i < ids.size(); ++i) {
                const std::string shown = "file_ids[" + std::to_string(i) + "]";
                const uint64_t id = json_whole(ids[i], shown);
                if (id > uint64_t(std::numeric_limits<int>::max()))
                    throw std::invalid_argument("\"" + shown + "\" is " + ids[i].dump() +
                                                ", past the largest token id " +
                                                std::to_string(std::numeric_limits<int>::max()));
                file_ids.push_back(static_cast<int>(id));
            }
            return std::make_unique<WordPieceTokenizer>(std::move(vocab), std::move(file_ids),
                                                        file.at("do_lower_case").get<bool>(),
                                                        file.value("do_basic_tokenize", true));
        }
        throw std::invalid_argument("unknown type \"" + type +
                                    "\" (expected \"char\", \"bpe\" or \"wordpiece\")");
    } catch (const nlohmann::json::exception& e) {
        std::string what = e.what();  // "[json.exception.parse_error.101] parse error at …"
        if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos)
            what = what.substr(what.find("] ") + 2);
        throw std::runtime_error("tokenizer file '" + path +
                                 "' is not valid JSON of a tokenizer (" + what +
                                 "); use the tokenizer.json of a run directory");
    } catch (const std::exception& e) {
        throw std::runtime_error("tokenizer file '" + path + "' is not valid: " + e.what());
    }
}

}  // namespace rf::data
