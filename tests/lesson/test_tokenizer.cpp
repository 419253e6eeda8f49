// Stage 6 — tests: UTF-8 decoding, pre-tokenizer, char and BPE tokenizers, save / load.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/corpus.hpp"
#include "data/tokenizer.hpp"
#include "data/utf8.hpp"

using namespace rf::data;

namespace {

// ASCII, accented Latin, CJK, a newline and double spaces — every kind of text we promise to keep.
const std::string kMixedText =
    "In the beginning God created the heaven and the earth.\n"
    "And the earth was without form, and void;  and darkness was upon the face of the deep.\n"
    "Au commencement, Dieu créa les cieux et la terre. Ærøskøbing, naïve café, Straße.\n"
    "起初，神創造天地。地是空虛混沌，淵面黑暗。\n"
    "the the the then there their them these those\n";

std::string temp_file(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / "roformer_test_tokenizer";
    std::filesystem::create_directories(dir);
    return (dir / name).string();
}

std::string kjv_path() { return std::string(RF_SOURCE_DIR) + "/data/kjv.txt"; }

}  // namespace

TEST_CASE("decode_utf8 decodes valid sequences and turns each bad byte into U+FFFD") {
    CHECK(decode_utf8("a\xC3\xA9\xE5\xA4\xA9\xF0\x9F\x98\x80") ==
          std::vector<char32_t>{U'a', 0xE9, 0x5929, 0x1F600});                // a é 天 😀
    CHECK(decode_utf8("\xC0\xAF") == std::vector<char32_t>{0xFFFD, 0xFFFD});  // overlong '/'
    CHECK(decode_utf8("\xED\xA0\x80").front() == 0xFFFD);                     // UTF-16 surrogate
    CHECK(decode_utf8("ab\xE5\xA4") ==
          std::vector<char32_t>{U'a', U'b', 0xFFFD, 0xFFFD});  // truncated
    CHECK(decode_utf8("\xFF") == std::vector<char32_t>{0xFFFD});
    for (const char32_t cp : {char32_t(0x41), char32_t(0xE9), char32_t(0x5929), char32_t(0x1F600)})
        CHECK(decode_utf8(encode_utf8(cp)) == std::vector<char32_t>{cp});
    CHECK(count_invalid_utf8_bytes("ok \xFF\xFE \xC3\xA9") == 2);
}

TEST_CASE(
    "pretokenize: a space joins the next word or punctuation; pieces concatenate to the text") {
    const std::vector<std::string> expected{"In", " the", " beginning", ",", " God",         " (",
                                            "x",  ")",    "\n",         " ", " caf\xC3\xA9", "."};
    CHECK(pretokenize("In the beginning, God (x)\n  caf\xC3\xA9.") == expected);
    std::string joined;
    for (const auto& piece : pretokenize(kMixedText)) joined += piece;
    CHECK(joined == kMixedText);
    CHECK(pretokenize("").empty());
}

TEST_CASE("special tokens sit at ids 0..4 in both tokenizers") {
    for (const std::string kind : {"char", "bpe"}) {
        const auto tok = train_tokenizer(kind, kMixedText, 300);
        for (int id = 0; id < kNumSpecialTokens; ++id) CHECK(tok->token(id) == kSpecialTokens[id]);
        CHECK(tok->id_of("[MASK]") == kMaskId);
        CHECK(tok->id_of("no such token") == -1);
        CHECK_THROWS_AS(tok->token(static_cast<int>(tok->vocab_size())), std::out_of_range);
    }
}

TEST_CASE("char and BPE round-trip ASCII, accented and CJK text, and the empty string") {
    const std::vector<std::string> samples{
        "the heaven and the earth",
        "Dieu créa les cieux; Straße",
        "神創造天地。",
        "",
        "a  b\n\nc",
        "And darkness was upon the face of the deep.\n起初 café"};
    for (const std::string kind : {"char", "bpe"}) {
        CAPTURE(kind);
        const auto tok = train_tokenizer(kind, kMixedText, 120);
        CHECK(tok->decode(tok->encode(kMixedText)) == kMixedText);
        for (const auto& sample : samples) {
            CAPTURE(sample);
            const auto ids = tok->encode(sample);
            for (const int id : ids) CHECK(id != kUnkId);
            CHECK(tok->decode(ids) == sample);
        }
        CHECK(tok->encode("").empty());
        CHECK(tok->encode_for_model("") == std::vector<int>{kClsId, kSepId});
    }
}

TEST_CASE("invalid UTF-8 and unseen characters never crash and become [UNK]") {
    const std::string bad = "the \xFF\xFE earth \xC3 \xED\xA0\x80 \xF0\x9F";
    for (const std::string kind : {"char", "bpe"}) {
        CAPTURE(kind);
        const auto tok = train_tokenizer(kind, "the earth and the heaven", 40);
        std::vector<int> ids;
        CHECK_NOTHROW(ids = tok->encode(bad));
        for (const int id : ids) CHECK((id >= 0 && static_cast<size_t>(id) < tok->vocab_size()));
        CHECK(std::count(ids.begin(), ids.end(), kUnkId) >= 4);
        CHECK_NOTHROW(tok->decode(ids));
        // 'Z', 'é' and '天' never occur in the training text
        const auto unseen = tok->encode("Z\xC3\xA9\xE5\xA4\xA9");
        CHECK(unseen == std::vector<int>{kUnkId, kUnkId, kUnkId});
        CHECK(tok->decode(unseen) == "[UNK][UNK][UNK]");
        // a training text with bad bytes also works
        CHECK_NOTHROW(train_tokenizer(kind, bad, 40));
    }
}

