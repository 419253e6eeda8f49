// Stage 7 — train: data-parallel training over MPI (see distributed.hpp, docs/distributed.md).
#include "train/distributed.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "io/durable_file.hpp"

#ifdef RF_HAVE_MPI
#include <mpi.h>
#endif

namespace rf::dist {

namespace {

size_t env_size(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return 0;
    char* end = nullptr;
    const unsigned long n = std::strtoul(v, &end, 10);
    return (end && *end == '\0') ? size_t(n) : 0;
}

double g_allreduce_seconds = 0;

#ifdef RF_HAVE_MPI
bool g_mpi = false;  // MPI_Init ran (a launcher started us)
MPI_Comm g_group = MPI_COMM_NULL;
size_t g_rank = 0, g_size = 1;

void set_group(MPI_Comm comm) {
    g_group = comm;
    int r = 0, s = 1;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &s);
    g_rank = size_t(r);
    g_size = size_t(s);
}

void finish() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (g_mpi && !finalized) MPI_Finalize();
}

// MPI_FLOAT or MPI_DOUBLE, whichever Real is.
MPI_Datatype real_type() { return sizeof(Real) == sizeof(float) ? MPI_FLOAT : MPI_DOUBLE; }

// An MPI call that failed: the job cannot go on (MPI's default handler aborts already; this
// names the call if a handler returned instead).
void check(int rc, const char* what) {
    if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

void bcast_bytes(void* data, size_t bytes, MPI_Comm comm) {
    char* p = static_cast<char*>(data);
    while (bytes > 0) {  // counts are int: large buffers in pieces
        const int n = int(std::min<size_t>(bytes, size_t(1) << 30));
        check(MPI_Bcast(p, n, MPI_BYTE, 0, comm), "MPI_Bcast");
        p += n;
        bytes -= size_t(n);
    }
}
#endif

}  // namespace

bool under_launcher() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"})
        if (std::getenv(name) != nullptr) return true;
    return false;
}

size_t launched_size() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
        if (const size_t n = env_size(name)) return n;
    // srun --mpi=pmix sets PMIX_RANK but no size; the step's task count is Slurm's.
    if (std::getenv("PMIX_RANK") != nullptr)
        if (const size_t n = env_size("SLURM_STEP_NUM_TASKS")) return n;
    return 1;
}

bool built_with_mpi() {
#ifdef RF_HAVE_MPI
    return true;
#else
    return false;
#endif
}

std::string start(int* argc, char*** argv) {
    const size_t launched = launched_size();
#ifdef RF_HAVE_MPI
    if (under_launcher()) {
        int provided = 0;
        // FUNNELED: only the main thread calls MPI (OpenMP and OpenBLAS threads never do).
        if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return "MPI_Init failed under a launcher of " + std::to_string(launched) +
                   " processes; check the mpirun / srun line (docs/distributed.md)";
        g_mpi = true;
        set_group(MPI_COMM_WORLD);
        std::atexit(finish);
    }
    return "";
#else
    (void)argc;
    (void)argv;
    if (launched > 1)
        return "this roformer was built without MPI but started as one of " +
               std::to_string(launched) +
               " processes (it would train that many separate copies); install "
               "libopenmpi-dev (scripts/setup.sh), rebuild, and launch again";
    return "";
#endif
}

void abort_job(int code) {
#ifdef RF_HAVE_MPI
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (g_mpi && !finalized && world_size() > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
    (void)code;
}

size_t world_rank() {
#ifdef RF_HAVE_MPI
    if (!g_mpi) return 0;
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return size_t(r);
#else
    return 0;
#endif
}

size_t world_size() {
#ifdef RF_HAVE_MPI
    if (!g_mpi) return 1;
    int s = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return size_t(s);
#else
    return 1;
#endif
}

#ifdef RF_HAVE_MPI
size_t rank() { return g_rank; }
size_t size() { return g_size; }
SoloTraining::SoloTraining() {
    if (g_mpi) set_group(MPI_COMM_SELF);
}
SoloTraining::~SoloTraining() {
    if (g_mpi) set_group(MPI_COMM_WORLD);
}
#else
size_t rank() { return 0; }
size_t size() { return 1; }
SoloTraining::SoloTraining() = default;
SoloTraining::~SoloTraining() = default;
#endif

size_t threads_per_rank(size_t configured) {
    if (configured || size() == 1) return configured;
    size_t local = env_size("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!local) local = env_size("SLURM_NTASKS_PER_NODE");
    if (!local) local = size();
    const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    return std::max<size_t>(1, cores / local);
}

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
    bcast_bytes(&root_hash, sizeof root_hash, g_group);
    int differs = root_hash != mine;
    check(MPI_Allreduce(MPI_IN_PLACE, &differs, 1, MPI_INT, MPI_MAX, g_group),
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
                        g_group),
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
    check(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, g_group), "MPI_Allreduce (stop)");
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
    bcast_bytes(values.data(), n * sizeof(Real), g_group);
#else
    (void)values;
#endif
}

void broadcast(std::string& text) {
#ifdef RF_HAVE_MPI
    if (size() == 1) return;
    const size_t n = broadcast(text.size());
    text.resize(n);
    bcast_bytes(text.data(), n, g_group);
#else
    (void)text;
#endif
}

size_t broadcast(size_t value) {
#ifdef RF_HAVE_MPI
    if (size() == 1) return value;
    uint64_t v = value;
    bcast_bytes(&v, sizeof v, g_group);
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
        bcast_bytes(t.data(), t.numel() * sizeof(Real), g_group);
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
    if (size() > 1) check(MPI_Barrier(g_group), "MPI_Barrier");
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
                            g_group),
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

void broadcast_world(std::string& text) {
#ifdef RF_HAVE_MPI
    if (world_size() == 1) return;
    uint64_t n = text.size();
    bcast_bytes(&n, sizeof n, MPI_COMM_WORLD);
    text.resize(size_t(n));
    bcast_bytes(text.data(), size_t(n), MPI_COMM_WORLD);
#else
    (void)text;
#endif
}

std::vector<std::string> gather_world(const std::string& text) {
#ifdef RF_HAVE_MPI
    if (world_size() == 1) return {text};
    const int P = int(world_size());
    int n = int(text.size());
    std::vector<int> counts(static_cast<size_t>(P)), offsets(static_cast<size_t>(P));
    check(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
    std::string all;
    if (world_rank() == 0) {
        int total = 0;
        for (int r = 0; r < P; ++r) {
            offsets[size_t(r)] = total;
            total += counts[size_t(r)];
        }
        all.resize(size_t(total));
    }
    check(MPI_Gatherv(text.data(), n, MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR,
                      0, MPI_COMM_WORLD),
          "MPI_Gatherv");
    std::vector<std::string> out;
    if (world_rank() == 0)
        for (int r = 0; r < P; ++r)
            out.push_back(all.substr(size_t(offsets[size_t(r)]), size_t(counts[size_t(r)])));
    return out;
#else
    return {text};
#endif
}

}  // namespace rf::dist
