// Room — run: fresh or resumed run directories (see run_directory.hpp).
#include "run/run_directory.hpp"

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <set>
#include <vector>
#include <stdexcept>

#include <cstdio>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "data/corpus.hpp"
#include "data/corpus_record.hpp"
#include "io/read_file.hpp"
#include "io/shell_quote.hpp"
#include "io/durable_file.hpp"
#include "io/locked_directory.hpp"
#include "io/output_file.hpp"
#include "run/checkpoint.hpp"
#include "run/directory_kind.hpp"
#include "run/run_config.hpp"

namespace rf {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string RunDirectory::file(const std::string& name) const { return run_file(dir_, name); }

RunDirectory RunDirectory::replica(const std::string& dir, bool resuming, bool checkpoint_present,
                                   std::unique_ptr<data::Tokenizer> tokenizer) {
    RunDirectory run(dir, resuming);
    run.checkpoint_.present = checkpoint_present;
    run.tokenizer_ = std::move(tokenizer);
    return run;
}

namespace {

// "--resume: the config differs from X/config.toml: train.lr is 0.001 there but 0.002 now; …",
// naming the first key that differs.
std::string resume_difference(const Config& saved, const Config& now, const RunDirectory& run) {
    const std::string which = config_difference(saved, now);
    return "--resume: the config differs from " + run.file("config.toml") +
           (which.empty() ? "" : ": " + which) +
           "; resume with the same --config and --set values, or start a new run with a new --out";
}

// What identifies the corpus a run was trained on: its path, size and FNV-1a hash
// (data/corpus_record.hpp, the one rule train, finetune and classify share).
Json corpus_record(const std::string& path) {
    return Json::parse(data::source_record_json(
        data::record_source_file(path, data::kMaxCorpusBytes)));
}

// --resume on a corpus that changed since the run started would continue on other text.
void check_corpus(const RunDirectory& run, const Config& config) {
    const std::string record_path = run.file(kCorpusRecord);
    if (!fs::exists(record_path)) return;  // a run from before corpus.json: unchecked
    data::SourceFileRecord saved = data::parse_source_record(
        read_file_bytes(record_path, 1 << 20), record_path,
        "put the run's own corpus.json back, or train again into a new --out");
    saved.path = config.data.path;
    const std::string change = data::source_file_change(saved, data::kMaxCorpusBytes);
    if (!change.empty())
        throw std::runtime_error("--resume: the corpus " + change +
                                 "; restore the original text, or train a new run with a new --out");
}

// `now` with the saved data.path where both name the same corpus, however spelt (data/x.txt,
// ./data/x.txt, a symlink, an absolute path): the corpus is compared by what it holds —
// check_corpus holds it to the size and hash in corpus.json — or, in a run from before that
// record, by being the same file. Only data.path's spelling is forgiven, nothing else.
Config same_corpus_path(const Config& saved, const Config& now, const RunDirectory& run) {
    Config out = now;
    if (saved.data.path == now.data.path) return out;
    std::error_code ec;
    if (fs::exists(run.file(kCorpusRecord), ec) ||
        fs::equivalent(saved.data.path, now.data.path, ec))
        out.data.path = saved.data.path;
    return out;
}

// The model, the optimizer and checkpoint.json must be at one step: a manifest that does not
// list a file (e.g. "files": {}) does not check it, and a step-40 optimizer beside a step-60
// model would resume without complaint and drift from the run it continues.
void check_checkpoint_steps(const RunDirectory& run) {
    auto step_of = [&](const char* name) {
        const auto meta = read_checkpoint_metadata(run.file(name));
        const auto it = meta.find("step");
        return it == meta.end() ? std::string("?") : it->second;
    };
    const std::string model = step_of("model.safetensors");
    const std::string optimizer = step_of("optimizer.safetensors");
    const std::string committed =
        run.checkpoint().manifest ? std::to_string(run.checkpoint().step) : model;
    if (model != optimizer || model != committed)
        throw std::runtime_error("--resume: the checkpoint in '" + run.path() +
                                 "' is inconsistent: model.safetensors is at step " + model +
                                 ", optimizer.safetensors at step " + optimizer + ", " +
                                 kCheckpointManifest + " says " + committed +
                                 "; it cannot be resumed — train a new run with a new --out");
}

// A run killed (SIGKILL, a second Ctrl-C) before its first checkpoint leaves only the files a
// start writes — config.toml, split.txt, corpus.json, tokenizer.json, their temporaries — and
// its lock record. That is this command's own half state: the next `train --out X` removes
// those files, with one note, and starts. Anything else in X keeps it "not empty".
// killed_start_files: those names when `dir` holds exactly such a start (the lock included),
// else none.
std::vector<std::string> killed_start_files(const std::string& dir) {
    static const std::set<std::string> start_files = {"config.toml", "split.txt", kCorpusRecord,
                                                      "tokenizer.json", RunLock::kFileName};
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        const bool temporary = name.find(".tmp-") != std::string::npos;
        const std::string base = temporary ? name.substr(0, name.find(".tmp-")) : name;
        if (!start_files.count(base) || !e.is_regular_file()) return {};
        names.push_back(name);
    }
    if (names.empty() || !RunLock::is_lock_record(dir) ||
        std::find(names.begin(), names.end(), RunLock::kFileName) == names.end() ||
        names.size() == 1)
        return {};
    return names;
}

void restart_killed_start(const std::string& dir, const RunLock& lock) {
    const std::vector<std::string> names = killed_start_files(dir);
    if (names.empty()) return;
    const std::string pid = RunLock::holder(dir);
    for (const std::string& name : names)
        if (name != RunLock::kFileName) ::unlinkat(lock.descriptor(), name.c_str(), 0);
    std::fprintf(stderr,
                 "note: %s held only the start of a run killed before its first checkpoint "
                 "(pid %s); starting again\n",
                 dir.c_str(), pid.c_str());
}

}  // namespace

