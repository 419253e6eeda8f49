// Room — run: committing and recovering checkpoints (see checkpoint_commit.hpp).
#include "run/checkpoint_commit.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "io/durable_file.hpp"
#include "io/json_whole.hpp"
#include "io/locked_directory.hpp"
#include "io/platform.hpp"
#include "io/safetensors.hpp"
#include "run/interrupt.hpp"
#include "run/run_lock.hpp"

namespace rf {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

std::string in_dir(const std::string& dir, const std::string& name) {
    return (fs::path(dir) / name).string();
}

std::string hex(uint64_t h) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
    return text;
}

// The test hook: _exit (no destructors, no flushing — like a kill) at the named point.
void fault_point(const char* point, size_t step) {
    static size_t armed_step = [] {
        const char* spec = std::getenv("RF_FAULT_KILL_AT");
        if (!spec) return size_t(0);
        const char* at = std::strchr(spec, '@');
        return at ? size_t(std::strtoull(at + 1, nullptr, 10)) : size_t(0);
    }();
    static bool fired_once = false;  // without @step: the first checkpoint written
    const char* spec = std::getenv("RF_FAULT_KILL_AT");
    if (!spec) return;
    const std::string wanted(spec, std::strcspn(spec, "@"));
    if (wanted != point) return;
    if (armed_step ? step != armed_step : fired_once) return;
    fired_once = true;
    std::fprintf(stderr, "RF_FAULT_KILL_AT: killed at %s of step %zu\n", point, step);
    ::_exit(99);
}

bool is_recorded_run_file(const std::string& name) {
    for (const char* recorded : kRecordedRunFiles)
        if (name == recorded) return true;
    return false;
}

// `bytes` have the size and hash the manifest entry records.
bool bytes_match(const std::string& bytes, const Json& entry) {
    return bytes.size() == entry.at("size").get<uint64_t>() &&
           hex(fnv1a64(bytes)) == entry.at("fnv1a64").get<std::string>();
}

// The file at `path` has the size and hash the manifest entry records.
bool matches(const std::string& path, const Json& entry) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return false;
    if (fs::file_size(path, ec) != entry.at("size").get<uint64_t>() || ec) return false;
    return bytes_match(read_file_bytes(path), entry);
}

Json read_manifest(const std::string& run_dir) {
    const std::string path = in_dir(run_dir, kCheckpointManifest);
    try {
        Json manifest = Json::parse(read_file_bytes(path, 1 << 20));
        // The step and every size: whole numbers from 0 to 2^53, named, never converted
        // (io/json_whole.hpp).
        json_whole(manifest, "step", "step");
        if (!manifest.at("files").is_object()) throw std::invalid_argument("files");
        // Only the files a checkpoint writes (the model and the optimizer; a fine-tune with
        // early stopping also its best model and early_stopping.json, every fine-tune its
        // finetune_state.json), each with size, hash
        // and a temporary "<name>.tmp-<pid>" beside it: a damaged manifest must never make
        // recovery rename some other file.
        for (const auto& [name, entry] : manifest.at("files").items()) {
            const std::string temp = entry.at("temp").get<std::string>();
            json_whole(entry, "size", "files." + name + ".size");
            entry.at("fnv1a64").get<std::string>();
            const bool known = name == "model.safetensors" || name == "optimizer.safetensors" ||
                               name == "best.safetensors" || name == "early_stopping.json" ||
                               name == "finetune_state.json";
            if (!known || temp.rfind(name + ".tmp-", 0) != 0 ||
                temp.find_first_not_of("0123456789", name.size() + 5) != std::string::npos)
                throw std::invalid_argument(name);
        }
        // The run's own files, each with size and hash (absent in a run from before them).
        if (manifest.contains("run_files")) {
            if (!manifest.at("run_files").is_object()) throw std::invalid_argument("run_files");
            for (const auto& [name, entry] : manifest.at("run_files").items()) {
                json_whole(entry, "size", "run_files." + name + ".size");
                entry.at("fnv1a64").get<std::string>();
                if (!is_recorded_run_file(name)) throw std::invalid_argument(name);
            }
        }
        return manifest;
    } catch (const NotJsonWhole& e) {
        throw std::runtime_error("'" + path + "': " + e.what() +
                                 "; the run directory was damaged — start again with a new --out");
    } catch (const std::exception&) {  // Json::exception, or a name we would not write
        throw std::runtime_error("'" + path +
                                 "' is not a valid checkpoint manifest; the run directory was "
                                 "damaged — start again with a new --out");
    }
}

// model.safetensors carries kRecordMark: a checkpoint of this version committed it, with a
// checkpoint.json that records the run's files. A model that cannot be read says nothing here
// (its reader names what is wrong with it).
bool model_is_marked(const std::string& run_dir) {
    const std::string path = in_dir(run_dir, "model.safetensors");
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return false;
    try {
        const auto meta = read_safetensors_metadata(path);
        const auto it = meta.find(kRecordMark);
        return it != meta.end() && it->second == kCheckpointManifest;
    } catch (const std::exception&) {
        return false;
    }
}

