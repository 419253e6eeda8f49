// Room — dist: the MPI job under data-parallel training and sweeps (docs/distributed.md).
//
//   mpirun -np P roformer train --config ...     one model, P processes ("ranks")
//   mpirun -np P roformer compare --config ...   a sweep's runs dealt over P ranks
//
// This is the one place that knows MPI: its start and end, the processes of the job, a
// Communicator (train/communicator.hpp) over all of them for the training loop, and the
// world-level exchanges of a sweep. Built without MPI (no libopenmpi-dev), the job is this
// process alone, and a launch under mpirun with P > 1 is refused in one line.
// (No MPI type appears here: the CLI, built without RF_HAVE_MPI, includes this header too.)
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "train/communicator.hpp"

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

// ---- one model on every rank (cli/cmd_train.cpp) -----------------------------------------
// A Communicator over every rank of the job (MPI_COMM_WORLD); a SingleProcess when the job
// is this process alone (no launcher, or mpirun -np 1: then no MPI call touches training).
// Its local_size() is the ranks on this node (OMPI_COMM_WORLD_LOCAL_SIZE, or
// SLURM_NTASKS_PER_NODE; all of them when neither is set).
std::unique_ptr<Communicator> world_communicator();

// ---- world-level helpers for sweeps (experiments/compare_mpi.cpp) ---------------------------
// Rank 0's `text` on every rank of the world.
void broadcast_world(std::string& text);
// Every rank's `text`, on rank 0 (empty elsewhere), in rank order.
std::vector<std::string> gather_world(const std::string& text);

}  // namespace rf::dist
