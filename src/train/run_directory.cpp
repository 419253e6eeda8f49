// Stage 7 — train: fresh or resumed run directories (see run_directory.hpp).
#include "train/run_directory.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "train/checkpoint.hpp"

namespace rf {

namespace fs = std::filesystem;

std::string RunDirectory::file(const std::string& name) const { return run_file(dir_, name); }

RunDirectory RunDirectory::fresh(const std::string& dir) {
    if (dir.empty()) throw std::invalid_argument("train: no output directory given (--out DIR)");
    if (fs::exists(dir) && !fs::is_empty(dir))
        throw std::runtime_error("output directory '" + dir +
                                 "' already exists and is not "
                                 "empty; pick a new --out, or add --resume to continue it");
    return RunDirectory(dir, false);
}

RunDirectory RunDirectory::resume(const std::string& dir, const Config& config) {
    if (dir.empty()) throw std::invalid_argument("train: no output directory given (--out DIR)");
    RunDirectory run(dir, true);
    if (!fs::exists(run.file("model.safetensors")) ||
        !fs::exists(run.file("optimizer.safetensors")))
        throw std::runtime_error("--resume: '" + dir +
                                 "' has no checkpoint to resume from "
                                 "(model.safetensors + optimizer.safetensors)");
    const Config saved = load_config(run.file("config.toml"));
    if (saved != config)
        throw std::runtime_error("--resume: the config differs from " + run.file("config.toml") +
                                 "; resume with the same --config and --set values");
    run.tokenizer_ = data::load_tokenizer(run.file("tokenizer.json"));
    return run;
}

void RunDirectory::write_run_files(const Config& config, const data::Tokenizer& tokenizer,
                                   const std::string& split_summary) const {
    fs::create_directories(dir_);
    std::ofstream(file("config.toml")) << to_toml(config);
    tokenizer.save(file("tokenizer.json"));
    std::ofstream(file("split.txt")) << split_summary << "\n";
}

}  // namespace rf
