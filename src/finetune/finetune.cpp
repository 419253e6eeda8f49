// Room — finetune: the fine-tuning loop, read top to bottom: the loop (one epoch, one step, an
// evaluation), saving, then finetune(), which ties them to the set-up (finetune_setup.hpp: the
// --from run, the task, the run directory or a resumed checkpoint, the encoder, the floors,
// the steps) and to early stopping (early_stopping.hpp).
#include "finetune/finetune.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
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

#include "finetune/sentence_pair.hpp"
#include "finetune/tasks.hpp"
#include "io/durable_file.hpp"
#include "io/safetensors.hpp"
#include "nn/adamw.hpp"
#include "tensor/format.hpp"
#include "run/checkpoint.hpp"
#include "run/checkpoint_commit.hpp"
#include "finetune/early_stopping.hpp"
#include "finetune/finetune_data.hpp"
#include "finetune/finetune_progress.hpp"
#include "finetune/task_sources.hpp"
#include "finetune/finetune_setup.hpp"
#include "run/interrupt.hpp"
#include "run/run_directory.hpp"
#include "train/schedule.hpp"
#include "model/finite_values.hpp"
#include "run/threads.hpp"

namespace rf {

namespace {

using namespace finetune_setup;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string model_bytes(const std::string& path, const SequenceClassifier& model,
                        const FinetuneConfig& config, size_t step) {
    std::vector<NamedTensor> tensors;
    for (const NamedParameter& p : model.parameters()) tensors.push_back(to_named_tensor(p.tensor));
    for (const Tensor& b : model.encoder().buffers()) tensors.push_back(to_named_tensor(b));
    std::map<std::string, std::string> meta = {{"format", kClassifierFormat},
                                               {"step", std::to_string(step)},
                                               {"task", config.task},
                                               {"num_labels", std::to_string(model.num_labels())}};
    mark_recorded(meta);  // checkpoint.json records it: a run with this model has a record
    return encode_safetensors(path, tensors, meta);
}

std::string csv_number(double v) { return format_fixed(v, 6); }

// ---- the loop: one epoch, one step, the evaluations, the checkpoints -----------------
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

    // A resumed run: the loss window and the clock of its checkpoint (finetune_state.json), so
    // metrics.csv continues as an uninterrupted run's would.
    void restore_progress(const FinetuneProgress& p) {
        window_loss_ = p.window_loss_sum;
        window_n_ = p.window_count;
        elapsed_before_ = p.elapsed_s;
    }

    // metrics.csv: a resumed run keeps the rows up to its checkpoint and appends after them.
    void open_metrics(const CheckpointState& resumed, size_t start_step) {
        const std::string path = run_file(options_.out_dir, "metrics.csv");
        std::string kept = "step,epoch,train_loss,test_loss,accuracy,macro_f1,lr,elapsed_s";
        kept += early_.patience ? ",val_loss,val_accuracy,val_macro_f1\n" : "\n";
        if (options_.resume && std::filesystem::exists(path)) {
            // Only whole rows: a row cut short by a refused write (append_metrics) has no
            // newline or too few columns.
            const auto columns = std::count(kept.begin(), kept.end(), ',');
            std::istringstream old(read_file_bytes(path));
            std::string line;
            std::getline(old, line);
            while (std::getline(old, line))
                if (!old.eof() && resumed.present &&
                    std::count(line.begin(), line.end(), ',') == columns &&
                    std::stoull(line.substr(0, line.find(','))) <= start_step)
                    kept += line + "\n";
        }
        write_file_atomically(path, kept);
        metrics_path_ = path;
        metrics_.open(path, std::ios::app);
    }

    // One metrics.csv row, checked: if the file system refuses it (a full disk, a file-size
    // limit) the run ends with one line; the last checkpoint and the rows before it stay, and a
    // resumed run rewrites metrics.csv up to that checkpoint.
    void append_metrics(const std::string& row) {
        errno = 0;
        metrics_ << row;
        metrics_.flush();
        if (!metrics_)
            throw std::runtime_error("cannot append a row to " + metrics_path_ + " (" +
                                     std::strerror(errno ? errno : EIO) +
                                     "); free some space or raise the file-size limit, then "
                                     "resume the fine-tune from its last checkpoint");
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
    double elapsed() const {
        return elapsed_before_ + std::chrono::duration<double>(Clock::now() - t0_).count();
    }

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
        model_.encoder().optimizer_step(optimizer_, lr);
        return loss;
    }

