// Room — finetune: the set-up of a fine-tune (see finetune_setup.hpp).
#include "finetune/finetune_setup.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "assembly/swappable_ops_for.hpp"
#include "io/output_file.hpp"
#include "io/read_file.hpp"
#include "run/checkpoint_commit.hpp"
#include "run/directory_kind.hpp"
#include "run/run_config.hpp"
#include "run/run_directory.hpp"
#include "finetune/tasks.hpp"
#include "finetune/task_sources.hpp"
#include "io/durable_file.hpp"
#include "io/safetensors.hpp"
#include "tensor/random.hpp"

namespace rf::finetune_setup {

using Json = nlohmann::json;

namespace {
// ": lr = 5e-05 there but lr = 0.0001 now", the first line where two configs as to_toml writes
// them differ (one key a line); "" when none does.
std::string first_line_difference(const std::string& there, const std::string& now) {
    std::istringstream a(there), b(now);
    std::string x, y;
    while (true) {
        const bool more_a = bool(std::getline(a, x)), more_b = bool(std::getline(b, y));
        if (!more_a && !more_b) return "";
        if (!more_a || !more_b || x != y)
            return ": " + (more_a ? x : "(nothing)") + " there but " + (more_b ? y : "(nothing)") +
                   " now";
    }
}
}  // namespace

// The --from run: config, tokenizer, encoder (from scratch: config and tokenizer only, so a
// baseline can run beside a pre-training that has not finished). Refuses a causal-LM run.
LoadedRun load_source(const FinetuneOptions& options) {
    if (options.from_run.empty())
        throw std::invalid_argument(
            "finetune: no --from RUN given (the MLM run whose tokenizer "
            "and encoder to use; with --from-scratch, its architecture)");
    LoadedRun source;
    if (options.from_scratch) {
        require_directory(options.from_run, "run directory",
                          "--from takes a `roformer train` --out");
        for (const char* name : {"config.toml", "tokenizer.json"})
            if (!std::filesystem::exists(run_file(options.from_run, name)))
                throw std::runtime_error("'" + run_file(options.from_run, name) +
                                         "' is missing; --from takes a `roformer train` --out");
        verify_run_files(options.from_run);
        source.config = load_run_config(run_file(options.from_run, "config.toml"));
        source.tokenizer = data::load_tokenizer(run_file(options.from_run, "tokenizer.json"));
    } else {
        const DirectoryState state = require_model_run(options.from_run, "--from");
        require_idle_run(state, options.from_run, "--from",
                         "or fine-tune --from-scratch, which reads only its config and tokenizer");
        source = load_run(options.from_run);
        state_unfinished(state, options.from_run, source.step);
    }
    if (source.config.train.objective == data::Objective::clm)
        throw std::invalid_argument("--from " + options.from_run +
                                    " is a causal-LM run (train.objective = clm); fine-tuning "
                                    "reads [CLS], which a causal encoder cannot see past — "
                                    "pre-train with train.objective = mlm");
    return source;
}

// Early stopping's validation examples: a fixed draw (whatever the run's seed) of 10 % (at
// least 1) of the training examples; both parts keep the examples' order.
void hold_out_validation(std::vector<data::LabelledExample>& train,
                         std::vector<data::LabelledExample>& validation) {
    std::vector<size_t> order(train.size());
    std::iota(order.begin(), order.end(), size_t(0));
    Rng draw(0x7A11DA7EULL);
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[draw.next_u64() % i]);
    std::vector<bool> held(train.size(), false);
    for (size_t i = 0; i < std::max<size_t>(1, train.size() / 10); ++i) held[order[i]] = true;
    std::vector<data::LabelledExample> kept;
    for (size_t i = 0; i < train.size(); ++i)
        (held[i] ? validation : kept).push_back(std::move(train[i]));
    train = std::move(kept);
}

data::ClassificationTask build_task(const FinetuneConfig& fc, const Config& encoder_config) {
    return data::make_task(fc.task, fc.corpus, encoder_config.data.validation_fraction,
                           fc.fortunes_dir);
}

