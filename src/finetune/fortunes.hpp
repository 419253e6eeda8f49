// Room — finetune: the fortunes-topic task — which topic file of Debian's `fortunes` package a
// quote comes from. The pre-training never saw this text (KJV only): topic classification
// under domain shift, with modern words the tokenizer may split finely or map to [UNK].
//
// The package installs one file per topic under /usr/share/games/fortunes/ (scripts/setup.sh
// installs it), each quote ending in a line holding only "%". Six topics with distinct
// subjects and at least 147 quotes each in fortunes 1:1.99.1 (Debian 12):
//     computers (1050 quotes), food (198), law (205), love (150), science (625), sports (147)
// Left out: topics that overlap these (politics ~ law, linux/perl ~ computers, medicine and
// drugs ~ science), grab-bags without a subject (fortunes, cookie, miscellaneous, wisdom,
// people, platitudes, definitions) and small ones (pets 52, news 53, magic 30).
//
// The examples, fixed whatever the run's seed:
//   each quote cleaned (overstrikes "x\bx" resolved, every whitespace run → one space);
//   a quote that occurs twice, in one topic or in two, is dropped (no duplicate can straddle
//   the split, no quote has two labels);
//   per topic the quotes sorted by a hash of their text (FNV-1a 64), the first N kept, with
//   N = min(140, the smallest topic's count): every class has exactly N quotes;
//   of those, every 5th in that order (0, 5, 10, …) is a test quote, the others training.
// A hash order, not the file order, so the split does not follow the files' own grouping
// (authors, sub-topics) and stays put when a package version adds quotes elsewhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "finetune/tasks.hpp"

namespace rf::data {

inline constexpr const char* kFortunesDir = "/usr/share/games/fortunes";
inline constexpr size_t kFortunesPerTopic = 140;  // the most per topic (sports has 147)
inline constexpr size_t kFortunesTestEvery = 5;

std::vector<std::string> fortune_topics();

// One quote as the task sees it: backspace overstrikes resolved ("_\bx" and "x\bx" → "x"),
// every run of whitespace (newlines, tabs) made one space, the ends trimmed.
std::string clean_fortune(const std::string& raw);

// The cleaned, non-empty quotes of one fortune file's text ("%" lines separate them).
std::vector<std::string> split_fortunes(const std::string& text);

// Throws std::runtime_error naming `path` and the byte offset of the first NUL byte or byte
// that is not UTF-8 (a latin-1 file): the tokenizer would turn such bytes into [UNK] without a
// word, and a NUL means the file is not text at all.
void require_fortune_text(const std::string& text, const std::string& path);

// The task from the topic files in `dir`. Refuses in one line a missing directory or topic
// file (naming `apt-get install fortunes`), a file with a NUL byte or one that is not UTF-8
// (require_fortune_text), and a split left empty.
ClassificationTask make_fortunes_task(const std::string& dir);

}  // namespace rf::data
