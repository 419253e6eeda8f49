// Room — hf: importing an HF RoFormer model directory (see import_hf.hpp).
#include "hf/import_hf.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "assembly/swappable_ops_for.hpp"
#include "data/utf8.hpp"
#include "data/wordpiece.hpp"
#include "hf/hf_mapping.hpp"
#include "hf/tokenizer_json.hpp"
#include "io/durable_file.hpp"
#include "io/output_file.hpp"
#include "io/read_file.hpp"
#include "run/checkpoint.hpp"
#include "run/checkpoint_commit.hpp"
#include "run/staged_directory.hpp"

namespace rf::hf {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

constexpr uint64_t kMaxJsonBytes = uint64_t(16) << 20;

struct SourceFile {
    std::string name, bytes;
};

SourceFile read_source(const std::string& dir, const std::string& name, const std::string& fix,
                       uint64_t max_bytes) {
    const std::string path = (fs::path(dir) / name).string();
    return {name, read_regular_file(path, "HF file", fix, max_bytes)};
}

Json parse_json(const SourceFile& f, const std::string& dir) {
    return data::parse_hf_json(f.bytes, (fs::path(dir) / f.name).string());
}

// The safetensors header's dtype of `name` ("" when absent or the header is unreadable).
std::string dtype_in(const std::string& bytes, const std::string& name) {
    if (bytes.size() < 8) return "";
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = n << 8 | uint8_t(bytes[size_t(i)]);
    if (n > bytes.size() - 8) return "";
    const Json header = Json::parse(bytes.substr(8, n), nullptr, false);
    if (!header.is_object() || !header.contains(name) || !header[name].contains("dtype")) return "";
    return header[name]["dtype"].get<std::string>();
}

std::string shape_text(const std::vector<size_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// A word-level Chinese vocabulary (entries of two or more CJK characters) needs jieba.
void refuse_word_level(const data::Tokenizer& tokenizer, const std::string& dir) {
    for (const std::string& token : tokenizer.vocab()) {
        size_t cjk = 0;
        for (char32_t cp : data::decode_utf8(token))
            cjk += (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
                   (cp >= 0x20000 && cp <= 0x2FA1F) || (cp >= 0xF900 && cp <= 0xFAFF);
        if (cjk >= 2)
            throw std::invalid_argument(
                dir +
                "/tokenizer_config.json: \"tokenizer_class\" is RoFormerTokenizer and "
                "vocab.txt holds Chinese words (e.g. '" +
                token +
                "'): a word-level vocabulary "
                "needs jieba segmentation, which roformer-cpp does not have; use a "
                "character-level checkpoint (e.g. junnyu/roformer_chinese_char_base)");
    }
}

// Rows indexed by HF id (vocab.txt line) → rows indexed by our id.
std::vector<float> rows_in_our_order(const NamedTensor& t, const std::vector<int>& our_id_of_line) {
    const size_t rows = t.shape[0], width = t.data.size() / rows;
    std::vector<float> out(t.data.size());
    for (size_t line = 0; line < rows; ++line)
        std::memcpy(out.data() + size_t(our_id_of_line[line]) * width, t.data.data() + line * width,
                    width * sizeof(float));
    return out;
}

// HF's frozen sinusoidal table, checked against our RoPE's angles (not loaded).
double check_position_table(const NamedTensor& t, const std::string& dtype, const Config& config,
                            const std::string& path) {
    const size_t rows = config.position.max_positions, D = head_size(config);
    if (t.shape != std::vector<size_t>{rows, D})
        throw std::runtime_error(path + ": " + kPositionTable + " has shape " +
                                 shape_text(t.shape) + ", expected " + shape_text({rows, D}) +
                                 " (max_position_embeddings × head size)");
    const std::vector<float> ours = hf_position_table(config, rows);
    // One rounding of the stored type, plus float32's rounding of the angle m·θ (≤ m·2⁻²⁴).
    const double stored = dtype == "BF16" ? 8e-3 : dtype == "F16" ? 1e-3 : 1e-6;
    double worst = 0;
    for (size_t m = 0; m < rows; ++m)
        for (size_t j = 0; j < D; ++j) {
            const double err = std::fabs(double(t.data[m * D + j]) - double(ours[m * D + j]));
            worst = std::max(worst, std::isfinite(err) ? err : INFINITY);
            if (!(err <= stored + 1.2e-7 * double(m)))
                throw std::runtime_error(
                    path + ": " + kPositionTable + " row " + std::to_string(m) + " column " +
                    std::to_string(j) + " is " + std::to_string(t.data[m * D + j]) +
                    " but RoPE with base 10000 over the whole head gives " +
                    std::to_string(ours[m * D + j]) +
                    "; the table is damaged or the checkpoint is not a standard RoFormer");
        }
    return worst;
}

}  // namespace

std::string stored_dtype(const std::string& path, const std::string& name) {
    return dtype_in(read_file_bytes(path), name);
}

std::vector<int> our_ids_of_hf_lines(const data::Tokenizer& tokenizer) {
    const auto* wordpiece = dynamic_cast<const data::WordPieceTokenizer*>(&tokenizer);
    if (!wordpiece)
        throw std::invalid_argument("an HF vocabulary needs a wordpiece tokenizer, not " +
                                    tokenizer.kind());
    std::vector<int> ids(tokenizer.vocab_size());
    for (size_t line = 0; line < ids.size(); ++line)
        ids[line] = wordpiece->id_of_file_id(int(line));
    return ids;
}

ImportedModel read_hf_directory(const std::string& dir) {
    require_directory(dir, "HF model directory",
                      "give the directory save_pretrained wrote (config.json, model.safetensors, "
                      "vocab.txt)");
    const SourceFile config_file =
        read_source(dir, "config.json", "an HF model directory holds config.json", kMaxJsonBytes);
    const Json hf = parse_json(config_file, dir);
    ImportedModel imported;
    auto record = [&](const std::string& name, const std::string& bytes) {
        imported.files[name] = {bytes.size(), sha256_hex(bytes)};
    };
    record(config_file.name, config_file.bytes);
    imported.config = config_from_hf(hf, dir + "/config.json");
    if (hf.contains("transformers_version") && hf["transformers_version"].is_string())
        imported.transformers_version = hf["transformers_version"].get<std::string>();
    try {
        validate(imported.config);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(in_hf_terms(e.what(), dir + "/config.json"));
    }

    // The tokenizer: vocab.txt (+ tokenizer_config.json, special_tokens_map.json,
    // added_tokens.json), BERT's WordPiece; without vocab.txt, the tokenizer.json that
    // export-hf writes for a char or BPE run.
    const bool has_vocab = fs::exists(fs::path(dir) / "vocab.txt");
    const bool has_tokenizer_json = fs::exists(fs::path(dir) / "tokenizer.json");
    if (!has_vocab && !has_tokenizer_json)
        throw std::runtime_error(
            dir +
            " has neither vocab.txt nor tokenizer.json: roformer-cpp imports BERT WordPiece "
            "vocabularies (vocab.txt) and the tokenizer.json export-hf writes for a char or BPE "
            "run; a SentencePiece tokenizer would need its own reader");
    data::WordPieceFileTexts texts;
    std::string* const json_texts[] = {&texts.tokenizer_config, &texts.special_tokens_map,
                                       &texts.added_tokens};
    std::string roformer_class;
    for (size_t i = 0; i < 3; ++i) {
        const std::string name = data::kTokenizerJsonFiles[i];
        if (!fs::exists(fs::path(dir) / name)) continue;
        const SourceFile f = read_source(dir, name, "", kMaxJsonBytes);
        record(f.name, f.bytes);
        Json parsed = parse_json(f, dir);  // refuses a file that is not JSON, naming it
        *json_texts[i] = f.bytes;
        const bool roformer_tokenizer =
            i == 0 && parsed.is_object() && parsed.contains("tokenizer_class") &&
            parsed["tokenizer_class"].is_string() &&
            parsed["tokenizer_class"].get<std::string>().rfind("RoFormerTokenizer", 0) == 0;
        if (roformer_tokenizer) {
            roformer_class = parsed["tokenizer_class"].get<std::string>();
            parsed.erase("tokenizer_class");
            *json_texts[i] = parsed.dump();
        }
    }
    std::string tokenizer_path;
    if (has_vocab) {
        tokenizer_path = (fs::path(dir) / "vocab.txt").string();
        const SourceFile vocab_file =
            read_source(dir, "vocab.txt", "an HF model directory holds vocab.txt", kMaxReadBytes);
        record(vocab_file.name, vocab_file.bytes);
        texts.vocab_txt = vocab_file.bytes;
        imported.tokenizer = data::parse_wordpiece_files(texts, dir);
        if (has_tokenizer_json)
            imported.notes.push_back(
                "tokenizer.json beside vocab.txt is not read: the tokenizer is vocab.txt with "
                "tokenizer_config.json's settings, as BertTokenizer reads them");
        if (!roformer_class.empty()) {
            // RoFormerTokenizer: jieba splits the text into words, a word in vocab.txt stays
            // whole, any other goes through BertTokenizer. With no word of two or more Chinese
            // characters in the vocabulary, that is BertTokenizer on Chinese text.
            refuse_word_level(*imported.tokenizer, dir);
            imported.notes.push_back(
                "tokenizer_class " + roformer_class +
                ": a character vocabulary, so BERT's WordPiece gives its tokens for Chinese text "
                "(jieba's step would only keep whole words of the vocabulary, and it has none "
                "of two or more characters)");
        }
    } else {
        tokenizer_path = (fs::path(dir) / "tokenizer.json").string();
        const SourceFile json_file = read_source(dir, "tokenizer.json", "", kMaxReadBytes);
        record(json_file.name, json_file.bytes);
        imported.tokenizer = tokenizer_from_json(json_file.bytes, tokenizer_path);
        check_fast_tokenizer_files(texts, dir);
        // A char or BPE tokenizer is one `train` makes: the run's config says which.
        imported.config.data.tokenizer = imported.tokenizer->kind();
        imported.config.data.vocab_size = imported.tokenizer->vocab_size();
    }
    const size_t V = imported.config.model.vocab_size;
    if (imported.tokenizer->vocab_size() != V)
        throw std::runtime_error(
            tokenizer_path + " gives " + std::to_string(imported.tokenizer->vocab_size()) +
            " tokens but config.json says \"vocab_size\": " + std::to_string(V) +
            "; use the tokenizer files of this checkpoint");
    std::vector<int> our_id_of_line(V);  // identity for char and BPE: their ids are HF's
    for (size_t line = 0; line < V; ++line) our_id_of_line[line] = int(line);
    if (has_vocab) our_id_of_line = our_ids_of_hf_lines(*imported.tokenizer);

    // The weights.
    const std::string st_path = (fs::path(dir) / "model.safetensors").string();
    if (!fs::exists(st_path) && fs::exists(fs::path(dir) / "pytorch_model.bin"))
        throw std::runtime_error(dir +
                                 " has pytorch_model.bin but no model.safetensors; convert "
                                 "it first: /usr/bin/python3 scripts/hf_to_safetensors.py " +
                                 dir);
    for (const char* index : {"model.safetensors.index.json", "pytorch_model.bin.index.json"})
        if (!fs::exists(st_path) && fs::exists(fs::path(dir) / index))
            throw std::runtime_error(
                dir + "/" + index +
                ": a sharded checkpoint (its weights split over several files), which "
                "roformer-cpp does not read; merge the shards into one model.safetensors, e.g. "
                "in Python: RoFormerForMaskedLM.from_pretrained(DIR).save_pretrained(OUT, "
                "max_shard_size=\"100GB\")");
    std::string bytes = read_regular_file(st_path, "HF checkpoint",
                                          "save it with safe_serialization=True or "
                                          "convert it with scripts/hf_to_safetensors.py",
                                          kMaxReadBytes);
    const SafetensorsFile file = parse_safetensors(bytes, st_path);
    record("model.safetensors", bytes);
    imported.dtype = dtype_in(bytes, kWordEmbeddings);
    const std::string table_dtype = dtype_in(bytes, kPositionTable);
    std::string().swap(bytes);  // parsed: the file's bytes need not stay beside the weights
    imported.model =
        make_model(resolved_model_config(imported.config, V), imported.config.position,
                   imported.config.train.seed, imported.config.fast);
    std::set<std::string> used;
    for (const NamedParameter& p : imported.model->parameters()) {
        Tensor target = p.tensor;
        const NamedTensor* saved = file.find(target.name());
        if (!saved)
            throw std::runtime_error(st_path + " has no tensor " + target.name() +
                                     " that this config.json needs (a RoFormerForMaskedLM "
                                     "checkpoint holds the encoder and the MLM head)");
        if (saved->shape != target.shape())
            throw std::runtime_error(st_path + ": " + target.name() + " has shape " +
                                     shape_text(saved->shape) + " but config.json gives " +
                                     shape_text(target.shape()) +
                                     "; the files do not belong "
                                     "together");
        for (size_t i = 0; i < saved->data.size(); ++i)
            if (!std::isfinite(saved->data[i]))
                throw std::runtime_error(st_path + ": " + target.name() +
                                         " holds a non-finite value at element " +
                                         std::to_string(i) + "; the checkpoint is damaged");
        NamedTensor ordered = *saved;
        if (is_token_indexed(saved->name)) ordered.data = rows_in_our_order(*saved, our_id_of_line);
        copy_into(ordered, target);
        used.insert(saved->name);
    }
    // The tied decoder, when a converted pytorch_model.bin carries it: it must be the same.
    for (const auto& [copy, original] : {std::pair{kTiedDecoderWeight, kWordEmbeddings},
                                         std::pair{kTiedDecoderBias, kDecoderBias}}) {
        const NamedTensor* c = file.find(copy);
        if (!c) continue;
        const NamedTensor& o = file.at(original, st_path);
        if (c->shape != o.shape || c->data != o.data)
            throw std::runtime_error(st_path + ": " + copy + " differs from " + original +
                                     ": an untied decoder (tie_word_embeddings false) is not "
                                     "supported; it would need its own [V, E] parameter");
        used.insert(copy);
    }
    const NamedTensor* table = file.find(kPositionTable);
    if (!table)
        throw std::runtime_error(st_path + " has no " + kPositionTable +
                                 ", the sinusoidal table every RoFormer checkpoint holds");
    imported.position_table_error =
        check_position_table(*table, table_dtype, imported.config, st_path);
    used.insert(kPositionTable);
    for (const NamedTensor& t : file.tensors)
        if (!used.count(t.name))
            throw std::runtime_error(st_path + " holds " + t.name +
                                     ", which RoFormerForMaskedLM "
                                     "with this config.json does not have; a checkpoint of "
                                     "another head or architecture cannot be imported");
    return imported;
}

ImportedModel import_hf(const std::string& dir, const std::string& out) {
    // The lock on --out before anything is checked, and before a checkpoint of hundreds of MB
    // is read (run/staged_directory.hpp).
    StagedDirectory run(out, "import-hf");
    ImportedModel imported = read_hf_directory(dir);
    Json source = Json::object();
    source["imported_from"] = fs::absolute(dir).lexically_normal().string();
    source["transformers_version"] = imported.transformers_version;
    source["dtype"] = imported.dtype;
    source["position_table_max_error"] = imported.position_table_error;
    Json files = Json::object();
    for (const auto& [name, size_and_hash] : imported.files)
        files[name] = {{"bytes", size_and_hash.first}, {"sha256", size_and_hash.second}};
    source["files"] = files;

    run.write("config.toml", to_toml(imported.config));
    run.write(kSourceRecord, source.dump(2) + "\n");
    run.write("tokenizer.json", imported.tokenizer->to_json());
    run.check_interrupt();
    save_checkpoint(run.staging(), *imported.model, imported.config, imported.config.train.steps,
                    nullptr, {{"imported_from", source["imported_from"].get<std::string>()}});
    // The checkpoint is checked against its own manifest (size and hash of each file): read
    // back once here, not again by publish().
    verify_checkpoint_file(run.staging(), "model.safetensors");
    for (const char* name : {"model.safetensors", kCheckpointManifest}) run.record(name, "");
    run.publish();
    imported.written = run.names();
    return imported;
}

}  // namespace rf::hf
