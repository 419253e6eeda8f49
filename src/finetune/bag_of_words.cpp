// Fine-tuning — the bag-of-words floor (see bag_of_words.hpp).
#include "finetune/bag_of_words.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "tensor/random.hpp"

namespace rf {

BagOfWords::BagOfWords(size_t features, size_t num_classes)
    : features_(features),
      classes_(num_classes),
      w_(features * num_classes, 0.0),
      c_(num_classes, 0.0) {
    if (num_classes < 2) throw std::invalid_argument("bag of words: needs at least 2 classes");
}

std::vector<double> BagOfWords::logits(const std::vector<int>& x) const {
    std::vector<double> z(c_);
    for (int j : x) {
        if (j < 0 || size_t(j) >= features_)
            throw std::invalid_argument("bag of words: feature " + std::to_string(j) +
                                        " outside 0.." + std::to_string(features_ - 1));
        for (size_t k = 0; k < classes_; ++k) z[k] += w_[k * features_ + size_t(j)];
    }
    return z;
}

int BagOfWords::predict(const std::vector<int>& x) const {
    const std::vector<double> z = logits(x);
    return int(std::max_element(z.begin(), z.end()) - z.begin());
}

// dL/dz = softmax(z) − onehot(y) per example; dL/dW[k, j] = Σ over x's tokens j of dL/dz_k,
// dL/dc = dL/dz; averaged over the batch, plus l2·W (applied to the rows touched).
void BagOfWords::fit(const std::vector<std::vector<int>>& examples, const std::vector<int>& labels,
                     const BagOfWordsOptions& o) {
    if (examples.size() != labels.size() || examples.empty())
        throw std::invalid_argument("bag of words: no training examples (or labels ≠ examples)");
    std::vector<size_t> order(examples.size());
    std::iota(order.begin(), order.end(), size_t(0));
    Rng rng(o.seed);
    for (size_t epoch = 0; epoch < o.epochs; ++epoch) {
        for (size_t i = order.size(); i > 1; --i)  // Fisher–Yates
            std::swap(order[i - 1], order[size_t(rng.next_u64() % i)]);
        for (size_t start = 0; start < order.size(); start += o.batch_size) {
            const size_t end = std::min(order.size(), start + o.batch_size);
            const double scale = o.lr / double(end - start);
            for (size_t n = start; n < end; ++n) {
                const std::vector<int>& x = examples[order[n]];
                std::vector<double> z = logits(x);
                const double m = *std::max_element(z.begin(), z.end());
                double total = 0;
                for (double& v : z) total += (v = std::exp(v - m));
                for (size_t k = 0; k < classes_; ++k) {
                    const double g = z[k] / total - (int(k) == labels[order[n]] ? 1.0 : 0.0);
                    c_[k] -= scale * g;
                    for (int j : x) {
                        double& w = w_[k * features_ + size_t(j)];
                        w -= scale * (g + o.l2 * w);
                    }
                }
            }
        }
    }
}

}  // namespace rf
