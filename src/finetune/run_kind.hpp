// Fine-tuning — which kind of run directory a path is, so that a command given the wrong kind
// says what it found and which command reads it (never "no format tag", never advice to
// delete a run of another kind).
//
//   fine-tune     task.json (written by `roformer finetune`)  → read by classify
//   pre-training  config.toml without task.json (`roformer train`) → eval, fill-mask, generate,
//                 attention, finetune --from
#pragma once

#include <string>

namespace rf {

enum class RunKind { none, pretraining, finetune };

RunKind run_kind(const std::string& dir);

// Refuse (std::invalid_argument, one line) a fine-tune directory given to a command that
// reads a pre-training run: "X is a fine-tune run (task.json): use `roformer classify --run X`".
// `option` is how the command names the directory (e.g. "--run", "--from").
void require_pretraining_run(const std::string& dir, const std::string& option);

// Refuse (std::runtime_error, one line) a training or fine-tune run where a directory of
// another kind (`wanted`, e.g. "a comparison") is to be written: "compare: --out X is a training
// run (config.toml, from `roformer train`), not a comparison; pick a new …".
void refuse_run_directory(const std::string& dir, const std::string& option,
                          const std::string& wanted);

// Refuse a pre-training directory given to a command that reads a fine-tune run (classify,
// finetune --resume): "X is a pre-training run (`roformer train`), not a fine-tune; …".
// `fix` ends the line (what to do instead).
void require_finetune_run(const std::string& dir, const std::string& option,
                          const std::string& fix);

}  // namespace rf
