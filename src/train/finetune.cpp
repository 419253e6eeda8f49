// Stage 7 — train: the fine-tuning loop (read top to bottom: set-up, floor, loop, one step).
#include "train/finetune.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
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

}  // namespace

FinetuneSummary finetune(const FinetuneConfig& fc, const FinetuneOptions& options,
                         std::ostream& log) {
    const auto t0 = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
    if (options.from_run.empty())
        throw std::invalid_argument(
            "finetune: no --from RUN given (the MLM run whose tokenizer "
            "and encoder to use; with --from-scratch, its architecture)");
    // 1. The pre-trained run: config, tokenizer, encoder (from scratch: config and tokenizer
    //    only, so a baseline can run beside a pre-training that has not finished).
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
    Config encoder_config = source.config;
    encoder_config.model.dropout = fc.dropout;
    encoder_config.train.threads = fc.threads;
    apply_threading(encoder_config);
    const InterruptGuard interrupts;

    // 2. The task, tokenized.
    const data::ClassificationTask task =
        data::make_task(fc.task, fc.corpus, source.config.data.validation_fraction);
    std::vector<data::LabelledExample> train_examples = task.train;
    if (fc.max_train_examples && fc.max_train_examples < train_examples.size()) {
        Rng pick(0xF1E7 + fc.seed);
        for (size_t i = train_examples.size(); i > 1; --i)
            std::swap(train_examples[i - 1], train_examples[pick.next_u64() % i]);
        train_examples.resize(fc.max_train_examples);
    }
    const EncodedExamples train =
        encode_examples(train_examples, task.pair, *source.tokenizer, "task " + task.name);
    const EncodedExamples test =
        encode_examples(task.test, task.pair, *source.tokenizer, "task " + task.name);

    // 3. The run directory (lock, emptiness) and its files; or, resuming, its checks.
    const std::string dir = options.out_dir;
    auto file = [&](const std::string& name) { return run_file(dir, name); };
    Json task_json = {{"task", task.name},
                      {"labels", task.labels},
                      {"pair", task.pair},
                      {"max_len", fc.max_len},
                      {"from", options.from_run},
                      {"from_scratch", options.from_scratch},
                      {"pretrained_step", options.from_scratch ? 0 : source.step}};
    std::optional<RunDirectory> fresh_run;
    std::optional<RunLock> resume_lock;
    CheckpointState resumed;
    if (!options.resume) {
        fresh_run.emplace(RunDirectory::fresh(dir));
        write_file_atomically(file("finetune.toml"), to_toml(fc));
        write_file_atomically(file("config.toml"), to_toml(encoder_config));
        write_file_atomically(file("split.txt"), task.split_summary + "\n");
        write_file_atomically(file("task.json"), task_json.dump(2) + "\n");
        write_file_atomically(file("tokenizer.json"), source.tokenizer->to_json());
    } else {
        if (!std::filesystem::is_directory(dir))
            throw std::runtime_error("--resume: '" + dir +
                                     "' does not exist; drop --resume to start a new fine-tune");
        resume_lock.emplace(RunLock::acquire(dir));
        for (const char* name : {"finetune.toml", "task.json"})
            if (!std::filesystem::exists(file(name)))
                throw std::runtime_error("--resume: '" + file(name) + "' is missing; delete '" +
                                         dir + "' and fine-tune again without --resume");
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
        resumed = recover_checkpoint(dir);
        remove_stale_temporaries(dir);
    }

    // 4. The model: the encoder (pre-trained weights copied in unless from scratch) + a head.
    const size_t vocab = source.tokenizer->vocab_size();
    auto encoder = std::make_unique<RoFormer>(resolved_model_config(encoder_config, vocab),
                                              encoder_config.position, fc.seed);
    if (!options.from_scratch) {
        const std::vector<NamedParameter>& from = source.model->parameters();
        const std::vector<NamedParameter>& to = encoder->parameters();
        for (size_t i = 0; i < to.size(); ++i) {
            Tensor target = to[i].tensor;
            copy_into(to_named_tensor(from.at(i).tensor), target);
        }
        std::vector<Tensor> from_buffers = source.model->buffers(), to_buffers = encoder->buffers();
        for (size_t i = 0; i < to_buffers.size(); ++i)
            copy_into(to_named_tensor(from_buffers.at(i)), to_buffers[i]);
    }
    SequenceClassifier model(std::move(encoder), task.labels.size(), fc.seed ^ 0xC1A55ULL);
    AdamW optimizer(model.parameters(), AdamWOptions{0.9, 0.999, 1e-8, fc.weight_decay});
    size_t start_step = 0;
    if (resumed.present) {
        const std::string path = file("model.safetensors");
        const SafetensorsFile saved = read_safetensors(path);
        for (const NamedParameter& p : model.parameters()) {
            Tensor target = p.tensor;
            copy_into(saved.at(target.name(), path), target);
        }
        load_optimizer_state(optimizer, file("optimizer.safetensors"));
        start_step = resumed.step;
    }

    // 5. The floor and the majority class, on the same split.
    FinetuneSummary summary;
    summary.floor = bag_of_words_floor(train, test, vocab, task.labels.size(), fc.seed);
    {
        std::vector<size_t> counts(task.labels.size(), 0);
        for (int y : train.labels) ++counts[size_t(y)];
        const int majority = int(std::max_element(counts.begin(), counts.end()) - counts.begin());
        summary.majority_accuracy =
            double(std::count(test.labels.begin(), test.labels.end(), majority)) /
            double(test.labels.size());
        std::vector<int> always(test.labels.size(), majority);
        const ClassificationScore m = score_predictions(always, test.labels, task.labels.size());
        Json floor = {
            {"bag_of_words",
             {{"accuracy", summary.floor.accuracy}, {"macro_f1", summary.floor.macro_f1}}},
            {"majority_class", {{"accuracy", m.accuracy}, {"macro_f1", m.macro_f1}}},
            {"test_examples", test.labels.size()}};
        if (!options.resume) write_file_atomically(file("floor.json"), floor.dump(2) + "\n");
    }

    std::vector<size_t> lengths;
    for (size_t i = 0; i < train.labels.size(); ++i)
        lengths.push_back(framed(train, i, fc.max_len).ids.size());
    size_t per_epoch = 0;
    {
        std::map<size_t, size_t> by_length;
        for (size_t n : lengths) ++by_length[n];
        for (const auto& [n, count] : by_length)
            per_epoch += (count + fc.batch_size - 1) / fc.batch_size;
    }
    summary.total_steps = per_epoch * fc.epochs;
    TrainConfig schedule;  // the fine-tune schedule in the trainer's terms: linear to 0
    schedule.lr = fc.lr;
    schedule.warmup_steps = std::min(fc.warmup_steps, summary.total_steps);
    schedule.steps = summary.total_steps;
    schedule.schedule = Schedule::linear;
    schedule.min_lr_ratio = 0;

    if (start_step >= summary.total_steps)
        throw std::runtime_error("--resume: the fine-tune in '" + dir +
                                 "' is already finished (step " + std::to_string(start_step) +
                                 "); classify with it, or fine-tune "
                                 "into a new --out");
    if (!options.quiet)
        log << "finetune " << dir << ": task " << task.name << " (" << task.labels.size()
            << " classes" << (task.pair ? ", sentence pairs" : "") << "), " << train.labels.size()
            << " train / " << test.labels.size() << " test examples; "
            << (options.from_scratch ? "encoder from scratch" : "encoder from " + options.from_run)
            << ", " << model.parameters().size() << " tensors; " << summary.total_steps
            << " steps\n"
            << "floor: bag of words acc " << format_fixed(summary.floor.accuracy, 4) << " macro-F1 "
            << format_fixed(summary.floor.macro_f1, 4) << "; majority class acc "
            << format_fixed(summary.majority_accuracy, 4) << "\n";

    // metrics.csv: a resumed run keeps the rows up to its checkpoint and appends after them.
    std::string kept = "step,epoch,train_loss,test_loss,accuracy,macro_f1,lr,elapsed_s\n";
    if (options.resume && std::filesystem::exists(file("metrics.csv"))) {
        std::istringstream old(read_file_bytes(file("metrics.csv")));
        std::string line;
        std::getline(old, line);
        while (std::getline(old, line))
            if (!line.empty() && resumed.present &&
                std::stoull(line.substr(0, line.find(','))) <= start_step)
                kept += line + "\n";
    }
    write_file_atomically(file("metrics.csv"), kept);
    std::ofstream metrics(file("metrics.csv"), std::ios::app);
    double window_loss = 0;
    size_t window_n = 0;
    auto evaluate_and_log = [&](size_t step, size_t epoch, double lr) {
        summary.test = evaluate_classifier(model, test, fc.max_len, 64);
        metrics << step << "," << epoch << ","
                << (window_n ? csv_number(window_loss / double(window_n)) : "") << ","
                << csv_number(summary.test.loss) << "," << csv_number(summary.test.accuracy) << ","
                << csv_number(summary.test.macro_f1) << "," << csv_number(lr) << ","
                << format_fixed(elapsed(), 1) << "\n";
        metrics.flush();
        if (!options.quiet)
            log << "step " << step << " (epoch " << epoch << ")  train loss "
                << (window_n ? format_fixed(window_loss / double(window_n), 4) : "-")
                << "  test loss " << format_fixed(summary.test.loss, 4) << " acc "
                << format_fixed(summary.test.accuracy, 4) << " macro-F1 "
                << format_fixed(summary.test.macro_f1, 4) << "  (" << format_fixed(elapsed(), 0)
                << " s)\n";
        window_loss = 0;
        window_n = 0;
    };
    auto checkpoint = [&](size_t step) {
        commit_checkpoint(
            dir, step,
            {{"model.safetensors", model_bytes(file("model.safetensors"), model, fc, step)},
             {"optimizer.safetensors", optimizer_file_bytes(optimizer)}});
    };

    // 6. The loop.
    // Every epoch's batches follow from (seed, epoch) alone, and dropout from (seed, step): a
    // resumed run skips the batches its checkpoint had done and continues bit-identically.
    size_t step = start_step;
    const size_t end_step = options.stop_after ? std::min(options.stop_after, summary.total_steps)
                                               : summary.total_steps;
    bool stop = false;
    if (start_step == 0) evaluate_and_log(0, 0, 0);
    for (size_t epoch = start_step / per_epoch + 1; epoch <= fc.epochs && !stop; ++epoch) {
        Rng order(fc.seed * 0x9E3779B97F4A7C15ULL + epoch);
        const std::vector<std::vector<size_t>> batches =
            length_batches(lengths, fc.batch_size, order);
        for (size_t i = step - (epoch - 1) * per_epoch; i < batches.size(); ++i) {
            const std::vector<size_t>& members = batches[i];
            const ExampleBatch b = make_batch(train, members, fc.max_len);
            const double lr = lr_at(step, schedule);
            model.encoder().dropout_rng() = Rng(fc.seed * 0x2545F4914F6CDD1DULL + step);
            optimizer.zero_grad();
            ClassifierOutput out =
                model.forward(b.ids, b.types, b.labels, b.batch, b.seq_len, true);
            const double loss = out.loss.item();
            if (!std::isfinite(loss))
                throw std::runtime_error("fine-tuning loss became " + std::to_string(loss) +
                                         " at step " + std::to_string(step + 1) +
                                         "; lower finetune.lr");
            out.loss.backward();
            out = ClassifierOutput{};
            if (fc.grad_clip > 0) optimizer.clip_grad_norm(fc.grad_clip);
            optimizer_step(model.encoder().plan(), optimizer, lr);
            ++step;
            window_loss += loss;
            ++window_n;
            if (fc.eval_every && step % fc.eval_every == 0 && step % per_epoch != 0)
                evaluate_and_log(step, epoch, lr);
            summary.interrupted_by = InterruptGuard::pending();
            if (summary.interrupted_by || step == end_step) {
                stop = step < summary.total_steps;
                break;
            }
        }
        if (step % per_epoch == 0) evaluate_and_log(step, epoch, lr_at(step - 1, schedule));
        checkpoint(step);
    }
    summary.steps = step;
    summary.elapsed_s = elapsed();
    return summary;
}

}  // namespace rf
