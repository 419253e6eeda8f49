// Room — data: reading a Hugging Face tokenizer directory into a WordPieceTokenizer —
// vocab.txt (one entry a line; line n is HF's id n) and tokenizer_config.json's settings, each
// either the one our tokenizer implements or refused with the key named.
#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/wordpiece.hpp"
#include "io/read_file.hpp"

namespace rf::data {

namespace {

// A tokenizer_config.json larger than this is refused (the largest we know list every added
// token: a few hundred kB).
constexpr uint64_t kMaxTokenizerConfigBytes = uint64_t(16) << 20;

// vocab.txt's lines as BertTokenizer's load_vocab reads them: Python text mode, so "\n",
// "\r\n" and "\r" all end a line, and a last line needs no line end.
// A UTF-8 byte-order mark before the first line is not part of it (Python's utf-8 codec would
// keep it in the first token, and the [PAD] on that line would not be found).
std::vector<std::string> vocab_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::string line;
    const size_t bom = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
    for (size_t pos = bom; pos < text.size(); ++pos) {
        const char c = text[pos];
        if (c == '\n' || c == '\r') {
            lines.push_back(std::move(line));
            line.clear();
            if (c == '\r' && pos + 1 < text.size() && text[pos + 1] == '\n') ++pos;
        } else {
            line += c;
        }
    }
    if (!line.empty()) lines.push_back(std::move(line));
    return lines;
}

// One refusal: the file, the key, why and what to do.
[[noreturn]] void refuse(const std::string& file, const std::string& key, const std::string& why) {
    throw std::invalid_argument(file + ": " + key + " " + why);
}

// A token setting's text: "[UNK]" or {"content": "[UNK]", …} ("" for anything else).
std::string content_of(const nlohmann::json& value) {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_object() && value.contains("content") && value["content"].is_string())
        return value["content"].get<std::string>();
    return "";
}

// One special-token setting ("unk_token": "[UNK]" or {"content": "[UNK]", …}) must name
// the literal our ids 0..4 hold.
void check_special(const nlohmann::json& config, const std::string& file, const std::string& key,
                   const std::string& literal) {
    if (!config.contains(key) || config[key].is_null()) return;
    const auto& value = config[key];
    if (content_of(value) != literal)
        refuse(file, key,
               "is " + value.dump() + "; only BERT's " + literal +
                   " is supported (the five specials [PAD] [UNK] [CLS] [SEP] [MASK])");
}

bool is_one_of_the_specials(const std::string& content) {
    const auto specials = special_vocab();
    return std::find(specials.begin(), specials.end(), content) != specials.end();
}

// The special-token settings tokenizer_config.json and special_tokens_map.json share: the five
// must be BERT's, and no other token may be added.
void check_special_settings(const nlohmann::json& config, const std::string& file) {
    if (!config.is_object()) refuse(file, "(the whole file)", "is not a JSON object");
    const char* const keys[kNumSpecialTokens] = {"pad_token", "unk_token", "cls_token", "sep_token",
                                                 "mask_token"};
    for (int id = 0; id < kNumSpecialTokens; ++id)
        check_special(config, file, keys[id], kSpecialTokens[id]);
    if (config.contains("added_tokens_decoder") && config["added_tokens_decoder"].is_object())
        for (const auto& [line, added] : config["added_tokens_decoder"].items()) {
            const std::string content = content_of(added);
            if (!is_one_of_the_specials(content))
                refuse(file, "added_tokens_decoder",
                       "adds '" + content + "' (id " + line +
                           "); tokens beyond [PAD] [UNK] [CLS] [SEP] [MASK] are not supported");
        }
    for (const char* key : {"additional_special_tokens", "extra_special_tokens"})
        if (config.contains(key) && !config[key].is_null() && !config[key].empty())
            refuse(file, key,
                   "adds special tokens; only [PAD] [UNK] [CLS] [SEP] [MASK] are supported; "
                   "remove the key or make it empty");
}

// added_tokens.json ({"token": id, …}): the tokens added to vocab.txt's; only the five
// specials are supported, as in added_tokens_decoder.
void check_added_tokens(const nlohmann::json& added) {
    const std::string file = "added_tokens.json";
    if (!added.is_object()) refuse(file, "(the whole file)", "is not a JSON object");
    for (const auto& [content, id] : added.items())
        if (!is_one_of_the_specials(content))
            refuse(file, "\"" + content + "\"",
                   "(id " + id.dump() +
                       ") is an added token; tokens beyond [PAD] [UNK] [CLS] [SEP] [MASK] are "
                       "not supported; remove it from the file");
}

