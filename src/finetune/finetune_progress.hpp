// Room — finetune: where a fine-tune stands (finetune_state.json, committed with every checkpoint):
// the step and the planned steps, why it stopped, and what a resumed run needs to continue
// metrics.csv as an uninterrupted run would (the training-loss window since the last evaluation
// and the elapsed time). `classify` reads it to say when it serves an unfinished model.
#pragma once

#include <cstddef>
#include <string>

namespace rf {

inline constexpr const char* kFinetuneProgressFile = "finetune_state.json";

struct FinetuneProgress {
    bool present = false;  // false: a run from before finetune_state.json (nothing known)
    size_t step = 0, total_steps = 0;
    double window_loss_sum = 0;  // the training losses summed since the last evaluation
    size_t window_count = 0;     // and how many
    double elapsed_s = 0;
    std::string stopped_by;      // "finished", "--stop-after", "a signal", "early stopping"
    std::string resume_command;  // the command that continues it (shell-quoted)

    std::string to_json() const;
};

// The progress committed in `dir` (present = false when the file is absent); throws one line
// naming the file when it is damaged.
FinetuneProgress load_progress(const std::string& dir);

// "" for a finished fine-tune (or one that stopped early, whose best model is the result);
// otherwise one line naming what the served model is: "X is an unfinished fine-tune: stopped at
// step 25 of 125 (--stop-after); resume with: roformer finetune …", or that early stopping's
// best model is the untrained step-0 head.
std::string served_model_warning(const std::string& dir);

}  // namespace rf
