// Stage 7 — train: the fine-tuning loop, read top to bottom: 1. set-up (the --from run, the
// task, the run directory, the model; or a resumed checkpoint), 2. the floors, 3. the steps,
// 4. the loop (one epoch, one step, an evaluation), 5. saving. finetune() at the end ties them.
#include "train/finetune.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "data/sentence_pair.hpp"
#include "data/tasks.hpp"
#include "io/durable_file.hpp"
#include "io/safetensors.hpp"
#include "nn/adamw.hpp"
#include "tensor/format.hpp"
#include "train/checkpoint.hpp"
#include "train/checkpoint_commit.hpp"
#include "train/finetune_data.hpp"
#include "train/interrupt.hpp"
#include "train/run_directory.hpp"
#include "train/schedule.hpp"
#include "train/threads.hpp"

namespace rf {

namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string model_bytes(const std::string& path, const SequenceClassifier& model,
                        const FinetuneConfig& config, size_t step) {
    std::vector<NamedTensor> tensors;
    for (const NamedParameter& p : model.parameters()) tensors.push_back(to_named_tensor(p.tensor));
    for (const Tensor& b : model.encoder().buffers()) tensors.push_back(to_named_tensor(b));
    return encode_safetensors(path, tensors,
                              {{"format", kClassifierFormat},
                               {"step", std::to_string(step)},
                               {"task", config.task},
                               {"num_labels", std::to_string(model.num_labels())}});
}

std::string csv_number(double v) { return format_fixed(v, 6); }

// ---- 1. set-up: the pre-trained run, the task, the run directory, the model -------------

// The --from run: config, tokenizer, encoder (from scratch: config and tokenizer only, so a
// baseline can run beside a pre-training that has not finished). Refuses a causal-LM run.
LoadedRun load_source(const FinetuneOptions& options) {
    if (options.from_run.empty())
        throw std::invalid_argument(
            "finetune: no --from RUN given (the MLM run whose tokenizer "
            "and encoder to use; with --from-scratch, its architecture)");
    LoadedRun source;
    if (options.from_scratch) {
        if (!std::filesystem::is_directory(options.from_run))
            throw std::runtime_error("run directory '" + options.from_run +
                                     "' does not exist; --from takes a `roformer train` --out");
        for (const char* name : {"config.toml", "tokenizer.json"})
            if (!std::filesystem::exists(run_file(options.from_run, name)))
                throw std::runtime_error("'" + run_file(options.from_run, name) +
                                         "' is missing; --from takes a `roformer train` --out");
        source.config = load_config(run_file(options.from_run, "config.toml"));
        source.tokenizer = data::load_tokenizer(run_file(options.from_run, "tokenizer.json"));
    } else {
        source = load_run(options.from_run);
    }
    if (source.config.train.objective == data::Objective::clm)
        throw std::invalid_argument("--from " + options.from_run +
                                    " is a causal-LM run (train.objective = clm); fine-tuning "
                                    "reads [CLS], which a causal encoder cannot see past — "
                                    "pre-train with train.objective = mlm");
    return source;
}

// The task and its examples as token ids (a fixed-seed subset of the training examples when
// finetune.max_train_examples is set; with early stopping, a fixed 10 % of those held out as
// the validation examples).
struct TaskData {
    data::ClassificationTask task;
    EncodedExamples train, validation, test;
};

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

TaskData load_task(const FinetuneConfig& fc, const LoadedRun& source) {
    TaskData d;
    d.task = data::make_task(fc.task, fc.corpus, source.config.data.validation_fraction,
                             fc.fortunes_dir);
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

// The run directory: a fresh one (locked, empty) gets its fixed files; a resumed one is
// checked against this invocation and its last checkpoint recovered.
struct OpenedRun {
    std::optional<RunDirectory> fresh;
    std::optional<RunLock> resume_lock;
    CheckpointState resumed;
};

OpenedRun open_run_directory(const FinetuneConfig& fc, const FinetuneOptions& options,
                             const Config& encoder_config, const TaskData& d,
                             const LoadedRun& source) {
    const std::string& dir = options.out_dir;
    auto file = [&](const std::string& name) { return run_file(dir, name); };
    OpenedRun run;
    if (!options.resume) {
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
        write_file_atomically(file("tokenizer.json"), source.tokenizer->to_json());
        return run;
    }
    if (!std::filesystem::is_directory(dir))
        throw std::runtime_error("--resume: '" + dir +
                                 "' does not exist; drop --resume to start a new fine-tune");
    run.resume_lock.emplace(RunLock::acquire(dir));
    for (const char* name : {"finetune.toml", "task.json"})
        if (!std::filesystem::exists(file(name)))
            throw std::runtime_error("--resume: '" + file(name) + "' is missing; delete '" + dir +
                                     "' and fine-tune again without --resume");
    if (read_file_bytes(file("finetune.toml"), 1 << 20) != to_toml(fc))
        throw std::runtime_error("--resume: the fine-tune config differs from " +
                                 file("finetune.toml") +
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
    auto encoder = std::make_unique<RoFormer>(
        resolved_model_config(encoder_config, source.tokenizer->vocab_size()),
        encoder_config.position, fc.seed);
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

// ---- early stopping's state: what a checkpoint must carry for a resumed run to stop where an
// uninterrupted one does ----------------------------------------------------------------------
struct EarlyStopping {
    size_t patience = 0;  // 0: off
    bool has_best = false, stopped = false;
    size_t best_step = 0, since_best = 0;  // evaluations since the best one
    ClassificationScore best_validation, best_test;
    std::string best_bytes;  // best.safetensors

    // One evaluation's scores; true when the run should stop now.
    bool update(size_t step, const ClassificationScore& validation, const ClassificationScore& test,
                const std::function<std::string()>& bytes) {
        if (!has_best || validation.macro_f1 > best_validation.macro_f1) {
            has_best = true;
            best_step = step;
            since_best = 0;
            best_validation = validation;
            best_test = test;
            best_bytes = bytes();
        } else {
            ++since_best;
        }
        stopped = since_best >= patience;
        return stopped;
    }

    static Json score_json(const ClassificationScore& s) {
        return {{"loss", s.loss}, {"accuracy", s.accuracy}, {"macro_f1", s.macro_f1}, {"n", s.n}};
    }
    static ClassificationScore score_of(const Json& j) {
        ClassificationScore s;
        s.loss = j.at("loss").get<double>();
        s.accuracy = j.at("accuracy").get<double>();
        s.macro_f1 = j.at("macro_f1").get<double>();
        s.n = j.at("n").get<size_t>();
        return s;
    }
    std::string to_json() const {
        return Json{{"criterion", "validation macro_f1, higher is better (ties: the earlier)"},
                    {"patience", patience},
                    {"best_step", best_step},
                    {"evaluations_since_best", since_best},
                    {"stopped", stopped},
                    {"best_validation", score_json(best_validation)},
                    {"best_test", score_json(best_test)}}
                   .dump(2) +
               "\n";
    }
    // A resumed run: the state its checkpoint committed.
    void restore(const std::string& dir) {
        const std::string path = run_file(dir, "early_stopping.json");
        try {
            const Json j = Json::parse(read_file_bytes(path, 1 << 20));
            best_step = j.at("best_step").get<size_t>();
            since_best = j.at("evaluations_since_best").get<size_t>();
            stopped = j.at("stopped").get<bool>();
            best_validation = score_of(j.at("best_validation"));
            best_test = score_of(j.at("best_test"));
        } catch (const std::exception& e) {
            throw std::runtime_error("--resume: '" + path + "' is missing or damaged (" + e.what() +
                                     "); fine-tune again into a new --out");
        }
        verify_checkpoint_file(dir, "best.safetensors");
        best_bytes = read_file_bytes(run_file(dir, "best.safetensors"));
        has_best = true;
    }
};

// ---- 2. the floors: bag of words and the majority class, on the same split ----------------
void score_floors(const TaskData& d, const FinetuneConfig& fc, size_t vocab, bool write,
                  const std::string& dir, FinetuneSummary& summary) {
    const size_t classes = d.task.labels.size();
    summary.floor = bag_of_words_floor(d.train, d.test, vocab, classes, fc.seed);
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
         {{"accuracy", summary.floor.accuracy}, {"macro_f1", summary.floor.macro_f1}}},
        {"majority_class", {{"accuracy", m.accuracy}, {"macro_f1", m.macro_f1}}},
        {"test_examples", d.test.labels.size()}};
    if (write) write_file_atomically(run_file(dir, "floor.json"), floor.dump(2) + "\n");
}

// ---- 3. the steps: batches by length, steps per epoch, the learning-rate schedule --------
struct StepPlan {
    std::vector<size_t> lengths;  // each training example's framed length
    size_t per_epoch = 0, total_steps = 0;
    TrainConfig schedule;  // the fine-tune schedule in the trainer's terms: linear to 0
};

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

// ---- 4. the loop: one epoch, the evaluations, the checkpoints ----------------------------
class FinetuneLoop {
public:
    FinetuneLoop(const FinetuneConfig& fc, const FinetuneOptions& options, std::ostream& log,
                 SequenceClassifier& model, AdamW& optimizer, const TaskData& d,
                 const StepPlan& plan, FinetuneSummary& summary, EarlyStopping& early,
                 Clock::time_point t0)
        : fc_(fc),
          options_(options),
          log_(log),
          model_(model),
          optimizer_(optimizer),
          d_(d),
          plan_(plan),
          summary_(summary),
          early_(early),
          t0_(t0) {}

    // metrics.csv: a resumed run keeps the rows up to its checkpoint and appends after them.
    void open_metrics(const CheckpointState& resumed, size_t start_step) {
        const std::string path = run_file(options_.out_dir, "metrics.csv");
        std::string kept = "step,epoch,train_loss,test_loss,accuracy,macro_f1,lr,elapsed_s";
        kept += early_.patience ? ",val_loss,val_accuracy,val_macro_f1\n" : "\n";
        if (options_.resume && std::filesystem::exists(path)) {
            std::istringstream old(read_file_bytes(path));
            std::string line;
            std::getline(old, line);
            while (std::getline(old, line))
                if (!line.empty() && resumed.present &&
                    std::stoull(line.substr(0, line.find(','))) <= start_step)
                    kept += line + "\n";
        }
        write_file_atomically(path, kept);
        metrics_.open(path, std::ios::app);
    }

    // Every epoch's batches follow from (seed, epoch) alone, and dropout from (seed, step): a
    // resumed run skips the batches its checkpoint had done and continues bit-identically.
    size_t run(size_t start_step) {
        size_t step = start_step;
        const size_t end_step = options_.stop_after
                                    ? std::min(options_.stop_after, plan_.total_steps)
                                    : plan_.total_steps;
        bool stop = false;
        if (start_step == 0) evaluate(0, 0, 0);
        for (size_t epoch = start_step / plan_.per_epoch + 1; epoch <= fc_.epochs && !stop;
             ++epoch) {
            stop = run_epoch(epoch, step, end_step);
            if (step % plan_.per_epoch == 0 && !early_.stopped)
                evaluate(step, epoch, lr_at(step - 1, plan_.schedule));
            stop = stop || early_.stopped;
            checkpoint(step);
        }
        return step;
    }

private:
    double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

    // One epoch from `step` on (a resumed run starts mid-epoch); true when the run stops
    // before its last step (Ctrl-C, --stop-after, early stopping).
    bool run_epoch(size_t epoch, size_t& step, size_t end_step) {
        Rng order(fc_.seed * 0x9E3779B97F4A7C15ULL + epoch);
        const std::vector<std::vector<size_t>> batches =
            length_batches(plan_.lengths, fc_.batch_size, order);
        for (size_t i = step - (epoch - 1) * plan_.per_epoch; i < batches.size(); ++i) {
            const double lr = lr_at(step, plan_.schedule);
            const double loss = train_step(make_batch(d_.train, batches[i], fc_.max_len), step, lr);
            ++step;
            window_loss_ += loss;
            ++window_n_;
            if (fc_.eval_every && step % fc_.eval_every == 0 && step % plan_.per_epoch != 0)
                evaluate(step, epoch, lr);
            if (early_.stopped) return true;
            summary_.interrupted_by = InterruptGuard::pending();
            if (summary_.interrupted_by || step == end_step) return step < plan_.total_steps;
        }
        return false;
    }

    // One AdamW step on one batch; returns its loss.
    double train_step(const ExampleBatch& b, size_t step, double lr) {
        model_.encoder().dropout_rng() = Rng(fc_.seed * 0x2545F4914F6CDD1DULL + step);
        optimizer_.zero_grad();
        ClassifierOutput out = model_.forward(b.ids, b.types, b.labels, b.batch, b.seq_len, true);
        const double loss = out.loss.item();
        if (!std::isfinite(loss))
            throw std::runtime_error("fine-tuning loss became " + std::to_string(loss) +
                                     " at step " + std::to_string(step + 1) +
                                     "; lower finetune.lr");
        out.loss.backward();
        out = ClassifierOutput{};
        if (fc_.grad_clip > 0) optimizer_.clip_grad_norm(fc_.grad_clip);
        optimizer_.step(lr);
        return loss;
    }

    // Scores the test set (and, with early stopping, the validation set: the best model kept,
    // the stop decided); one metrics.csv row and one log line; restarts the loss window.
    void evaluate(size_t step, size_t epoch, double lr) {
        summary_.test = evaluate_classifier(model_, d_.test, fc_.max_len, 64);
        const ClassificationScore& t = summary_.test;
        metrics_ << step << "," << epoch << ","
                 << (window_n_ ? csv_number(window_loss_ / double(window_n_)) : "") << ","
                 << csv_number(t.loss) << "," << csv_number(t.accuracy) << ","
                 << csv_number(t.macro_f1) << "," << csv_number(lr) << ","
                 << format_fixed(elapsed(), 1);
        if (early_.patience) {
            const ClassificationScore v =
                evaluate_classifier(model_, d_.validation, fc_.max_len, 64);
            metrics_ << "," << csv_number(v.loss) << "," << csv_number(v.accuracy) << ","
                     << csv_number(v.macro_f1);
            const bool improved_before = early_.has_best;
            const double best_before = early_.best_validation.macro_f1;
            early_.update(step, v, t, [&] {
                return model_bytes(run_file(options_.out_dir, "best.safetensors"), model_, fc_,
                                   step);
            });
            if (!options_.quiet)
                log_ << "step " << step << "  validation macro-F1 " << format_fixed(v.macro_f1, 4)
                     << (early_.since_best == 0
                             ? (improved_before
                                    ? " (best so far, up from " + format_fixed(best_before, 4) + ")"
                                    : " (the first)")
                             : " (no gain for " + std::to_string(early_.since_best) + " of " +
                                   std::to_string(early_.patience) + " evaluations)")
                     << "\n";
        }
        metrics_ << "\n";
        metrics_.flush();
        if (!options_.quiet)
            log_ << "step " << step << " (epoch " << epoch << ")  train loss "
                 << (window_n_ ? format_fixed(window_loss_ / double(window_n_), 4) : "-")
                 << "  test loss " << format_fixed(t.loss, 4) << " acc "
                 << format_fixed(t.accuracy, 4) << " macro-F1 " << format_fixed(t.macro_f1, 4)
                 << "  (" << format_fixed(elapsed(), 0) << " s)\n";
        window_loss_ = 0;
        window_n_ = 0;
    }

    // ---- 5. saving: model, optimizer and checkpoint.json committed together ----------------
    void checkpoint(size_t step) {
        const std::string& dir = options_.out_dir;
        CheckpointFiles files = {
            {"model.safetensors",
             model_bytes(run_file(dir, "model.safetensors"), model_, fc_, step)},
            {"optimizer.safetensors", optimizer_file_bytes(optimizer_)}};
        if (early_.patience) {
            files.emplace_back("best.safetensors", early_.best_bytes);
            files.emplace_back("early_stopping.json", early_.to_json());
        }
        commit_checkpoint(dir, step, files);
    }

    const FinetuneConfig& fc_;
    const FinetuneOptions& options_;
    std::ostream& log_;
    SequenceClassifier& model_;
    AdamW& optimizer_;
    const TaskData& d_;
    const StepPlan& plan_;
    FinetuneSummary& summary_;
    EarlyStopping& early_;
    Clock::time_point t0_;
    std::ofstream metrics_;
    double window_loss_ = 0;  // the training loss since the last evaluation
    size_t window_n_ = 0;
};

}  // namespace

FinetuneSummary finetune(const FinetuneConfig& fc, const FinetuneOptions& options,
                         std::ostream& log) {
    const auto t0 = Clock::now();
    const LoadedRun source = load_source(options);
    Config encoder_config = source.config;
    encoder_config.model.dropout = fc.dropout;
    encoder_config.train.threads = fc.threads;
    apply_threading(encoder_config);
    const InterruptGuard interrupts;

    const TaskData d = load_task(fc, source);
    const OpenedRun run = open_run_directory(fc, options, encoder_config, d, source);

    SequenceClassifier model(make_encoder(fc, options, encoder_config, source),
                             d.task.labels.size(), fc.seed ^ 0xC1A55ULL);
    AdamW optimizer(model.parameters(), AdamWOptions{0.9, 0.999, 1e-8, fc.weight_decay});
    size_t start_step = 0;
    EarlyStopping early;
    early.patience = fc.patience;
    if (run.resumed.present) {
        restore_checkpoint(options.out_dir, model, optimizer);
        start_step = run.resumed.step;
        if (early.patience) early.restore(options.out_dir);
        if (early.stopped)
            throw std::runtime_error(
                "--resume: the fine-tune in '" + options.out_dir + "' stopped early at step " +
                std::to_string(start_step) + " (no gain in validation macro-F1 for " +
                std::to_string(early.patience) + " evaluations; best at step " +
                std::to_string(early.best_step) +
                ", in best.safetensors); classify with it, or fine-tune into a new --out");
    }

    FinetuneSummary summary;
    const size_t vocab = source.tokenizer->vocab_size();
    score_floors(d, fc, vocab, !options.resume, options.out_dir, summary);
    const StepPlan plan = plan_steps(fc, d.train);
    summary.total_steps = plan.total_steps;
    if (start_step >= summary.total_steps)
        throw std::runtime_error("--resume: the fine-tune in '" + options.out_dir +
                                 "' is already finished (step " + std::to_string(start_step) +
                                 "); classify with it, or fine-tune "
                                 "into a new --out");
    if (!options.quiet)
        log << "finetune " << options.out_dir << ": task " << d.task.name << " ("
            << d.task.labels.size() << " classes" << (d.task.pair ? ", sentence pairs" : "")
            << "), " << d.train.labels.size() << " train / " << d.test.labels.size()
            << " test examples; "
            << (options.from_scratch ? "encoder from scratch" : "encoder from " + options.from_run)
            << ", " << model.parameters().size() << " tensors; " << summary.total_steps
            << " steps\n"
            << "floor: bag of words acc " << format_fixed(summary.floor.accuracy, 4) << " macro-F1 "
            << format_fixed(summary.floor.macro_f1, 4) << "; majority class acc "
            << format_fixed(summary.majority_accuracy, 4) << "\n";
    if (!options.quiet && early.patience)
        log << "early stopping: " << d.validation.labels.size()
            << " validation examples held out of training; stop after " << early.patience
            << " evaluations without a higher validation macro-F1\n";

    FinetuneLoop loop(fc, options, log, model, optimizer, d, plan, summary, early, t0);
    loop.open_metrics(run.resumed, start_step);
    summary.steps = loop.run(start_step);
    summary.early_stopping = early.patience > 0;
    summary.stopped_early = early.stopped;
    summary.validation_examples = d.validation.labels.size();
    summary.best_step = early.best_step;
    summary.best_validation = early.best_validation;
    summary.best_test = early.best_test;
    summary.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
    return summary;
}

}  // namespace rf
