// Room — cli: `roformer tokenize`, show how the tokenizer of a run splits a text.
//
//   roformer tokenize --run runs/NAME "In the beginning God created the [MASK] and the earth."
//   roformer tokenize --tokenizer FILE "any text" [--ids-only]
//   roformer tokenize --tokenizer HF_DIR "any text"     (a Hugging Face vocab.txt directory)
//   roformer tokenize --tokenizer HF_DIR/tokenizer.json "any text"   (what export-hf writes;
//                                                   HF_DIR alone when it has no vocab.txt)
// prints one row per token, exactly as the model receives the sentence — [CLS] … [SEP] for
// an MLM run or a bare tokenizer file, the plain tokens for a causal LM run — with '▁' for a
// space and '↵' for a newline inside a token, then the ids on one line. A WordPiece tokenizer
// (data/wordpiece.hpp) numbers its tokens in two ways: an HF directory prints the vocab.txt
// line numbers (HF's input_ids); a run prints the model's ids, and the vocab.txt ones too
// where the two differ.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "config/config.hpp"
#include "data/tokenizer.hpp"
#include "data/wordpiece.hpp"
#include "hf/tokenizer_json.hpp"
#include "io/read_file.hpp"
#include "io/shell_quote.hpp"
#include "run/directory_kind.hpp"
#include "run/run_config.hpp"

