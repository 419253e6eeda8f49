// BERT's WordPiece tokenizer (src/data/wordpiece.hpp) against Hugging Face's BertTokenizer:
// every case of tests/reference/hf/wordpiece_expected.json (made by transformers 5.17.0, see
// tests/reference/hf/PROVENANCE.md) to the token and the id, both casings; then one case per
// rule on small vocabularies written here, the map to vocab.txt's line numbers, save → load,
// and the refusals.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/wordpiece.hpp"

using namespace rf::data;

namespace {

const std::string kHfDir = std::string(RF_SOURCE_DIR) + "/tests/reference/hf";

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::unique_ptr<WordPieceTokenizer> from_lines(const std::vector<std::string>& lines, bool lower) {
    return WordPieceTokenizer::from_file_order(lines, lower);
}

std::vector<std::string> tokens_of(const Tokenizer& t, const std::vector<int>& ids) {
    std::vector<std::string> tokens;
    for (const int id : ids) tokens.push_back(t.token(id));
    return tokens;
}

std::vector<std::u32string> words(const WordPieceTokenizer& t, const std::string& text) {
    return t.basic_tokenize(text);
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) { return e.what(); }
    return "(no error)";
}

const std::vector<std::string> kSmall = {"[PAD]", "[UNK]",  "[CLS]", "[SEP]", "[MASK]", "a", "##a",
                                         "un",    "##able", "able",  "cafe",  "café",   "n", "é",
                                         "##é",   "[",      "]",     "mask",  "hello"};

}  // namespace

TEST_CASE("wordpiece: every BertTokenizer case of the fixture, tokens and ids, both casings") {
    const std::string vocab = read_text(kHfDir + "/vocab.txt");
    const auto lower = parse_wordpiece_files(vocab, "", kHfDir);
    const auto cased = parse_wordpiece_files(vocab, R"({"do_lower_case": false})", kHfDir);
    CHECK(load_wordpiece_directory(kHfDir)->do_lower_case());  // no tokenizer_config.json
    const auto expected = nlohmann::json::parse(read_text(kHfDir + "/wordpiece_expected.json"));
    int n_lower = 0, n_cased = 0;
    for (const auto& c : expected.at("cases")) {
        const bool is_lower = c.at("do_lower_case").get<bool>();
        (is_lower ? n_lower : n_cased)++;
        const WordPieceTokenizer& t = is_lower ? *lower : *cased;
        const std::string text = c.at("text").get<std::string>();
        CAPTURE(text);
        CAPTURE(is_lower);
        const std::vector<int> ids = t.encode_for_model(text);
        CHECK(tokens_of(t, ids) == c.at("tokens").get<std::vector<std::string>>());
        CHECK(t.to_file_ids(ids) == c.at("input_ids").get<std::vector<int>>());
    }
    CHECK(n_lower == 26);
    CHECK(n_cased == 6);
}

TEST_CASE("wordpiece: accents are stripped only when lower-casing") {
    const auto lower = from_lines(kSmall, true), cased = from_lines(kSmall, false);
    CHECK(words(*lower, "Café ÑA e\u0301") == std::vector<std::u32string>{U"cafe", U"na", U"e"});
    CHECK(words(*cased, "Café ÑA") == std::vector<std::u32string>{U"Café", U"ÑA"});
    CHECK(tokens_of(*lower, lower->encode("CAFÉ")) == std::vector<std::string>{"cafe"});
    CHECK(tokens_of(*cased, cased->encode("café")) == std::vector<std::string>{"café"});
    // Hangul syllables decompose into jamo under NFD (letters, kept): the lower-cased word is
    // the jamo, not the syllable
    CHECK(words(*lower, "\uD55C") == std::vector<std::u32string>{U"\u1112\u1161\u11AB"});
}

TEST_CASE("wordpiece: CJK ideographs become words of their own, kana and Hangul do not") {
    const auto t = from_lines(kSmall, false);
    CHECK(words(*t, "ab中文cd") == std::vector<std::u32string>{U"ab", U"中", U"文", U"cd"});
    CHECK(words(*t, "x\U00020000y") == std::vector<std::u32string>{U"x", U"\U00020000", U"y"});
    CHECK(words(*t, "テキスト한국") == std::vector<std::u32string>{U"テキスト한국"});
}

TEST_CASE("wordpiece: punctuation splits, the ASCII symbols BERT counts included") {
    const auto t = from_lines(kSmall, false);
    CHECK(words(*t, "a$b+c<d=e>f^g`h|i~j") ==
          std::vector<std::u32string>{U"a", U"$", U"b", U"+", U"c", U"<", U"d", U"=", U"e", U">",
                                      U"f", U"^", U"g", U"`", U"h", U"|", U"i", U"~", U"j"});
    CHECK(words(*t, "don't—so") == std::vector<std::u32string>{U"don", U"'", U"t", U"—", U"so"});
    CHECK(words(*t, "a©b±c") == std::vector<std::u32string>{U"a©b±c"});  // symbols (S*) stay
}