RunDirectory RunDirectory::fresh(const std::string& dir) {
    if (dir.empty()) throw std::invalid_argument("train: no output directory given (--out DIR)");
    check_directory_names(dir, "--out", {kLongestRunName});  // before anything is created
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw std::runtime_error("--out '" + dir +
                                 "' is a file, not a directory; pick a new --out");
    // Lock first, then look: of two writers started together exactly one gets past here, and
    // the other is told who holds the directory rather than that it is not empty.
    // Our pid goes into X/lock only once X is ours: a user's own file named `lock` is refused
    // as "not empty", never overwritten.
    RunLock lock = RunLock::acquire(dir, false);
    restart_killed_start(dir, lock);
    for (const fs::directory_entry& e : fs::directory_iterator(dir))
        if (e.path().filename() != RunLock::kFileName || !RunLock::is_lock_record(dir)) {
            DirectoryState state = inspect_directory(dir);
            state.writer.clear();  // the lock it found held is ours
            throw std::runtime_error(
                "output directory '" + dir + "' already exists and is not empty (it " +
                describe(state) + "); pick a new --out" +
                (state.kind == DirectoryKind::training_run || state.kind == DirectoryKind::finetune_run
                     ? ", or add --resume to continue it"
                     : ""));
        }
    try {
        lock.record_holder();
    } catch (...) {  // nothing left: not the record, not the directory this call made
        lock.remove_created();
        throw;
    }
    RunDirectory run(dir, false, std::move(lock));
    return run;
}

RunDirectory RunDirectory::resume(const std::string& dir, const Config& config) {
    if (dir.empty()) throw std::invalid_argument("train: no output directory given (--out DIR)");
    check_directory_names(dir, "--out", {kLongestRunName});
    require_directory(dir, "--resume: the run directory", "drop --resume to start a new run there");
    // Locked, but our pid is recorded only once the run is one to resume (check_resumable): a
    // refusal before that leaves the record of the writer before (a killed start's pid, which
    // the next start's note names); a refusal after it takes the record away again if this
    // call created it (`--resume` into an empty directory leaves it empty).
    RunDirectory run(dir, true, RunLock::acquire(dir, false));
    bool made_record = false;
    try {
        run.check_resumable(config, made_record);
    } catch (...) {
        if (made_record) run.lock_->remove_record();
        throw;
    }
    return run;
}

