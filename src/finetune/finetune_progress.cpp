// Room — finetune: where a fine-tune stands (see finetune_progress.hpp).
#include "finetune/finetune_progress.hpp"

#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/durable_file.hpp"
#include "io/json_whole.hpp"
#include "run/checkpoint.hpp"
#include "run/checkpoint_commit.hpp"

namespace rf {

using Json = nlohmann::json;

std::string FinetuneProgress::to_json() const {
    // nlohmann writes a double with enough digits to read back the same bits: the resumed
    // window sum is the interrupted one exactly.
    return Json{{"step", step},
                {"total_steps", total_steps},
                {"stopped_by", stopped_by},
                {"window_loss_sum", window_loss_sum},
                {"window_count", window_count},
                {"elapsed_s", elapsed_s},
                {"resume_command", resume_command}}
               .dump(2) +
           "\n";
}

FinetuneProgress load_progress(const std::string& dir) {
    FinetuneProgress p;
    const std::string path = run_file(dir, kFinetuneProgressFile);
    if (!std::filesystem::exists(path)) return p;
    try {
        const Json j = Json::parse(read_file_bytes(path, 1 << 20));
        p.step = json_whole(j, "step", "step");
        p.total_steps = json_whole(j, "total_steps", "total_steps");
        p.stopped_by = j.at("stopped_by").get<std::string>();
        p.window_loss_sum = j.at("window_loss_sum").get<double>();
        p.window_count = json_whole(j, "window_count", "window_count");
        p.elapsed_s = j.at("elapsed_s").get<double>();
        p.resume_command = j.value("resume_command", "");
    } catch (const Json::exception&) {
        throw std::runtime_error("'" + path +
                                 "' is damaged (not the step, planned steps and loss window of a "
                                 "fine-tune); fine-tune again into a new --out");
    } catch (const NotJsonWhole& e) {  // a number out of range (io/json_whole.hpp)
        throw std::runtime_error("'" + path + "' is damaged (" + e.what() +
                                 "); fine-tune again into a new --out");
    }
    p.present = true;
    return p;
}

std::string served_model_warning(const std::string& dir) {
    const std::string best = run_file(dir, "best.safetensors");
    if (std::filesystem::exists(best)) {
        const auto meta = read_checkpoint_metadata(best);
        const auto step = meta.find("step");
        if (step != meta.end() && step->second == "0")
            return dir + "'s best.safetensors, which classify uses, is the step-0 model: the "
                   "fresh classification head, never raised by fine-tuning (validation "
                   "macro-F1); fine-tune again with another lr or more patience";
    }
    const FinetuneProgress p = load_progress(dir);
    if (!p.present || p.step >= p.total_steps || p.stopped_by == "early stopping") return "";
    return dir + " is an unfinished fine-tune: stopped at step " + std::to_string(p.step) +
           " of " + std::to_string(p.total_steps) + " (" + p.stopped_by + "); resume with: " +
           (p.resume_command.empty() ? "roformer finetune … --resume --out " + dir
                                     : p.resume_command);
}

}  // namespace rf