TEST_CASE("wordpiece: control and format characters dropped, whitespace of any kind splits") {
    const auto t = from_lines(kSmall, false);
    const char raw[] = "co\0n\x07t\u200Br\uFEFFo\uFFFDl";  // NUL BEL ZWSP BOM U+FFFD
    CHECK(words(*t, std::string(raw, sizeof raw - 1)) == std::vector<std::u32string>{U"control"});
    CHECK(words(*t,
                "a\xFF"
                "b") == std::vector<std::u32string>{U"ab"});  // a stray byte
    CHECK(words(*t, "a\tb\nc\rd\u3000e\u00A0f\u2028g") ==
          std::vector<std::u32string>{U"a", U"b", U"c", U"d", U"e", U"f", U"g"});
    CHECK(words(*t, " \t\n ").empty());
}

TEST_CASE("wordpiece: greedy longest match with ## pieces; [UNK] for the whole word") {
    const auto t = from_lines(kSmall, true);
    CHECK(tokens_of(*t, t->encode("unable able")) ==
          std::vector<std::string>{"un", "##able", "able"});
    CHECK(tokens_of(*t, t->encode("unablex hello")) == std::vector<std::string>{"[UNK]", "hello"});
    CHECK(t->decode(t->encode_for_model("unable a")) == "[CLS] unable a [SEP]");
    CHECK(t->decode(t->encode_for_model("unable a"), true) == "unable a");
}

TEST_CASE("wordpiece: a word over 100 code points is [UNK], one of 100 is split") {
    const auto t = from_lines(kSmall, false);
    std::string word100, word101;
    for (int i = 0; i < 100; ++i) word100 += "é";  // 200 bytes: the limit counts characters
    word101 = word100 + "é";
    const auto ids = t->encode(word100);
    CHECK(ids.size() == 100);
    CHECK(t->token(ids[0]) == "é");
    CHECK(t->token(ids[99]) == "##é");
    CHECK(t->encode(word101) == std::vector<int>{kUnkId});
}

TEST_CASE("wordpiece: special literals kept whole, case-sensitively") {
    const auto t = from_lines(kSmall, true);
    CHECK(tokens_of(*t, t->encode("hello [MASK]a[SEP]")) ==
          std::vector<std::string>{"hello", "[MASK]", "a", "[SEP]"});
    CHECK(tokens_of(*t, t->encode("[mask]")) == std::vector<std::string>{"[", "mask", "]"});
}

TEST_CASE("wordpiece: specials elsewhere in vocab.txt (100..103) give the same file ids") {
    const auto lines = split_lines(read_text(kHfDir + "/vocab.txt"));
    REQUIRE(lines.size() == 3468);
    // the Chinese BERT layout: [PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103
    std::vector<std::string> moved = {"[PAD]"};
    moved.insert(moved.end(), lines.begin() + 5, lines.begin() + 104);
    for (const char* s : {"[UNK]", "[CLS]", "[SEP]", "[MASK]"}) moved.push_back(s);
    moved.insert(moved.end(), lines.begin() + 104, lines.end());
    REQUIRE(moved.size() == lines.size());
    const auto t = from_lines(moved, true);
    CHECK_FALSE(t->file_order_is_identity());
    CHECK(from_lines(lines, true)->file_order_is_identity());
    CHECK(t->file_id(kUnkId) == 100);
    CHECK(t->file_id(kMaskId) == 103);
    CHECK(t->id_of_file_id(101) == kClsId);
    CHECK(t->file_order_vocab() == moved);
    for (int line = 0; line < int(moved.size()); ++line)
        REQUIRE(t->file_id(t->id_of_file_id(line)) == line);
    const auto expected = nlohmann::json::parse(read_text(kHfDir + "/wordpiece_expected.json"));
    for (const auto& c : expected.at("cases")) {
        if (!c.at("do_lower_case").get<bool>()) continue;
        std::vector<int> lines_of_tokens;
        for (const auto& token : c.at("tokens").get<std::vector<std::string>>())
            lines_of_tokens.push_back(
                int(std::find(moved.begin(), moved.end(), token) - moved.begin()));
        CAPTURE(c.at("text").get<std::string>());
        CHECK(t->to_file_ids(t->encode_for_model(c.at("text").get<std::string>())) ==
              lines_of_tokens);
    }
}

