// Room — finetune: early stopping for a fine-tune (finetune.patience; docs/finetune.md).
//
// After every evaluation: a validation macro-F1 above the best so far (ties keep the earlier)
// makes that evaluation the best one and keeps its model's bytes; otherwise one more
// evaluation without gain (once past the warm-up), and `patience` of them in a row stop the run. The state is what a
// checkpoint must carry (early_stopping.json + best.safetensors, committed with the model)
// for a resumed run to stop where an uninterrupted one does.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "finetune/classification_metrics.hpp"

namespace rf {

struct EarlyStopping {
    size_t patience = 0;  // 0: off
    // Evaluations at or before this step (the learning-rate warm-up) may become the best one
    // but do not count towards `patience`: a head still warming up has had no chance to gain,
    // and stopping there would keep the fresh step-0 head.
    size_t warmup_steps = 0;
    bool has_best = false, stopped = false;
    size_t best_step = 0, since_best = 0;  // evaluations since the best one
    ClassificationScore best_validation, best_test;
    std::string best_bytes;  // best.safetensors

    // One evaluation's scores (`bytes` makes the model file, called only on a new best);
    // returns true when the run should stop now.
    bool update(size_t step, const ClassificationScore& validation, const ClassificationScore& test,
                const std::function<std::string()>& bytes);

    std::string to_json() const;  // early_stopping.json
    // A resumed run: the state its checkpoint committed in `dir` (early_stopping.json and
    // best.safetensors, verified against checkpoint.json). Throws one line if damaged.
    void restore(const std::string& dir);
};

}  // namespace rf
