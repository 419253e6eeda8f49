// Room — train: data-parallel training, the loop's side (see data_parallel.hpp,
// docs/distributed.md).
#include "train/data_parallel.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "io/fnv1a.hpp"
#include "tensor/random.hpp"

namespace rf {

// ---- one job, one config -------------------------------------------------------------------
std::vector<std::string> training_settings(const Config& config, size_t stop_after) {
    Config copy = config;
    std::vector<std::string> lines;
    for (const ConfigField& field : config_fields(copy))
        if (field.name() != "train.threads" && field.name() != "data.path")
            lines.push_back(field.name() + "=" + render_value(field.value));
    lines.push_back("--stop-after=" + (stop_after ? std::to_string(stop_after) : "none"));
    return lines;
}

static std::string joined_lines(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& line : lines) text += line + "\n";
    return text;
}

void check_same_settings(Communicator& comm, const std::vector<std::string>& settings,
                         const std::string& what) {
    if (comm.size() == 1) return;
    const std::string mine = joined_lines(settings);
    // 1. The hash of every rank against rank 0's.
    const uint64_t my_hash = fnv1a64(mine);
    uint64_t root_hash = my_hash;
    comm.broadcast_bytes(&root_hash, sizeof root_hash);
    if (!comm.allreduce_max(int(root_hash != my_hash))) return;
    // 2. Someone differs: rank 0's lines everywhere; each rank's first differing line (1-based,
    //    0: none) summed into one vector, so every rank builds the same message.
    std::string root_text = mine;
    comm.broadcast(root_text);
    std::vector<std::string> root_lines;
    for (size_t begin = 0, end; (end = root_text.find('\n', begin)) != std::string::npos;
         begin = end + 1)
        root_lines.push_back(root_text.substr(begin, end - begin));
    size_t first = 0;
    if (mine != root_text) {
        first = std::max(settings.size(), root_lines.size()) + 1;  // (a line count differs)
        for (size_t i = 0; i < std::min(settings.size(), root_lines.size()); ++i)
            if (settings[i] != root_lines[i]) {
                first = i + 1;
                break;
            }
    }
    std::vector<double> differing(comm.size(), 0.0);
    differing[comm.rank()] = double(first);
    comm.allreduce_sum(differing.data(), differing.size());
    std::string differences;
    for (size_t r = 1; r < differing.size(); ++r) {
        if (differing[r] == 0) continue;
        const size_t line = size_t(differing[r]) - 1;
        std::string key = "another set of settings";
        if (line < root_lines.size()) {
            const std::string& root_line = root_lines[line];
            const size_t eq = root_line.find('=');
            key = root_line.substr(0, eq) + " (rank 0 has " + root_line.substr(eq + 1) + ")";
        }
        differences += (differences.empty() ? "" : "; ") + ("rank " + std::to_string(r) + " in " + key);
    }
    throw RanksDisagree(what + ": the ranks of this job were started with different settings: " +
                        differences +
                        "; give every rank the same --config and --set (in an MPMD launch "
                        "'A : B' every part repeats them)");
}

RowRange shard_rows(size_t batch_rows, size_t rank, size_t ranks) {
    // The first B % P ranks take ⌈B/P⌉ rows, the rest ⌊B/P⌋: contiguous, disjoint, complete.
    const size_t base = batch_rows / ranks, extra = batch_rows % ranks;
    RowRange r;
    r.count = base + (rank < extra ? 1 : 0);
    r.first = rank * base + std::min(rank, extra);
    return r;
}

Batch take_rows(const Batch& batch, RowRange rows) {
    const size_t T = batch.seq_len;
    Batch out;
    out.batch = rows.count;
    out.seq_len = T;
    out.input_ids.assign(batch.input_ids.begin() + long(rows.first * T),
                         batch.input_ids.begin() + long((rows.first + rows.count) * T));
    out.labels.assign(batch.labels.begin() + long(rows.first * T),
                      batch.labels.begin() + long((rows.first + rows.count) * T));
    return out;
}

