// Room — finetune: the KJV classification tasks (see tasks.hpp).
#include "finetune/tasks.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "data/corpus.hpp"
#include "finetune/fortunes.hpp"
#include "tensor/random.hpp"

namespace rf::data {

namespace {

struct Book {
    const char* name;
    int chapters;
};
// The 66 books of the King James Bible in canonical order with their chapter counts
// (39 Old Testament books, 929 chapters; 27 New Testament books, 260 chapters).
constexpr Book kBooks[66] = {{"Genesis", 50},
                             {"Exodus", 40},
                             {"Leviticus", 27},
                             {"Numbers", 36},
                             {"Deuteronomy", 34},
                             {"Joshua", 24},
                             {"Judges", 21},
                             {"Ruth", 4},
                             {"1 Samuel", 31},
                             {"2 Samuel", 24},
                             {"1 Kings", 22},
                             {"2 Kings", 25},
                             {"1 Chronicles", 29},
                             {"2 Chronicles", 36},
                             {"Ezra", 10},
                             {"Nehemiah", 13},
                             {"Esther", 10},
                             {"Job", 42},
                             {"Psalms", 150},
                             {"Proverbs", 31},
                             {"Ecclesiastes", 12},
                             {"Song of Solomon", 8},
                             {"Isaiah", 66},
                             {"Jeremiah", 52},
                             {"Lamentations", 5},
                             {"Ezekiel", 48},
                             {"Daniel", 12},
                             {"Hosea", 14},
                             {"Joel", 3},
                             {"Amos", 9},
                             {"Obadiah", 1},
                             {"Jonah", 4},
                             {"Micah", 7},
                             {"Nahum", 3},
                             {"Habakkuk", 3},
                             {"Zephaniah", 3},
                             {"Haggai", 2},
                             {"Zechariah", 14},
                             {"Malachi", 4},
                             {"Matthew", 28},
                             {"Mark", 16},
                             {"Luke", 24},
                             {"John", 21},
                             {"Acts", 28},
                             {"Romans", 16},
                             {"1 Corinthians", 16},
                             {"2 Corinthians", 13},
                             {"Galatians", 6},
                             {"Ephesians", 6},
                             {"Philippians", 4},
                             {"Colossians", 4},
                             {"1 Thessalonians", 5},
                             {"2 Thessalonians", 3},
                             {"1 Timothy", 6},
                             {"2 Timothy", 4},
                             {"Titus", 3},
                             {"Philemon", 1},
                             {"Hebrews", 13},
                             {"James", 5},
                             {"1 Peter", 5},
                             {"2 Peter", 3},
                             {"1 John", 5},
                             {"2 John", 1},
                             {"3 John", 1},
                             {"Jude", 1},
                             {"Revelation", 22}};
constexpr int kOldTestamentBooks = 39;
constexpr size_t kChapters = 1189;

// The chapters (blank-line-separated blocks), each a list of verses (lines).
std::vector<std::vector<std::string>> chapters_of(const std::string& text) {
    std::vector<std::vector<std::string>> chapters(1);
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        if (line.find_first_not_of(" \t\r") == std::string::npos) {
            if (!chapters.back().empty()) chapters.emplace_back();
        } else {
            chapters.back().push_back(line);
        }
        start = end + 1;
    }
    if (chapters.back().empty()) chapters.pop_back();
    return chapters;
}

}  // namespace

std::vector<std::string> task_names() {
    return {"kjv-testament", "kjv-book", "kjv-next-verse", "fortunes-topic"};
}

ClassificationTask make_task(const std::string& name, const std::string& corpus_path,
                             double validation_fraction, const std::string& fortunes_dir) {
    const std::vector<std::string> names = task_names();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string list;
        for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
        throw std::invalid_argument("unknown task '" + name + "'; the tasks are " + list);
    }
    if (name == "fortunes-topic") return make_fortunes_task(fortunes_dir);
    const std::string text = read_text_file(corpus_path);
    const std::vector<std::vector<std::string>> chapters = chapters_of(text);
    if (chapters.size() != kChapters)
        throw std::runtime_error("task " + name + ": '" + corpus_path + "' has " +
                                 std::to_string(chapters.size()) +
                                 " chapters (blank-line blocks), not the KJV's 1189; the KJV "
                                 "tasks need data/kjv.txt (scripts/prepare_kjv.sh)");
    // The test chapters: the pre-training validation blocks, by corpus.hpp's one rule.
    SplitOptions options;
    options.validation_fraction = validation_fraction;
    const CorpusSplit split = split_corpus(text, options, corpus_path);
    std::vector<bool> is_test(chapters.size(), false);
    for (size_t b : split.validation_blocks) is_test.at(b) = true;

    ClassificationTask task;
    task.name = name;
    task.pair = name == "kjv-next-verse";
    if (name == "kjv-testament") task.labels = {"Old Testament", "New Testament"};
    if (name == "kjv-book")
        for (const Book& b : kBooks) task.labels.push_back(b.name);
    if (task.pair) task.labels = {"not next", "next"};

    Rng rng(0x5EED0F7A5CULL);  // the pair task's negatives: fixed, whatever the run's seed
    size_t chapter = 0;
    for (int book = 0; book < 66; ++book)
        for (int c = 0; c < kBooks[book].chapters; ++c, ++chapter) {
            const std::vector<std::string>& verses = chapters[chapter];
            std::vector<LabelledExample>& out = is_test[chapter] ? task.test : task.train;
            if (!task.pair) {
                const int label = name == "kjv-book" ? book : (book < kOldTestamentBooks ? 0 : 1);
                for (const std::string& v : verses) out.push_back({v, "", label});
                continue;
            }
            if (verses.size() < 3) continue;  // no hard negative in a chapter this short
            for (size_t i = 0; i + 1 < verses.size(); ++i) {
                if (rng.uniform() < 0.5) {
                    out.push_back({verses[i], verses[i + 1], 1});
                } else {
                    size_t j = i;
                    while (j == i || j == i + 1)
                        j = static_cast<size_t>(rng.uniform() * double(verses.size())) %
                            verses.size();
                    out.push_back({verses[i], verses[j], 0});
                }
            }
        }
    if (task.train.empty() || task.test.empty())
        throw std::runtime_error("task " + name + ": the " +
                                 std::string(task.train.empty() ? "training" : "test") +
                                 " split is empty (single-sentence tasks need verses, the pair "
                                 "task chapters of 3 or more); check finetune.corpus");
    task.split_summary = "test = the " + std::to_string(split.validation_blocks.size()) +
                         " pre-training validation chapters (" + split.summary() +
                         "): " + std::to_string(task.test.size()) + " test / " +
                         std::to_string(task.train.size()) + " training examples";
    return task;
}

}  // namespace rf::data