TaskData load_task(const FinetuneConfig& fc, const LoadedRun& source) {
    TaskData d;
    d.task = build_task(fc, source.config);
    std::vector<data::LabelledExample> train_examples = d.task.train;
    if (fc.max_train_examples && fc.max_train_examples < train_examples.size()) {
        Rng pick(0xF1E7 + fc.seed);
        for (size_t i = train_examples.size(); i > 1; --i)
            std::swap(train_examples[i - 1], train_examples[pick.next_u64() % i]);
        train_examples.resize(fc.max_train_examples);
    }
    std::vector<data::LabelledExample> validation_examples;
    if (fc.patience > 0) {
        if (train_examples.size() < 2)
            throw std::runtime_error("task " + d.task.name + ": " +
                                     std::to_string(train_examples.size()) +
                                     " training example(s) leave none for early stopping's "
                                     "validation; set patience = 0 or use more examples");
        hold_out_validation(train_examples, validation_examples);
    }
    const std::string what = "task " + d.task.name;
    d.train = encode_examples(train_examples, d.task.pair, *source.tokenizer, what);
    d.test = encode_examples(d.task.test, d.task.pair, *source.tokenizer, what);
    if (!validation_examples.empty())
        d.validation = encode_examples(validation_examples, d.task.pair, *source.tokenizer, what);
    return d;
}

OpenedRun open_run_directory(const FinetuneConfig& fc, const FinetuneOptions& options,
                             const Config& encoder_config, const TaskData& d,
                             const LoadedRun& source) {
    const std::string& dir = options.out_dir;
    auto file = [&](const std::string& name) { return run_file(dir, name); };
    OpenedRun run;
    if (!options.resume) {
        refuse_other_directory(dir, "--out", "a fine-tune", DirectoryKind::finetune_run);
        const Json task_json = {{"task", d.task.name},
                                {"labels", d.task.labels},
                                {"pair", d.task.pair},
                                {"max_len", fc.max_len},
                                {"from", options.from_run},
                                {"from_scratch", options.from_scratch},
                                {"pretrained_step", options.from_scratch ? 0 : source.step}};
        run.fresh.emplace(RunDirectory::fresh(dir));
        write_file_atomically(file("finetune.toml"), to_toml(fc));
        write_file_atomically(file("config.toml"), to_toml(encoder_config));
        write_file_atomically(file("split.txt"), d.task.split_summary + "\n");
        write_file_atomically(file("task.json"), task_json.dump(2) + "\n");
        write_file_atomically(file(kTaskSourcesFile), task_sources_json(fc));
        write_file_atomically(file("tokenizer.json"), source.tokenizer->to_json());
        return run;
    }
    require_directory(dir, "--resume: the fine-tune directory",
                      "drop --resume to start a new fine-tune");
    require_finetune_run(dir, "--resume --out");
    check_directory_names(dir, "--out", {kLongestRunName});
    run.resume_lock.emplace(RunLock::acquire(dir));
    for (const char* name : {"finetune.toml", "task.json"})
        if (!std::filesystem::exists(file(name)))
            throw std::runtime_error("--resume: '" + file(name) + "' is missing, so '" + dir +
                                     "' is not a fine-tune that can be resumed; drop --resume "
                                     "and pick a new --out");
    if (const std::string saved_toml = read_file_bytes(file("finetune.toml"), 1 << 20);
        saved_toml != to_toml(fc))
        throw std::runtime_error("--resume: the fine-tune config differs from " +
                                 file("finetune.toml") + first_line_difference(saved_toml, to_toml(fc)) +
                                 "; resume with the same --task, --config and --set values");
    const Json saved = Json::parse(read_file_bytes(file("task.json"), 1 << 20), nullptr, false);
    if (saved.is_discarded() || saved.value("from", "") != options.from_run ||
        saved.value("from_scratch", false) != options.from_scratch)
        throw std::runtime_error("--resume: " + file("task.json") +
                                 " records another --from / --from-scratch; resume with "
                                 "the ones the run started with");
    run.resumed = recover_checkpoint(dir);
    remove_stale_temporaries(dir);
    return run;
}