TEST_CASE("the [MASK] literal encodes to the mask id") {
    const auto bpe = train_tokenizer("bpe", kMixedText, 150);
    // BPE: the space before a literal is absorbed (the literal stands for " word")
    std::vector<int> expected = bpe->encode("In the beginning God created the");
    expected.push_back(kMaskId);
    const auto rest = bpe->encode(" and the earth.");
    expected.insert(expected.end(), rest.begin(), rest.end());
    const std::string sentence = "In the beginning God created the [MASK] and the earth.";
    CHECK(bpe->encode(sentence) == expected);
    CHECK(bpe->decode(bpe->encode(sentence)) == sentence);
    const auto framed = bpe->encode_for_model(sentence);
    CHECK(framed.front() == kClsId);
    CHECK(framed.back() == kSepId);
    CHECK(bpe->encode("[MASK]") == std::vector<int>{kMaskId});
    CHECK(bpe->encode("[MASK] [CLS][SEP]").size() == 3);
    // "[MAS" is not a literal: it is ordinary text
    const auto not_literal = bpe->encode("[MAS]");
    CHECK(std::count(not_literal.begin(), not_literal.end(), kMaskId) == 0);

    const auto chars = train_tokenizer("char", "ab c", 100);
    const std::vector<int> expected_chars{chars->id_of("a"), kMaskId, chars->id_of(" "),
                                          chars->id_of("b")};
    CHECK(chars->encode("a[MASK] b") == expected_chars);
    CHECK(chars->decode(expected_chars) == "a[MASK] b");
}

TEST_CASE("save then load gives the same tokenizer and the same encodings") {
    for (const std::string kind : {"char", "bpe"}) {
        CAPTURE(kind);
        const auto tok = train_tokenizer(kind, kMixedText, 150);
        const std::string path = temp_file(kind + ".json");
        tok->save(path);
        const auto loaded = load_tokenizer(path);
        CHECK(loaded->kind() == kind);
        CHECK(loaded->vocab() == tok->vocab());
        const std::string probe = kMixedText + " [MASK] unseen: Z \xFF";
        CHECK(loaded->encode(probe) == tok->encode(probe));
    }
    CHECK_THROWS_WITH_AS(load_tokenizer(temp_file("missing.json")), doctest::Contains("not found"),
                         std::runtime_error);
    const std::string broken = temp_file("broken.json");
    std::ofstream(broken) << "{\"type\": \"bpe\", \"vocab\": [\"[PAD]\"";
    CHECK_THROWS_WITH_AS(load_tokenizer(broken), doctest::Contains("broken.json"),
                         std::runtime_error);
    const std::string wrong = temp_file("wrong.json");
    std::ofstream(wrong)
        << R"({"type": "bpe", "vocab": ["[PAD]","[UNK]","[CLS]","[SEP]","[MASK]","a","ab"], "merges": []})";
    CHECK_THROWS_WITH_AS(load_tokenizer(wrong), doctest::Contains("'ab'"), std::runtime_error);
    CHECK_THROWS_WITH_AS(train_tokenizer("wordpiece", "x", 10), doctest::Contains("tokenizer.kind"),
                         std::invalid_argument);
}

TEST_CASE("BPE by hand: 'aaaa' merges a+a once, then stops because no pair occurs twice") {
    const auto tok = train_tokenizer("bpe", "aaaa", 50);
    CHECK(tok->vocab_size() == 7);  // 5 specials + 'a' + 'aa'
    CHECK(tok->encode("aaaa") == std::vector<int>{tok->id_of("aa"), tok->id_of("aa")});
    CHECK(tok->encode("aaa") == std::vector<int>{tok->id_of("aa"), tok->id_of("a")});
}

TEST_CASE(
    "BPE on the KJV training split: vocab size respected, first merge is the most frequent pair") {
    const auto split = load_corpus(kjv_path());
    const auto tok = train_tokenizer("bpe", split.train_text, 2000);
    CHECK(tok->vocab_size() == 2000);
    for (const std::string word : {" the", " and", " LORD", " heaven"}) {
        CAPTURE(word);
        CHECK(tok->encode(word) == std::vector<int>{tok->id_of(word)});
    }
    CHECK(tok->decode(tok->encode(split.validation_text)) == split.validation_text);

    // independent count of adjacent character pairs inside pieces, weighted by piece count
    std::map<std::pair<char32_t, char32_t>, long> pair_counts;
    for (const auto& piece : pretokenize(split.train_text)) {
        const auto cps = decode_utf8(piece);
        for (size_t i = 0; i + 1 < cps.size(); ++i) ++pair_counts[{cps[i], cps[i + 1]}];
    }
    auto best = pair_counts.begin();
    for (auto it = pair_counts.begin(); it != pair_counts.end(); ++it)
        if (it->second > best->second) best = it;
    const std::string path = temp_file("kjv_bpe.json");
    tok->save(path);
    const auto file = nlohmann::json::parse(std::ifstream(path));
    // vocabulary = specials, then the alphabet (distinct characters, sorted), then merge results
    std::set<char32_t> alphabet;
    for (const char32_t cp : decode_utf8(split.train_text)) alphabet.insert(cp);
    size_t id = kNumSpecialTokens;
    for (const char32_t cp : alphabet) CHECK(tok->token(static_cast<int>(id++)) == encode_utf8(cp));
    CHECK(file.at("merges").size() >= 2000 - kNumSpecialTokens - alphabet.size());
    CHECK(file.at("merges")[0][0].get<std::string>() == encode_utf8(best->first.first));
    CHECK(file.at("merges")[0][1].get<std::string>() == encode_utf8(best->first.second));
}
