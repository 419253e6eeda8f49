// Room — finetune: a fine-tuning task's examples as token ids, batched by length, scored —
// the model's and the bag-of-words floor's (used by finetune.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "finetune/sentence_pair.hpp"
#include "finetune/tasks.hpp"
#include "data/tokenizer.hpp"
#include "model/classifier.hpp"
#include "tensor/random.hpp"
#include "finetune/classification_metrics.hpp"

namespace rf {

struct EncodedExamples {
    std::vector<std::vector<int>> a, b;  // token ids, no framing (b empty for single sentences)
    std::vector<int> labels;
};

// Tokenizes every example; refuses a task the tokenizer cannot encode at all (every token of
// the task's text is [UNK] or bare whitespace: another alphabet than the pre-training corpus).
EncodedExamples encode_examples(const std::vector<data::LabelledExample>& examples, bool pair,
                                const data::Tokenizer& tokenizer, const std::string& what);

// Example i framed for the classifier: [CLS] a [SEP] (b [SEP]), at most max_len tokens.
data::FramedText framed(const EncodedExamples& e, size_t i, size_t max_len);

// Batches of examples of equal framed length (no padding, no attention mask): within each
// length the examples in a seeded shuffle, cut into batches of ≤ B, the batches shuffled.
// The number of batches is the same every epoch: Σ over lengths ⌈count / B⌉.
std::vector<std::vector<size_t>> length_batches(const std::vector<size_t>& lengths, size_t B,
                                                Rng& rng);

// One batch of framed examples of one length: ids and token types [B, T], labels [B].
struct ExampleBatch {
    std::vector<int> ids, types, labels;
    size_t batch = 0, seq_len = 0;
};
ExampleBatch make_batch(const EncodedExamples& e, const std::vector<size_t>& members,
                        size_t max_len);

// Loss, accuracy, macro-F1 of `model` on every example of `e` (no dropout, no gradients), in
// batches of kEvalBatch examples grouped by length. One size for every caller (a fine-tune's
// evaluations, `classify --test-split`): the grouping decides the sums' order, so the same
// model gives the same scores wherever it is evaluated.
constexpr size_t kEvalBatch = 64;
ClassificationScore evaluate_classifier(SequenceClassifier& model, const EncodedExamples& e,
                                        size_t max_len);

// The floor: a linear model on token counts (a pair: b's tokens in a second block of features),
// its test score and whether its training converged (bag_of_words.hpp).
struct BagOfWordsFloor {
    ClassificationScore test;
    bool converged = false;
    size_t iterations = 0;
};
BagOfWordsFloor bag_of_words_floor(const EncodedExamples& train, const EncodedExamples& test,
                                   size_t vocab, size_t classes);

}  // namespace rf