ShardedBatch shard(const Communicator& comm, const Batch& global) {
    ShardedBatch s;
    s.global_labels = global.n_selected();
    if (comm.size() == 1) {
        s.local = global;
        return s;
    }
    s.local = take_rows(global, shard_rows(global.batch, comm.rank(), comm.size()));
    return s;
}

uint64_t dropout_seed(const Communicator& comm, uint64_t seed) {
    return comm.rank() == 0 ? seed : batch_seed(seed, 0xD50C0000ull + comm.rank());
}

void check_batch_rows(const Communicator& comm, size_t batch_size) {
    if (batch_size < comm.size())
        throw std::invalid_argument("train.batch_size = " + std::to_string(batch_size) +
                                    " is smaller than the " + std::to_string(comm.size()) +
                                    " ranks (every rank trains on at least one row); raise "
                                    "train.batch_size or launch fewer processes");
}

size_t threads_per_rank(const Communicator& comm, size_t configured) {
    if (configured || comm.size() == 1) return configured;
    const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    return std::max<size_t>(1, cores / std::max<size_t>(1, comm.local_size()));
}

RunDirectory open_run_directory(Communicator& comm, const std::string& dir, bool resume,
                                const Config& config) {
    if (comm.size() == 1)
        return resume ? RunDirectory::resume(dir, config) : RunDirectory::fresh(dir);
    if (comm.is_root()) {  // an error here ends the job (cli/main.cpp), the others waiting below
        RunDirectory run = resume ? RunDirectory::resume(dir, config) : RunDirectory::fresh(dir);
        comm.broadcast(size_t(run.resuming()) | size_t(run.checkpoint().present) << 1);
        return run;
    }
    const size_t state = comm.broadcast(size_t(0));
    return RunDirectory::replica(dir, state & 1, state & 2, nullptr);
}

std::unique_ptr<data::Tokenizer> share_tokenizer(Communicator& comm,
                                                 std::unique_ptr<data::Tokenizer> tokenizer) {
    if (comm.size() == 1) return tokenizer;
    std::string json = comm.is_root() && tokenizer ? tokenizer->to_json() : std::string();
    comm.broadcast(json);
    if (comm.is_root() || json.empty()) return tokenizer;
    return data::parse_tokenizer(json, "rank 0's tokenizer");
}

void check_same_data(Communicator& comm, const data::Tokenizer& tokenizer,
                     const std::vector<int>& train_ids, const std::vector<int>& validation_ids) {
    if (comm.size() == 1) return;
    auto bytes = [](const std::vector<int>& ids) {
        return std::string(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(int));
    };
    const uint64_t mine = fnv1a64(tokenizer.to_json()) ^ (fnv1a64(bytes(train_ids)) * 3) ^
                          fnv1a64(bytes(validation_ids));
    uint64_t root_hash = mine;
    comm.broadcast_bytes(&root_hash, sizeof root_hash);
    if (comm.allreduce_max(int(root_hash != mine)))
        throw std::runtime_error(
            "the ranks prepared different data (tokenizer or token ids differ from rank 0's); "
            "every rank must read the same data.path — put it on a filesystem all nodes share");
}

void broadcast_parameters(Communicator& comm, const std::vector<NamedParameter>& parameters) {
    if (comm.size() == 1) return;
    for (const NamedParameter& p : parameters) {
        Tensor t = p.tensor;  // a handle: writes reach the parameter
        comm.broadcast_bytes(t.data(), t.numel() * sizeof(Real));
    }
}

void broadcast_optimizer(Communicator& comm, AdamW& optimizer) {
    if (comm.size() == 1) return;
    AdamWState state = optimizer.export_state();  // names and sizes agree on every rank
    state.step = comm.broadcast(state.step);
    for (AdamWState::Moments& m : state.params) {
        comm.broadcast(m.m);
        comm.broadcast(m.v);
    }
    optimizer.import_state(state);
}

