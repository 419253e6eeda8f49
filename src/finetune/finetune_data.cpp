// Room — finetune: a fine-tuning task's examples, batched and scored (see finetune_data.hpp).
#include "finetune/finetune_data.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "finetune/bag_of_words.hpp"

namespace rf {

EncodedExamples encode_examples(const std::vector<data::LabelledExample>& examples, bool pair,
                                const data::Tokenizer& tokenizer, const std::string& what) {
    EncodedExamples e;
    size_t known = 0, total = 0;
    for (const data::LabelledExample& x : examples) {
        e.a.push_back(tokenizer.encode(x.a));
        if (pair) e.b.push_back(tokenizer.encode(x.b));
        e.labels.push_back(x.label);
        for (const std::vector<int>* ids : {&e.a.back(), pair ? &e.b.back() : nullptr})
            if (ids)
                for (int id : *ids) {
                    ++total;
                    known += id != data::kUnkId &&
                             tokenizer.token(id).find_first_not_of(" \t\n") != std::string::npos;
                }
    }
    if (total == 0 || known == 0)
        throw std::runtime_error(
            what +
            ": the tokenizer of the --from run cannot encode this "
            "task's text (every token is [UNK] or whitespace); pre-train on text in the "
            "same alphabet, or pick another --task");
    return e;
}

data::FramedText framed(const EncodedExamples& e, size_t i, size_t max_len) {
    return data::frame_for_classifier(e.a[i], e.b.empty() ? nullptr : &e.b[i], max_len);
}

// Batches of examples of equal framed length (no padding, no attention mask): within each
// length the examples in a seeded shuffle, cut into batches of ≤ B, the batches shuffled.
// The number of batches is the same every epoch: Σ over lengths ⌈count / B⌉.
std::vector<std::vector<size_t>> length_batches(const std::vector<size_t>& lengths, size_t B,
                                                Rng& rng) {
    std::vector<size_t> order(lengths.size());
    std::iota(order.begin(), order.end(), size_t(0));
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.next_u64() % i]);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return lengths[x] < lengths[y]; });
    std::vector<std::vector<size_t>> batches;
    for (size_t i = 0; i < order.size(); ++i) {
        if (batches.empty() || batches.back().size() == B ||
            lengths[batches.back().front()] != lengths[order[i]])
            batches.emplace_back();
        batches.back().push_back(order[i]);
    }
    for (size_t i = batches.size(); i > 1; --i)
        std::swap(batches[i - 1], batches[rng.next_u64() % i]);
    return batches;
}

ExampleBatch make_batch(const EncodedExamples& e, const std::vector<size_t>& members,
                        size_t max_len) {
    ExampleBatch out;
    for (size_t i : members) {
        const data::FramedText f = framed(e, i, max_len);
        out.seq_len = f.ids.size();
        out.ids.insert(out.ids.end(), f.ids.begin(), f.ids.end());
        out.types.insert(out.types.end(), f.types.begin(), f.types.end());
        out.labels.push_back(e.labels[i]);
    }
    out.batch = members.size();
    return out;
}

// Loss, accuracy, macro-F1 of `model` on every example of `e` (no dropout, no gradients).
ClassificationScore evaluate_classifier(SequenceClassifier& model, const EncodedExamples& e,
                                        size_t max_len) {
    NoGradGuard no_grad;
    std::vector<size_t> lengths;
    for (size_t i = 0; i < e.labels.size(); ++i)
        lengths.push_back(framed(e, i, max_len).ids.size());
    Rng fixed(0);  // the grouping only; every example is scored once
    std::vector<int> predicted(e.labels.size()), truth(e.labels.size());
    double loss = 0;
    for (const std::vector<size_t>& members : length_batches(lengths, kEvalBatch, fixed)) {
        const ExampleBatch b = make_batch(e, members, max_len);
        const ClassifierOutput out =
            model.forward(b.ids, b.types, b.labels, b.batch, b.seq_len, false);
        loss += out.loss.item() * double(b.batch);
        const size_t K = model.num_labels();
        for (size_t r = 0; r < b.batch; ++r) {
            const Real* row = out.logits.data() + r * K;
            predicted[members[r]] = int(std::max_element(row, row + K) - row);
            truth[members[r]] = e.labels[members[r]];
        }
    }
    ClassificationScore s = score_predictions(predicted, truth, model.num_labels());
    s.loss = e.labels.empty() ? 0 : loss / double(e.labels.size());
    return s;
}

// The floor: a linear model on token counts (a pair: b's tokens in a second block of features).
BagOfWordsFloor bag_of_words_floor(const EncodedExamples& train, const EncodedExamples& test,
                                   size_t vocab, size_t classes) {
    const bool pair = !train.b.empty();
    auto features = [&](const EncodedExamples& e, size_t i) {
        std::vector<int> x = e.a[i];
        if (pair)
            for (int id : e.b[i]) x.push_back(id + int(vocab));
        return x;
    };
    std::vector<std::vector<int>> xs;
    for (size_t i = 0; i < train.labels.size(); ++i) xs.push_back(features(train, i));
    BagOfWords model(pair ? 2 * vocab : vocab, classes);
    const BagOfWordsFit fit = model.fit(xs, train.labels);
    std::vector<int> predicted;
    for (size_t i = 0; i < test.labels.size(); ++i)
        predicted.push_back(model.predict(features(test, i)));
    return {score_predictions(predicted, test.labels, classes), fit.converged, fit.iterations};
}

}  // namespace rf
