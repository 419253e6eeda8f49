// Stage 7 — train: data-parallel training over MPI (see distributed.hpp, docs/distributed.md).
#include "train/distributed.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>

#include "io/durable_file.hpp"
#include "train/mpi_job.hpp"

namespace rf::dist {

#ifdef RF_HAVE_MPI
using detail::bcast_bytes;
using detail::check;
using detail::real_type;
#endif

namespace {
double g_allreduce_seconds = 0;
}  // namespace

void check_batch_rows(size_t batch_size) {
    if (batch_size < size())
        throw std::invalid_argument("train.batch_size = " + std::to_string(batch_size) +
                                    " is smaller than the " + std::to_string(size()) +
                                    " ranks (every rank trains on at least one row); raise "
                                    "train.batch_size or launch fewer processes");
}

RunDirectory open_run_directory(const std::string& dir, bool resume, const Config& config) {
    if (size() == 1) return resume ? RunDirectory::resume(dir, config) : RunDirectory::fresh(dir);
    if (is_root()) {  // an error here ends the job (cli/main.cpp), the others waiting below
        RunDirectory run = resume ? RunDirectory::resume(dir, config) : RunDirectory::fresh(dir);
        broadcast(size_t(run.resuming()) | size_t(run.checkpoint().present) << 1);
        return run;
    }
    const size_t state = broadcast(size_t(0));
    return RunDirectory::replica(dir, state & 1, state & 2, nullptr);
}

std::unique_ptr<data::Tokenizer> share_tokenizer(std::unique_ptr<data::Tokenizer> tokenizer) {
    if (size() == 1) return tokenizer;
    std::string json = is_root() && tokenizer ? tokenizer->to_json() : std::string();
    broadcast(json);
    if (is_root() || json.empty()) return tokenizer;
    return data::parse_tokenizer(json, "rank 0's tokenizer");
}

void check_same_data(const data::Tokenizer& tokenizer, const std::vector<int>& train_ids,
                     const std::vector<int>& validation_ids) {
#ifdef RF_HAVE_MPI
    if (size() == 1) return;
    auto bytes = [](const std::vector<int>& ids) {
        return std::string(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(int));
    };
    const uint64_t mine = fnv1a64(tokenizer.to_json()) ^ (fnv1a64(bytes(train_ids)) * 3) ^
                          fnv1a64(bytes(validation_ids));
    uint64_t root_hash = mine;
    bcast_bytes(&root_hash, sizeof root_hash, detail::group());
    int differs = root_hash != mine;
    check(MPI_Allreduce(MPI_IN_PLACE, &differs, 1, MPI_INT, MPI_MAX, detail::group()),
          "MPI_Allreduce (data check)");
    if (differs)
        throw std::runtime_error(
            "the ranks prepared different data (tokenizer or token ids differ from rank 0's); "
            "every rank must read the same data.path — put it on a filesystem all nodes share");
#else
    (void)tokenizer;
    (void)train_ids;
    (void)validation_ids;
#endif
}

RowRange shard_rows(size_t batch_rows, size_t rank, size_t ranks) {
    // The first B % P ranks take ⌈B/P⌉ rows, the rest ⌊B/P⌋: contiguous, disjoint, complete.
    const size_t base = batch_rows / ranks, extra = batch_rows % ranks;
    RowRange r;
    r.count = base + (rank < extra ? 1 : 0);
    r.first = rank * base + std::min(rank, extra);
    return r;
}

ShardedBatch shard(const data::Batch& global) {
    ShardedBatch s;
    s.global_labels = global.n_selected();
    if (size() == 1) {
        s.local = global;
        return s;
    }
    s.local = take_rows(global, shard_rows(global.batch, rank(), size()));
    return s;
}

data::Batch take_rows(const data::Batch& batch, RowRange rows) {
    const size_t T = batch.seq_len;
    data::Batch out;
    out.batch = rows.count;
    out.seq_len = T;
    out.input_ids.assign(batch.input_ids.begin() + long(rows.first * T),
                         batch.input_ids.begin() + long((rows.first + rows.count) * T));
    out.labels.assign(batch.labels.begin() + long(rows.first * T),
                      batch.labels.begin() + long((rows.first + rows.count) * T));
    return out;
}

uint64_t dropout_seed(uint64_t seed) {
    return rank() == 0 ? seed : data::batch_seed(seed, 0xD50C0000ull + rank());
}

double allreduce_gradients(AdamW& optimizer, double local_loss, size_t local_labels,
                           size_t global_labels) {
#ifdef RF_HAVE_MPI
    if (size() == 1) return local_loss;
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
    // Counts are int: a model beyond 2^31 − 1 floats would need pieces (far beyond this project).
    if (buffer.size() > size_t(INT32_MAX))
        throw std::runtime_error("allreduce: the gradient buffer exceeds 2^31 elements");
    check(MPI_Allreduce(MPI_IN_PLACE, buffer.data(), int(buffer.size()), real_type(), MPI_SUM,
                        detail::group()),
          "MPI_Allreduce of the gradients");
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
    g_allreduce_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return double(buffer[total + params.size()]);
#else
    (void)optimizer;
    (void)local_labels;
    (void)global_labels;
    return local_loss;
#endif
}

int agree_on_stop(int local_signal) {
#ifdef RF_HAVE_MPI
    if (size() == 1) return local_signal;
    int any = local_signal;
    check(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, detail::group()),
          "MPI_Allreduce (stop)");
    return any;
#else
    return local_signal;
#endif
}

