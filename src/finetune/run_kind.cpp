// Fine-tuning — which kind of run directory a path is (see run_kind.hpp).
#include "finetune/run_kind.hpp"

#include <filesystem>
#include <stdexcept>

#include "io/shell_quote.hpp"
#include "run/checkpoint.hpp"

namespace rf {

RunKind run_kind(const std::string& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) return RunKind::none;
    if (std::filesystem::exists(run_file(dir, "task.json"), ec)) return RunKind::finetune;
    if (std::filesystem::exists(run_file(dir, "config.toml"), ec)) return RunKind::pretraining;
    return RunKind::none;
}

void refuse_run_directory(const std::string& dir, const std::string& option,
                          const std::string& wanted) {
    const RunKind kind = run_kind(dir);
    if (kind == RunKind::none) return;
    throw std::runtime_error(option + " '" + dir + "' is a " +
                             (kind == RunKind::finetune
                                  ? "fine-tune run (task.json)"
                                  : "training run (config.toml, from `roformer train`)") +
                             ", not " + wanted + "; pick a new " +
                             option.substr(option.rfind(' ') + 1));
}

void require_pretraining_run(const std::string& dir, const std::string& option) {
    if (run_kind(dir) != RunKind::finetune) return;
    throw std::invalid_argument(option + " " + dir +
                                " is a fine-tune run (task.json), not a pre-training run: use " +
                                shell_command({"roformer", "classify", "--run", dir}) +
                                ", or give " + option + " the --out of a `roformer train`");
}

void require_finetune_run(const std::string& dir, const std::string& option,
                          const std::string& fix) {
    if (run_kind(dir) != RunKind::pretraining) return;
    throw std::invalid_argument(option + " " + dir +
                                " is a pre-training run (`roformer train`, no task.json), not a "
                                "fine-tune; " + fix);
}

}  // namespace rf