TEST_CASE("wordpiece: save → load keeps the vocabulary, the file order and the casing") {
    auto moved = kSmall;
    std::swap(moved[0], moved[7]);  // [PAD] on line 7, "un" on line 0
    for (const bool lower : {true, false}) {
        const auto t = from_lines(moved, lower);
        const auto loaded = parse_tokenizer(t->to_json(), "tokenizer.json");
        REQUIRE(loaded->kind() == "wordpiece");
        const auto& back = dynamic_cast<const WordPieceTokenizer&>(*loaded);
        CHECK(back.vocab() == t->vocab());
        CHECK(back.do_lower_case() == lower);
        CHECK(back.file_order_vocab() == moved);
        CHECK(back.encode("Unable CAFÉ") == t->encode("Unable CAFÉ"));
        CHECK(back.to_json() == t->to_json());
    }
}

TEST_CASE("wordpiece: vocab.txt line ends as Python reads them; bad vocabularies refused") {
    const auto lf = parse_wordpiece_files("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nx\n", "", "d");
    const auto crlf = parse_wordpiece_files("[PAD]\r\n[UNK]\r\n[CLS]\r[SEP]\n[MASK]\r\nx", "", "d");
    CHECK(crlf->vocab() == lf->vocab());
    CHECK(error_of([] { parse_wordpiece_files("[PAD]\n[UNK]\n[CLS]\n[SEP]\nx\n", "", "d"); }) ==
          "tokenizer directory 'd': vocab.txt has no [MASK] line; a BERT vocabulary needs "
          "[PAD] [UNK] [CLS] [SEP] [MASK]");
    CHECK(error_of([] {
              parse_wordpiece_files("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nx\ny\nx\n", "", "d");
          }).find("'x' on lines 6 and 8") != std::string::npos);
    CHECK(error_of([] {
              parse_wordpiece_files("[PAD]\n[UNK]\n\n[CLS]\n[SEP]\n[MASK]\n", "", "d");
          }).find("line 3 is empty") != std::string::npos);
    CHECK(error_of([] {
              parse_wordpiece_files("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n\xC3\n", "", "d");
          }).find("line 6 is not valid UTF-8") != std::string::npos);
}

TEST_CASE("wordpiece: tokenizer_config.json settings we do not implement are refused") {
    const std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nx\n";
    const auto refusal = [&](const std::string& config) {
        return error_of([&] { parse_wordpiece_files(vocab, config, "d"); });
    };
    CHECK_FALSE(parse_wordpiece_files(vocab, R"({"do_lower_case": false, "strip_accents":
        null, "tokenizer_class": "BertTokenizer", "mask_token": "[MASK]"})",
                                      "d")
                    ->do_lower_case());
    CHECK(refusal(R"({"tokenize_chinese_chars": false})").find("tokenize_chinese_chars") !=
          std::string::npos);
    CHECK(refusal(R"({"strip_accents": true, "do_lower_case": false})")
              .find("strip_accents = true differs from do_lower_case") != std::string::npos);
    CHECK(refusal(R"({"tokenizer_class": "RoFormerTokenizer"})").find("jieba") !=
          std::string::npos);
    CHECK(refusal(R"({"tokenizer_class": "XLNetTokenizer"})").find("XLNetTokenizer") !=
          std::string::npos);
    CHECK(refusal(R"({"do_lower_case": "yes"})").find("do_lower_case must be true or false") !=
          std::string::npos);
    CHECK(refusal(R"({"mask_token": "<mask>"})").find("mask_token") != std::string::npos);
    CHECK(refusal(R"({"added_tokens_decoder": {"6": {"content": "<extra>"}}})").find("'<extra>'") !=
          std::string::npos);
    CHECK(refusal("{not json").find("tokenizer_config.json is not valid JSON") !=
          std::string::npos);
    CHECK(error_of([] {
              load_wordpiece_directory(std::string(RF_SOURCE_DIR) + "/src");
          }).find("has no vocab.txt") != std::string::npos);
}

TEST_CASE("wordpiece: do_basic_tokenize false runs WordPiece on whitespace-separated words") {
    // vocab.txt: the five specials, then w5 … w9; "W5.w6 w7" as BertTokenizer splits it with
    // and without its basic tokenizer (no punctuation split, no lower case: "W5.w6" is [UNK]).
    std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
    for (int i = 5; i < 10; ++i) vocab += "w" + std::to_string(i) + "\n";
    const auto basic = parse_wordpiece_files(vocab, "", "d");
    const auto plain = parse_wordpiece_files(vocab, R"({"do_basic_tokenize": false})", "d");
    CHECK(basic->encode_for_model("W5.w6 w7") == std::vector<int>{2, 5, 1, 6, 7, 3});
    CHECK(plain->encode_for_model("W5.w6 w7") == std::vector<int>{2, 1, 7, 3});
    CHECK(plain->encode("w5\t w6\xe3\x80\x80w7 [MASK]") == std::vector<int>{5, 6, 7, 4});
    CHECK_FALSE(plain->do_basic_tokenize());
    // tokenize_chinese_chars, strip_accents and never_split belong to the basic tokenizer:
    // without it they change nothing and are not refused.
    CHECK_NOTHROW(parse_wordpiece_files(
        vocab, R"({"do_basic_tokenize": false, "never_split": ["w5"], "strip_accents": true})",
        "d"));
    // Saved and loaded, the setting stays.
    const auto back = parse_tokenizer(plain->to_json(), "t.json");
    CHECK(back->encode("W5.w6 w7") == plain->encode("W5.w6 w7"));
    CHECK(back->to_json() == plain->to_json());
}