    // Scores the test set (and, with early stopping, the validation set: the best model kept,
    // the stop decided); one metrics.csv row and one log line; restarts the loss window.
    void evaluate(size_t step, size_t epoch, double lr) {
        summary_.test = evaluate_classifier(model_, d_.test, fc_.max_len);
        const ClassificationScore& t = summary_.test;
        std::string row = std::to_string(step) + "," + std::to_string(epoch) + "," +
                          (window_n_ ? csv_number(window_loss_ / double(window_n_)) : "") + "," +
                          csv_number(t.loss) + "," + csv_number(t.accuracy) + "," +
                          csv_number(t.macro_f1) + "," + csv_number(lr) + "," +
                          format_fixed(elapsed(), 1);
        if (!options_.quiet)
            log_ << "step " << step << " (epoch " << epoch << ")  train loss "
                 << (window_n_ ? format_fixed(window_loss_ / double(window_n_), 4) : "-")
                 << "  test loss " << format_fixed(t.loss, 4) << " acc "
                 << format_fixed(t.accuracy, 4) << " macro-F1 " << format_fixed(t.macro_f1, 4)
                 << "  (" << format_fixed(elapsed(), 0) << " s)\n";
        if (early_.patience) evaluate_validation(step, t, row);
        append_metrics(row + "\n");
        window_loss_ = 0;
        window_n_ = 0;
    }

    // Early stopping: the validation score (three more metrics.csv columns), the best model
    // kept, the stop decided; one log line says which.
    void evaluate_validation(size_t step, const ClassificationScore& test, std::string& row) {
        const ClassificationScore v = evaluate_classifier(model_, d_.validation, fc_.max_len);
        row +=
            "," + csv_number(v.loss) + "," + csv_number(v.accuracy) + "," + csv_number(v.macro_f1);
        const bool had_best = early_.has_best;
        const double best_before = early_.best_validation.macro_f1;
        early_.update(step, v, test, [&] {
            return model_bytes(run_file(options_.out_dir, "best.safetensors"), model_, fc_, step);
        });
        if (options_.quiet) return;
        log_ << "  validation macro-F1 " << format_fixed(v.macro_f1, 4);
        if (early_.since_best > 0)
            log_ << " (no gain for " << early_.since_best << " of " << early_.patience
                 << " evaluations)\n";
        else if (had_best)
            log_ << " (best so far, up from " << format_fixed(best_before, 4) << ")\n";
        else
            log_ << " (the first)\n";
    }