std::runtime_error record_dropped(const std::string& run_dir, const std::string& what) {
    return std::runtime_error(
        "'" + in_dir(run_dir, kCheckpointManifest) + "' " + what + ", yet " +
        in_dir(run_dir, "model.safetensors") +
        " was committed with that record (its __metadata__ \"" + kRecordMark +
        "\"): the run directory was damaged — put the run's own " + kCheckpointManifest +
        " back from a copy of the run, or train again into a new --out");
}

// checkpoint.json as it is now: nullopt when there is none and the run is from before the
// mark (no checkpoint committed yet, or an older run); a marked run without it, or without its
// "run_files", is refused as damaged.
std::optional<Json> manifest_of(const std::string& run_dir) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(in_dir(run_dir, kCheckpointManifest), ec))) {
        if (model_is_marked(run_dir)) throw record_dropped(run_dir, "is missing");
        return std::nullopt;
    }
    Json manifest = read_manifest(run_dir);
    if (!manifest.contains("run_files") && model_is_marked(run_dir))
        throw record_dropped(run_dir, "has no \"run_files\" record of the run's own files");
    return manifest;
}

// The first recorded run file whose bytes are no longer the ones `manifest` records, refused.
// A manifest without "run_files" is from before the record (manifest_of refused it otherwise).
void require_recorded_run_files(const std::string& run_dir, const Json& manifest) {
    if (!manifest.contains("run_files")) return;
    for (const auto& [name, entry] : manifest.at("run_files").items()) {
        const std::string path = in_dir(run_dir, name);
        if (matches(path, entry)) continue;
        std::error_code ec;
        const bool gone = !fs::exists(fs::symlink_status(path, ec));
        const std::string settings =
            name == "config.toml" ? " (one command's settings go in --set)" : "";
        throw std::runtime_error("'" + path + "' " + (gone ? "is missing" : "changed") +
                                 " since the run recorded it (its size and FNV-1a hash in " +
                                 in_dir(run_dir, kCheckpointManifest) +
                                 "): the model was trained with the recorded one; put the run's "
                                 "own " +
                                 name + " back" + settings + ", or train again into a new --out");
    }
}

// The record of the run's own files for the next manifest: each one present, after checking
// that the previous manifest's record still holds.
// The files are read where the run's locked directory is now (its descriptor, as its writes
// go: io/locked_directory.hpp), not by its name: renamed while training, the name may already
// hold another run, whose files are not this run's.
Json run_files_record(const std::string& run_dir) {
    const LocatedPath where = locate(in_dir(run_dir, kCheckpointManifest));
    std::string here =
        where.dir_fd == AT_FDCWD
            ? run_dir
            : (fs::path(platform::descriptor_path(where.dir_fd)) /
               fs::path(where.relative).parent_path())
                  .lexically_normal()
                  .string();
    while (here.size() > 1 && here.back() == '/') here.pop_back();
    std::error_code ec;
    try {
        if (const std::optional<Json> previous = manifest_of(here))
            require_recorded_run_files(here, *previous);
    } catch (const std::runtime_error& e) {  // named as the user gave it
        std::string message = e.what();
        for (size_t at; here != run_dir && (at = message.find(here)) != std::string::npos;)
            message.replace(at, here.size(), run_dir);
        throw std::runtime_error(message);
    }
    Json record = Json::object();
    for (const char* name : kRecordedRunFiles) {
        const std::string path = in_dir(here, name);
        if (!fs::exists(fs::symlink_status(path, ec))) continue;  // not a file of this run
        // A symbolic link is recorded as the file it points to (what every reader reads);
        // anything that is not a regular file then is refused, never left out of the record.
        if (!fs::is_regular_file(path, ec))
            throw std::runtime_error(
                "'" + in_dir(run_dir, name) +
                "' is not a regular file (a directory, a FIFO or a dangling link), so it cannot "
                "be recorded; put the run's own " + std::string(name) +
                " back, or train again into a new --out");
        const std::string bytes = read_file_bytes(path);
        record[name] = {{"size", bytes.size()}, {"fnv1a64", hex(fnv1a64(bytes))}};
    }
    return record;
}

}  // namespace

void mark_recorded(std::map<std::string, std::string>& metadata) {
    metadata[kRecordMark] = kCheckpointManifest;
}

