// Room — finetune: how a classifier is scored (fine-tuning and the bag-of-words floor alike).
//
//   accuracy  = correct / N
//   macro-F1  = mean over classes k of F1_k = 2·TP_k / (2·TP_k + FP_k + FN_k)
// Macro-F1 weighs every class the same: on kjv-testament (74 % Old Testament) a model that
// always answers "Old" has accuracy 0.74 but macro-F1 0.43 (F1 0.85 and 0). A class that never
// occurs and is never predicted has no F1 and is left out of the mean.
#pragma once

#include <cstddef>
#include <vector>

namespace rf {

struct ClassificationScore {
    size_t n = 0;
    double accuracy = 0;
    double macro_f1 = 0;
    double loss = 0;  // mean cross-entropy (nats), when the scorer has probabilities; else 0
    std::vector<std::vector<size_t>> confusion;  // [true][predicted]
};

// predicted, truth: class ids in [0, num_classes). Throws std::invalid_argument otherwise.
ClassificationScore score_predictions(const std::vector<int>& predicted,
                                      const std::vector<int>& truth, size_t num_classes);

}  // namespace rf
