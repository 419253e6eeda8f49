// Room — train: the loop for MLM and causal LM (read top to bottom: set-up, loop, one step).
#include "train/trainer.hpp"

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <variant>

#include "assembly/swappable_ops_for.hpp"
#include "data/clm.hpp"
#include "data/mlm.hpp"
#include "model/finite_values.hpp"
#include "nn/adamw.hpp"
#include "fast/blas_core.hpp"
#include "config/memory_estimate.hpp"
#include "tensor/format.hpp"
#include "run/checkpoint.hpp"
#include "run/memory_reuse.hpp"
#include "train/data_parallel.hpp"
#include "train/metrics_log.hpp"
#include "train/progress.hpp"
#include "run/run_directory.hpp"
#include "train/schedule.hpp"
#include "step/train_step.hpp"
#include "run/threads.hpp"

namespace rf {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// Training batch `step` of `batch_size` windows of data.seq_len tokens.
using TrainingBatches = std::function<Batch(uint64_t step, size_t batch_size)>;
// The objective's sampler over the training ids, seeded with train.seed. It takes the ids
// (pass std::move(data.train_ids): the corpus's ids are held once, not twice); held by a shared
// pointer, the returned function (copied into std::function and on) never copies them again.
TrainingBatches training_batches(const DataConfig& config, data::Objective objective,
                                 std::vector<int> train_ids, size_t vocab_size, uint64_t seed) {
    if (objective == data::Objective::clm) {
        const auto sampler =
            std::make_shared<const data::ClmSampler>(std::move(train_ids), config.seq_len, seed);
        return [sampler](uint64_t step, size_t rows) { return sampler->batch_at(step, rows); };
    }
    const auto sampler = std::make_shared<const data::MlmSampler>(
        std::move(train_ids), config.seq_len, vocab_size, seed, data::masking_options(config));
    return [sampler](uint64_t step, size_t rows) { return sampler->batch_at(step, rows); };
}

// The step-0 row of metrics.csv, before any update: the untrained model's validation loss
// (≈ ln V: every learning curve starts there) and, as train_loss, its loss on the first
// training batch without dropout (no step to average yet); lr, grad_norm, tokens/s are 0.
MetricsRow untrained_row(const EvaluateFunction& evaluate_on, RoFormer& model,
                         const Batch& first_batch, const PreparedData& data,
                         const TrainConfig& tc) {
    MetricsRow row;
    {
        NoGradGuard no_grad;
        row.train_loss = model
                             .forward(first_batch.input_ids, first_batch.labels, first_batch.batch,
                                      first_batch.seq_len, false)
                             .loss.item();
    }
    row.eval = evaluate_on(model, data.validation, tc.eval_batches);
    return row;
}

// Why a loss stops being finite, as far as the config can tell: the learning rate (the usual
// cause) and every setting that scales the numbers and differs from its default — listed, not
// guessed. (Settings that make a factor non-finite by themselves, such as a YaRN factor whose
// square overflows float32, or train.lr · train.weight_decay ≥ 1, are refused by validate().)
std::string divergence_candidates(const Config& config) {
    static const char* const kScalingKeys[] = {
        "position.yarn_attention_factor", "position.scaling_factor", "position.base",
        "train.weight_decay",             "train.eps",               "train.grad_clip",
        "train.beta2",                    "model.init_std",          "model.layer_norm_eps"};
    Config copy = config, defaults = default_config();  // the key table hands out pointers
    std::string changed;
    for (const char* key : kScalingKeys) {
        const double value = *std::get<double*>(find_config_field(copy, key).value);
        if (value != *std::get<double*>(find_config_field(defaults, key).value))
            changed += ", " + std::string(key) + " = " + format_shortest(value);
    }
    return "the candidates: train.lr = " + format_shortest(config.train.lr) +
           " with train.warmup_steps = " + std::to_string(config.train.warmup_steps) +
           " (lower the first or raise the second)" +
           (changed.empty() ? std::string(" — every other setting that scales the numbers has "
                                          "its default")
                            : "; changed from their defaults: " + changed.substr(2));
}

void print_run_header(std::ostream& log, const RunDirectory& run, const Config& config,
                      const RoFormer& model, const PreparedData& data, size_t vocab,
                      double prepare_s, double flops_per_token, size_t threads) {
    const data::Objective objective = config.train.objective;
    log << "run " << run.path() << ": " << model.num_parameters() << " parameters, "
        << (objective == data::Objective::clm ? "causal LM, " : "") << "scheme "
        << enum_name(config.position.scheme)
        << (config.position.scheme == PositionKind::rope
                ? std::string(" (") + enum_name(config.position.pairing) + ")"
                : std::string())
        << ", vocab " << vocab << ", " << data.train_tokens << " train / "
        << data.validation_ids.size() << " validation tokens (" << format_fixed(prepare_s, 1)
        << " s to prepare)\n"
        << "forward " << format_fixed(flops_per_token / 1e6, 2)
        << " MFLOP/token (training ≈ 3×); unigram entropy of " << data::labelled_tokens(objective)
        << " " << format_fixed(data.unigram_entropy) << " nats\n"
        << threads_line(threads) << "\n"
        << blas_core_line() << "\n"
        << fast_path_line(config.fast) << "\n"
        << memory_reuse_line() << "\n";
}

}  // namespace