    // ---- saving: model, optimizer (and early stopping's state) committed together
    // ----------------
    void checkpoint(size_t step) {
        const std::string& dir = options_.out_dir;
        // A model that is not finite is never committed: the last good checkpoint stays, and
        // the run never reports success with weights nobody can use.
        require_finite_parameters(dir + " at step " + std::to_string(step), model_.parameters());
        FinetuneProgress progress;
        progress.step = step;
        progress.total_steps = plan_.total_steps;
        progress.window_loss_sum = window_loss_;
        progress.window_count = window_n_;
        progress.elapsed_s = elapsed();
        progress.stopped_by = step >= plan_.total_steps ? "finished"
                              : early_.stopped          ? "early stopping"
                              : summary_.interrupted_by ? "a signal"
                                                        : "--stop-after";
        progress.resume_command = options_.resume_command;
        CheckpointFiles files = {
            {"model.safetensors",
             model_bytes(run_file(dir, "model.safetensors"), model_, fc_, step)},
            {"optimizer.safetensors", optimizer_file_bytes(optimizer_)}};
        if (early_.patience) {
            files.emplace_back("best.safetensors", early_.best_bytes);
            files.emplace_back("early_stopping.json", early_.to_json());
        }
        files.emplace_back(kFinetuneProgressFile, progress.to_json());
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
    std::string metrics_path_;
    double window_loss_ = 0;  // the training loss since the last evaluation
    size_t window_n_ = 0;
    double elapsed_before_ = 0;  // a resumed run: elapsed_s at its checkpoint
};

}  // namespace

std::string floor_note(const FinetuneSummary& s) {
    if (!s.floor_converged)
        return " (did not converge in " + std::to_string(s.floor_iterations) +
               " iterations: not a floor)";
    if (s.floor.accuracy < s.majority_accuracy)
        return " (converged, yet below the majority class on the test split)";
    return "";
}

FinetuneSummary finetune(const FinetuneConfig& fc, const FinetuneOptions& options,
                         std::ostream& log) {
    const auto t0 = Clock::now();
    const LoadedRun source = load_source(options);
    // An encoder from a pre-training that stopped before its last step is served as what it is.
    std::vector<std::string> source_warnings;
    if (!options.from_scratch && source.step < source.config.train.steps)
        source_warnings.push_back("--from " + options.from_run +
                                  " is an unfinished pre-training: its checkpoint is at step " +
                                  std::to_string(source.step) + " of " +
                                  std::to_string(source.config.train.steps) +
                                  "; the encoder is that step's (resume it with train --resume)");
    Config encoder_config = source.config;
    encoder_config.model.dropout = fc.dropout;
    encoder_config.train.threads = fc.threads;
    apply_threading(encoder_config);
    const InterruptGuard interrupts;

    // A learned position table has max_positions rows and no more: refuse before any file.
    const size_t positions = source.config.position.max_positions;
    if (source.config.position.scheme == PositionKind::learned && fc.max_len > positions)
        throw std::invalid_argument(
            "finetune.max_len = " + std::to_string(fc.max_len) + " is more than the --from run's " +
            "position.max_positions = " + std::to_string(positions) +
            " (its learned position table has no rows beyond); set max_len = " +
            std::to_string(positions) + " or less");
    // --resume rebuilds the task from its text: it must be the text the run started on.
    if (options.resume && std::filesystem::is_directory(options.out_dir))
        check_task_sources(options.out_dir, "--resume",
                           "restore the original text, or fine-tune into a new --out");
    const TaskData d = load_task(fc, source);
    const OpenedRun run = open_run_directory(fc, options, encoder_config, d, source);

    SequenceClassifier model(make_encoder(fc, options, encoder_config, source),
                             d.task.labels.size(), fc.seed ^ 0xC1A55ULL);
    AdamW optimizer(model.parameters(), AdamWOptions{0.9, 0.999, 1e-8, fc.weight_decay});
    size_t start_step = 0;
    EarlyStopping early;
    early.patience = fc.patience;
    early.warmup_steps = std::min(fc.warmup_steps, plan_steps(fc, d.train).total_steps);
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
            << format_fixed(summary.floor.macro_f1, 4) << floor_note(summary)
            << "; majority class acc "
            << format_fixed(summary.majority_accuracy, 4) << "\n";
    if (!options.quiet && early.patience)
        log << "early stopping: " << d.validation.labels.size()
            << " validation examples held out of training; stop after " << early.patience
            << " evaluations without a higher validation macro-F1\n";

    FinetuneLoop loop(fc, options, log, model, optimizer, d, plan, summary, early, t0);
    if (run.resumed.present) loop.restore_progress(load_progress(options.out_dir));
    loop.open_metrics(run.resumed, start_step);
    summary.steps = loop.run(start_step);
    summary.early_stopping = early.patience > 0;
    summary.stopped_early = early.stopped && summary.steps < summary.total_steps;
    summary.validation_examples = d.validation.labels.size();
    summary.best_step = early.best_step;
    summary.best_validation = early.best_validation;
    summary.best_test = early.best_test;
    if (summary.early_stopping && early.has_best && early.best_step == 0)
        summary.warnings.push_back(
            "the best model is the step-0 one: the fresh classification head on the encoder "
            "(no evaluation after it raised validation macro-F1); best.safetensors holds it");
    summary.warnings.insert(summary.warnings.begin(), source_warnings.begin(),
                            source_warnings.end());
    summary.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
    return summary;
}

}  // namespace rf
