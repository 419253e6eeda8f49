// Stage 7 — train: data-parallel training over MPI (docs/distributed.md).
//
//   mpirun -np P roformer train --config ...   one model, P processes ("ranks")
//
// Every rank builds the same global batch of step k (batches are a pure function of
// (seed, k)) and keeps a contiguous slice of its rows. After its backward pass, one
// MPI_Allreduce sums the flattened gradients, each scaled first by n_r / N (n_r labelled
// positions in rank r's rows, N in the whole batch): the loss is a mean over labelled
// positions, so the full-batch gradient is Σ_r (n_r / N)·∇L_r — the plain 1/P average when the
// shards hold equal label counts. Clipping and AdamW then run on identical gradients on every
// rank, so the weights stay identical without being sent again. Rank 0 alone owns the run
// directory (lock, metrics, checkpoints); the others receive what they need from it by
// broadcast. A rows-per-rank split that is not even (B % P ≠ 0) is handled: the first B % P
// ranks take one row more; B < P is refused (a rank would have nothing to do).
//
// Built without MPI (no libopenmpi-dev), everything here is the 1-process identity, and a
// launch under mpirun with P > 1 is refused in one line. With P = 1 no MPI call touches the
// training step: a 1-process run is bit-identical with or without MPI.
//
// The "training group" is the communicator train() works with: MPI_COMM_WORLD by default;
// `roformer compare` under mpirun gives each run to one rank and trains it alone
// (SoloTraining), the group then being that rank by itself.
// distributed.cpp has the training group's operations, mpi_job.cpp the MPI job itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/batch.hpp"
#include "data/tokenizer.hpp"
#include "nn/adamw.hpp"
#include "train/evaluate.hpp"
#include "run/run_directory.hpp"

namespace rf::dist {

// ---- the process (cli/main.cpp) -----------------------------------------------------------
// Whether a launcher started this process: mpirun (OMPI_COMM_WORLD_SIZE) or a PMI / PMIx
// launcher such as srun (PMI_SIZE, PMI_RANK, PMIX_RANK) — then MPI is initialized, even for 1.
bool under_launcher();
// How many processes it started (OMPI_COMM_WORLD_SIZE, PMI_SIZE; with PMIx,
// SLURM_STEP_NUM_TASKS); 1 when none did.
size_t launched_size();
// Initializes MPI when a launcher started us (and this build has it); registers the
// finalization at exit. Returns an error line when P > 1 and the build has no MPI.
std::string start(int* argc, char*** argv);
bool built_with_mpi();
// Ends every rank of the job with `code` (an error on one rank must not leave the others
// waiting in a collective forever). Returns only when there is no job to end.
void abort_job(int code);
size_t world_rank();
size_t world_size();

// ---- the training group ---------------------------------------------------------------------
size_t rank();
size_t size();
inline bool is_root() { return rank() == 0; }

// For its lifetime, train() runs as a 1-process run on this rank (compare's runs).
class SoloTraining {
public:
    SoloTraining();
    ~SoloTraining();
    SoloTraining(const SoloTraining&) = delete;
    SoloTraining& operator=(const SoloTraining&) = delete;
};

// train.threads for this rank: a configured count as is; 0 ("every core") becomes the cores
// divided among the ranks on this node (OMPI_COMM_WORLD_LOCAL_SIZE), at least 1.
size_t threads_per_rank(size_t configured);

// Refuses (std::invalid_argument, one line) a batch with fewer rows than ranks.
void check_batch_rows(size_t batch_size);

// The run directory: rank 0 opens it (RunDirectory::fresh or ::resume, with their refusals);
// the others get RunDirectory::replica with what rank 0 found. P = 1: fresh / resume.
RunDirectory open_run_directory(const std::string& dir, bool resume, const Config& config);
// Rank 0's tokenizer (the run's own on a resume; null on a fresh run) on every rank.
std::unique_ptr<data::Tokenizer> share_tokenizer(std::unique_ptr<data::Tokenizer> tokenizer);

// Every rank prepared its own data and (fresh run) trained its own tokenizer, from the same
// file and config: refuses (std::runtime_error, on every rank) when any rank's tokenizer or
// token ids differ from rank 0's — say, a node that sees another corpus file.
void check_same_data(const data::Tokenizer& tokenizer, const std::vector<int>& train_ids,
                     const std::vector<int>& validation_ids);

// Rows [first, first + count) of a B-row batch are this rank's.
struct RowRange {
    size_t first = 0, count = 0;
};
RowRange shard_rows(size_t batch_rows, size_t rank, size_t ranks);

// Rows `rows` of `batch`, as a batch of their own.
data::Batch take_rows(const data::Batch& batch, RowRange rows);

// One rank's share of a global batch, and the global batch's labelled-position count N.
struct ShardedBatch {
    data::Batch local;
    size_t global_labels = 0;
};
ShardedBatch shard(const data::Batch& global);

// Dropout's seed for this rank: `seed` itself on rank 0 (so P = 1 is unchanged), a distinct
// stream on every other rank (the same masks on every shard would correlate the ranks).
uint64_t dropout_seed(uint64_t seed);

// The gradient all-reduce: scales every parameter's gradient by local_labels / global_labels,
// sums over the ranks (one MPI_Allreduce of one flat buffer, which also carries the weighted
// loss and a has-gradient flag per parameter), and writes the sums back. Returns the global
// batch's loss Σ (n_r / N)·L_r. P = 1: returns local_loss, touches nothing.
double allreduce_gradients(AdamW& optimizer, double local_loss, size_t local_labels,
                           size_t global_labels);

// A stop signal any rank received (largest signal number), so every rank stops at one step.
int agree_on_stop(int local_signal);

// Broadcasts from rank 0 (no-ops for P = 1).
void broadcast(std::vector<Real>& values);
void broadcast(std::string& text);
size_t broadcast(size_t value);
void broadcast_parameters(const std::vector<NamedParameter>& parameters);
void broadcast_optimizer(AdamW& optimizer);
// Waits for every rank of the group.
void barrier();

// evaluate() with the batches dealt round-robin over the ranks; the per-batch sums are
// combined in batch order, so the result is bit-identical to a 1-process evaluate().
EvalResult evaluate_split(RoFormer& model, const std::vector<data::Batch>& batches,
                          size_t max_batches = 0);

// Seconds this process has spent inside the gradient all-reduce (docs/distributed.md's table).
double allreduce_seconds();

// ---- world-level helpers for sweeps (experiments/compare_mpi.cpp) ---------------------------
// Rank 0's `text` on every rank of the world.
void broadcast_world(std::string& text);
// Every rank's `text`, on rank 0 (empty elsewhere), in rank order.
std::vector<std::string> gather_world(const std::string& text);

}  // namespace rf::dist
