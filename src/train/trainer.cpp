// Stage 7 — train: the MLM training loop (read top to bottom: prepare, resume, loop, finish).
#include "train/trainer.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <unordered_map>

#include "data/corpus.hpp"
#include "nn/adamw.hpp"
#include "train/checkpoint.hpp"
#include "train/schedule.hpp"
#include "train/threads.hpp"

namespace rf {

namespace fs = std::filesystem;

static data::MaskingOptions masking_options(const Config& config) {
    data::MaskingOptions m;
    m.select_probability = config.data.mask_prob;
    return m;
}

// The fixed validation windows of data.seq_len tokens, masks from kValidationSeed.
static std::vector<data::MlmBatch> validation_batches(const Config& config, const PreparedData& data,
                                               const data::Tokenizer& tokenizer) {
    return data::make_validation_batches(data.validation_ids, config.data.seq_len, config.data.val_windows,
                                         config.train.batch_size, tokenizer.vocab_size(),
                                         kValidationSeed, masking_options(config));
}

// ---- data -------------------------------------------------------------------------------
PreparedData prepare_data(const Config& config, std::unique_ptr<data::Tokenizer>& tokenizer) {
    data::SplitOptions split_options;
    split_options.validation_fraction = config.data.validation_fraction;
    const data::CorpusSplit split = data::load_corpus(config.data.path, split_options);
    if (!tokenizer)
        tokenizer = data::train_tokenizer(config.data.tokenizer, split.train_text,
                                          config.data.vocab_size);
    PreparedData out;
    out.split_summary = split.summary();
    out.train_ids = tokenizer->encode(split.train_text);
    out.validation_ids = tokenizer->encode(split.validation_text);
    data::require_window_fits(config.data.path, "training", out.train_ids.size(), config.data.seq_len);
    data::require_window_fits(config.data.path, "validation", out.validation_ids.size(),
                              config.data.seq_len);

    // The floor any model should beat: predict every masked token from training frequencies.
    std::vector<double> counts(tokenizer->vocab_size(), 1.0);   // add-one smoothing
    for (int id : out.train_ids) counts[size_t(id)] += 1.0;
    double total = 0;
    for (double c : counts) total += c;
    double nll = 0;
    size_t n = 0;
    out.validation = validation_batches(config, out, *tokenizer);
    for (const data::MlmBatch& b : out.validation)
        for (int label : b.labels)
            if (label != data::kIgnoreLabel) {
                nll -= std::log(counts[size_t(label)] / total);
                ++n;
            }
    out.masked_unigram_entropy = n ? nll / double(n) : 0.0;
    return out;
}


// ---- evaluation -------------------------------------------------------------------------
EvalResult evaluate(RoFormerMLM& model, const std::vector<data::MlmBatch>& batches,
                    size_t max_batches) {
    NoGradGuard no_grad;
    EvalResult result;
    double loss_sum = 0;
    size_t correct = 0;
    const size_t n = max_batches ? std::min(max_batches, batches.size()) : batches.size();
    for (size_t b = 0; b < n; ++b) {
        const data::MlmBatch& batch = batches[b];
        MlmOutput out = model.forward(batch.input_ids, batch.labels, batch.batch, batch.seq_len, false);
        const size_t M = out.rows.size(), V = out.logits.size(1);
        if (M == 0) continue;
        loss_sum += double(out.loss.item()) * double(M);
        const Real* logits = out.logits.data();
        for (size_t r = 0; r < M; ++r) {
            const Real* row = logits + r * V;
            size_t best = 0;
            for (size_t v = 1; v < V; ++v)
                if (row[v] > row[best]) best = v;
            correct += int(best) == batch.labels[size_t(out.rows[r])];
        }
        result.predictions += M;
    }
    if (result.predictions) {
        result.loss = loss_sum / double(result.predictions);
        result.accuracy = double(correct) / double(result.predictions);
    }
    return result;
}

// ---- the metrics file -------------------------------------------------------------------
static const char* kMetricsHeader =
    "step,tokens,train_loss,val_loss,val_accuracy,lr,grad_norm,tokens_per_s,elapsed_s";

// On resume, keeps the header and the rows up to `step` (a crash may have logged more).
static double truncate_metrics(const std::string& path, size_t step) {
    std::ifstream in(path);
    std::vector<std::string> kept;
    std::string line;
    double elapsed = 0;
    while (std::getline(in, line)) {
        if (kept.empty()) { kept.push_back(line); continue; }
        const size_t row_step = std::stoull(line.substr(0, line.find(',')));
        if (row_step > step) break;
        kept.push_back(line);
        elapsed = std::stod(line.substr(line.rfind(',') + 1));
    }
    std::ofstream out(path, std::ios::trunc);
    for (const std::string& l : kept) out << l << "\n";
    return elapsed;
}

static std::string fmt(double v, int precision = 4) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(precision) << v;
    return s.str();
}

