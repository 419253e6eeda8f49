// Room — hf: exporting a run to an HF RoFormerForMaskedLM directory (see export_hf.hpp).
#include "hf/export_hf.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "data/wordpiece.hpp"
#include "hf/hf_mapping.hpp"
#include "hf/import_hf.hpp"
#include "hf/tokenizer_json.hpp"
#include "io/durable_file.hpp"
#include "io/output_file.hpp"
#include "run/checkpoint.hpp"
#include "run/staged_directory.hpp"

namespace rf::hf {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// HF's id (vocab.txt line) of each of our ids' rows: identity except for WordPiece.
std::vector<int> our_id_of_each_hf_id(const data::Tokenizer& tokenizer) {
    if (tokenizer.kind() == "wordpiece") return our_ids_of_hf_lines(tokenizer);
    std::vector<int> ids(tokenizer.vocab_size());
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int(i);
    return ids;
}

Json special_tokens_config(Json tc) {
    tc["unk_token"] = "[UNK]";
    tc["pad_token"] = "[PAD]";
    tc["cls_token"] = "[CLS]";
    tc["sep_token"] = "[SEP]";
    tc["mask_token"] = "[MASK]";
    return tc;
}

}  // namespace

std::vector<NamedTensor> hf_tensors(const RoFormer& model, const Config& config,
                                    const data::Tokenizer& tokenizer) {
    const std::vector<int> our_id = our_id_of_each_hf_id(tokenizer);
    std::vector<NamedTensor> tensors;
    for (const NamedParameter& p : model.parameters()) {
        NamedTensor t = to_named_tensor(p.tensor);
        if (is_token_indexed(t.name)) {
            const size_t rows = t.shape[0], width = t.data.size() / rows;
            std::vector<float> hf_rows(t.data.size());
            for (size_t line = 0; line < rows; ++line)
                std::memcpy(hf_rows.data() + line * width,
                            t.data.data() + size_t(our_id[line]) * width, width * sizeof(float));
            t.data = std::move(hf_rows);
        }
        tensors.push_back(std::move(t));
    }
    const size_t rows = std::max(config.position.max_positions, config.data.seq_len);
    tensors.push_back({kPositionTable, {rows, head_size(config)}, hf_position_table(config, rows)});
    std::sort(tensors.begin(), tensors.end(),
              [](const NamedTensor& a, const NamedTensor& b) { return a.name < b.name; });
    return tensors;
}

ExportedFiles export_hf(const std::string& run_dir, const std::string& out_dir) {
    // The lock on --out before anything is checked (run/staged_directory.hpp).
    StagedDirectory out(out_dir, "export-hf");
    const LoadedRun run = load_run(run_dir);
    require_hf_expressible(run.config);
    if (!run.model->buffers().empty())
        throw std::invalid_argument(run_dir +
                                    " holds fixed buffers HF's RoFormer has no place "
                                    "for; it cannot be exported");
    const data::Tokenizer& tokenizer = *run.tokenizer;
    const std::vector<int> our_id = our_id_of_each_hf_id(tokenizer);
    const int pad_line =
        int(std::find(our_id.begin(), our_id.end(), data::kPadId) - our_id.begin());

    // Every file's bytes first: nothing is written for a run that cannot be exported.
    std::vector<std::pair<std::string, std::string>> files;
    ExportedFiles result;
    result.step = run.step;
    files.emplace_back(
        "config.json",
        hf_config_from(run.config, run.model->config().vocab_size, pad_line).dump(2) + "\n");
    files.emplace_back(
        "model.safetensors",
        encode_safetensors(out_dir + "/model.safetensors",
                           hf_tensors(*run.model, run.config, tokenizer), {{"format", "pt"}}));
    const size_t max_length = std::max(run.config.position.max_positions, run.config.data.seq_len);
    if (tokenizer.kind() == "wordpiece") {
        const auto& wordpiece = dynamic_cast<const data::WordPieceTokenizer&>(tokenizer);
        std::string vocab;
        for (const std::string& line : wordpiece.file_order_vocab()) vocab += line + "\n";
        files.emplace_back("vocab.txt", vocab);
        files.emplace_back("tokenizer_config.json",
                           special_tokens_config({{"tokenizer_class", "BertTokenizer"},
                                                  {"do_lower_case", wordpiece.do_lower_case()},
                                                  {"do_basic_tokenize",
                                                   wordpiece.do_basic_tokenize()},
                                                  {"model_max_length", max_length}})
                                   .dump(2) +
                               "\n");
    } else {
        files.emplace_back("tokenizer.json", tokenizer_json(tokenizer, result.notes));
        files.emplace_back("tokenizer_config.json",
                           special_tokens_config({{"tokenizer_class", "PreTrainedTokenizerFast"},
                                                  {"model_max_length", max_length}})
                                   .dump(2) +
                               "\n");
    }

    // Each file as every command writes its outputs (temporary, rename, a .written-by mark),
    // into the staging directory, published by one rename.
    const OutputRule rule{"an exported file", {}, "pick a new --out"};
    for (const auto& [name, bytes] : files) {
        out.check_interrupt();
        write_output_file(out.file(name), bytes, rule);
        out.record(name, sha256_hex(bytes));
    }
    out.publish();
    result.written = out.names();
    return result;
}

}  // namespace rf::hf
