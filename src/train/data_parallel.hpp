// Room — train: data-parallel training, the loop's side (docs/distributed.md).
//
//   mpirun -np P roformer train --config ...   one model, P processes ("ranks")
//
// Every rank builds the same global batch of step k (batches are a pure function of
// (seed, k)) and keeps a contiguous slice of its rows. After its backward pass, one all-reduce
// sums the flattened gradients, each scaled first by n_r / N (n_r labelled positions in rank
// r's rows, N in the whole batch): the loss is a mean over labelled positions, so the
// full-batch gradient is Σ_r (n_r / N)·∇L_r — the plain 1/P average when the shards hold equal
// label counts. Clipping and AdamW then run on identical gradients on every rank, so the
// weights stay identical without being sent again. Rank 0 alone owns the run directory (lock,
// metrics, checkpoints); the others receive what they need from it by broadcast. A
// rows-per-rank split that is not even (B % P ≠ 0) is handled: the first B % P ranks take one
// row more; B < P is refused (a rank would have nothing to do).
//
// Every function here works on the Communicator it is handed (train/communicator.hpp) and
// knows nothing of how the bytes travel (MPI: dist/mpi_communicator.hpp). With one rank
// (SingleProcess, or any communicator of size 1) no collective touches the training step:
// a 1-process run is the plain loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "step/batch.hpp"
#include "data/tokenizer.hpp"
#include "nn/adamw.hpp"
#include "train/communicator.hpp"
#include "train/evaluate.hpp"
#include "train/trainer.hpp"
#include "run/run_directory.hpp"

namespace rf {

// ---- the split of a batch (pure arithmetic; tests/machinery/test_distributed.cpp) -------------------
// Rows [first, first + count) of a B-row batch are rank `rank`'s of `ranks`.
struct RowRange {
    size_t first = 0, count = 0;
};
RowRange shard_rows(size_t batch_rows, size_t rank, size_t ranks);

// Rows `rows` of `batch`, as a batch of their own.
Batch take_rows(const Batch& batch, RowRange rows);

// One rank's share of a global batch, and the global batch's labelled-position count N.
struct ShardedBatch {
    Batch local;
    size_t global_labels = 0;
};
ShardedBatch shard(const Communicator& comm, const Batch& global);

// Dropout's seed for this rank: `seed` itself on rank 0 (so P = 1 is unchanged), a distinct
// stream on every other rank (the same masks on every shard would correlate the ranks).
uint64_t dropout_seed(const Communicator& comm, uint64_t seed);

// ---- one job, one config -------------------------------------------------------------------
// Every rank resolves its own config (an MPMD launch `mpirun -np 1 A : -np 1 B --set ...` can
// give them different ones). Before the first other collective of a job, every rank checks that
// its settings — "key=value" lines, the same keys in the same order on every rank — are rank
// 0's: a hash of them is compared first (two tiny collectives); only when one differs does
// rank 0 send its lines and each rank find its first differing key. On a difference every rank
// throws the same RanksDisagree, naming the ranks and the key; cli/main.cpp prints it once (rank
// 0) and every rank exits 2 — no rank is left in a collective, no MPI_Abort, no MPI error.
struct RanksDisagree : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};
// The settings train() must agree on: every config key but train.threads (how fast a rank
// computes, not what) and data.path (where a node finds the corpus: check_same_data compares
// what each rank read), and --stop-after.
std::vector<std::string> training_settings(const Config& config, size_t stop_after);
// `what` names the job in the message ("train", "compare"). P = 1: no-op.
void check_same_settings(Communicator& comm, const std::vector<std::string>& settings,
                         const std::string& what);

// Refuses (std::invalid_argument, one line) a batch with fewer rows than ranks.
void check_batch_rows(const Communicator& comm, size_t batch_size);

// train.threads for this rank: a configured count as is; 0 ("every core") becomes the cores
// divided among the ranks on this machine (comm.local_size()), at least 1.
size_t threads_per_rank(const Communicator& comm, size_t configured);

// ---- the set-up ----------------------------------------------------------------------------
// The run directory: rank 0 opens it (RunDirectory::fresh or ::resume, with their refusals);
// the others get RunDirectory::replica with what rank 0 found. P = 1: fresh / resume.
RunDirectory open_run_directory(Communicator& comm, const std::string& dir, bool resume,
                                const Config& config);
// Rank 0's tokenizer (the run's own on a resume; null on a fresh run) on every rank.
std::unique_ptr<data::Tokenizer> share_tokenizer(Communicator& comm,
                                                 std::unique_ptr<data::Tokenizer> tokenizer);

// Every rank prepared its own data and (fresh run) trained its own tokenizer, from the same
// file and config: refuses (std::runtime_error, on every rank) when any rank's tokenizer or
// token ids differ from rank 0's — say, a node that sees another corpus file.
void check_same_data(Communicator& comm, const data::Tokenizer& tokenizer,
                     const std::vector<int>& train_ids, const std::vector<int>& validation_ids);

// Rank 0's weights and optimizer state on every rank (no-ops for P = 1).
void broadcast_parameters(Communicator& comm, const std::vector<NamedParameter>& parameters);
void broadcast_optimizer(Communicator& comm, AdamW& optimizer);

// ---- the step ------------------------------------------------------------------------------
// The gradient all-reduce: scales every parameter's gradient by local_labels / global_labels,
// sums over the ranks (one all-reduce of one flat buffer, which also carries the weighted
// loss and a has-gradient flag per parameter), and writes the sums back. Returns the global
// batch's loss Σ (n_r / N)·L_r and the seconds it took (docs/distributed.md's table).
// P = 1: returns local_loss, touches nothing.
struct ReducedGradients {
    double loss = 0;
    double seconds = 0;
};
ReducedGradients allreduce_gradients(Communicator& comm, AdamW& optimizer, double local_loss,
                                     size_t local_labels, size_t global_labels);

// A stop signal any rank received (largest signal number), so every rank stops at one step.
int agree_on_stop(Communicator& comm, int local_signal);

// evaluate() with the batches dealt round-robin over the ranks; the per-batch sums are
// combined in batch order, so the result is bit-identical to a 1-process evaluate().
EvalResult evaluate_split(Communicator& comm, RoFormer& model,
                          const std::vector<Batch>& batches, size_t max_batches = 0);

// ---- the loop's parts for rank comm.rank() of comm.size() (TrainOptions, trainer.hpp) ----
// The step around train_step's two halves: this rank's rows of the batch (shard) with its own
// dropout masks (dropout_seed), the gradients of every rank summed between backward and the
// update (allreduce_gradients); the update then runs on every rank alike. *allreduce_seconds,
// when given, adds up the seconds spent in the sum (docs/distributed.md's measurements).
StepFunction data_parallel_step(Communicator& comm, double* allreduce_seconds = nullptr);
// The validation batches split over the ranks (evaluate_split).
EvaluateFunction data_parallel_evaluate(Communicator& comm);
// Every rank stops after the same step: the signal any rank's `local` answer gives.
StopFunction data_parallel_stop(Communicator& comm, StopFunction local);

}  // namespace rf