struct Settings {
    bool lower = true;  // BertTokenizer's defaults
    bool basic = true;
};

// The settings `config` (tokenizer_config.json) asks for, after refusing the ones we do not
// implement.
Settings tokenizer_settings(const nlohmann::json& config) {
    const std::string file = "tokenizer_config.json";
    Settings settings;
    for (auto [key, value] : {std::pair{"do_lower_case", &settings.lower},
                              std::pair{"do_basic_tokenize", &settings.basic}})
        if (config.contains(key)) {
            if (!config[key].is_boolean()) refuse(file, key, "must be true or false");
            *value = config[key].get<bool>();
        }
    if (config.contains("tokenize_chinese_chars") && config["tokenize_chinese_chars"] != true &&
        settings.basic)
        refuse(file, "tokenize_chinese_chars",
               "= " + config["tokenize_chinese_chars"].dump() +
                   " is not supported: BERT's WordPiece here always splits CJK ideographs; "
                   "remove the key or set it to true");
    if (config.contains("strip_accents") && !config["strip_accents"].is_null() &&
        config["strip_accents"] != settings.lower && settings.basic)
        refuse(file, "strip_accents",
               "= " + config["strip_accents"].dump() +
                   " differs from do_lower_case, which is not supported; "
                   "remove the key or set it to null");
    if (config.contains("never_split") && !config["never_split"].is_null() &&
        !config["never_split"].empty() && settings.basic)
        refuse(file, "never_split",
               "= " + config["never_split"].dump() +
                   " is not supported: words kept whole by the basic tokenizer are not "
                   "implemented; remove the key or set it to null");
    if (config.contains("split_special_tokens") && config["split_special_tokens"] == true)
        refuse(file, "split_special_tokens",
               "= true is not supported: [MASK] and the other specials written in the text are "
               "always kept whole here; remove the key or set it to false");
    if (config.contains("tokenizer_class") && !config["tokenizer_class"].is_null()) {
        const std::string cls = config["tokenizer_class"].is_string()
                                    ? config["tokenizer_class"].get<std::string>()
                                    : config["tokenizer_class"].dump();
        if (cls.rfind("RoFormerTokenizer", 0) == 0)
            refuse(file, "tokenizer_class",
                   "= " + cls +
                       " first segments Chinese words with jieba, which is not "
                       "implemented; for a character-level vocabulary set it to BertTokenizer to "
                       "tokenize without jieba");
        if (cls != "BertTokenizer" && cls != "BertTokenizerFast")
            refuse(file, "tokenizer_class",
                   "= " + cls + " is not supported; only BertTokenizer's WordPiece is");
    }
    return settings;
}

}  // namespace

nlohmann::json parse_hf_json(const std::string& text, const std::string& name) {
    const bool bom = text.rfind("\xEF\xBB\xBF", 0) == 0;
    try {
        return nlohmann::json::parse(bom ? text.substr(3) : text);
    } catch (const nlohmann::json::parse_error& e) {
        // "[json.exception.parse_error.101] parse error at line 3, column 1: syntax error …"
        std::string what = e.what();
        if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos)
            what = what.substr(what.find("] ") + 2);
        const std::string at = "parse error at ";
        if (what.rfind(at, 0) == 0 && what.find(": ") != std::string::npos)
            what = what.substr(what.find(": ") + 2);
        else if (what.rfind("parse error: ", 0) == 0)
            what = what.substr(13);
        // The line and column of the byte where parsing stopped (the library counts a line
        // break it read as the start of the next line, at column 0).
        const std::string& json = bom ? text.substr(3) : text;
        const size_t stop = std::min(e.byte == 0 ? 0 : size_t(e.byte - 1), json.size());
        const size_t line = 1 + size_t(std::count(json.begin(), json.begin() + long(stop), '\n'));
        const size_t line_start = stop == 0 ? 0 : json.rfind('\n', stop - 1) + 1;
        const std::string where =
            "line " + std::to_string(line) + ", column " + std::to_string(stop - line_start + 1);
        throw std::runtime_error(name + " is not valid JSON (" + where + "): " + what);
    } catch (const nlohmann::json::out_of_range& e) {
        // "[json.exception.out_of_range.406] number overflow parsing '1e400'": a number beyond
        // a double, with no position. Its place and key are found in the text.
        const std::string what = e.what();
        const size_t open = what.find('\''), close = what.rfind('\'');
        if (open == std::string::npos || close <= open) throw std::runtime_error(name + ": " + what);
        const std::string number = what.substr(open + 1, close - open - 1);
        const std::string& json = bom ? text.substr(3) : text;
        size_t at = json.find(number);
        while (at != std::string::npos && at > 0 &&
               std::string("0123456789.eE+-\"").find(json[at - 1]) != std::string::npos)
            at = json.find(number, at + 1);  // the number itself, not a tail of another token
        std::string where, key;
        if (at != std::string::npos) {
            const size_t line = 1 + size_t(std::count(json.begin(), json.begin() + long(at), '\n'));
            const size_t line_start = at == 0 ? 0 : json.rfind('\n', at - 1) + 1;
            where = " (line " + std::to_string(line) + ", column " +
                    std::to_string(at - line_start + 1) + ")";
            // "key": 1e400 — the quoted name before the colon before the number
            size_t k = json.find_last_not_of(" \t\r\n", at == 0 ? 0 : at - 1);
            if (k != std::string::npos && k < at && json[k] == ':') {
                const size_t end = json.find_last_not_of(" \t\r\n", k - 1);
                const size_t start = end == std::string::npos || json[end] != '"'
                                         ? std::string::npos
                                         : json.rfind('"', end - 1);
                if (start != std::string::npos) key = json.substr(start, end - start + 1);
            }
        }
        throw std::runtime_error(name + ": " + (key.empty() ? "the number " : key + " = ") +
                                 number + where +
                                 " is beyond the range of a double (about ±1.8e308); write a "
                                 "finite number there");
    }
}

