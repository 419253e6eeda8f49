// Stage 7 — train: fresh or resumed run directories (see run_directory.hpp).
#include "train/run_directory.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "io/durable_file.hpp"
#include "train/checkpoint.hpp"

namespace rf {

namespace fs = std::filesystem;

std::string RunDirectory::file(const std::string& name) const { return run_file(dir_, name); }

RunDirectory RunDirectory::fresh(const std::string& dir) {
    if (dir.empty()) throw std::invalid_argument("train: no output directory given (--out DIR)");
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw std::runtime_error("--out '" + dir +
                                 "' is a file, not a directory; pick a new --out");
    // Lock first, then look: of two writers started together exactly one gets past here, and
    // the other is told who holds the directory rather than that it is not empty.
    RunLock lock = RunLock::acquire(dir);
    for (const fs::directory_entry& e : fs::directory_iterator(dir))
        if (e.path().filename() != RunLock::kFileName)
            throw std::runtime_error("output directory '" + dir +
                                     "' already exists and is not "
                                     "empty; pick a new --out, or add --resume to continue it");
    return RunDirectory(dir, false, std::move(lock));
}

RunDirectory RunDirectory::resume(const std::string& dir, const Config& config) {
    if (dir.empty()) throw std::invalid_argument("train: no output directory given (--out DIR)");
    if (!fs::is_directory(dir))
        throw std::runtime_error("--resume: '" + dir +
                                 "' does not exist; drop --resume to start a new run there");
    RunDirectory run(dir, true, RunLock::acquire(dir));
    for (const char* name : {"config.toml", "tokenizer.json"})
        if (!fs::exists(run.file(name)))
            throw std::runtime_error("--resume: '" + run.file(name) +
                                     "' is missing (the run was killed while it was being "
                                     "created); delete '" +
                                     dir + "' and train again without --resume");
    run.checkpoint_ = recover_checkpoint(dir);
    remove_stale_temporaries(dir);
    if (run.checkpoint_.present && !fs::exists(run.file("optimizer.safetensors")))
        throw std::runtime_error("--resume: '" + dir +
                                 "' has no optimizer.safetensors to resume from; it holds a "
                                 "finished model only — train a new run with a new --out");
    const Config saved = load_config(run.file("config.toml"));
    if (saved != config)
        throw std::runtime_error("--resume: the config differs from " + run.file("config.toml") +
                                 "; resume with the same --config and --set values");
    run.tokenizer_ = data::load_tokenizer(run.file("tokenizer.json"));
    return run;
}

void RunDirectory::write_run_files(const Config& config, const data::Tokenizer& tokenizer,
                                   const std::string& split_summary) const {
    // tokenizer.json last: resume takes config.toml + tokenizer.json as a started run.
    write_file_atomically(file("config.toml"), to_toml(config));
    write_file_atomically(file("split.txt"), split_summary + "\n");
    tokenizer.save(file("tokenizer.json"));
}

}  // namespace rf