void RunDirectory::check_resumable(const Config& config, bool& made_record) {
    const std::string& dir = dir_;
    RunDirectory& run = *this;
    // A FIFO or device under one of our names would block or never end: refuse it by name.
    for (const char* name :
         {"config.toml", "tokenizer.json", "split.txt", kCorpusRecord, "metrics.csv",
          "model.safetensors", "optimizer.safetensors", "checkpoint.json"})
        if (fs::exists(run.file(name))) require_regular_file(run.file(name), "--resume: run file",
                                 "the run directory is damaged; train a new run with a new --out");
    for (const char* name : {"config.toml", "tokenizer.json"})
        if (!fs::exists(run.file(name))) {
            // A start killed before it wrote both: the plain command clears it (see above).
            if (!killed_start_files(dir).empty())
                throw std::runtime_error("--resume: '" + dir +
                                         "' holds only the start of a run killed before its first "
                                         "checkpoint (pid " +
                                         RunLock::holder(dir) +
                                         "), nothing to resume; run the same command without "
                                         "--resume: it clears that start and trains into the "
                                         "same --out");
            DirectoryState state = inspect_directory(dir);
            state.writer.clear();  // the lock it found held is ours
            if (state.kind == DirectoryKind::damaged_run || state.kind == DirectoryKind::training_run)
                throw std::runtime_error("--resume: '" + dir + "' is a damaged run: '" +
                                         run.file(name) + "' is missing, so it cannot be resumed; "
                                         "restore the file, or train again into a new --out");
            throw std::runtime_error("--resume: '" + dir + "' " + describe(state) +
                                     ", not a training run; drop --resume and pick a new --out");
        }
    made_record = run.lock_->record_holder();  // the run is one to resume: from here on, our pid
    run.checkpoint_ = recover_checkpoint(dir);
    remove_stale_temporaries(dir);
    if (run.checkpoint_.present && !fs::exists(run.file("optimizer.safetensors")))
        throw std::runtime_error("--resume: '" + dir +
                                 "' has no optimizer.safetensors to resume from; it holds a "
                                 "finished model only — train a new run with a new --out");
    if (run.checkpoint_.present) check_checkpoint_steps(run);
    // Read as a reader does (run/run_config.hpp): a run started on a CPU with bf16 products or
    // a wider ISA resumes here once the config asks for what this CPU has.
    const Config saved = load_run_config(run.file("config.toml"));
    const Config compared = same_corpus_path(saved, config, run);
    if (saved != compared) throw std::runtime_error(resume_difference(saved, compared, run));
    if (run.checkpoint_.present && run.checkpoint_.step >= config.train.steps)
        throw std::runtime_error("--resume: the run in '" + dir + "' is already finished (step " +
                                 std::to_string(run.checkpoint_.step) + " of " +
                                 std::to_string(config.train.steps) +
                                 "); evaluate it with `" +
                                 shell_command({"roformer", "eval", "--run", dir}) +
                                 "`, or train longer into a new --out");
    check_corpus(run, config);
    run.tokenizer_ = data::load_tokenizer(run.file("tokenizer.json"));
}

void RunDirectory::write_run_files(const Config& config, const data::Tokenizer& tokenizer,
                                   const std::string& split_summary) const {
    // tokenizer.json last: resume takes config.toml + tokenizer.json as a started run.
    const std::vector<std::pair<std::string, std::string>> files = {
        {"config.toml", to_toml(config)},
        {"split.txt", split_summary + "\n"},
        {kCorpusRecord, corpus_record(config.data.path).dump(2) + "\n"},
        {"tokenizer.json", tokenizer.to_json()}};
    // A failure half way is cleaned up by the destructor, with everything else this run wrote.
    for (const auto& [name, bytes] : files) write_file_atomically(file(name), bytes);
}

RunDirectory::~RunDirectory() {
    // A fresh run that ends before its first checkpoint (bad data, a tokenizer that does not
    // fit the model, a full disk, a non-finite first checkpoint) leaves nothing a rerun would
    // refuse as "not empty": the files it wrote, its lock record and — if it created the
    // directory, and the name still names it — the directory go. Only names this process
    // wrote into the locked directory are removed (io/locked_directory.hpp), never others.
    if (resuming_ || !lock_ || lock_->descriptor() < 0) return;
    const int fd = lock_->descriptor();
    struct stat st {};
    if (::fstatat(fd, kCheckpointManifest, &st, AT_SYMLINK_NOFOLLOW) == 0) return;
    for (const std::string& name : names_written_in(fd)) ::unlinkat(fd, name.c_str(), 0);
    lock_->remove_record();
    lock_->remove_created();  // only if empty, with the parents it made
}

}  // namespace rf