void commit_checkpoint(const std::string& run_dir, size_t step, const CheckpointFiles& files) {
    const StopExitHold hold;  // a stop signal's watchdog waits for the renames (interrupt.hpp)
    Json manifest = Json::object();
    manifest["format"] = "roformer-cpp checkpoint";
    manifest["step"] = step;
    manifest["files"] = Json::object();
    manifest["run_files"] = run_files_record(run_dir);
    static const char* const kTempPoints[] = {"model-temp", "optimizer-temp"};
    static const char* const kRenamePoints[] = {"model-rename", "optimizer-rename"};
    // A write that fails before the commit point removes every temporary of this checkpoint
    // (the guards); after it, the manifest names them and recovery needs them.
    std::vector<TemporaryFile> temps;
    for (size_t i = 0; i < files.size(); ++i) {
        const auto& [name, bytes] = files[i];
        temps.emplace_back(in_dir(run_dir, name));
        temps.back().write(bytes);
        manifest["files"][name] = {{"size", bytes.size()},
                                   {"fnv1a64", hex(fnv1a64(bytes))},
                                   {"temp", fs::path(temps.back().path()).filename().string()}};
        if (i < 2) fault_point(kTempPoints[i], step);
    }
    TemporaryFile manifest_temp(in_dir(run_dir, kCheckpointManifest));
    manifest_temp.write(manifest.dump(2) + "\n");
    manifest_temp.rename_into_place();  // the commit point
    for (TemporaryFile& temp : temps) temp.keep();
    fault_point("manifest", step);
    for (size_t i = 0; i < files.size(); ++i) {
        const std::string path = in_dir(run_dir, files[i].first);
        rename_durably(temporary_name(path), path);
        if (i < 2) fault_point(kRenamePoints[i], step);
    }
    // Written through the locked directory's descriptor; if its name now names another
    // directory, stop here — this checkpoint is whole where the files went.
    require_in_place(run_dir);
}

CheckpointState recover_checkpoint(const std::string& run_dir) {
    CheckpointState state;
    std::error_code ec;
    const std::optional<Json> read = manifest_of(run_dir);
    if (!read) {
        // Older runs have no manifest; their files are taken as they are.
        state.present = fs::exists(in_dir(run_dir, "model.safetensors"), ec);
        return state;
    }
    const Json& manifest = *read;
    require_recorded_run_files(run_dir, manifest);
    state.present = state.manifest = true;
    state.step = manifest.at("step").get<size_t>();
    for (const auto& [name, entry] : manifest.at("files").items()) {
        const std::string path = in_dir(run_dir, name);
        if (matches(path, entry)) continue;
        const std::string temp = in_dir(run_dir, entry.at("temp").get<std::string>());
        if (!matches(temp, entry))
            throw std::runtime_error(
                "checkpoint in " + run_dir + " is torn: " + name + " does not match " +
                kCheckpointManifest + " (step " + std::to_string(state.step) +
                ") and no complete copy is left; start again with a new --out");
        rename_durably(temp, path);  // finish the commit a killed writer began
    }
    return state;
}

std::optional<size_t> committed_step(const std::string& run_dir) {
    const std::optional<Json> manifest = manifest_of(run_dir);
    if (!manifest) return std::nullopt;
    return manifest->at("step").get<size_t>();
}

namespace {
// `name`'s bytes do not match the manifest's entry for it: a commit under way, or damage.
std::runtime_error not_matching(const std::string& run_dir, const std::string& name) {
    return std::runtime_error("'" + in_dir(run_dir, name) + "' does not match " +
                              kCheckpointManifest +
                              " (a checkpoint write was interrupted, or is under way); retry "
                              "once no `roformer train` writes to " +
                              run_dir);
}

// `bytes`, read as `name`, are the ones `manifest` commits (or it does not list `name`).
bool entry_matches(const Json& manifest, const std::string& name, const std::string& bytes) {
    const Json& files = manifest.at("files");
    return !files.contains(name) || bytes_match(bytes, files.at(name));
}
}  // namespace

void verify_checkpoint_file(const std::string& run_dir, const std::string& name) {
    const std::optional<Json> manifest = manifest_of(run_dir);
    if (!manifest) return;
    const Json& files = manifest->at("files");
    if (!files.contains(name) || matches(in_dir(run_dir, name), files.at(name))) return;
    throw not_matching(run_dir, name);
}

void verify_run_files(const std::string& run_dir) {
    if (const std::optional<Json> manifest = manifest_of(run_dir))
        require_recorded_run_files(run_dir, *manifest);
}

CommittedFile read_committed_file(const std::string& run_dir, const std::string& name) {
    const std::string path = in_dir(run_dir, name);
    for (int attempt = 1;; ++attempt) {
        const std::optional<Json> manifest = manifest_of(run_dir);
        CommittedFile read;
        std::error_code ec;
        const bool present = fs::is_regular_file(path, ec);  // else: "" (its reader names it)
        if (present) read.bytes = read_file_bytes(path);
        if (!manifest) return read;  // a run from before manifests: as it is
        if (present && entry_matches(*manifest, name, read.bytes)) {
            require_recorded_run_files(run_dir, *manifest);
            read.step = manifest->at("step").get<size_t>();
            return read;
        }
        if (attempt == 100) throw not_matching(run_dir, name);
        // Between a writer's manifest and its renames (milliseconds); a commit a killed
        // writer left half done is finished here when no writer holds the directory.
        if (std::optional<RunLock> lock = RunLock::try_acquire(run_dir))
            recover_checkpoint(run_dir);
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

void remove_stale_temporaries(const std::string& run_dir) {
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(run_dir, ec))
        if (e.path().filename().string().find(".tmp-") != std::string::npos)
            remove_file_quietly(e.path().string());
}

}  // namespace rf
