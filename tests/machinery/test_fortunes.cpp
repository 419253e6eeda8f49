// The fortunes-topic task (finetune/fortunes.hpp): cleaning and splitting the quote files, a
// balanced, fixed, disjoint split, and the refusal when Debian's fortunes package is missing.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "finetune/fortunes.hpp"
#include "finetune/tasks.hpp"
#include "data/tokenizer.hpp"

using namespace rf;

namespace {

std::set<std::string> texts(const std::vector<data::LabelledExample>& xs) {
    std::set<std::string> out;
    for (const data::LabelledExample& x : xs) out.insert(x.a);
    return out;
}

std::vector<size_t> per_class(const std::vector<data::LabelledExample>& xs, size_t classes) {
    std::vector<size_t> n(classes, 0);
    for (const data::LabelledExample& x : xs) ++n.at(size_t(x.label));
    return n;
}

// A fake package: topic t gets `count[t]` quotes "topic t quote i", plus one quote that two
// topics share and one that one topic holds twice.
std::filesystem::path fake_fortunes(const std::vector<size_t>& count) {
    const auto dir = std::filesystem::temp_directory_path() / "rf_test_fortunes";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::vector<std::string> topics = data::fortune_topics();
    for (size_t t = 0; t < topics.size(); ++t) {
        std::ofstream f(dir / topics[t]);
        for (size_t i = 0; i < count[t]; ++i)
            f << "Topic " << topics[t] << ",\n\tquote " << i << ".\n%\n";
        if (t < 2) f << "A quote in two topics.\n%\n";
        if (t == 2) f << "Twice here.\n%\nTwice here.\n%\n";
    }
    return dir;
}

}  // namespace

TEST_CASE("fortunes: a quote cleaned (overstrikes, whitespace) and a file split at % lines") {
    CHECK(data::clean_fortune("  B\bBo\bol\bld  and _\bu_\bnder\n\tline  \n") ==
          "Bold and under line");
    CHECK(data::clean_fortune("\n \t\n") == "");
    const std::vector<std::string> q = data::split_fortunes("one\nline\n%\n\n%\ntwo  words\n%\n");
    REQUIRE(q.size() == 2);  // the empty quote is dropped
    CHECK(q[0] == "one line");
    CHECK(q[1] == "two words");
    CHECK(data::split_fortunes("no separator at the end") ==
          std::vector<std::string>{"no separator at the end"});
}

TEST_CASE("fortunes: balanced, fixed, disjoint split; duplicates dropped (a fake package)") {
    const auto dir = fake_fortunes({200, 150, 30, 160, 170, 180});
    const data::ClassificationTask t = data::make_task("fortunes-topic", "unused", 0.05, dir);
    CHECK(t.labels == data::fortune_topics());
    CHECK_FALSE(t.pair);
    // the smallest topic (30 distinct quotes) sets every topic's count: 6 test, 24 training
    CHECK(per_class(t.test, 6) == std::vector<size_t>(6, 6));
    CHECK(per_class(t.train, 6) == std::vector<size_t>(6, 24));
    for (const std::string& q : texts(t.train)) {
        CHECK(q.find("two topics") == std::string::npos);
        CHECK(q.find("Twice") == std::string::npos);
    }
    CHECK(texts(t.test).count("A quote in two topics.") == 0);
    // disjoint: no quote is both training and test
    const std::set<std::string> train = texts(t.train), test = texts(t.test);
    for (const std::string& q : test) CHECK(train.count(q) == 0);
    CHECK(train.size() == t.train.size());
    // every label matches the file its quote came from
    for (const auto* part : {&t.train, &t.test})
        for (const data::LabelledExample& x : *part)
            CHECK(x.a.rfind("Topic " + t.labels[size_t(x.label)] + ", quote ", 0) == 0);
    // fixed: built again, the split is the same
    const data::ClassificationTask again = data::make_task("fortunes-topic", "", 0.05, dir);
    CHECK(texts(again.test) == test);
    std::filesystem::remove_all(dir);
}

TEST_CASE("fortunes: the package missing, or one topic file missing, is refused in one line") {
    const std::string nowhere = "/nonexistent/rf_fortunes";
    try {
        data::make_task("fortunes-topic", "", 0.05, nowhere);
        FAIL("no refusal");
    } catch (const std::runtime_error& e) {
        const std::string msg = e.what();
        CHECK(msg.find("apt-get install fortunes") != std::string::npos);
        CHECK(msg.find(nowhere) != std::string::npos);
        CHECK(msg.find('\n') == std::string::npos);
    }
    const auto dir = fake_fortunes({20, 20, 20, 20, 20, 20});
    std::filesystem::remove(dir / "science");
    CHECK_THROWS_WITH_AS(data::make_task("fortunes-topic", "", 0.05, dir.string()),
                         doctest::Contains("science' is missing; install Debian's fortunes"),
                         std::runtime_error);
    std::filesystem::remove_all(dir);
    // a topic with no quote at all leaves both splits empty
    const auto empty = fake_fortunes({20, 20, 0, 20, 20, 20});
    std::ofstream(empty / "law", std::ios::trunc) << "%\n%\n";
    CHECK_THROWS_WITH_AS(data::make_task("fortunes-topic", "", 0.05, empty.string()),
                         doctest::Contains("split is empty"), std::runtime_error);
    std::filesystem::remove_all(empty);
}

TEST_CASE("fortunes: the installed package (scripts/setup.sh) gives 6 × 140 quotes") {
    REQUIRE_MESSAGE(std::filesystem::is_directory(data::kFortunesDir),
                    data::kFortunesDir << " is missing: scripts/setup.sh --all installs fortunes");
    const data::ClassificationTask t = data::make_task("fortunes-topic", "", 0.05);
    CHECK(per_class(t.test, 6) == std::vector<size_t>(6, 28));
    CHECK(per_class(t.train, 6) == std::vector<size_t>(6, 112));
    const std::set<std::string> train = texts(t.train), test = texts(t.test);
    CHECK(train.size() == 672);
    CHECK(test.size() == 168);
    for (const std::string& q : test) CHECK(train.count(q) == 0);
    for (const std::string& q : train) {
        CHECK(q.find('\b') == std::string::npos);
        CHECK(q.find('\n') == std::string::npos);
    }
    MESSAGE("fortunes-topic: " << t.split_summary);
}

TEST_CASE("fortunes: characters the KJV tokenizer never saw become [UNK], the rest encodes") {
    const data::ClassificationTask t = data::make_task("fortunes-topic", "", 0.05);
    std::ifstream kjv(std::string(RF_SOURCE_DIR) + "/data/kjv.txt");
    std::string text((std::istreambuf_iterator<char>(kjv)), std::istreambuf_iterator<char>());
    REQUIRE(text.size() > 1000000);
    const auto tokenizer = data::train_tokenizer("char", text, 200);  // every KJV character
    size_t unknown = 0, known = 0;
    for (const data::LabelledExample& x : t.train)
        for (int id : tokenizer->encode(x.a)) (id == data::kUnkId ? unknown : known) += 1;
    CHECK(unknown > 0);           // digits, double quotes, '/', '*', '=' are not in the KJV
    CHECK(known > 50 * unknown);  // nearly all of it is letters, spaces and punctuation
    MESSAGE("fortunes-topic training text through a KJV character tokenizer: "
            << unknown << " [UNK] of " << unknown + known << " tokens");
    const std::vector<int> ids = tokenizer->encode("Go 2 the light");
    CHECK(ids.at(3) == data::kUnkId);
    CHECK(ids.at(0) != data::kUnkId);
}
