// Room — finetune: a fine-tuned run loaded back, and one text classified with it
// (roformer classify; see finetune.hpp).
#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "assembly/swappable_ops_for.hpp"
#include "data/unicode_text.hpp"
#include "data/utf8.hpp"
#include "finetune/finetune.hpp"
#include "finetune/finetune_data.hpp"
#include "finetune/finetune_setup.hpp"
#include "finetune/sentence_pair.hpp"
#include "run/directory_kind.hpp"
#include "finetune/task_sources.hpp"
#include "io/durable_file.hpp"
#include "io/json_whole.hpp"
#include "io/safetensors.hpp"
#include "run/checkpoint.hpp"
#include "run/checkpoint_commit.hpp"
#include "run/run_config.hpp"
#include "run/threads.hpp"

namespace rf {

using Json = nlohmann::json;

namespace {

// True when `text` holds no character the tokenizer keeps as a word: only whitespace (spaces,
// tabs, line ends, Unicode space separators) and what BERT's clean-up drops (controls,
// zero-width spaces). Such a text would be classified from [CLS] [SEP] alone.
bool is_blank(const std::string& text) {
    for (char32_t cp : data::decode_utf8(text))
        if (!data::unicode::is_bert_whitespace(cp) && !data::unicode::is_dropped_by_bert(cp))
            return false;
    return true;
}

// task.json's "task" and "max_len" are copies of finetune.toml's: the task classify names must
// be the one --test-split rebuilds and scores (from finetune.toml), so a disagreement — a hand
// edit of either file — is refused, naming both.
void require_task_json_agrees(const ClassifierRun& run, const std::string& dir) {
    const std::string toml_path = run_file(dir, "finetune.toml");
    const FinetuneConfig fc = load_finetune_config(toml_path);
    const auto disagree = [&](const std::string& key, const std::string& in_json,
                              const std::string& in_toml) {
        throw std::runtime_error("'" + run_file(dir, "task.json") + "' says \"" + key +
                                 "\": " + in_json + ", but '" + toml_path +
                                 "', which the run was "
                                 "fine-tuned with, has " +
                                 key + " = " + in_toml +
                                 "; the run was edited — restore the value the run wrote (" +
                                 in_toml + ") or fine-tune again");
    };
    if (run.task != fc.task) disagree("task", "\"" + run.task + "\"", "\"" + fc.task + "\"");
    if (run.max_len != fc.max_len)
        disagree("max_len", std::to_string(run.max_len), std::to_string(fc.max_len));
}

}  // namespace

ClassifierRun load_classifier_run(const std::string& dir) {
    const std::string task_path = run_file(dir, "task.json");
    require_finetune_run(dir, "--run");
    for (const char* name :
         {"task.json", "finetune.toml", "config.toml", "tokenizer.json", "model.safetensors"})
        if (!std::filesystem::exists(run_file(dir, name)))
            throw std::runtime_error("'" + run_file(dir, name) +
                                     "' is missing; --run takes the --out directory of a "
                                     "`roformer finetune`");
    // With early stopping the run keeps its best model beside its last one: classify uses it.
    const std::string weights = std::filesystem::exists(run_file(dir, "best.safetensors"))
                                    ? "best.safetensors"
                                    : "model.safetensors";
    verify_checkpoint_file(dir, weights);
    verify_run_files(dir);  // task.json, the tokenizer, the config the head was trained with
    ClassifierRun run;
    run.weights = weights;
    Json task;
    try {
        task = Json::parse(read_file_bytes(task_path, 1 << 20));
        run.labels = task.at("labels").get<std::vector<std::string>>();
        run.pair = task.at("pair").get<bool>();
        run.max_len = json_whole(task, "max_len", "max_len");
        run.task = task.at("task").get<std::string>();
    } catch (const Json::exception&) {
        throw std::runtime_error("'" + task_path +
                                 "' is damaged (not JSON with \"task\", \"labels\" (a list of "
                                 "names), \"pair\" and \"max_len\"); fine-tune again");
    } catch (const NotJsonWhole& e) {  // max_len out of range (io/json_whole.hpp)
        throw std::runtime_error("'" + task_path + "' is damaged (" + e.what() +
                                 "); fine-tune again");
    }
    if (run.labels.size() < 2 || run.max_len < 3)
        throw std::runtime_error("'" + task_path + "' is damaged (" +
                                 std::to_string(run.labels.size()) + " labels, max_len " +
                                 std::to_string(run.max_len) +
                                 "; a task has at least 2 labels and room for [CLS] x [SEP]); "
                                 "fine-tune again");
    require_task_json_agrees(run, dir);
    const Config config = load_run_config(run_file(dir, "config.toml"));
    run.tokenizer = data::load_tokenizer(run_file(dir, "tokenizer.json"));
    auto encoder =
        make_model(resolved_model_config(config, run.tokenizer->vocab_size()), config.position, 0,
                   config.fast);
    run.model = std::make_unique<SequenceClassifier>(std::move(encoder), run.labels.size(), 0);
    const std::string path = run_file(dir, weights);
    const SafetensorsFile file = read_safetensors(path);
    if (file.metadata.count("format") == 0 || file.metadata.at("format") != kClassifierFormat)
        throw std::runtime_error(path + " is not a fine-tuned classifier (format tag)");
    // A tensor of another shape means a file beside it that no longer describes it: the head
    // has one row per label of task.json, the embedding one per token of tokenizer.json.
    for (const NamedParameter& p : run.model->parameters()) {
        Tensor target = p.tensor;
        try {
            copy_into(file.at(target.name(), path), target);
        } catch (const std::exception&) {
            const std::string& name = target.name();
            if (name.rfind("classifier.", 0) == 0)
                throw std::runtime_error("'" + task_path + "' lists " +
                                         std::to_string(run.labels.size()) + " labels, but " +
                                         path + "'s " + name +
                                         " has another number of classes; the run was changed — "
                                         "fine-tune again");
            if (name.find("word_embeddings") != std::string::npos)
                throw std::runtime_error("'" + run_file(dir, "tokenizer.json") + "' has " +
                                         std::to_string(run.tokenizer->vocab_size()) +
                                         " tokens, but " + path + "'s " + name +
                                         " another vocabulary size; restore the run's own "
                                         "tokenizer.json or fine-tune again");
            throw;
        }
    }
    for (Tensor target : run.model->encoder().buffers())
        copy_into(file.at(target.name(), path), target);
    return run;
}

std::vector<double> classify(ClassifierRun& run, const std::string& a, const std::string* b) {
    if (run.pair && !b)
        throw std::invalid_argument("task " + run.task +
                                    " classifies sentence pairs; give two "
                                    "texts: \"text a\" \"text b\"");
    if (!run.pair && b)
        throw std::invalid_argument("task " + run.task +
                                    " classifies single sentences; give "
                                    "one text");
    const bool two = b != nullptr;
    for (const std::string* text : {&a, b})
        if (text && is_blank(*text))
            throw std::invalid_argument(
                "classify: " +
                std::string(!two         ? "the text"
                            : text == &a ? "text a"
                                         : "text b") +
                " is blank (only spaces, tabs or line ends), as an empty text would be; give some "
                "words to classify");
    const std::vector<int> ida = run.tokenizer->encode(a);
    const std::vector<int> idb = b ? run.tokenizer->encode(*b) : std::vector<int>{};
    if (ida.empty() || (b && idb.empty()))
        throw std::invalid_argument("classify: an empty text; give some words");
    const data::FramedText f = data::frame_for_classifier(ida, b ? &idb : nullptr, run.max_len);
    NoGradGuard no_grad;
    const ClassifierOutput out = run.model->forward(f.ids, f.types, {}, 1, f.ids.size(), false);
    const Tensor p = softmax(out.logits);  // [1, K]
    return std::vector<double>(p.data(), p.data() + run.model->num_labels());
}

ClassificationScore score_test_split(ClassifierRun& run, const std::string& dir) {
    check_task_sources(dir, "classify --test-split",
                       "restore the text the run was fine-tuned on to score its test split");
    const FinetuneConfig fc = load_finetune_config(run_file(dir, "finetune.toml"));
    const Config config = load_run_config(run_file(dir, "config.toml"));
    apply_threading(config);  // finetune.threads (config.toml keeps it): the run's exact sums
    const data::ClassificationTask task = finetune_setup::build_task(fc, config);
    if (task.name != run.task || task.pair != run.pair)  // load_classifier_run checked the name
        throw std::runtime_error("'" + run_file(dir, "task.json") + "' does not describe task " +
                                 task.name + " (\"pair\": " + (run.pair ? "true" : "false") +
                                 "); the run was edited — fine-tune again");
    if (task.labels != run.labels)
        throw std::runtime_error("task " + task.name + " built from " +
                                 (task.name == "fortunes-topic" ? fc.fortunes_dir : fc.corpus) +
                                 " no longer has the labels in " + run_file(dir, "task.json") +
                                 "; restore the text the run was fine-tuned on");
    const EncodedExamples test =
        encode_examples(task.test, task.pair, *run.tokenizer, "task " + task.name);
    return evaluate_classifier(*run.model, test, run.max_len);
}

}  // namespace rf
