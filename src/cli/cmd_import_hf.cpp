// Room — cli: `roformer import-hf`, a Hugging Face RoFormer checkpoint → a run directory.
//
//   roformer import-hf models/roformer_chinese_char_base --out runs/roformer-char
// DIR holds config.json, model.safetensors (F32, F16 or BF16; scripts/hf_to_safetensors.py
// makes it from a pytorch_model.bin), vocab.txt and optionally tokenizer_config.json; RUN is
// then read by fill-mask, eval, attention, tokenize, finetune --from like a trained run
// (src/hf/import_hf.hpp; docs/huggingface.md).
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "hf/import_hf.hpp"
#include "io/output_file.hpp"
#include "io/shell_quote.hpp"

namespace {

struct ImportOptions {
    std::string hf_dir, out;
};

void run_import(const ImportOptions& o) {
    rf::check_staged_output_directory(o.out, "import-hf",
                                      {rf::hf::kLongestImportedName});  // before the work
    const rf::hf::ImportedModel imported = rf::hf::import_hf(o.hf_dir, o.out);
    const rf::ModelConfig& m = imported.model->config();
    std::printf(
        "imported %s (%s, transformers %s): %zu parameters, vocab %zu, %zu layers, "
        "hidden %zu, %zu heads\n",
        o.hf_dir.c_str(), imported.dtype.c_str(),
        imported.transformers_version.empty() ? "unknown" : imported.transformers_version.c_str(),
        imported.model->num_parameters(), m.vocab_size, m.num_layers, m.hidden, m.num_heads);
    std::printf("its sinusoidal table agrees with our RoPE angles (max |difference| %.2g)\n",
                imported.position_table_error);
    for (const std::string& note : imported.notes) std::printf("note: %s\n", note.c_str());
    std::printf("wrote %s:", o.out.c_str());
    for (const std::string& name : imported.written) std::printf(" %s", name.c_str());
    std::printf("\ntry: %s\n",
                rf::shell_command({"roformer", "fill-mask", "--run", o.out, "[MASK]"}).c_str());
}

void add_import_hf(CLI::App& app) {
    auto options = std::make_shared<ImportOptions>();
    CLI::App* cmd = app.add_subcommand(
        "import-hf", "Turn a Hugging Face RoFormer checkpoint directory into a run directory");
    cmd->add_option("dir", options->hf_dir,
                    "HF model directory: config.json, model.safetensors, vocab.txt")
        ->required();
    cmd->add_option("--out", options->out, "The run directory to write (new or empty)")->required();
    cmd->callback([options] { run_import(*options); });
}

}  // namespace

RF_COMMAND("import-hf", add_import_hf);