namespace {

struct TokenizeOptions {
    std::string run_dir;
    std::string tokenizer_file;
    std::string text;
    bool ids_only = false;
    size_t max_text_bytes = rf::cli::kDefaultMaxTextBytes;
};

std::string resolve_tokenizer_path(const TokenizeOptions& o) {
    namespace fs = std::filesystem;
    if (!o.run_dir.empty() && !o.tokenizer_file.empty())
        throw std::invalid_argument("give either --run or --tokenizer, not both");
    if (!o.tokenizer_file.empty()) {
        if (fs::is_directory(o.tokenizer_file)) {  // an HF directory
            const fs::path exported = fs::path(o.tokenizer_file) / "tokenizer.json";
            if (!fs::exists(fs::path(o.tokenizer_file) / "vocab.txt") && fs::exists(exported))
                return exported.string();  // export-hf's char / BPE directory
            return o.tokenizer_file;
        }
        rf::require_regular_file(
            o.tokenizer_file, "tokenizer file",
            "--tokenizer takes a tokenizer.json, e.g. runs/NAME/tokenizer.json, "
            "or a Hugging Face directory holding vocab.txt");
        return o.tokenizer_file;
    }
    if (o.run_dir.empty())
        throw std::invalid_argument(
            "say which tokenizer to use: --run runs/NAME or --tokenizer FILE");
    rf::require_tokenizer_run(o.run_dir, "--run");
    const std::string path = (fs::path(o.run_dir) / "tokenizer.json").string();
    if (!fs::is_regular_file(path))
        throw std::runtime_error("run directory '" + o.run_dir +
                                 "' has no tokenizer.json; is it a finished "
                                 "training run?");
    return path;
}

// A causal LM run (train.objective = clm) reads text unframed: no [CLS] / [SEP].
bool run_is_causal(const TokenizeOptions& o) {
    if (o.run_dir.empty()) return false;
    const std::string config = (std::filesystem::path(o.run_dir) / "config.toml").string();
    return std::filesystem::is_regular_file(config) &&
           rf::load_run_config(config).train.objective == rf::data::Objective::clm;
}

void print_ids(const char* label, const std::vector<int>& ids, bool ids_only) {
    if (!ids_only) std::printf("%s", label);
    for (size_t pos = 0; pos < ids.size(); ++pos)
        std::printf(pos == 0 && ids_only ? "%d" : " %d", ids[pos]);
    std::printf("\n");
}

void run_tokenize(const TokenizeOptions& o) {
    rf::cli::check_text_size(o.text, o.max_text_bytes, "the text");
    const std::string path = resolve_tokenizer_path(o);
    const bool hf_directory = std::filesystem::is_directory(path);
    std::unique_ptr<rf::data::Tokenizer> tokenizer;
    if (hf_directory) {
        tokenizer = rf::data::load_wordpiece_directory(path);
    } else {
        // A run's tokenizer.json, or the `tokenizers` library's one that export-hf writes.
        const std::string text = rf::read_regular_file(
            path, "tokenizer file", "give the tokenizer.json of a run or of export-hf",
            rf::data::kMaxTokenizerBytes);
        tokenizer = rf::hf::is_hf_tokenizer_json(text) ? rf::hf::tokenizer_from_json(text, path)
                                                       : rf::data::parse_tokenizer(text, path);
    }
    const bool causal = run_is_causal(o);
    const auto ids = causal ? tokenizer->encode(o.text) : tokenizer->encode_for_model(o.text);
    // WordPiece: the vocab.txt line numbers too; printed instead of our ids for an HF
    // directory (there is no model), beside them for a run whose order is not vocab.txt's
    const auto* wordpiece = dynamic_cast<const rf::data::WordPieceTokenizer*>(tokenizer.get());
    const std::vector<int> file_ids = wordpiece ? wordpiece->to_file_ids(ids) : ids;
    const bool both = !hf_directory && file_ids != ids;
    const std::vector<int>& shown = hf_directory ? file_ids : ids;
    if (!o.ids_only) {
        std::printf("%s tokenizer, vocab %zu, %zu tokens (%s; \u2581 = space, \u21B5 = newline)\n",
                    tokenizer->kind().c_str(), tokenizer->vocab_size(), ids.size(),
                    causal ? "a causal LM run: no [CLS] / [SEP]" : "[CLS] and [SEP] included");
        if (hf_directory)
            std::printf("ids are vocab.txt line numbers (0-based), as Hugging Face's input_ids\n");
        if (both)
            std::printf(
                "id: the model's; vocab.txt: the line in the imported vocab.txt (Hugging "
                "Face's input_ids)\n");
        std::printf(both ? "%5s  %6s  %8s  %s\n" : "%5s  %6s  %s\n", "pos", "id",
                    both ? "vocab.txt" : "token", "token");
        for (size_t pos = 0; pos < ids.size(); ++pos) {
            const std::string token = tokenizer->display_token(ids[pos]);
            if (both)
                std::printf("%5zu  %6d  %8d  %s\n", pos, ids[pos], file_ids[pos], token.c_str());
            else
                std::printf("%5zu  %6d  %s\n", pos, shown[pos], token.c_str());
        }
    }
    print_ids("ids:", shown, o.ids_only);
    if (both && !o.ids_only) print_ids("vocab.txt ids:", file_ids, false);
}

void add_tokenize(CLI::App& app) {
    auto options = std::make_shared<TokenizeOptions>();
    CLI::App* cmd = app.add_subcommand(
        "tokenize", "Print the tokens and ids of a text exactly as the model receives it");
    cmd->add_option("--run", options->run_dir,
                    "Run directory holding tokenizer.json (from `roformer train`)")
        ->check(rf::cli::non_empty("give the --out directory of `roformer train`"));
    cmd->add_option("--tokenizer", options->tokenizer_file,
                    "A tokenizer.json (a run's or export-hf's), or a Hugging Face tokenizer "
                    "directory (vocab.txt), "
                    "instead of --run")
        ->check(rf::cli::non_empty("name a tokenizer.json file or an HF directory, or use --run"));
    cmd->add_option("text", options->text, "The text to tokenize ([MASK] becomes the mask token)")
        ->required();
    cmd->add_flag("--ids-only", options->ids_only, "Print only the ids, space-separated");
    rf::cli::add_text_limit(cmd, options->max_text_bytes);
    cmd->callback([options] { run_tokenize(*options); });
}

}  // namespace

RF_COMMAND("tokenize", add_tokenize);