TEST_CASE("wordpiece: never_split, special_tokens_map.json and added_tokens.json are read") {
    const std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nx\n";
    const auto refusal = [&](const WordPieceFileTexts& files) {
        return error_of([&] { parse_wordpiece_files(files, "d"); });
    };
    CHECK(refusal({vocab, R"({"never_split": ["x"]})", "", ""}) ==
          "tokenizer directory 'd': tokenizer_config.json: never_split = [\"x\"] is not supported: "
          "words kept whole by the basic tokenizer are not implemented; remove the key or set it "
          "to null");
    CHECK_NOTHROW(parse_wordpiece_files({vocab, R"({"never_split": null})", "", ""}, "d"));
    CHECK(refusal({vocab, R"({"split_special_tokens": true})", "", ""})
              .find("tokenizer_config.json: split_special_tokens = true") != std::string::npos);
    // special_tokens_map.json: the same rules as the same keys of tokenizer_config.json.
    CHECK(refusal({vocab, "", R"({"mask_token": "<mask>"})", ""})
              .find("special_tokens_map.json: mask_token is \"<mask>\"") != std::string::npos);
    CHECK(refusal({vocab, "", R"({"additional_special_tokens": ["<x>"]})", ""})
              .find("special_tokens_map.json: additional_special_tokens") != std::string::npos);
    CHECK_NOTHROW(parse_wordpiece_files(
        {vocab, "", R"({"mask_token": {"content": "[MASK]"}, "unk_token": "[UNK]"})", ""}, "d"));
    // added_tokens.json: {token: id}, only the five specials.
    CHECK(refusal({vocab, "", "", R"({"<extra>": 6})"}).find("added_tokens.json: \"<extra>\"") !=
          std::string::npos);
    CHECK_NOTHROW(parse_wordpiece_files({vocab, "", "", R"({"[MASK]": 4})"}, "d"));
    const std::string number = refusal({vocab, "", R"({"unk_token": {"content": 7}})", ""});
    CHECK(number.find("special_tokens_map.json: unk_token is {\"content\":7}") != std::string::npos);
    CHECK(number.find("json.exception") == std::string::npos);
    CHECK(refusal({vocab, "", "[1, 2", ""}).find("special_tokens_map.json is not valid JSON") !=
          std::string::npos);
}

TEST_CASE("wordpiece: a byte-order mark before vocab.txt's first line; JSON errors in one line") {
    const std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nx\n";
    CHECK(parse_wordpiece_files("\xEF\xBB\xBF" + vocab, "", "d")->vocab() ==
          parse_wordpiece_files(vocab, "", "d")->vocab());
    CHECK(parse_wordpiece_files(vocab, "\xEF\xBB\xBF{\"do_lower_case\": false}", "d")
              ->do_lower_case() == false);
    const std::string bad = error_of([&] { parse_wordpiece_files(vocab, "{\n  \"a\": tru\n}", "d"); });
    CHECK(bad.find("tokenizer_config.json is not valid JSON (line 2, column ") != std::string::npos);
    CHECK(bad.find("json.exception") == std::string::npos);
    CHECK(bad.find('\n') == std::string::npos);
}

TEST_CASE("wordpiece: a file id out of range is refused with its place, never converted") {
    // issue 65: get<std::vector<int>>() turned 1e30 into an undefined int.
    const auto t = from_lines(kSmall, true);
    for (const char* bad : {"1e30", "-1", "4294967296"}) {
        CAPTURE(std::string(bad));
        nlohmann::json file = nlohmann::json::parse(t->to_json());
        file["file_ids"][1] = nlohmann::json::parse(bad);
        CHECK_THROWS_WITH_AS(parse_tokenizer(file.dump(), "tokenizer.json"),
                             doctest::Contains("\"file_ids[1]\" is "), std::runtime_error);
    }
    CHECK_NOTHROW(parse_tokenizer(t->to_json(), "tokenizer.json"));
}