TrainSummary train(const Config& config, const TrainOptions& options, std::ostream& log) {
    const TrainConfig& tc = config.train;
    SingleProcess alone;  // the communicator when none is given: this process by itself
    Communicator& comm = options.communicator ? *options.communicator : alone;
    const size_t wanted_threads = threads_per_rank(comm, tc.threads);  // 0: every core
    // Under ulimit -v, before anything is written: OpenBLAS would spin, not fail.
    check_training_address_space(config,
                                 wanted_threads ? wanted_threads : configured_threads(config));
    const size_t threads = apply_threading(config, wanted_threads);
    // mpirun: every rank on rank 0's config before any other collective (data_parallel.hpp).
    check_same_settings(comm, training_settings(config, options.stop_after), "train");
    check_batch_rows(comm, tc.batch_size);
    const bool root = comm.is_root();  // with P ranks only rank 0 writes (data_parallel.hpp)

    // 1. The run directory, the data, the model and its optimizer; resume from the checkpoint.
    RunDirectory run = open_run_directory(comm, options.out_dir, options.resume, config);
    const auto t_prepare = Clock::now();
    std::unique_ptr<data::Tokenizer> tokenizer = share_tokenizer(comm, run.take_tokenizer());
    const data::Objective objective = tc.objective;  // mlm | clm
    PreparedData data = prepare_data(config.data, tc.batch_size, tokenizer, objective);
    check_same_data(comm, *tokenizer, data.train_ids, data.validation_ids);
    // the sampler takes the training ids (held once; data.train_tokens keeps their count)
    const TrainingBatches batches = training_batches(
        config.data, objective, std::move(data.train_ids), tokenizer->vocab_size(), tc.seed);
    const ModelConfig model_config = resolved_model_config(config, tokenizer->vocab_size());
    RoFormer model(model_config, config.position, tc.seed,
                   swappable_ops_for(model_config, config.position, tc.seed, config.fast));
    AdamW optimizer(model.parameters(), AdamWOptions{tc.beta1, tc.beta2, tc.eps, tc.weight_decay});
    size_t start_step = 0;
    LossWindow window;  // the train-loss average of a logging window an interruption cut in two
    const bool from_checkpoint = run.resuming() && run.checkpoint().present;
    if (from_checkpoint && root) {
        start_step = load_model_weights(model, config, run.file("model.safetensors"));
        load_optimizer_state(optimizer, run.file("optimizer.safetensors"));
        window.restore(read_checkpoint_metadata(run.file("model.safetensors")));
    } else if (!run.resuming() && root) {
        run.write_run_files(config, *tokenizer, data.split_summary);
    }  // else: killed before its first checkpoint — the same run again from step 0
    // P ranks: every rank starts from rank 0's weights, optimizer state and step.
    start_step = comm.broadcast(start_step);
    broadcast_parameters(comm, model.parameters());
    if (from_checkpoint) broadcast_optimizer(comm, optimizer);
    if (options.stop_after && options.stop_after <= start_step)
        throw std::invalid_argument(
            "--stop-after " + std::to_string(options.stop_after) +
            " is not after the run's checkpoint at step " + std::to_string(start_step) +
            "; give a later step, or drop --stop-after to train to " + std::to_string(tc.steps));
    // Resumed without a checkpoint, the run starts over: a fresh metrics.csv, whose step-0 row
    // is written again below (keeping the old one would log step 0 twice).
    std::optional<MetricsLog> metrics;
    if (root) metrics.emplace(run.file("metrics.csv"), from_checkpoint, start_step, log);

    TrainSummary summary;
    summary.steps = summary.start_step = start_step;
    summary.unigram_entropy = data.unigram_entropy;
    summary.forward_flops_per_token = model.forward_flops_per_token(
        config.data.seq_len, data::head_fraction(config.data, objective));
    const size_t tokens_per_step = tc.batch_size * config.data.seq_len;
    const size_t end_step = options.stop_after ? std::min(options.stop_after, tc.steps) : tc.steps;
    const bool quiet = options.quiet || !root;
    if (!quiet) {
        print_run_header(log, run, config, model, data, tokenizer->vocab_size(),
                         seconds_since(t_prepare), summary.forward_flops_per_token, threads);
        if (from_checkpoint) log << "resuming at step " << start_step << "\n";
        if (run.resuming() && !from_checkpoint)
            log << "no checkpoint in " << run.path() << " yet; starting again from step 0\n";
    }
    ProgressLine progress(log, quiet, tc.steps);

    // 2. The loop. The clock continues where the interrupted run's metrics stopped.
    const auto t0 = Clock::now();
    const double elapsed_before = metrics ? metrics->elapsed_before() : 0.0;
    auto elapsed = [&] { return elapsed_before + seconds_since(t0); };
    if (tc.eval_every && start_step == 0) {  // step 0: every curve starts from the same point
        MetricsRow row = untrained_row(options.evaluate, model, batches(0, tc.batch_size), data, tc);
        row.elapsed_s = elapsed();
        if (metrics) metrics->append(row);
        if (!quiet)
            log << "step 0 (untrained)  loss " << format_fixed(row.train_loss) << "  val "
                << format_fixed(row.eval->loss) << " acc " << format_fixed(row.eval->accuracy, 3)
                << "\n";
    }
    window.open(elapsed());
    double step_seconds = 0;  // training steps only: what the final throughput divides by
    for (size_t step = start_step; step < end_step; ++step) {
        const auto t_step = Clock::now();
        const double lr = lr_at(step, tc);                  // the schedule (schedule.hpp)
        const Batch batch = batches(step, tc.batch_size);  // the sampler (data/mlm.hpp, clm.hpp)
        const uint64_t seed = tc.seed * 0x9E3779B97F4A7C15ULL + step;  // dropout's masks
        const StepResult r = [&] {
            try {
                return options.step(model, optimizer, batch, seed, tc.grad_clip, lr, step);
            } catch (const NonFiniteLoss& e) {
                throw std::runtime_error("training loss became " + format_shortest(e.loss) +
                                         " at step " + std::to_string(e.step) + "; " +
                                         divergence_candidates(config));
            }
        }();
        step_seconds += seconds_since(t_step);
        window.add(r.loss);

        const size_t done = step + 1;
        const bool do_eval = (tc.eval_every && done % tc.eval_every == 0) || done == tc.steps;
        std::optional<EvalResult> eval;
        if (do_eval)
            summary.final_eval =
                *(eval = options.evaluate(model, data.validation, tc.eval_batches));
        if (do_eval || (tc.log_every && done % tc.log_every == 0)) {
            const double now = elapsed();
            const MetricsRow row{done,
                                 done * tokens_per_step,
                                 window.mean_loss(),
                                 eval,
                                 lr,
                                 r.grad_norm,
                                 window.tokens_per_s(now, tokens_per_step),
                                 now};
            if (metrics) metrics->append(row);
            const double per_step = (now - elapsed_before) / double(done - start_step);
            progress.update(row, per_step * double(end_step - done));
            window.reset(now);
        }
        const int stop_signal = options.stop(seconds_since(t_step));
        if (root && (stop_signal || done == end_step ||
                     (tc.checkpoint_every && done % tc.checkpoint_every == 0))) {
            // A model that is not finite is never committed: the last good checkpoint stays,
            // and a finished run never reports success with weights nobody can load.
            try {
                require_finite_parameters(run.path() + " at step " + std::to_string(done),
                                          model.parameters());
            } catch (const std::runtime_error& e) {  // the same candidates as a nan loss
                throw std::runtime_error(std::string(e.what()) + "; " +
                                         divergence_candidates(config));
            }
            metrics->commit();  // the rows up to `done` are on disk before the checkpoint is
            save_checkpoint(run.path(), model, config, done, &optimizer, window.to_metadata());
        }
        summary.steps = done;
        if (stop_signal && done < end_step) {  // (a signal in the last step changes nothing)
            summary.interrupted_by = stop_signal;
            break;
        }
    }

    comm.barrier();  // P ranks: no rank exits before rank 0's last checkpoint is committed

    // 3. Done: the throughput of the training steps alone.
    if (summary.steps > start_step)
        summary.tokens_per_s =
            double((summary.steps - start_step) * tokens_per_step) / std::max(1e-9, step_seconds);
    progress.finish();
    summary.step_seconds = step_seconds;
    summary.elapsed_s = elapsed();
    return summary;
}

}  // namespace rf
