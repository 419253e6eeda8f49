// Stage 6 — data: reading a Hugging Face tokenizer directory into a WordPieceTokenizer —
// vocab.txt (one entry a line; line n is HF's id n) and tokenizer_config.json's settings, each
// either the one our tokenizer implements or refused with the key named.
#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
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
std::vector<std::string> vocab_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::string line;
    for (size_t pos = 0; pos < text.size(); ++pos) {
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

[[noreturn]] void refuse(const std::string& key, const std::string& why) {
    throw std::invalid_argument("tokenizer_config.json: " + key + " " + why);
}

// One special-token setting ("unk_token": "[UNK]" or {"content": "[UNK]", …}) must name
// the literal our ids 0..4 hold.
void check_special(const nlohmann::json& config, const std::string& key,
                   const std::string& literal) {
    if (!config.contains(key) || config[key].is_null()) return;
    const auto& value = config[key];
    const std::string content = value.is_string()   ? value.get<std::string>()
                                : value.is_object() ? value.value("content", std::string())
                                                    : std::string();
    if (content != literal)
        refuse(key, "is " + value.dump() + "; only BERT's " + literal +
                        " is supported (the five specials [PAD] [UNK] [CLS] [SEP] [MASK])");
}

// The do_lower_case that `config` asks for, after refusing the settings we do not implement.
bool lower_case_setting(const nlohmann::json& config) {
    if (!config.is_object()) refuse("(the whole file)", "is not a JSON object");
    bool lower = true;  // BertTokenizer's default
    if (config.contains("do_lower_case")) {
        if (!config["do_lower_case"].is_boolean()) refuse("do_lower_case", "must be true or false");
        lower = config["do_lower_case"].get<bool>();
    }
    if (config.contains("tokenize_chinese_chars") && config["tokenize_chinese_chars"] != true)
        refuse("tokenize_chinese_chars",
               "= " + config["tokenize_chinese_chars"].dump() +
                   " is not supported: BERT's WordPiece here always splits CJK ideographs; "
                   "remove the key or set it to true");
    if (config.contains("strip_accents") && !config["strip_accents"].is_null() &&
        config["strip_accents"] != lower)
        refuse("strip_accents", "= " + config["strip_accents"].dump() +
                                    " differs from do_lower_case, which is not supported; "
                                    "remove the key or set it to null");
    if (config.contains("tokenizer_class") && !config["tokenizer_class"].is_null()) {
        const std::string cls = config["tokenizer_class"].is_string()
                                    ? config["tokenizer_class"].get<std::string>()
                                    : config["tokenizer_class"].dump();
        if (cls.rfind("RoFormerTokenizer", 0) == 0)
            refuse("tokenizer_class",
                   "= " + cls +
                       " first segments Chinese words with jieba, which is not "
                       "implemented; for a character-level vocabulary set it to BertTokenizer to "
                       "tokenize without jieba");
        if (cls != "BertTokenizer" && cls != "BertTokenizerFast")
            refuse("tokenizer_class",
                   "= " + cls + " is not supported; only BertTokenizer's WordPiece is");
    }
    const char* const keys[kNumSpecialTokens] = {"pad_token", "unk_token", "cls_token", "sep_token",
                                                 "mask_token"};
    for (int id = 0; id < kNumSpecialTokens; ++id)
        check_special(config, keys[id], kSpecialTokens[id]);
    if (config.contains("added_tokens_decoder") && config["added_tokens_decoder"].is_object())
        for (const auto& [line, added] : config["added_tokens_decoder"].items()) {
            const std::string content =
                added.is_object() ? added.value("content", std::string()) : std::string();
            const auto specials = special_vocab();
            if (std::find(specials.begin(), specials.end(), content) == specials.end())
                refuse("added_tokens_decoder",
                       "adds '" + content + "' (id " + line +
                           "); tokens beyond [PAD] [UNK] [CLS] [SEP] [MASK] are not supported");
        }
    for (const char* key : {"additional_special_tokens", "extra_special_tokens"})
        if (config.contains(key) && !config[key].is_null() && !config[key].empty())
            refuse(key, "adds special tokens; only [PAD] [UNK] [CLS] [SEP] [MASK] are supported");
    return lower;
}

}  // namespace

std::unique_ptr<WordPieceTokenizer> parse_wordpiece_files(const std::string& vocab_txt,
                                                          const std::string& config_json,
                                                          const std::string& dir) {
    bool lower = true;
    if (!config_json.empty()) {
        try {
            lower = lower_case_setting(nlohmann::json::parse(config_json));
        } catch (const nlohmann::json::exception& e) {
            std::string what = e.what();
            if (what.find("] ") != std::string::npos) what = what.substr(what.find("] ") + 2);
            throw std::runtime_error("tokenizer directory '" + dir +
                                     "': tokenizer_config.json is not valid JSON (" + what + ")");
        } catch (const std::invalid_argument& e) {
            throw std::runtime_error("tokenizer directory '" + dir + "': " + e.what());
        }
    }
    try {
        return WordPieceTokenizer::from_file_order(vocab_lines(vocab_txt), lower);
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error("tokenizer directory '" + dir + "': " + e.what());
    }
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
    const std::string config_path = (fs::path(dir) / "tokenizer_config.json").string();
    const std::string config =
        fs::exists(config_path)
            ? read_regular_file(config_path, "tokenizer config",
                                "give the tokenizer_config.json of a BERT tokenizer",
                                kMaxTokenizerConfigBytes)
            : std::string();
    return parse_wordpiece_files(vocab, config, dir);
}

}  // namespace rf::data
