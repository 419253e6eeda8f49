// export-hf's tokenizer.json (src/hf/tokenizer_json.*): the BPE pre-tokenizer's regex splits text
// into exactly the pieces of our pretokenize (data/tokenizer.hpp) — checked with std::wregex,
// an ECMAScript engine like the JavaScript one of tokenizers.js, on KJV verses and on strings
// that touch every character class; and the file holds the tokenizer's vocabulary and merges.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "data/tokenizer.hpp"
#include "data/utf8.hpp"
#include "hf/tokenizer_json.hpp"

using namespace rf;

namespace {

std::vector<std::string> regex_pieces(const std::wregex& pattern, const std::string& text) {
    const std::vector<char32_t> cps = data::decode_utf8(text);
    const std::wstring wide(cps.begin(), cps.end());
    std::vector<std::string> pieces;
    for (auto it = std::wsregex_iterator(wide.begin(), wide.end(), pattern);
         it != std::wsregex_iterator(); ++it) {
        std::string piece;
        for (wchar_t c : it->str()) data::append_utf8(piece, char32_t(c));
        pieces.push_back(piece);
    }
    return pieces;
}

std::vector<std::string> test_texts() {
    std::vector<std::string> texts = {
        "In the beginning God created the heaven and the earth.",
        "  two  spaces,and\ttab\nnewline \r\f\v end ",
        "caf\xc3\xa9 na\xc3\xafve \xe2\x80\x94 \xe2\x80\x9cquotes\xe2\x80\x9d \xe2\x80\xa6 "
        "\xe5\xa4\xa9\xe5\x9c\xb0 \xc2\xbd\xc3\x97\xc3\xb7 \xef\xbc\x81\xef\xbc\x91",
        "emoji \xf0\x9f\x98\x80 ok, 12,000 3.14 x\xc2\xa0y\xe3\x80\x80z",
        "\x01\x1f\x7f ~`^_{|} [a] (b) <c> @#$%&*+=/\\'\"!?;:",
        " ", "", "a", " ,", " \n", "\xef\xbf\xbd\xef\xbf\xbe"};
    std::ifstream kjv(std::string(RF_SOURCE_DIR) + "/data/kjv.txt");
    std::string line;
    for (int i = 0; i < 4000 && std::getline(kjv, line); ++i)
        if (i % 20 == 0) texts.push_back(line + "\n");
    return texts;
}

}  // namespace

TEST_CASE("export-hf tokenizer.json: the BPE pre-tokenizer regex gives our pretokenize's pieces") {
    const std::string regex = hf::pretokenizer_regex();
    const std::wregex pattern(std::wstring(regex.begin(), regex.end()), std::regex::ECMAScript);
    for (const std::string& text : test_texts()) {
        CAPTURE(text);
        CHECK(regex_pieces(pattern, text) == data::pretokenize(text));
    }
}

TEST_CASE("export-hf tokenizer.json: the vocabulary, the merges and the specials of ours") {
    std::ifstream kjv(std::string(RF_SOURCE_DIR) + "/data/kjv.txt");
    std::stringstream text;
    text << kjv.rdbuf();
    const std::string corpus = text.str().substr(0, 200000);
    for (const char* kind : {"bpe", "char"}) {
        CAPTURE(std::string(kind));
        const auto tokenizer = data::train_tokenizer(kind, corpus, 300);
        std::vector<std::string> notes;
        const auto doc = nlohmann::json::parse(hf::tokenizer_json(*tokenizer, notes));
        CHECK(!notes.empty());
        const auto& vocab = doc["model"]["vocab"];
        REQUIRE(vocab.size() == tokenizer->vocab_size());
        for (size_t id = 0; id < tokenizer->vocab_size(); ++id)
            CHECK(vocab[tokenizer->token(int(id))] == id);
        CHECK(doc["model"]["merges"] == nlohmann::json::parse(tokenizer->to_json())["merges"]);
        REQUIRE(doc["added_tokens"].size() == 5);
        for (int id = 0; id < 5; ++id) CHECK(doc["added_tokens"][size_t(id)]["content"] == data::kSpecialTokens[id]);
        CHECK(doc["pre_tokenizer"].is_null() == (std::string(kind) == "char"));
    }
}

TEST_CASE("tokenizer.json read back: export-hf's char and BPE files give the same tokenizer") {
    std::ifstream kjv(std::string(RF_SOURCE_DIR) + "/data/kjv.txt");
    std::stringstream text;
    text << kjv.rdbuf();
    const std::string corpus = text.str().substr(0, 100000);
    for (const char* kind : {"bpe", "char"}) {
        CAPTURE(std::string(kind));
        const auto tokenizer = data::train_tokenizer(kind, corpus, 300);
        std::vector<std::string> notes;
        const std::string file = hf::tokenizer_json(*tokenizer, notes);
        CHECK(hf::is_hf_tokenizer_json(file));
        CHECK_FALSE(hf::is_hf_tokenizer_json(tokenizer->to_json()));
        const auto back = hf::tokenizer_from_json(file, "exp/tokenizer.json");
        CHECK(back->kind() == kind);
        CHECK(back->to_json() == tokenizer->to_json());
        for (const std::string& t : test_texts()) CHECK(back->encode(t) == tokenizer->encode(t));
    }
}

TEST_CASE("tokenizer.json read back: any key export-hf would not write is refused, named") {
    const auto tokenizer = data::train_tokenizer("bpe", "the heaven and the earth and the sea", 40);
    std::vector<std::string> notes;
    const nlohmann::json doc = nlohmann::json::parse(hf::tokenizer_json(*tokenizer, notes));
    const auto refusal = [](const nlohmann::json& changed) {
        try {
            hf::tokenizer_from_json(changed.dump(), "exp/tokenizer.json");
        } catch (const std::exception& e) { return std::string(e.what()); }
        return std::string("(no error)");
    };
    nlohmann::json lower = doc;
    lower["normalizer"] = {{"type", "Lowercase"}};
    CHECK(refusal(lower).find("exp/tokenizer.json: \"normalizer\" is {\"type\":\"Lowercase\"}") ==
          0);
    nlohmann::json prefix = doc;
    prefix["model"]["continuing_subword_prefix"] = "##";
    CHECK(refusal(prefix).find("\"model.continuing_subword_prefix\" is \"##\"") !=
          std::string::npos);
    nlohmann::json wordpiece = doc;
    wordpiece["model"]["type"] = "WordPiece";
    CHECK(refusal(wordpiece).find("\"model.type\" is \"WordPiece\"") != std::string::npos);
    nlohmann::json merges = doc;
    merges["model"]["merges"][0] = "t h";
    CHECK(refusal(merges).find("\"model.merges\" holds \"t h\"") != std::string::npos);
    CHECK(refusal(nlohmann::json::array()).find("not a JSON object") != std::string::npos);
}