void broadcast(std::vector<Real>& values) {
#ifdef RF_HAVE_MPI
    if (size() == 1) return;
    size_t n = broadcast(values.size());
    values.resize(n);
    bcast_bytes(values.data(), n * sizeof(Real), detail::group());
#else
    (void)values;
#endif
}

void broadcast(std::string& text) {
#ifdef RF_HAVE_MPI
    if (size() == 1) return;
    const size_t n = broadcast(text.size());
    text.resize(n);
    bcast_bytes(text.data(), n, detail::group());
#else
    (void)text;
#endif
}

size_t broadcast(size_t value) {
#ifdef RF_HAVE_MPI
    if (size() == 1) return value;
    uint64_t v = value;
    bcast_bytes(&v, sizeof v, detail::group());
    return size_t(v);
#else
    return value;
#endif
}

void broadcast_parameters(const std::vector<NamedParameter>& parameters) {
#ifdef RF_HAVE_MPI
    if (size() == 1) return;
    for (const NamedParameter& p : parameters) {
        Tensor t = p.tensor;  // a handle: writes reach the parameter
        bcast_bytes(t.data(), t.numel() * sizeof(Real), detail::group());
    }
#else
    (void)parameters;
#endif
}

void broadcast_optimizer(AdamW& optimizer) {
#ifdef RF_HAVE_MPI
    if (size() == 1) return;
    AdamWState state = optimizer.export_state();  // names and sizes agree on every rank
    state.step = broadcast(state.step);
    for (AdamWState::Moments& m : state.params) {
        broadcast(m.m);
        broadcast(m.v);
    }
    optimizer.import_state(state);
#else
    (void)optimizer;
#endif
}

void barrier() {
#ifdef RF_HAVE_MPI
    if (size() > 1) check(MPI_Barrier(detail::group()), "MPI_Barrier");
#endif
}

EvalResult evaluate_split(RoFormer& model, const std::vector<data::Batch>& batches,
                          size_t max_batches) {
    if (size() == 1) return evaluate(model, batches, max_batches);
#ifdef RF_HAVE_MPI
    const size_t n = max_batches ? std::min(max_batches, batches.size()) : batches.size();
    // Batch b is scored by rank b % P; every other rank leaves its slot 0, so the sum over
    // ranks is exact (x + 0 = x) and each batch's numbers reach every rank unchanged.
    std::vector<double> slots(3 * n, 0.0);
    for (size_t b = rank(); b < n; b += size()) {
        const BatchScore s = score_batch(model, batches[b]);
        slots[3 * b] = s.loss_sum;
        slots[3 * b + 1] = double(s.correct);
        slots[3 * b + 2] = double(s.predictions);
    }
    if (n > 0)
        check(MPI_Allreduce(MPI_IN_PLACE, slots.data(), int(slots.size()), MPI_DOUBLE, MPI_SUM,
                            detail::group()),
              "MPI_Allreduce (evaluation)");
    std::vector<BatchScore> scores(n);
    for (size_t b = 0; b < n; ++b)
        scores[b] = {slots[3 * b], size_t(slots[3 * b + 1]), size_t(slots[3 * b + 2])};
    return combine_scores(scores);
#else
    return evaluate(model, batches, max_batches);
#endif
}

double allreduce_seconds() { return g_allreduce_seconds; }

}  // namespace rf::dist
