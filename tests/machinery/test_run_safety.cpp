// Tests for a run directory as a transaction (issue 14): a checkpoint's files are committed as
// one step and verified on load; one writer at a time; a half-created run restarts from step 0.
// The process-level parts (kills at each commit point, signals, two processes) are in
// tests/machinery/cli_run_safety.sh.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <vector>
#include <string>

#include "io/durable_file.hpp"
#include "io/safetensors.hpp"
#include "run/checkpoint_commit.hpp"
#include "run/run_directory.hpp"

using namespace rf;
namespace fs = std::filesystem;

namespace {

std::string fresh_dir(const std::string& name) {
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_runs" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir.string();
}

std::string in(const std::string& dir, const std::string& name) {
    return (fs::path(dir) / name).string();
}

}  // namespace

TEST_CASE("checkpoint commit: files and manifest agree, and a commit cut short is finished") {
    const std::string dir = fresh_dir("commit");
    commit_checkpoint(dir, 4,
                      {{"model.safetensors", "model@4"}, {"optimizer.safetensors", "opt@4"}});
    CHECK(read_file_bytes(in(dir, "model.safetensors")) == "model@4");
    CHECK(recover_checkpoint(dir).step == 4);

    // A writer killed after the manifest of step 8 but before its renames: the temporaries
    // named in the manifest hold step 8, the files still step 4. Recovery rolls forward.
    const std::string manifest = read_file_bytes(in(dir, kCheckpointManifest));
    commit_checkpoint(dir, 8,
                      {{"model.safetensors", "model@8"}, {"optimizer.safetensors", "opt@8"}});
    const std::string manifest8 = read_file_bytes(in(dir, kCheckpointManifest));
    write_file_durably(temporary_name(in(dir, "model.safetensors")), "model@8");
    write_file_durably(in(dir, "model.safetensors"), "model@4");
    const CheckpointState state = recover_checkpoint(dir);
    CHECK(state.present);
    CHECK(state.step == 8);
    CHECK(read_file_bytes(in(dir, "model.safetensors")) == "model@8");
    CHECK(manifest != manifest8);

    // Torn with no copy left to finish it: refused, naming the file.
    write_file_durably(in(dir, "optimizer.safetensors"), "opt@7");
    CHECK_THROWS_WITH_AS(recover_checkpoint(dir),
                         doctest::Contains("optimizer.safetensors does not match"),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(verify_checkpoint_file(dir, "optimizer.safetensors"),
                         doctest::Contains("does not match checkpoint.json"), std::runtime_error);
    CHECK_NOTHROW(verify_checkpoint_file(dir, "model.safetensors"));

    // Stale temporaries go; the files stay.
    write_file_durably(in(dir, "model.safetensors.tmp-12345"), "junk");
    remove_stale_temporaries(dir);
    CHECK_FALSE(fs::exists(in(dir, "model.safetensors.tmp-12345")));
    CHECK(fs::exists(in(dir, "model.safetensors")));
}

TEST_CASE("checkpoint commit: the run's own files are in the record, and a change is refused") {
    const std::string dir = fresh_dir("run_files");
    const std::string tokenizer = "{\"vocab\": [\"E\", \"F\"]}\n";
    write_file_durably(in(dir, "tokenizer.json"), tokenizer);
    write_file_durably(in(dir, "config.toml"), "[model]\nhidden = 64\n");
    write_file_durably(in(dir, "notes.txt"), "a user's own notes");
    commit_checkpoint(dir, 2, {{"model.safetensors", "model@2"}});
    CHECK_NOTHROW(verify_run_files(dir));
    CHECK(read_file_bytes(in(dir, kCheckpointManifest)).find("notes.txt") == std::string::npos);
    write_file_durably(in(dir, "notes.txt"), "edited notes");  // not the run's: never checked
    CHECK_NOTHROW(verify_run_files(dir));

    // Two vocabulary entries swapped: the same size, still valid JSON — and another model.
    write_file_durably(in(dir, "tokenizer.json"), "{\"vocab\": [\"F\", \"E\"]}\n");
    const std::string named =
        "'" + in(dir, "tokenizer.json") + "' changed since the run recorded it";
    CHECK_THROWS_WITH_AS(verify_run_files(dir), doctest::Contains(named.c_str()),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(recover_checkpoint(dir), doctest::Contains(named.c_str()),
                         std::runtime_error);
    // The next commit checks the record before it records again: the edit is not adopted.
    CHECK_THROWS_WITH_AS(commit_checkpoint(dir, 4, {{"model.safetensors", "model@4"}}),
                         doctest::Contains(named.c_str()), std::runtime_error);
    CHECK(read_file_bytes(in(dir, "model.safetensors")) == "model@2");
    write_file_durably(in(dir, "tokenizer.json"), tokenizer);
    CHECK_NOTHROW(verify_run_files(dir));

    fs::remove(in(dir, "config.toml"));
    CHECK_THROWS_WITH_AS(verify_run_files(dir), doctest::Contains("config.toml' is missing"),
                         std::runtime_error);
    write_file_durably(in(dir, "config.toml"), "[model]\nhidden = 64\n");

    // A run from before the record: read as it is, and the read writes nothing.
    std::string manifest = read_file_bytes(in(dir, kCheckpointManifest));
    manifest = manifest.substr(0, manifest.find(",\n  \"run_files\"")) + "\n}\n";
    write_file_durably(in(dir, kCheckpointManifest), manifest);
    write_file_durably(in(dir, "tokenizer.json"), "{\"vocab\": [\"F\", \"E\"]}\n");
    CHECK_NOTHROW(verify_run_files(dir));
    CHECK(recover_checkpoint(dir).step == 2);
    CHECK(read_file_bytes(in(dir, kCheckpointManifest)) == manifest);

    // A record naming a file no run writes is a damaged manifest, not a file to check.
    write_file_durably(
        in(dir, kCheckpointManifest),
        manifest.substr(0, manifest.rfind('}')) +
            ", \"run_files\": {\"notes.txt\": {\"size\": 1, \"fnv1a64\": \"0\"}}}\n");
    CHECK_THROWS_WITH_AS(verify_run_files(dir),
                         doctest::Contains("is not a valid checkpoint manifest"),
                         std::runtime_error);
}

TEST_CASE("checkpoint commit: a marked model's record cannot be dropped; a symlink is followed") {
    const std::string dir = fresh_dir("run_record");
    write_file_durably(in(dir, "tokenizer.json"), "{\"vocab\": [\"E\", \"F\"]}\n");
    write_file_durably(in(dir, "config.toml"), "[model]\nhidden = 64\n");
    write_file_durably(in(dir, "corpus.json"), "{\"path\": \"c.txt\", \"size\": 1}\n");
    auto model_at = [&](size_t step) {
        std::map<std::string, std::string> meta = {{"step", std::to_string(step)}};
        mark_recorded(meta);
        return encode_safetensors(in(dir, "model.safetensors"),
                                  {{"w", {1}, {float(step)}}}, meta);
    };
    commit_checkpoint(dir, 2, {{"model.safetensors", model_at(2)}});
    CHECK(read_safetensors_metadata(in(dir, "model.safetensors")).at(kRecordMark) ==
          kCheckpointManifest);
    CHECK(read_file_bytes(in(dir, kCheckpointManifest)).find("\"corpus.json\"") !=
          std::string::npos);
    // One read: the step and the bytes from the same manifest, checked against each other.
    const CommittedFile read = read_committed_file(dir, "model.safetensors");
    CHECK(read.step == std::optional<size_t>(2));
    CHECK(read.bytes == model_at(2));

    // corpus.json replaced by a symbolic link to the same bytes: followed and recorded again,
    // so an edit of the file it points to is still refused.
    fs::rename(in(dir, "corpus.json"), in(dir, "../run_record_corpus.json"));
    fs::create_symlink(fs::absolute(in(dir, "../run_record_corpus.json")), in(dir, "corpus.json"));
    commit_checkpoint(dir, 4, {{"model.safetensors", model_at(4)}});
    CHECK(read_file_bytes(in(dir, kCheckpointManifest)).find("\"corpus.json\"") !=
          std::string::npos);
    write_file_durably(in(dir, "../run_record_corpus.json"), "{\"path\": \"c.txt\", \"size\": 2}\n");
    CHECK_THROWS_WITH_AS(verify_run_files(dir),
                         doctest::Contains("corpus.json' changed since the run recorded it"),
                         std::runtime_error);
    write_file_durably(in(dir, "../run_record_corpus.json"), "{\"path\": \"c.txt\", \"size\": 1}\n");
    CHECK_NOTHROW(verify_run_files(dir));

    // "run_files" dropped, then checkpoint.json itself: damage, never "a run from before".
    std::string manifest = read_file_bytes(in(dir, kCheckpointManifest));
    write_file_durably(in(dir, kCheckpointManifest),
                       manifest.substr(0, manifest.find(",\n  \"run_files\"")) + "\n}\n");
    for (const auto& [what, call] :
         std::vector<std::pair<std::string, std::function<void()>>>{
             {"verify_run_files", [&] { verify_run_files(dir); }},
             {"recover_checkpoint", [&] { recover_checkpoint(dir); }},
             {"committed_step", [&] { committed_step(dir); }},
             {"read_committed_file", [&] { read_committed_file(dir, "model.safetensors"); }}}) {
        CAPTURE(what);
        CHECK_THROWS_WITH_AS(call(), doctest::Contains("has no \"run_files\" record"),
                             std::runtime_error);
    }
    fs::remove(in(dir, kCheckpointManifest));
    CHECK_THROWS_WITH_AS(verify_run_files(dir), doctest::Contains("checkpoint.json' is missing, yet"),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(recover_checkpoint(dir), doctest::Contains("checkpoint.json' is missing, yet"),
                         std::runtime_error);
    // A model without the mark and no manifest: a run from before the record, read as it is.
    write_file_durably(in(dir, "model.safetensors"),
                       encode_safetensors("m", {{"w", {1}, {4.0f}}}, {{"step", "4"}}));
    CHECK_NOTHROW(verify_run_files(dir));
    CHECK_FALSE(committed_step(dir).has_value());
    fs::remove(in(dir, "../run_record_corpus.json"));
}

TEST_CASE("run directory: one writer at a time, and the loser is told the holder's pid") {
    const std::string dir = fresh_dir("one_writer");
    fs::remove_all(dir);
    RunDirectory first = RunDirectory::fresh(dir);
    // flock locks belong to an open file, so a second open in this same process conflicts too.
    const std::string message =
        "run directory " + dir + " is in use by pid " + std::to_string(::getpid());
    CHECK_THROWS_WITH_AS(RunDirectory::fresh(dir), doctest::Contains(message.c_str()),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(RunDirectory::resume(dir, default_config()),
                         doctest::Contains(message.c_str()), std::runtime_error);
}

TEST_CASE("run directory: --resume of a run killed while being created says what to do") {
    const std::string dir = fresh_dir("half_created");
    std::ofstream(in(dir, "config.toml")) << to_toml(default_config());
    CHECK_THROWS_WITH_AS(RunDirectory::resume(dir, default_config()),
                         doctest::Contains("tokenizer.json' is missing"), std::runtime_error);
    CHECK_THROWS_WITH_AS(RunDirectory::resume(dir + "_none", default_config()),
                         doctest::Contains("drop --resume"), std::runtime_error);
}
