// Stage 6 — tests: loading text files (errors) and the deterministic block split.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/corpus.hpp"

using namespace rf::data;

namespace {

std::string write_temp(const std::string& name, const std::string& bytes) {
    const auto dir = std::filesystem::temp_directory_path() / "roformer_test_corpus";
    std::filesystem::create_directories(dir);
    const auto path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

// n paragraphs "paragraph i line 0\nparagraph i line 1", separated by blank lines
std::string paragraphs(size_t n) {
    std::string text;
    for (size_t i = 0; i < n; ++i)
        text += "paragraph " + std::to_string(i) + " line 0\nparagraph " + std::to_string(i) +
                " line 1\n\n";
    return text;
}

std::string kjv_path() { return std::string(RF_SOURCE_DIR) + "/data/kjv.txt"; }

}  // namespace

TEST_CASE("read_text_file: missing, empty and binary files give one-line errors naming the file") {
    CHECK_THROWS_WITH_AS(read_text_file("/no/such/dir/corpus.txt"),
                         doctest::Contains("'/no/such/dir/corpus.txt' not found"),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(read_text_file(write_temp("empty.txt", "")), doctest::Contains("is empty"),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(read_text_file(write_temp("blank.txt", " \n\n\t\r\n")),
                         doctest::Contains("is empty"), std::runtime_error);
    CHECK_THROWS_WITH_AS(read_text_file(write_temp("nul.bin", std::string("ab\0cd", 5))),
                         doctest::Contains("NUL bytes"), std::runtime_error);
    std::string noise;  // invalid UTF-8 without NULs: mostly non-text
    for (int i = 0; i < 1000; ++i) noise += static_cast<char>(0x80 + (i * 37) % 128);
    CHECK_THROWS_WITH_AS(read_text_file(write_temp("noise.bin", noise)),
                         doctest::Contains("looks binary"), std::runtime_error);
    try {
        read_text_file(write_temp("empty2.txt", ""));
    } catch (const std::exception& e) {
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
}

TEST_CASE("read_text_file keeps real text: BOM stripped, CRLF → LF, a stray bad byte kept") {
    CHECK(read_text_file(write_temp("crlf.txt", "\xEF\xBB\xBFone\r\ntwo\rthree\n")) ==
          "one\ntwo\nthree\n");
    const std::string text = "caf\xC3\xA9 \xE5\xA4\xA9 and one bad byte \xFF in a long enough line";
    CHECK(read_text_file(write_temp("utf8.txt", text)) == text);
}

TEST_CASE(
    "split by paragraphs: every 20th block is validation, the rest train, disjoint and complete") {
    const auto split = split_corpus(paragraphs(45));
    CHECK(split.block_kind == "paragraphs");
    CHECK(split.n_blocks == 45);
    CHECK(split.validation_blocks == std::vector<size_t>{19, 39});
    CHECK(split.validation_text ==
          "paragraph 19 line 0\nparagraph 19 line 1\n\nparagraph 39 line 0\nparagraph 39 line 1");
    for (size_t i = 0; i < 45; ++i) {
        const std::string line = "paragraph " + std::to_string(i) + " line 0\n";
        const bool in_validation = split.validation_text.find(line) != std::string::npos;
        const bool in_train = split.train_text.find(line) != std::string::npos;
        CHECK(in_validation != in_train);  // exactly one of the two
        CHECK(in_validation == (i == 19 || i == 39));
    }
    // deterministic: same input, same split
    const auto again = split_corpus(paragraphs(45));
    CHECK(again.train_text == split.train_text);
    CHECK(again.validation_text == split.validation_text);
    CHECK(again.summary() == split.summary());
    CHECK(split.summary().find("validation_blocks=19,39") != std::string::npos);

    SplitOptions fifth;
    fifth.validation_fraction = 0.2;  // floor((i+1)/5) > floor(i/5) ⇔ i = 4, 9, 14, …
    CHECK(split_corpus(paragraphs(12), fifth).validation_blocks == std::vector<size_t>{4, 9});
    // too few blocks for the fraction: the last block is validation
    CHECK(split_corpus(paragraphs(5)).validation_blocks == std::vector<size_t>{4});
}

TEST_CASE("split a file without blank lines into fixed blocks of lines") {
    std::string text;
    for (int i = 0; i < 200; ++i) text += "line " + std::to_string(i) + "\n";
    SplitOptions options;
    options.validation_fraction = 0.2;
    const auto split = split_corpus(text, options);
    CHECK(split.block_kind == "lines");
    CHECK(split.n_blocks == 10);  // 20 lines each
    CHECK(split.validation_blocks == std::vector<size_t>{4, 9});
    std::string expected;  // lines 80..99, blank line, lines 180..199
    for (int i = 80; i < 100; ++i)
        expected += "line " + std::to_string(i) + (i < 99 ? "\n" : "\n\n");
    for (int i = 180; i < 200; ++i) expected += "line " + std::to_string(i) + (i < 199 ? "\n" : "");
    CHECK(split.validation_text == expected);
    // a short file gets smaller blocks so that it can still be split
    const auto small = split_corpus("a\nb\nc\nd\n");
    CHECK(small.n_blocks == 2);
    CHECK(small.validation_text == "c\nd");
}

TEST_CASE("split errors: bad fraction, one line of text, too short for a window") {
    SplitOptions bad;
    bad.validation_fraction = 0.0;
    CHECK_THROWS_WITH_AS(split_corpus(paragraphs(10), bad),
                         doctest::Contains("validation_fraction"), std::invalid_argument);
    bad.validation_fraction = 0.9;
    CHECK_THROWS_AS(split_corpus(paragraphs(10), bad), std::invalid_argument);
    CHECK_THROWS_WITH_AS(split_corpus("just one line", {}, "tiny.txt"),
                         doctest::Contains("'tiny.txt' is too short"), std::runtime_error);
    CHECK_THROWS_WITH_AS(
        require_window_fits("tiny.txt", "validation", 10, 128),
        doctest::Contains("validation split has 10 tokens but one window of seq_len=128 needs 126"),
        std::runtime_error);
    CHECK_NOTHROW(require_window_fits("tiny.txt", "validation", 126, 128));
}

TEST_CASE("the shipped KJV: 1189 chapters, every 20th chapter is validation") {
    const auto split = load_corpus(kjv_path());
    CHECK(split.n_blocks == 1189);
    CHECK(split.validation_blocks.size() == 59);
    // rebuild the chapters independently from the raw bytes ("\n\n" separates them)
    std::ifstream file(kjv_path(), std::ios::binary);
    const std::string raw((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::vector<std::string> chapters;
    size_t start = 0;
    for (size_t end; (end = raw.find("\n\n", start)) != std::string::npos; start = end + 2)
        chapters.push_back(raw.substr(start, end - start));
    chapters.push_back(raw.substr(start, raw.size() - start - 1));  // drop the final '\n'
    REQUIRE(chapters.size() == 1189);
    std::string validation, train;
    for (size_t i = 0; i < chapters.size(); ++i) {
        std::string& target = (i % 20 == 19) ? validation : train;
        target += (target.empty() ? "" : "\n\n") + chapters[i];
    }
    CHECK(split.validation_text == validation);
    CHECK(split.train_text == train);
    CHECK(split.train_text.substr(0, 55) ==
          "In the beginning God created the heaven and the earth.\n");
}
