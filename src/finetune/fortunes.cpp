// Room — finetune: the fortunes-topic task (see fortunes.hpp).
#include "finetune/fortunes.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "data/utf8.hpp"
#include "io/fnv1a.hpp"
#include "io/read_file.hpp"

namespace rf::data {

std::vector<std::string> fortune_topics() {
    return {"computers", "food", "law", "love", "science", "sports"};
}

std::string clean_fortune(const std::string& raw) {
    std::string plain;  // overstrikes resolved: a backspace removes the character before it
    for (char c : raw) {
        if (c == '\b') {
            if (!plain.empty()) plain.pop_back();
        } else {
            plain += c;
        }
    }
    std::string out;
    bool space = false;
    for (char c : plain) {
        const bool is_space =
            c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
        if (is_space) {
            space = !out.empty();
            continue;
        }
        if (space) out += ' ';
        space = false;
        out += c;
    }
    return out;
}

std::vector<std::string> split_fortunes(const std::string& text) {
    std::vector<std::string> quotes;
    std::string current;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        if (line == "%" || line == "%\r") {
            quotes.push_back(clean_fortune(current));
            current.clear();
        } else {
            current += line + "\n";
        }
        start = end + 1;
    }
    quotes.push_back(clean_fortune(current));
    quotes.erase(std::remove(quotes.begin(), quotes.end(), std::string()), quotes.end());
    return quotes;
}

void require_fortune_text(const std::string& text, const std::string& path) {
    size_t length = 0;
    for (size_t pos = 0; pos < text.size(); pos += length) {
        const char32_t cp = decode_one_utf8(text, pos, length);
        char byte[8];
        std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[pos]));
        if (cp == 0)
            throw std::runtime_error("task fortunes-topic: '" + path +
                                     "' has a NUL byte at byte offset " + std::to_string(pos) +
                                     ", so it is not a text file; restore the fortunes package's "
                                     "file or set finetune.fortunes_dir");
        if (cp == kReplacementChar && length == 1)  // an encoded U+FFFD takes 3 bytes
            throw std::runtime_error("task fortunes-topic: '" + path +
                                     "' is not UTF-8 at byte "
                                     "offset " +
                                     std::to_string(pos) + " (" + byte +
                                     "); convert it (iconv -f LATIN1 -t UTF-8) or set "
                                     "finetune.fortunes_dir");
    }
}

ClassificationTask make_fortunes_task(const std::string& dir) {
    const std::string fix =
        "install Debian's fortunes package (apt-get install fortunes; scripts/setup.sh does) "
        "or set finetune.fortunes_dir";
    if (!std::filesystem::is_directory(dir))
        throw std::runtime_error("task fortunes-topic: '" + dir + "' does not exist; " + fix);
    const std::vector<std::string> topics = fortune_topics();
    std::vector<std::vector<std::string>> quotes;
    std::map<std::string, size_t> seen;  // quote → how often, over every chosen topic
    for (const std::string& topic : topics) {
        const std::string path = dir + "/" + topic;
        if (!std::filesystem::exists(path))
            throw std::runtime_error("task fortunes-topic: '" + path + "' is missing; " + fix);
        const std::string text = read_regular_file(path, "fortunes file", fix, 8u << 20);
        require_fortune_text(text, path);
        quotes.push_back(split_fortunes(text));
        for (const std::string& q : quotes.back()) ++seen[q];
    }
    size_t per_topic = kFortunesPerTopic;
    for (std::vector<std::string>& qs : quotes) {
        qs.erase(
            std::remove_if(qs.begin(), qs.end(), [&](const std::string& q) { return seen[q] > 1; }),
            qs.end());
        std::sort(qs.begin(), qs.end(), [](const std::string& x, const std::string& y) {
            const uint64_t hx = fnv1a64(x), hy = fnv1a64(y);
            return hx != hy ? hx < hy : x < y;
        });
        per_topic = std::min(per_topic, qs.size());
    }
    ClassificationTask task;
    task.name = "fortunes-topic";
    task.labels = topics;
    for (size_t t = 0; t < topics.size(); ++t)
        for (size_t i = 0; i < per_topic; ++i)
            (i % kFortunesTestEvery == 0 ? task.test : task.train)
                .push_back({quotes[t][i], "", int(t)});
    if (task.train.empty() || task.test.empty())
        throw std::runtime_error("task fortunes-topic: the " +
                                 std::string(task.train.empty() ? "training" : "test") +
                                 " split is empty (" + std::to_string(per_topic) +
                                 " distinct quotes in the smallest topic file of '" + dir +
                                 "'); check finetune.fortunes_dir");
    task.split_summary =
        "test = every " + std::to_string(kFortunesTestEvery) + "th of the " +
        std::to_string(per_topic) + " quotes per topic taken in FNV-1a hash order from " + dir +
        " (" + std::to_string(topics.size()) + " topics): " + std::to_string(task.test.size()) +
        " test / " + std::to_string(task.train.size()) + " training examples";
    return task;
}

}  // namespace rf::data