// The encoder: the architecture of the --from run, its weights copied in unless from scratch.
std::unique_ptr<RoFormer> make_encoder(const FinetuneConfig& fc, const FinetuneOptions& options,
                                       const Config& encoder_config, const LoadedRun& source) {
    auto encoder = make_model(resolved_model_config(encoder_config, source.tokenizer->vocab_size()),
                              encoder_config.position, fc.seed, encoder_config.fast);
    if (options.from_scratch) return encoder;
    const std::vector<NamedParameter>& from = source.model->parameters();
    const std::vector<NamedParameter>& to = encoder->parameters();
    for (size_t i = 0; i < to.size(); ++i) {
        Tensor target = to[i].tensor;
        copy_into(to_named_tensor(from.at(i).tensor), target);
    }
    std::vector<Tensor> from_buffers = source.model->buffers(), to_buffers = encoder->buffers();
    for (size_t i = 0; i < to_buffers.size(); ++i)
        copy_into(to_named_tensor(from_buffers.at(i)), to_buffers[i]);
    return encoder;
}

// A resumed run: the model and the optimizer state of its last checkpoint.
void restore_checkpoint(const std::string& dir, SequenceClassifier& model, AdamW& optimizer) {
    const std::string path = run_file(dir, "model.safetensors");
    const SafetensorsFile saved = read_safetensors(path);
    for (const NamedParameter& p : model.parameters()) {
        Tensor target = p.tensor;
        copy_into(saved.at(target.name(), path), target);
    }
    load_optimizer_state(optimizer, run_file(dir, "optimizer.safetensors"));
}

// ---- the floors: bag of words and the majority class, on the same split -------------------
void score_floors(const TaskData& d, const FinetuneConfig& fc, size_t vocab, bool write,
                  const std::string& dir, FinetuneSummary& summary) {
    const size_t classes = d.task.labels.size();
    const BagOfWordsFloor bow = bag_of_words_floor(d.train, d.test, vocab, classes);
    summary.floor = bow.test;
    summary.floor_converged = bow.converged;
    summary.floor_iterations = bow.iterations;
    std::vector<size_t> counts(classes, 0);
    for (int y : d.train.labels) ++counts[size_t(y)];
    const int majority = int(std::max_element(counts.begin(), counts.end()) - counts.begin());
    summary.majority_accuracy =
        double(std::count(d.test.labels.begin(), d.test.labels.end(), majority)) /
        double(d.test.labels.size());
    std::vector<int> always(d.test.labels.size(), majority);
    const ClassificationScore m = score_predictions(always, d.test.labels, classes);
    const Json floor = {
        {"bag_of_words",
         {{"accuracy", summary.floor.accuracy},
          {"macro_f1", summary.floor.macro_f1},
          {"converged", bow.converged},
          {"iterations", bow.iterations}}},
        {"majority_class", {{"accuracy", m.accuracy}, {"macro_f1", m.macro_f1}}},
        {"test_examples", d.test.labels.size()}};
    if (write) write_file_atomically(run_file(dir, "floor.json"), floor.dump(2) + "\n");
}

// ---- the steps: batches by length, steps per epoch, the learning-rate schedule -----------

StepPlan plan_steps(const FinetuneConfig& fc, const EncodedExamples& train) {
    StepPlan plan;
    for (size_t i = 0; i < train.labels.size(); ++i)
        plan.lengths.push_back(framed(train, i, fc.max_len).ids.size());
    std::map<size_t, size_t> by_length;
    for (size_t n : plan.lengths) ++by_length[n];
    for (const auto& [n, count] : by_length)
        plan.per_epoch += (count + fc.batch_size - 1) / fc.batch_size;
    plan.total_steps = plan.per_epoch * fc.epochs;
    plan.schedule.lr = fc.lr;
    plan.schedule.warmup_steps = std::min(fc.warmup_steps, plan.total_steps);
    plan.schedule.steps = plan.total_steps;
    plan.schedule.schedule = Schedule::linear;
    plan.schedule.min_lr_ratio = 0;
    return plan;
}

}  // namespace rf::finetune_setup