std::unique_ptr<WordPieceTokenizer> parse_wordpiece_files(const WordPieceFileTexts& files,
                                                          const std::string& dir) {
    const std::string where = "tokenizer directory '" + dir + "': ";
    check_special_token_files(files, dir);
    Settings settings;
    try {
        if (!files.tokenizer_config.empty())
            settings = tokenizer_settings(
                parse_hf_json(files.tokenizer_config, "tokenizer_config.json"));
    } catch (const std::exception& e) {
        throw std::runtime_error(where + e.what());
    }
    try {
        return WordPieceTokenizer::from_file_order(vocab_lines(files.vocab_txt), settings.lower,
                                                   settings.basic);
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(where + e.what());
    }
}

void check_special_token_files(const WordPieceFileTexts& files, const std::string& dir) {
    try {
        if (!files.tokenizer_config.empty())
            check_special_settings(parse_hf_json(files.tokenizer_config, "tokenizer_config.json"),
                                   "tokenizer_config.json");
        if (!files.special_tokens_map.empty())
            check_special_settings(
                parse_hf_json(files.special_tokens_map, "special_tokens_map.json"),
                "special_tokens_map.json");
        if (!files.added_tokens.empty())
            check_added_tokens(parse_hf_json(files.added_tokens, "added_tokens.json"));
    } catch (const std::exception& e) {
        throw std::runtime_error("tokenizer directory '" + dir + "': " + e.what());
    }
}

std::unique_ptr<WordPieceTokenizer> parse_wordpiece_files(const std::string& vocab_txt,
                                                          const std::string& config_json,
                                                          const std::string& dir) {
    return parse_wordpiece_files(WordPieceFileTexts{vocab_txt, config_json, "", ""}, dir);
}

std::unique_ptr<WordPieceTokenizer> load_wordpiece_directory(const std::string& dir) {
    namespace fs = std::filesystem;
    require_directory(dir, "tokenizer directory",
                      "give a Hugging Face tokenizer directory holding vocab.txt");
    const std::string vocab_path = (fs::path(dir) / "vocab.txt").string();
    if (!fs::exists(vocab_path))
        throw std::runtime_error("tokenizer directory '" + dir +
                                 "' has no vocab.txt; give a Hugging Face BERT / RoFormer "
                                 "tokenizer directory, or a tokenizer.json file");
    const std::string vocab = read_regular_file(
        vocab_path, "vocab file", "give the vocab.txt of a BERT tokenizer", kMaxTokenizerBytes);
    WordPieceFileTexts files{vocab, "", "", ""};
    std::string* const json_texts[] = {&files.tokenizer_config, &files.special_tokens_map,
                                       &files.added_tokens};
    for (size_t i = 0; i < 3; ++i) {
        const std::string path = (fs::path(dir) / kTokenizerJsonFiles[i]).string();
        if (fs::exists(path))
            *json_texts[i] = read_regular_file(path, "tokenizer file",
                                               "give the files of a BERT tokenizer directory",
                                               kMaxTokenizerConfigBytes);
    }
    return parse_wordpiece_files(files, dir);
}

}  // namespace rf::data
