// Fine-tuning — the bag-of-words floor — what a linear model on token counts gets, with no
// word order, no context and no pre-training. Fine-tuning earns its keep by beating it.
//
//   x_j = count of token j in the example (a pair: a's and b's tokens in separate halves
//         of the feature vector, so "which words are in b" is visible)
//   logits = W·x + c     W:[K, F]   softmax cross-entropy, L2 on W
// trained by plain mini-batch SGD over the same training examples, in a fixed-seed order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rf {

struct BagOfWordsOptions {
    size_t epochs = 10;
    size_t batch_size = 32;
    double lr = 0.05;
    double l2 = 1e-5;
    uint64_t seed = 1;
};

class BagOfWords {
public:
    // features: F = the tokenizer's vocabulary size (×2 for pairs), K classes.
    BagOfWords(size_t features, size_t num_classes);
    // examples: sparse token lists (feature indices, repeated for counts); labels: class ids.
    void fit(const std::vector<std::vector<int>>& examples, const std::vector<int>& labels,
             const BagOfWordsOptions& options);
    std::vector<double> logits(const std::vector<int>& example) const;
    int predict(const std::vector<int>& example) const;

private:
    size_t features_, classes_;
    std::vector<double> w_;  // [K, F]
    std::vector<double> c_;  // [K]
};

}  // namespace rf
