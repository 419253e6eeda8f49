// The one reader of a directory and the staged transaction (run/directory_kind.hpp,
// run/staged_directory.hpp): each kind told apart by its files and refused with its own
// message; a staged directory published by one rename, or nothing left. The processes,
// signals and concurrent writers are in tests/machinery/cli_one_transaction.sh.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.hpp"
#include "run/directory_kind.hpp"
#include "run/staged_directory.hpp"

using namespace rf;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_runs" / "directory_kind" / name;
    fs::remove_all(dir);
    fs::create_directories(dir.parent_path());
    return dir;
}

void put(const fs::path& dir, const std::string& name, const std::string& text = "x\n") {
    fs::create_directories(dir);
    std::ofstream(dir / name) << text;
}

std::string refusal(const fs::path& dir) {
    try {
        require_model_run(dir.string(), "--run");
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("directory kind: each kind is told by its files, and refused with its own reader") {
    const fs::path missing = scratch("missing");
    CHECK(inspect_directory(missing.string()).kind == DirectoryKind::missing);
    const fs::path file = scratch("file");
    std::ofstream(file) << "a file\n";
    CHECK(inspect_directory(file.string()).kind == DirectoryKind::file);
    const fs::path empty = scratch("empty");
    fs::create_directories(empty);
    CHECK(inspect_directory(empty.string()).kind == DirectoryKind::empty);
    const fs::path foreign = scratch("foreign");
    put(foreign, "notes.txt");
    CHECK(inspect_directory(foreign.string()).kind == DirectoryKind::foreign);

    const fs::path finetune = scratch("finetune");
    put(finetune, "task.json", "{}\n");
    put(finetune, "config.toml", to_toml(Config{}));
    CHECK(inspect_directory(finetune.string()).kind == DirectoryKind::finetune_run);
    CHECK(refusal(finetune).find("roformer classify --run") != std::string::npos);

    const fs::path hf = scratch("hf");
    put(hf, "config.json", "{}\n");
    CHECK(inspect_directory(hf.string()).kind == DirectoryKind::hf_model);
    CHECK(refusal(hf).find("roformer import-hf") != std::string::npos);
    const fs::path exported = scratch("exported");
    put(exported, "config.json", "{}\n");
    put(exported, "config.json.written-by");
    CHECK(inspect_directory(exported.string()).kind == DirectoryKind::hf_export);
    CHECK(refusal(exported).find("written by `roformer export-hf`") != std::string::npos);

    const fs::path comparison = scratch("comparison");
    put(comparison / "rope" / "seed1", "config.toml", to_toml(Config{}));
    CHECK(inspect_directory(comparison.string()).kind == DirectoryKind::comparison);
    CHECK(refusal(comparison).find("rope/seed1") != std::string::npos);

    const fs::path damaged = scratch("damaged");
    put(damaged, "model.safetensors");
    const DirectoryState d = inspect_directory(damaged.string());
    CHECK(d.kind == DirectoryKind::damaged_run);
    CHECK(refusal(damaged).find("config.toml is missing") != std::string::npos);

    // A run started and killed before its first checkpoint: a training run, no checkpoint,
    // which --resume continues.
    const fs::path started = scratch("started");
    Config config;
    config.train.steps = 7;
    put(started, "config.toml", to_toml(config));
    put(started, "tokenizer.json", "{}\n");
    const DirectoryState s = inspect_directory(started.string());
    CHECK(s.kind == DirectoryKind::training_run);
    CHECK_FALSE(s.checkpoint);
    CHECK(s.steps == 7);
    CHECK_FALSE(s.live());
    CHECK(refusal(started).find("--resume") != std::string::npos);

    // What a killed import-hf leaves: no --out (or an empty one), its staging beside it.
    const fs::path partial = scratch("partial");
    fs::create_directories(partial.parent_path() / ".partial.partial-import-hf-999999");
    const DirectoryState p = inspect_directory(partial.string());
    CHECK(p.kind == DirectoryKind::partial);
    CHECK(p.detail == "import-hf");
    CHECK(refusal(partial).find("run the same `roformer import-hf` again") != std::string::npos);
    fs::remove_all(partial.parent_path() / ".partial.partial-import-hf-999999");
}

TEST_CASE("staged directory: published by one rename, or nothing left") {
    const fs::path out = scratch("staged") / "deeper" / "out";
    {
        StagedDirectory staged(out.string(), "export-hf");
        staged.write("a.txt", "alpha\n");
        staged.write("b.txt", "beta\n");
        CHECK(fs::is_empty(out));  // nothing under the name before the publish
        // A second writer of the same --out is told who holds it.
        CHECK_THROWS_WITH_AS(StagedDirectory(out.string(), "export-hf"),
                             doctest::Contains("is being written by pid"), std::runtime_error);
        staged.publish();
        CHECK(staged.names() == std::vector<std::string>{"a.txt", "b.txt"});
    }
    CHECK(fs::is_regular_file(out / "a.txt"));
    CHECK(fs::is_regular_file(out / "b.txt"));
    CHECK_FALSE(find_partial_write(out.string()).has_value());
    // Now not empty: refused, naming what it holds.
    CHECK_THROWS_WITH_AS(StagedDirectory(out.string(), "export-hf"),
                         doctest::Contains("already exists and is not empty"), std::runtime_error);

    // Left before the publish (a refusal, a full disk, a signal): no --out, no staging.
    const fs::path abandoned = scratch("abandoned");
    {
        StagedDirectory staged(abandoned.string(), "import-hf");
        staged.write("a.txt", "alpha\n");
        CHECK(fs::is_directory(staged.staging()));
    }
    CHECK_FALSE(fs::exists(abandoned));
    CHECK_FALSE(find_partial_write(abandoned.string()).has_value());

    // A dead writer's staging beside --out is removed by the next writer, which then publishes.
    const fs::path again = scratch("again");
    const fs::path stale = again.parent_path() / ".again.partial-import-hf-999999";
    put(stale, "model.safetensors");
    REQUIRE(find_partial_write(again.string()).has_value());
    {
        StagedDirectory staged(again.string(), "import-hf");
        CHECK_FALSE(fs::exists(stale));
        staged.write("a.txt", "alpha\n");
        staged.publish();
    }
    CHECK(fs::is_regular_file(again / "a.txt"));
}
