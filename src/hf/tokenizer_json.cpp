// Room — hf: char and BPE tokenizers as tokenizer.json (see tokenizer_json.hpp).
#include "hf/tokenizer_json.hpp"

#include <memory>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "data/wordpiece.hpp"

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

namespace {

// The first key (a top-level one, or model.KEY) where `given` differs from `ours` ("" when
// none); `given`'s keys that `ours` lacks count, "version" aside.
std::string first_difference(const Json& given, const Json& ours) {
    for (const auto& [key, value] : ours.items()) {
        if (key == "version") continue;
        if (!given.contains(key)) return key;
        if (key == "model" && given[key].is_object()) {
            const std::string inner = first_difference(given[key], value);
            if (!inner.empty()) return "model." + inner;
        } else if (given[key] != value) {
            return key;
        }
    }
    for (const auto& [key, value] : given.items())
        if (!ours.contains(key) && key != "version") return key;
    return "";
}

[[noreturn]] void refuse(const std::string& path, const std::string& key, const std::string& why) {
    throw std::runtime_error(path + ": \"" + key + "\" " + why +
                             "; roformer-cpp reads only the tokenizer.json that export-hf writes "
                             "for a char or BPE run (or a BERT vocab.txt)");
}

}  // namespace

std::unique_ptr<data::Tokenizer> tokenizer_from_json(const std::string& text,
                                                     const std::string& path) {
    const Json doc = data::parse_hf_json(text, path);
    if (!doc.is_object()) throw std::runtime_error(path + " is not a JSON object");
    if (!doc.contains("model") || !doc["model"].is_object())
        refuse(path, "model", "is missing or not an object");
    const Json& model = doc["model"];
    if (!model.contains("type") || model["type"] != "BPE")
        refuse(path, "model.type", "is " + model.value("type", Json()).dump() + ", not \"BPE\"");
    const bool bpe = doc.contains("pre_tokenizer") && !doc["pre_tokenizer"].is_null();
    // The vocabulary by id, and the merges as [left, right] pairs.
    if (!model.contains("vocab") || !model["vocab"].is_object())
        refuse(path, "model.vocab", "is missing or not an object");
    std::vector<std::string> vocab(model["vocab"].size());
    for (const auto& [token, id] : model["vocab"].items()) {
        if (!id.is_number_unsigned() || id.get<uint64_t>() >= vocab.size() ||
            !vocab[id.get<size_t>()].empty())
            refuse(path, "model.vocab",
                   "gives '" + token + "' the id " + id.dump() +
                       ", which is not one of 0 … V−1 used once");
        vocab[id.get<size_t>()] = token;
    }
    std::vector<std::pair<std::string, std::string>> merges;
    if (model.contains("merges") && model["merges"].is_array())
        for (const Json& merge : model["merges"]) {
            if (!merge.is_array() || merge.size() != 2 || !merge[0].is_string() ||
                !merge[1].is_string())
                refuse(path, "model.merges",
                       "holds " + merge.dump() +
                           ", not a [left, right] pair (a \"left right\" string is ambiguous "
                           "when tokens hold spaces)");
            merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
        }
    std::unique_ptr<data::Tokenizer> tokenizer;
    try {
        if (bpe)
            tokenizer = std::make_unique<data::BpeTokenizer>(std::move(vocab), std::move(merges));
        else
            tokenizer = std::make_unique<data::CharTokenizer>(std::move(vocab));
    } catch (const std::invalid_argument& e) {
        refuse(path, "model", std::string("is not a ") + (bpe ? "BPE" : "char") +
                                  " vocabulary roformer-cpp can run (" + e.what() + ")");
    }
    // Everything else must be what tokenizer_json() writes for it: then the ids are ours.
    std::vector<std::string> notes;
    const Json ours = Json::parse(tokenizer_json(*tokenizer, notes));
    const std::string key = first_difference(doc, ours);
    if (!key.empty()) {
        const Json* given = key.rfind("model.", 0) == 0 ? &doc["model"] : &doc;
        const std::string inner = key.rfind("model.", 0) == 0 ? key.substr(6) : key;
        std::string shown = given->contains(inner) ? (*given)[inner].dump() : "absent";
        if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
        refuse(path, key,
               "is " + shown + ", not what roformer-cpp writes for a " + tokenizer->kind() +
                   " tokenizer (it would change the ids)");
    }
    return tokenizer;
}

bool is_hf_tokenizer_json(const std::string& text) {
    const Json doc = Json::parse(text, nullptr, false);
    return doc.is_object() && doc.contains("model") && !doc.contains("type");
}

void check_fast_tokenizer_files(const data::WordPieceFileTexts& files, const std::string& dir) {
    data::check_special_token_files(files, dir);
    if (files.tokenizer_config.empty()) return;
    const Json config = data::parse_hf_json(files.tokenizer_config, "tokenizer_config.json");
    if (config.contains("tokenizer_class") && !config["tokenizer_class"].is_null() &&
        config["tokenizer_class"] != "PreTrainedTokenizerFast")
        throw std::runtime_error(
            dir + "/tokenizer_config.json: \"tokenizer_class\" is " +
            config["tokenizer_class"].dump() +
            " but the directory has tokenizer.json and no vocab.txt; roformer-cpp reads it as "
            "PreTrainedTokenizerFast (what export-hf writes): set that, or add the vocab.txt");
}

}  // namespace rf::hf