static std::string format_duration(double seconds) {
    const long s = long(seconds + 0.5);
    std::ostringstream o;
    if (s >= 3600) o << s / 3600 << "h";
    o << std::setw(2) << std::setfill('0') << (s / 60) % 60 << "m" << std::setw(2) << s % 60 << "s";
    return o.str();
}

// exact text form of a double (%a), read back with strtod
static std::string hex_double(double v) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%a", v);
    return buffer;
}

// ---- training ---------------------------------------------------------------------------
TrainSummary train(const Config& config, const TrainOptions& options, std::ostream& log) {
    const std::string& dir = options.out_dir;
    if (dir.empty()) throw std::invalid_argument("train: no output directory given (--out DIR)");
    const TrainConfig& tc = config.train;
    const size_t threads = set_num_threads(tc.threads);

    // 1. The run directory: new, or an earlier run of the same config when resuming.
    std::unique_ptr<data::Tokenizer> tokenizer;
    if (options.resume) {
        if (!fs::exists(run_file(dir, "model.safetensors")) ||
            !fs::exists(run_file(dir, "optimizer.safetensors")))
            throw std::runtime_error("--resume: '" + dir + "' has no checkpoint to resume from "
                                     "(model.safetensors + optimizer.safetensors)");
        const Config saved = load_config(run_file(dir, "config.toml"));
        if (saved != config)
            throw std::runtime_error("--resume: the config differs from " +
                                     run_file(dir, "config.toml") +
                                     "; resume with the same --config and --set values");
        tokenizer = data::load_tokenizer(run_file(dir, "tokenizer.json"));
    } else if (fs::exists(dir) && !fs::is_empty(dir)) {
        throw std::runtime_error("output directory '" + dir + "' already exists and is not "
                                 "empty; pick a new --out, or add --resume to continue it");
    }

    // 2. Data, model, optimizer.
    const auto t_prepare = std::chrono::steady_clock::now();
    PreparedData data = prepare_data(config, tokenizer);
    const std::vector<data::MlmBatch>& val = data.validation;
    data::MlmSampler sampler(data.train_ids, config.data.seq_len, tokenizer->vocab_size(), tc.seed,
                             masking_options(config));
    const ModelConfig model_config = resolved_model_config(config, tokenizer->vocab_size());
    RoFormerMLM model(model_config, config.position, tc.seed);
    AdamWOptions adam{tc.beta1, tc.beta2, tc.eps, tc.weight_decay};
    AdamW optimizer(model.parameters(), adam);

    size_t start_step = 0;
    double elapsed_before = 0, pending_loss_sum = 0;
    size_t pending_loss_count = 0;
    fs::create_directories(dir);
    const std::string metrics_path = run_file(dir, "metrics.csv");
    if (options.resume) {
        start_step = load_model_weights(model, config, run_file(dir, "model.safetensors"));
        load_optimizer_state(optimizer, run_file(dir, "optimizer.safetensors"));
        elapsed_before = truncate_metrics(metrics_path, start_step);
        // The train-loss average of a logging window that the interruption cut in two.
        const auto meta = read_checkpoint_metadata(run_file(dir, "model.safetensors"));
        if (meta.count("train_loss_sum")) {
            pending_loss_sum = std::strtod(meta.at("train_loss_sum").c_str(), nullptr);
            pending_loss_count = std::stoull(meta.at("train_loss_count"));
        }
    } else {
        std::ofstream(run_file(dir, "config.toml")) << to_toml(config);
        tokenizer->save(run_file(dir, "tokenizer.json"));
        std::ofstream(run_file(dir, "split.txt")) << data.split_summary << "\n";
        std::ofstream(metrics_path) << kMetricsHeader << "\n";
    }
    std::ofstream metrics(metrics_path, std::ios::app);

    const double head_fraction = config.data.mask_prob;
    TrainSummary summary;
    summary.unigram_entropy = data.masked_unigram_entropy;
    summary.forward_flops_per_token = model.forward_flops_per_token(config.data.seq_len, head_fraction);
    const size_t tokens_per_step = tc.batch_size * config.data.seq_len;
    const size_t end_step = options.stop_after ? std::min(options.stop_after, tc.steps) : tc.steps;
    const bool terminal = !options.quiet && isatty(fileno(stderr)) && &log == &std::cerr;
    if (!options.quiet) {
        log << "run " << dir << ": " << model.num_parameters() << " parameters, scheme "
            << config.position.scheme
            << (config.position.scheme == "rope" ? " (" + config.position.pairing + ")" : "")
            << ", vocab " << tokenizer->vocab_size() << ", " << data.train_ids.size()
            << " train / " << data.validation_ids.size() << " validation tokens ("
            << fmt(std::chrono::duration<double>(std::chrono::steady_clock::now() - t_prepare).count(), 1)
            << " s to prepare)\n"
            << "forward " << fmt(summary.forward_flops_per_token / 1e6, 2)
            << " MFLOP/token (training ≈ 3×); unigram entropy of masked tokens "
            << fmt(data.masked_unigram_entropy) << " nats\n"
            << "threads " << threads << " (OpenMP wait policy " << openmp_wait_policy() << ")\n";
        if (options.resume) log << "resuming at step " << start_step << "\n";
    }

    // 3. The loop.
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return elapsed_before +
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    double loss_sum = pending_loss_sum, window_start_s = elapsed();
    size_t loss_count = pending_loss_count, window_steps = 0;
    double step_seconds = 0;   // training steps only: what the final throughput divides by
    for (size_t step = start_step; step < end_step; ++step) {
        const auto t_step = std::chrono::steady_clock::now();
        const data::MlmBatch batch = sampler.batch_at(step, tc.batch_size);
        model.dropout_rng() = Rng(tc.seed * 0x9E3779B97F4A7C15ULL + step);

        MlmOutput out = model.forward(batch.input_ids, batch.labels, batch.batch, batch.seq_len, true);
        const double loss = out.loss.item();
        if (!std::isfinite(loss))
            throw std::runtime_error("training loss became " + std::to_string(loss) + " at step " +
                                     std::to_string(step + 1) + "; lower train.lr or raise train.warmup_steps");
        optimizer.zero_grad();
        out.loss.backward();
        out = MlmOutput{};   // free the graph before the update
        const double grad_norm = tc.grad_clip > 0 ? optimizer.clip_grad_norm(tc.grad_clip)
                                                  : optimizer.grad_norm();
        const double lr = lr_at(step, tc);
        optimizer.step(lr);
        step_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_step).count();
        loss_sum += loss;
        ++loss_count;
        ++window_steps;

        const size_t done = step + 1;
        const bool last = done == end_step;
        const bool do_eval = (tc.eval_every && done % tc.eval_every == 0) || done == tc.steps;
        const bool do_log = do_eval || done == tc.steps || (tc.log_every && done % tc.log_every == 0);
        EvalResult ev;
        if (do_eval) ev = evaluate(model, val, tc.eval_batches);
        if (do_log) {
            const double now = elapsed();
            const double tps = double(window_steps * tokens_per_step) / std::max(1e-9, now - window_start_s);
            metrics << done << "," << done * tokens_per_step << "," << fmt(loss_sum / double(loss_count), 6)
                    << "," << (do_eval ? fmt(ev.loss, 6) : "") << ","
                    << (do_eval ? fmt(ev.accuracy, 6) : "") << "," << lr << "," << fmt(grad_norm, 6)
                    << "," << fmt(tps, 1) << "," << fmt(now, 3) << "\n";
            metrics.flush();
            if (!options.quiet) {
                const double eta = (now - elapsed_before) / double(done - start_step) * double(end_step - done);
                std::ostringstream line;
                line << "step " << done << "/" << tc.steps << "  loss " << fmt(loss_sum / double(loss_count))
                     << (do_eval ? "  val " + fmt(ev.loss) + " acc " + fmt(ev.accuracy, 3) : "")
                     << "  lr " << std::setprecision(3) << lr << "  " << fmt(tps, 0) << " tok/s  ETA "
                     << format_duration(eta);
                if (terminal) {
                    const int width = 24;
                    const int filled = int(width * double(done) / double(tc.steps));
                    log << "\r[" << std::string(size_t(filled), '#') << std::string(size_t(width - filled), '.')
                        << "] " << line.str() << "   " << (do_eval ? "\n" : "") << std::flush;
                } else {
                    log << line.str() << "\n";
                }
            }
            loss_sum = 0;
            loss_count = 0;
            window_steps = 0;
            window_start_s = now;
        }
        if (do_eval) summary.final_eval = ev;
        if (last || (tc.checkpoint_every && done % tc.checkpoint_every == 0))
            save_checkpoint(dir, model, config, done, &optimizer,
                            {{"train_loss_sum", hex_double(loss_sum)},
                             {"train_loss_count", std::to_string(loss_count)}});
        summary.steps = done;
    }
    if (summary.steps > start_step)
        summary.tokens_per_s = double((summary.steps - start_step) * tokens_per_step) / std::max(1e-9, step_seconds);
    if (terminal) log << "\n";
    summary.elapsed_s = elapsed();
    return summary;
}

}  // namespace rf
