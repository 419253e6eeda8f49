// Room — finetune: accuracy, macro-F1, confusion matrix (see classification_metrics.hpp).
#include "finetune/classification_metrics.hpp"

#include <stdexcept>
#include <string>

namespace rf {

ClassificationScore score_predictions(const std::vector<int>& predicted,
                                      const std::vector<int>& truth, size_t num_classes) {
    if (predicted.size() != truth.size())
        throw std::invalid_argument("score: " + std::to_string(predicted.size()) +
                                    " predictions for " + std::to_string(truth.size()) + " labels");
    ClassificationScore s;
    s.n = truth.size();
    s.confusion.assign(num_classes, std::vector<size_t>(num_classes, 0));
    size_t correct = 0;
    for (size_t i = 0; i < truth.size(); ++i) {
        const int p = predicted[i], t = truth[i];
        if (p < 0 || t < 0 || size_t(p) >= num_classes || size_t(t) >= num_classes)
            throw std::invalid_argument("score: class id outside 0.." +
                                        std::to_string(num_classes - 1));
        ++s.confusion[size_t(t)][size_t(p)];
        correct += p == t;
    }
    s.accuracy = s.n ? double(correct) / double(s.n) : 0.0;
    double f1_sum = 0;
    size_t classes = 0;
    for (size_t k = 0; k < num_classes; ++k) {
        size_t tp = s.confusion[k][k], fp = 0, fn = 0;
        for (size_t j = 0; j < num_classes; ++j)
            if (j != k) {
                fp += s.confusion[j][k];
                fn += s.confusion[k][j];
            }
        if (tp + fp + fn == 0) continue;  // absent and never predicted
        f1_sum += 2.0 * double(tp) / double(2 * tp + fp + fn);
        ++classes;
    }
    s.macro_f1 = classes ? f1_sum / double(classes) : 0.0;
    return s;
}

}  // namespace rf
