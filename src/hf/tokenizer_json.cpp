// hf — char and BPE tokenizers as tokenizer.json (see tokenizer_json.hpp).
#include "hf/tokenizer_json.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace rf::hf {

using Json = nlohmann::json;

// classify() in data/tokenizer.cpp as regex classes (BMP escapes, which Oniguruma — the
// library's engine — and JavaScript both read): P its Punctuation; W its Word, every code point
// that is not P, not a space and not \t \n \v \f \r. Anything else (a space before
// whitespace or at the end, \n, \t, …) is a piece of one character.
std::string pretokenizer_regex() {
    const std::string non_ascii_punctuation =
        "\\x7B-\\xBF\\xD7\\xF7\\u2000-\\u2BFF\\u3000-\\u303F\\uFF00-\\uFF0F\\uFFFD";
    const std::string punctuation =
        "[\\x00-\\x08\\x0E-\\x1F\\x21-\\x2F\\x3A-\\x40\\x5B-\\x60" + non_ascii_punctuation + "]";
    const std::string word = "[^\\x00-\\x2F\\x3A-\\x40\\x5B-\\x60" + non_ascii_punctuation + "]";
    return " ?" + word + "+| ?" + punctuation + "|[\\s\\S]";
}

std::string tokenizer_json(const data::Tokenizer& t, std::vector<std::string>& notes) {
    const bool bpe = t.kind() == "bpe";
    if (!bpe && t.kind() != "char")
        throw std::invalid_argument("no tokenizer.json for a " + t.kind() + " tokenizer");
    Json vocab = Json::object(), added = Json::array();
    for (size_t id = 0; id < t.vocab_size(); ++id) {
        vocab[t.token(int(id))] = id;
        if (!data::Tokenizer::is_special(int(id))) continue;
        // BPE: a literal other than [UNK] takes the space before it (data/tokenizer.hpp).
        const bool lstrip = bpe && int(id) != data::kUnkId;
        added.push_back({{"id", id},
                         {"content", t.token(int(id))},
                         {"single_word", false},
                         {"lstrip", lstrip},
                         {"rstrip", false},
                         {"normalized", false},
                         {"special", true}});
    }
    auto special = [](const char* name, int type) {
        return Json{{"SpecialToken", {{"id", name}, {"type_id", type}}}};
    };
    auto sequence = [](const char* name, int type) {
        return Json{{"Sequence", {{"id", name}, {"type_id", type}}}};
    };
    const Json post = {
        {"type", "TemplateProcessing"},
        {"single", {special("[CLS]", 0), sequence("A", 0), special("[SEP]", 0)}},
        {"pair",
         {special("[CLS]", 0), sequence("A", 0), special("[SEP]", 0), sequence("B", 1),
          special("[SEP]", 1)}},
        {"special_tokens",
         {{"[CLS]", {{"id", "[CLS]"}, {"ids", {data::kClsId}}, {"tokens", {"[CLS]"}}}},
          {"[SEP]", {{"id", "[SEP]"}, {"ids", {data::kSepId}}, {"tokens", {"[SEP]"}}}}}}};
    // Merges as [left, right] pairs: our tokens hold spaces, so "left right" would be ambiguous.
    const Json merges = bpe ? Json::parse(t.to_json())["merges"] : Json::array();
    const Json model = {{"type", "BPE"},
                        {"dropout", nullptr},
                        {"unk_token", "[UNK]"},
                        {"continuing_subword_prefix", nullptr},
                        {"end_of_word_suffix", nullptr},
                        {"fuse_unk", false},
                        {"byte_fallback", false},
                        {"ignore_merges", false},
                        {"vocab", vocab},
                        {"merges", merges}};
    const Json pre = bpe ? Json{{"type", "Split"},
                                {"pattern", {{"Regex", pretokenizer_regex()}}},
                                {"behavior", "Isolated"},
                                {"invert", false}}
                         : Json(nullptr);
    const Json doc = {
        {"version", "1.0"},       {"truncation", nullptr},         {"padding", nullptr},
        {"added_tokens", added},  {"normalizer", nullptr},         {"pre_tokenizer", pre},
        {"post_processor", post}, {"decoder", {{"type", "Fuse"}}}, {"model", model}};
    if (bpe)
        notes.push_back(
            "tokenizer.json: before a special literal such as [MASK] ours takes one "
            "space into it and the library all the whitespace there (the same for a "
            "single space)");
    notes.push_back(
        "tokenizer.json decodes by concatenation; ours also writes a space before a "
        "special token that follows a word");
    return doc.dump(2) + "\n";
}

}  // namespace rf::hf