ReducedGradients allreduce_gradients(Communicator& comm, AdamW& optimizer, double local_loss,
                                     size_t local_labels, size_t global_labels) {
    if (comm.size() == 1) return {local_loss, 0.0};
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<NamedParameter>& params = optimizer.parameters();
    // The shard's weight in the full-batch mean: n_r / N (0 when the whole batch has no label).
    const double w = global_labels ? double(local_labels) / double(global_labels) : 0.0;
    size_t total = 0;
    for (const NamedParameter& p : params) total += p.tensor.numel();
    // [ every gradient, flattened | one has-gradient flag per parameter | the weighted loss ]
    std::vector<Real> buffer(total + params.size() + 1, Real(0));
    size_t at = 0;
    for (size_t i = 0; i < params.size(); ++i) {
        Tensor t = params[i].tensor;
        const size_t n = t.numel();
        if (t.has_grad()) {
            const Real* g = t.grad().data();
            for (size_t j = 0; j < n; ++j) buffer[at + j] = Real(double(g[j]) * w);
            buffer[total + i] = Real(1);
        }
        at += n;
    }
    buffer[total + params.size()] = Real(local_loss * w);
    comm.allreduce_sum(buffer.data(), buffer.size());
    at = 0;
    for (size_t i = 0; i < params.size(); ++i) {
        Tensor t = params[i].tensor;
        const size_t n = t.numel();
        if (buffer[total + i] > Real(0)) {  // some rank has a gradient: every rank gets the sum
            Real* g = t.grad().data();      // (created as zeros where this rank had none)
            std::copy(buffer.begin() + long(at), buffer.begin() + long(at + n), g);
        }
        at += n;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return {double(buffer[total + params.size()]), seconds};
}

int agree_on_stop(Communicator& comm, int local_signal) {
    if (comm.size() == 1) return local_signal;
    return comm.allreduce_max(local_signal);
}

EvalResult evaluate_split(Communicator& comm, RoFormer& model,
                          const std::vector<Batch>& batches, size_t max_batches) {
    if (comm.size() == 1) return evaluate(model, batches, max_batches);
    const size_t n = max_batches ? std::min(max_batches, batches.size()) : batches.size();
    // Batch b is scored by rank b % P; every other rank leaves its slot 0, so the sum over
    // ranks is exact (x + 0 = x) and each batch's numbers reach every rank unchanged.
    std::vector<double> slots(3 * n, 0.0);
    for (size_t b = comm.rank(); b < n; b += comm.size()) {
        const BatchScore s = score_batch(model, batches[b]);
        slots[3 * b] = s.loss_sum;
        slots[3 * b + 1] = double(s.correct);
        slots[3 * b + 2] = double(s.predictions);
    }
    if (n > 0) comm.allreduce_sum(slots.data(), slots.size());
    std::vector<BatchScore> scores(n);
    for (size_t b = 0; b < n; ++b)
        scores[b] = {slots[3 * b], size_t(slots[3 * b + 1]), size_t(slots[3 * b + 2])};
    return combine_scores(scores);
}

StepFunction data_parallel_step(Communicator& comm, double* allreduce_seconds) {
    return [&comm, allreduce_seconds](RoFormer& model, AdamW& optimizer, const Batch& global,
                                      uint64_t seed, double grad_clip, double lr, size_t step) {
        const ShardedBatch batch = shard(comm, global);
        StepResult r;  // (a shard with no labelled token: no forward, its gradients stay 0)
        r.loss = compute_gradients(model, optimizer, batch.local, dropout_seed(comm, seed), step);
        {
            const ObservedScope phase("allreduce", true);
            const ReducedGradients sum = allreduce_gradients(
                comm, optimizer, r.loss, batch.local.n_selected(), batch.global_labels);
            if (allreduce_seconds) *allreduce_seconds += sum.seconds;
            r.loss = sum.loss;
        }
        const ObservedScope phase("optimizer: clip + step", true);
        r.grad_norm = clip_gradients(optimizer, grad_clip);
        model.optimizer_step(optimizer, lr);
        return r;
    };
}

EvaluateFunction data_parallel_evaluate(Communicator& comm) {
    return [&comm](RoFormer& model, const std::vector<Batch>& batches, size_t max_batches) {
        return evaluate_split(comm, model, batches, max_batches);
    };
}

StopFunction data_parallel_stop(Communicator& comm, StopFunction local) {
    return [&comm, local = std::move(local)](double work_seconds) {
        return agree_on_stop(comm, local(work_seconds));
    };
}

}  // namespace rf
