// Stage 7 — train: what distributed.cpp shares with mpi_job.cpp, the MPI job underneath
// data-parallel training (internal; the interface is train/distributed.hpp). Only with MPI.
#pragma once

#ifdef RF_HAVE_MPI
#include <mpi.h>

#include <cstddef>

namespace rf::dist::detail {

// The communicator train() works with: MPI_COMM_WORLD, or MPI_COMM_SELF under SoloTraining.
MPI_Comm group();
// MPI_FLOAT or MPI_DOUBLE, whichever Real is.
MPI_Datatype real_type();
// Throws std::runtime_error naming `what` when an MPI call did not succeed.
void check(int rc, const char* what);
// MPI_Bcast of `bytes` bytes from rank 0 of `comm`, in pieces of at most 1 GiB (int counts).
void bcast_bytes(void* data, size_t bytes, MPI_Comm comm);

}  // namespace rf::dist::detail
#endif
