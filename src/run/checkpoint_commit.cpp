// Room — run: committing and recovering checkpoints (see checkpoint_commit.hpp).
#include "run/checkpoint_commit.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "io/durable_file.hpp"
#include "io/locked_directory.hpp"
#include "io/platform.hpp"
#include "run/interrupt.hpp"

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

// The file at `path` has the size and hash the manifest entry records.
bool matches(const std::string& path, const Json& entry) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return false;
    if (fs::file_size(path, ec) != entry.at("size").get<uint64_t>() || ec) return false;
    return hex(fnv1a64(read_file_bytes(path))) == entry.at("fnv1a64").get<std::string>();
}

// A number the manifest records (the step, a file's size) that is not a whole number from 0 to
// 2^53: named, never converted (1e30 or -1 as a size_t is undefined or wraps).
struct BadManifestNumber : std::runtime_error {
    using std::runtime_error::runtime_error;
};
constexpr uint64_t kMaxManifestNumber = uint64_t(1) << 53;  // every JSON reader keeps it exact

void require_whole(const Json& object, const char* key, const std::string& shown) {
    const Json& v = object.at(key);
    if (!v.is_number_unsigned() || v.get<uint64_t>() > kMaxManifestNumber)
        throw BadManifestNumber("\"" + shown + "\" is " + v.dump() +
                                ", not a whole number from 0 to 2^53");
}

Json read_manifest(const std::string& run_dir) {
    const std::string path = in_dir(run_dir, kCheckpointManifest);
    try {
        Json manifest = Json::parse(read_file_bytes(path, 1 << 20));
        require_whole(manifest, "step", "step");
        if (!manifest.at("files").is_object()) throw std::invalid_argument("files");
        // Only the files a checkpoint writes (the model and the optimizer; a fine-tune with
        // early stopping also its best model and early_stopping.json, every fine-tune its
        // finetune_state.json), each with size, hash
        // and a temporary "<name>.tmp-<pid>" beside it: a damaged manifest must never make
        // recovery rename some other file.
        for (const auto& [name, entry] : manifest.at("files").items()) {
            const std::string temp = entry.at("temp").get<std::string>();
            require_whole(entry, "size", "files." + name + ".size");
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
                require_whole(entry, "size", "run_files." + name + ".size");
                entry.at("fnv1a64").get<std::string>();
                if (!is_recorded_run_file(name)) throw std::invalid_argument(name);
            }
        }
        return manifest;
    } catch (const BadManifestNumber& e) {
        throw std::runtime_error("'" + path + "': " + e.what() +
                                 "; the run directory was damaged — start again with a new --out");
    } catch (const std::exception&) {  // Json::exception, or a name we would not write
        throw std::runtime_error("'" + path +
                                 "' is not a valid checkpoint manifest; the run directory was "
                                 "damaged — start again with a new --out");
    }
}

// The first recorded run file whose bytes are no longer the ones `manifest` records, refused.
void require_recorded_run_files(const std::string& run_dir, const Json& manifest) {
    if (!manifest.contains("run_files")) return;  // a run from before the record: as it is
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
    if (fs::exists(in_dir(here, kCheckpointManifest), ec)) {
        try {
            require_recorded_run_files(here, read_manifest(here));
        } catch (const std::runtime_error& e) {  // named as the user gave it
            std::string message = e.what();
            for (size_t at; here != run_dir && (at = message.find(here)) != std::string::npos;)
                message.replace(at, here.size(), run_dir);
            throw std::runtime_error(message);
        }
    }
    Json record = Json::object();
    for (const char* name : kRecordedRunFiles) {
        const std::string path = in_dir(here, name);
        if (!fs::is_regular_file(fs::symlink_status(path, ec))) continue;
        const std::string bytes = read_file_bytes(path);
        record[name] = {{"size", bytes.size()}, {"fnv1a64", hex(fnv1a64(bytes))}};
    }
    return record;
}

}  // namespace

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
    if (!fs::exists(in_dir(run_dir, kCheckpointManifest), ec)) {
        // Older runs have no manifest; their files are taken as they are.
        state.present = fs::exists(in_dir(run_dir, "model.safetensors"), ec);
        return state;
    }
    const Json manifest = read_manifest(run_dir);
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
    std::error_code ec;
    if (!fs::exists(in_dir(run_dir, kCheckpointManifest), ec)) return std::nullopt;
    return read_manifest(run_dir).at("step").get<size_t>();
}

void verify_checkpoint_file(const std::string& run_dir, const std::string& name) {
    std::error_code ec;
    if (!fs::exists(in_dir(run_dir, kCheckpointManifest), ec)) return;
    const Json manifest = read_manifest(run_dir);
    const Json& files = manifest.at("files");
    if (!files.contains(name) || matches(in_dir(run_dir, name), files.at(name))) return;
    throw std::runtime_error("'" + in_dir(run_dir, name) + "' does not match " +
                             kCheckpointManifest +
                             " (a checkpoint write was interrupted, or is under way); retry "
                             "once no `roformer train` writes to " +
                             run_dir);
}

void verify_run_files(const std::string& run_dir) {
    std::error_code ec;
    if (!fs::exists(in_dir(run_dir, kCheckpointManifest), ec)) return;
    require_recorded_run_files(run_dir, read_manifest(run_dir));
}

void remove_stale_temporaries(const std::string& run_dir) {
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(run_dir, ec))
        if (e.path().filename().string().find(".tmp-") != std::string::npos)
            remove_file_quietly(e.path().string());
}

}  // namespace rf
