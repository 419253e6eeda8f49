// Room — finetune: labelled classification tasks built offline from the shipped KJV corpus.
//
//   kjv-testament   one verse → Old or New Testament (2 classes, 74 % / 26 %)
//   kjv-book        one verse → which of the 66 books
//   kjv-next-verse  a pair (verse a, verse b) → is b the verse right after a in its chapter?
//                   negatives are other verses of the same chapter (hard: same topic, words,
//                   names), one positive or one negative per verse, fixed seed
//   fortunes-topic  a quote from Debian's fortunes package → which of 6 topics (finetune/fortunes.hpp:
//                   the text, the topics and the split; text the pre-training never saw)
// data/kjv.txt holds one verse per line and one blank line between chapters, in canonical
// order (data/README.md); the book of a chapter follows from the 66 books' chapter counts.
// The split: the test chapters are exactly the MLM run's validation blocks (corpus.hpp's
// rule with the pre-training run's data.validation_fraction), so a test verse was seen by
// neither pre-training nor fine-tuning; every other chapter is fine-tuning training data.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace rf::data {

struct LabelledExample {
    std::string a;
    std::string b;  // empty unless the task is a pair task
    int label = 0;
};

struct ClassificationTask {
    std::string name;
    bool pair = false;
    std::vector<std::string> labels;  // class names, by class id
    std::vector<LabelledExample> train, test;
    std::string split_summary;  // one line: where the test examples come from
};

// The task names, in the order `roformer finetune --help` lists them.
std::vector<std::string> task_names();

// Builds task `name` from `corpus_path` (the KJV tasks) or `fortunes_dir` (fortunes-topic).
// Refuses (one line) an unknown name, a corpus that is not the KJV layout (1189 chapters), a
// missing fortunes package, and an empty split.
ClassificationTask make_task(const std::string& name, const std::string& corpus_path,
                             double validation_fraction,
                             const std::string& fortunes_dir = "/usr/share/games/fortunes");

}  // namespace rf::data
