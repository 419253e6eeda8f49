// Room — cli: `roformer export-hf`, a run → a Hugging Face RoFormerForMaskedLM directory.
//
//   roformer export-hf runs/classroom --out hf/classroom
// then, in Python: RoFormerForMaskedLM.from_pretrained("hf/classroom") (src/hf/export_hf.hpp;
// docs/huggingface.md). A fine-tune run is refused: export the pre-training it started from.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "run/directory_kind.hpp"
#include "hf/export_hf.hpp"
#include "io/output_file.hpp"

namespace {

struct ExportOptions {
    std::string run_dir, out;
};

void run_export(const ExportOptions& o) {
    rf::check_staged_output_directory(o.out, "export-hf",
                                      {rf::hf::kLongestExportedName});  // before the work
    const rf::DirectoryState state = rf::require_model_run(o.run_dir, "RUN");
    rf::require_idle_run(state, o.run_dir, "RUN");
    const rf::hf::ExportedFiles exported = rf::hf::export_hf(o.run_dir, o.out);
    rf::state_unfinished(state, o.run_dir, exported.step);
    std::printf("wrote %s:", o.out.c_str());
    for (const std::string& name : exported.written) std::printf(" %s", name.c_str());
    std::printf("\n");
    for (const std::string& note : exported.notes) std::printf("note: %s\n", note.c_str());
    std::printf("load it with transformers: RoFormerForMaskedLM.from_pretrained(\"%s\")\n",
                o.out.c_str());
}

void add_export_hf(CLI::App& app) {
    auto options = std::make_shared<ExportOptions>();
    CLI::App* cmd = app.add_subcommand(
        "export-hf", "Write a pre-training run as a Hugging Face RoFormerForMaskedLM directory");
    cmd->add_option("run", options->run_dir, "Run directory from `roformer train` or import-hf")
        ->required();
    cmd->add_option("--out", options->out, "The directory to write (new or empty)")->required();
    cmd->callback([options] { run_export(*options); });
}

}  // namespace

RF_COMMAND("export-hf", add_export_hf);
